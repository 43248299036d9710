"""A test lacking something from outside the repository skips locally and fails under CI
(tests/_required.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import _required
import pytest

ABSENT = "rpcweave-test-no-such-program"


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "yes"])
def test_a_missing_program_fails_the_test_under_ci(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception) as failed:
        _required.program(ABSENT, needed_for="the widget test", how="install the widget")
    message = str(failed.value)
    assert f"{ABSENT} is not on PATH: the widget test cannot run; install the widget" in message
    assert _required.CI_NOTE in message


@pytest.mark.parametrize("value", [None, "", "0", "false"])
def test_a_missing_program_skips_the_test_outside_ci_saying_how_to_get_it(
    value: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.skip.Exception) as skipped:
        _required.program(ABSENT, needed_for="the widget test", how="install the widget")
    assert str(skipped.value) == (
        f"{ABSENT} is not on PATH: the widget test cannot run; install the widget"
    )


def test_a_program_on_path_is_returned_in_and_out_of_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    python = Path(sys.executable)
    monkeypatch.setenv("PATH", str(python.parent))
    for value in ("1", "0"):
        monkeypatch.setenv("CI", value)
        found = _required.program(python.name, needed_for="this test", how="-")
        assert Path(found).samefile(python)


def test_node_and_npm_say_how_to_install_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        _required.node_and_npm("the interop test")
    assert "node is not on PATH: the interop test cannot run" in str(skipped.value)
    assert _required.NODE_HOW in str(skipped.value)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception):
        _required.node_and_npm("the interop test")


def test_missing_spec_material_uses_the_same_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import _specs

    monkeypatch.setenv(_specs.ENV, str(tmp_path))
    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.fail.Exception, match="CI requires the spec material"):
        _specs.need("mcp/none/schema.json")
    monkeypatch.setenv("CI", "0")
    with pytest.raises(pytest.skip.Exception, match=_specs.MISSING):
        _specs.need("mcp/none/schema.json")
    _specs.take_asked()  # the conftest hook must not count this test as lacking spec files
