from __future__ import annotations

import gc
import re
from collections.abc import Generator
from typing import Any

import _specs
import pytest

# Shared test helpers keep pytest's detailed assertion messages.
pytest.register_assert_rewrite("_acp_interop", "_http_fixtures")

# PostgreSQL fixtures (postgres_dsn, pg_dsn) for the scale-out tests.
pytest_plugins = ["scaleout.postgres"]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run every async test on both anyio backends."""
    return str(request.param)


# -- spec material (tests/_specs.py decides where each file comes from) -----------------

_LACKING = pytest.StashKey[dict[str, set[str]]]()
_NAMES = re.compile(re.escape(_specs.MISSING) + r" (.+?) \(")
_collect_after = False


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{_specs.MARK}(*names): the test needs these spec files (tests/_specs.py)"
    )
    config.stash[_LACKING] = {}


def pytest_report_header(config: pytest.Config) -> str:
    label, root = _specs.folder()
    used = sorted({_specs.source(name) for name in _specs.PACKAGED} - {label, "missing"})
    extra = f"; ACP wire checks use the schema of {', '.join(used)}" if used else ""
    present = "" if root.is_dir() else " (absent)"
    return f"spec material: {label} = {root}{present}{extra}"


def pytest_runtest_setup(item: pytest.Item) -> None:
    _specs.check_marks(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    # Names asked for in this phase, and those in the reason (a module-scoped fixture that
    # skipped re-raises its skip without asking again).
    names = _specs.take_asked()
    text = str(report.longrepr)
    # A skip's reason, or a failure that is only `need`'s message (pytrace=False): not any
    # failure whose output happens to quote one.
    if report.skipped or (report.failed and text.startswith(_specs.MISSING)):
        names |= {name.strip() for found in _NAMES.findall(text) for name in found.split(",")}
    if names and (report.skipped or report.failed):
        item.config.stash[_LACKING].setdefault(item.nodeid, set()).update(names)
        if call.excinfo is not None and hasattr(call.excinfo.value, "exceptions"):
            global _collect_after
            _collect_after = True


def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    global _collect_after
    if _collect_after:
        # A spec file was asked for inside a task group: the asyncio task that carried
        # the group is garbage now. Collect it at this safe point: its finalizer, run by
        # chance inside a later `ast.parse` (a lazy import), makes CPython 3.11 raise
        # "SystemError: AST constructor recursion depth mismatch".
        _collect_after = False
        gc.collect()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    lacking = config.stash.get(_LACKING, {})
    if not lacking:
        return
    names = sorted(set().union(*lacking.values()))
    label, root = _specs.folder()
    where = f"{label} ({root})" if label != "../shared/specs" else "../shared/specs"
    hint = "" if label != "../shared/specs" else f" (set {_specs.ENV}=/path/to/specs)"
    outcome = "they FAILED (CI needs them)" if _specs.in_ci() else "they were skipped"
    terminalreporter.write_line(
        f"spec material: {len(lacking)} tests need {', '.join(names)}, "
        f"not found in {where}{hint}; {outcome}",
        yellow=not _specs.in_ci(),
        red=_specs.in_ci(),
        bold=True,
    )
