"""Without ``opentelemetry`` importable, rpcweave imports none of it and still works."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = r"""
import sys

class HideOpenTelemetry:
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ImportError(f"{name} is hidden")
        return None

if sys.argv[1] == "hidden":
    sys.meta_path.insert(0, HideOpenTelemetry())

import anyio
from mcp_layer import MCPServer, connect
import acp_layer, a2a_layer  # noqa: F401
from jsonrpc_core import _telemetry

server = MCPServer("plain", "1.0")

@server.tool()
def add(a: int, b: int) -> int:
    return a + b

async def main() -> None:
    async with connect(server) as client:
        result = await client.call_tool("add", {"a": 1, "b": 2})
        assert result.structured_content == {"result": 3}, result

anyio.run(main)
loaded = sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry")
print("installed:", _telemetry._otel_installed, "loaded:", loaded)
if sys.argv[1] == "configured":
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    anyio.run(main)
    print("spans:", sorted({span.name for span in exporter.get_finished_spans()}))
"""


def run(mode: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, mode], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_nothing_imports_opentelemetry_when_it_is_not_installed() -> None:
    assert run("hidden").splitlines() == ["installed: False loaded: []"]


def test_nothing_imports_opentelemetry_until_someone_configures_it() -> None:
    # Installed but unused: still nothing imported (importing it costs at startup).
    assert run("unused").splitlines() == ["installed: True loaded: []"]


def test_a_provider_configured_later_is_used_by_peers_built_before() -> None:
    lines = run("configured").splitlines()
    assert lines[0] == "installed: True loaded: []"
    assert lines[1] == "spans: ['initialize', 'notifications/initialized', 'tools/call add']"
