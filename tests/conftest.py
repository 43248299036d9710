from __future__ import annotations

import pytest

# Shared test helpers keep pytest's detailed assertion messages.
pytest.register_assert_rewrite("_acp_interop", "_http_fixtures")

# PostgreSQL fixtures (postgres_dsn, pg_dsn) for the scale-out tests.
pytest_plugins = ["scaleout.postgres"]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run every async test on both anyio backends."""
    return str(request.param)
