"""rpcweave as a user gets it: a wheel built from the checkout, installed into a fresh venv
(dependencies from the package index), used from an empty directory with no checkout in
sight. ``rpcweave demo`` passes every flow there, and the examples that the README and
``--help`` name are installed with the package.

One build and one install (about a minute, most of it pip resolving the dependencies),
shared by the tests of this module; nothing is written into the checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("jsonrpc_core", "mcp_layer", "acp_layer", "a2a_layer", "rpcweave")
FLOWS = ("mcp", "acp", "a2a", "jsonrpc")

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Installed:
    build_log: str
    wheel: Path
    bin: Path
    workdir: Path

    def env(self) -> dict[str, str]:
        """The environment of a user's shell: no PYTHONPATH pointing into a checkout."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        return env

    def run(self, *command: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(command),
            cwd=self.workdir,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )


def _copy_sources(target: Path) -> None:
    """What the wheel is built from, copied out so the build leaves nothing in the checkout."""
    target.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, target / name)
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package,
            target / package,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    base = tmp_path_factory.mktemp("wheel")
    source, dist = base / "src", base / "dist"
    _copy_sources(source)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", str(source), "-w", str(dist)],
        cwd=base,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = build.stdout + build.stderr
    assert build.returncode == 0, log[-4000:]
    (wheel,) = dist.glob("rpcweave-*.whl")
    home = base / "venv"
    venv.create(home, with_pip=True)
    bin_dir = home / "bin"
    install = subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "install", "-q", str(wheel)],
        cwd=base,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, (install.stdout + install.stderr)[-4000:]
    workdir = base / "empty"
    workdir.mkdir()
    yield Installed(log, wheel, bin_dir, workdir)


def test_the_wheel_builds_without_warnings_about_its_metadata(installed: Installed) -> None:
    log = installed.build_log
    assert "Created wheel for rpcweave" in log
    for warning in ("BuildBackendWarning", "SetuptoolsDeprecationWarning", "project.license"):
        assert warning not in log, warning
    assert "License-Expression" in _metadata(installed.wheel)


def _metadata(wheel: Path) -> str:
    import zipfile

    with zipfile.ZipFile(wheel) as archive:
        return archive.read("rpcweave-0.1.0.dist-info/METADATA").decode()


def test_rpcweave_demo_passes_from_the_wheel_in_an_empty_directory(installed: Installed) -> None:
    done = installed.run("rpcweave", "demo", "--quiet", timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = done.stdout.strip().splitlines()[-5:]
    assert [line.split(" ", 2)[:2] for line in summary[:4]] == [["PASS", f] for f in FLOWS]
    out = installed.workdir / "demo-output"
    for flow in FLOWS:
        for suffix in (".jsonl", ".mmd", ".html"):
            assert (out / f"{flow}{suffix}").stat().st_size > 0, (flow, suffix)
    # The installed code ran, not a checkout's.
    where = installed.run("python", "-c", "import rpcweave; print(rpcweave.__file__)")
    assert "site-packages" in where.stdout, where.stdout + where.stderr


def test_the_examples_the_help_names_are_installed_and_run(installed: Installed) -> None:
    listed = installed.run("rpcweave", "example")
    assert listed.returncode == 0, listed.stderr
    assert "acp/demo_agent" in listed.stdout and "mcp/file_server" in listed.stdout
    located = installed.run("rpcweave", "example", "demo_agent")
    path = Path(located.stdout.strip())
    assert "site-packages" in path.parts and path.is_file(), located.stdout + located.stderr
    (installed.workdir / "hello.txt").write_text("hi", encoding="utf-8")
    called = installed.run(
        "rpcweave",
        "mcp",
        "call",
        "read_file",
        "path=hello.txt",
        "--",
        "python",
        "-m",
        "rpcweave.examples.mcp.file_server",
        ".",
    )
    assert called.returncode == 0, called.stdout + called.stderr
    assert called.stdout.strip() == "hi"
