"""Install the spec material that a registry package ships (``make specs``, run by ``make test``).

The tests read the MCP, ACP and A2A schemas through tests/_specs.py: from
``$RPCWEAVE_SPECS`` or ``../shared/specs`` first, then from what this script installs.
Of that material only ACP's ``schema.json`` and ``schema.unstable.json`` ship in a registry
package: npm ``@agentclientprotocol/sdk`` under ``schema/v1/``. The version is the one
pinned in tests/acp_fixtures/package.json and its lock file (the package the ACP interop
tests drive), installed with ``npm ci`` into tests/acp_fixtures/node_modules (git-ignored),
exactly as tests/acp_layer/test_acp_interop_node.py does.

Without npm this prints one line and exits 0: the tests then take the files from
``$RPCWEAVE_SPECS`` / ``../shared/specs`` or report them as missing. A failing install exits
1 under CI (``CI=true``) and 0 elsewhere (the tests report what is missing).

Usage: python scripts/fetch_specs.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "acp_fixtures"
PACKAGE = "@agentclientprotocol/sdk"
INSTALLED = FIXTURES / "node_modules" / PACKAGE / "package.json"
INSTALL_TIMEOUT = 300


def log(message: str) -> None:
    print(f"[specs] {message}", flush=True)


def wanted_version() -> str:
    """The version pinned in tests/acp_fixtures/package.json."""
    version: str = json.loads((FIXTURES / "package.json").read_text())["dependencies"][PACKAGE]
    return version


def installed_version() -> str | None:
    try:
        version = json.loads(INSTALLED.read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None
    return version if isinstance(version, str) else None


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def main() -> int:
    wanted = wanted_version()
    if installed_version() == wanted:
        log(f"{PACKAGE} {wanted} (ACP v1 schemas) is installed in tests/acp_fixtures")
        return 0
    npm = shutil.which("npm")
    if npm is None:
        log(
            f"npm not found: {PACKAGE} {wanted} (ACP v1 schemas) not installed; the tests "
            "take them from $RPCWEAVE_SPECS or ../shared/specs, or report them missing"
        )
        return 1 if in_ci() else 0
    log(f"installing {PACKAGE} {wanted} (ACP v1 schemas) into tests/acp_fixtures/node_modules")
    try:
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=FIXTURES,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        log(f"npm ci failed: {error}")
        return 1 if in_ci() else 0
    if done.returncode != 0 or installed_version() != wanted:
        log(f"npm ci failed (exit {done.returncode}):\n{done.stdout}{done.stderr}".rstrip())
        return 1 if in_ci() else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
