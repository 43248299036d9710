"""PostgreSQL for the scale-out tests (a pytest plugin, loaded by ``tests/conftest.py``).

``postgres_dsn`` (session): ``$RPCWEAVE_PG_DSN`` if set (CI sets it: ``.ci/run`` starts
a cluster with ``scripts/postgres.sh``); otherwise a throwaway cluster started here with
the same script when PostgreSQL's server programs are installed. Without either the
tests are skipped, with the reason, except in CI (``CI=true``), where that is a failure.

``pg_dsn`` (per test) and ``pg_module_dsn`` (per module): a fresh database on that
cluster, dropped afterwards.
"""

from __future__ import annotations

import os
import secrets
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "postgres.sh"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"PostgreSQL is required in CI: {reason}", pytrace=False)
    pytest.skip(f"PostgreSQL not available: {reason} (set RPCWEAVE_PG_DSN or make postgres-up)")


def _driver() -> None:
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        _unavailable("psycopg is not installed (pip install -e '.[postgres]')")


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    _driver()
    dsn = os.environ.get("RPCWEAVE_PG_DSN")
    if dsn:
        yield dsn
        return
    started = subprocess.run(["bash", str(SCRIPT), "up"], capture_output=True, text=True)
    if started.returncode != 0:
        _unavailable(started.stderr.strip().splitlines()[-1] if started.stderr else "no initdb")
    env = dict(
        line.removeprefix("export ").split("=", 1)
        for line in started.stdout.splitlines()
        if line.startswith("export ")
    )
    try:
        yield env["RPCWEAVE_PG_DSN"]
    finally:
        subprocess.run(["bash", str(SCRIPT), "down", env["RPCWEAVE_PG_DIR"]], check=False)


def _with_database(dsn: str, name: str) -> str:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    params = conninfo_to_dict(dsn)
    params["dbname"] = name
    return make_conninfo("", **params)


@contextmanager
def fresh_database(postgres_dsn: str) -> Iterator[str]:
    """A new, empty database on the cluster (dropped at the end); yields its DSN."""
    import psycopg

    name = f"rpcweave_test_{secrets.token_hex(6)}"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_database(postgres_dsn, name)
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def pg_dsn(postgres_dsn: str) -> Iterator[str]:
    with fresh_database(postgres_dsn) as dsn:
        yield dsn


@pytest.fixture(scope="module")
def pg_module_dsn(postgres_dsn: str) -> Iterator[str]:
    """One database for a whole test module (replicas shared by its tests)."""
    with fresh_database(postgres_dsn) as dsn:
        yield dsn
