"""A launcher like an npm package's bin script: it starts the real program as its child,
which inherits (and so holds) the launcher's stdin, stdout and stderr, and waits for it.

    launcher.py [--linger] PROGRAM ARGS...

With ``--linger`` the child goes on holding the pipes after PROGRAM ended, for up to ten
minutes, like a native binary that finishes its work in the background after its stdin
closed: ending the launcher alone (SIGTERM to its pid) leaves that child behind.
"""

from __future__ import annotations

import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    if argv[:1] == ["--hold"]:
        code = subprocess.call(argv[1:])
        time.sleep(600)  # the pipes stay open until this process is ended
        return code
    if argv[:1] == ["--linger"]:
        return subprocess.call([sys.executable, __file__, "--hold", *argv[1:]])
    return subprocess.call(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
