"""Spec material outside the repository never goes unnoticed (tests/_specs.py, tests/conftest.py).

Each case runs a few of the real spec-using tests in a child pytest, with
``$RPCWEAVE_SPECS`` pointing at a folder made here:

- an empty folder: the tests are skipped, and one line at the end counts them and names the
  files they lacked;
- the same under CI (``CI=true``): they fail, saying why;
- a folder holding the files (links to the copies this run found): they run and pass.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import _specs

REPO = Path(__file__).resolve().parents[2]

# Three tests of tests/a2a_layer/test_a2a_models.py that read a2a/v1.0/a2a.proto through one
# module-scoped fixture (the second and third re-raise the first one's skip), and one
# that reads A2A's schema inside an anyio task group (where a skip loses its reason).
PROTO_TESTS = [
    "tests/a2a_layer/test_a2a_models.py::test_every_proto_message_is_modelled",
    "tests/a2a_layer/test_a2a_models.py::test_descriptors_match_the_proto_service",
    "tests/a2a_layer/test_a2a_models.py::test_http_routes_are_the_proto_annotations",
]
IN_TASK_GROUP = (
    "tests/a2a_layer/test_a2a_server.py::test_list_tasks_pages_filters_and_orders[asyncio]"
)


def run(tests: list[str], specs: Path, *, ci: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", _specs.ENV)}
    env[_specs.ENV] = str(specs)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    if ci:
        env["CI"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *tests],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def summary_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("spec material:")]


def test_missing_spec_files_are_skipped_and_counted_in_one_line(tmp_path: Path) -> None:
    done = run([*PROTO_TESTS, IN_TASK_GROUP], tmp_path, ci=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 skipped" in done.stdout
    assert summary_lines(done.stdout) == [
        "spec material: 4 tests need a2a/v1.0/a2a.proto, a2a/v1.0/a2a.schema.json, "
        f"not found in ${_specs.ENV} ({tmp_path}); they were skipped"
    ]


def test_under_ci_missing_spec_files_fail_the_run(tmp_path: Path) -> None:
    done = run([*PROTO_TESTS, IN_TASK_GROUP], tmp_path, ci=True)
    assert done.returncode == 1, done.stdout + done.stderr
    # The three whose fixture needs the proto error at setup; the fourth fails in its body.
    assert "1 failed, 3 errors" in done.stdout
    assert "spec material missing: a2a/v1.0/a2a.proto" in done.stdout
    assert "[CI requires the spec material]" in done.stdout
    assert summary_lines(done.stdout) == [
        "spec material: 4 tests need a2a/v1.0/a2a.proto, a2a/v1.0/a2a.schema.json, "
        f"not found in ${_specs.ENV} ({tmp_path}); they FAILED (CI needs them)"
    ]


def test_rpcweave_specs_points_the_tests_at_a_copy(tmp_path: Path) -> None:
    for name in ("a2a/v1.0/a2a.proto", "a2a/v1.0/a2a.schema.json"):
        link = tmp_path / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(_specs.need(name))  # this run's copy (skipped or failed if none)
    done = run([*PROTO_TESTS, IN_TASK_GROUP], tmp_path, ci=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 passed" in done.stdout
    assert summary_lines(done.stdout) == []
