from __future__ import annotations

import pytest

# PostgreSQL fixtures (postgres_dsn, pg_dsn) for the scale-out tests.
pytest_plugins = ["scaleout.postgres"]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run every async test on both anyio backends."""
    return str(request.param)
