"""Without ``opentelemetry`` importable, rpcweave imports none of it and still works."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_SCRIPT = r"""
import sys

class HideOpenTelemetry:
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ImportError(f"{name} is hidden")
        return None

sys.meta_path.insert(0, HideOpenTelemetry())

import anyio
from mcp_layer import MCPServer, connect
import acp_layer, a2a_layer  # noqa: F401
from jsonrpc_core import Peer, memory_pair
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
assert _telemetry._otel_module is None, _telemetry._otel_module
loaded = sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry")
print("loaded:", loaded)
"""


def test_nothing_imports_opentelemetry_when_it_is_not_installed() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "loaded: []"


def test_the_instrumentation_is_loaded_when_opentelemetry_is_importable() -> None:
    script = _SCRIPT.replace("sys.meta_path.insert(0, HideOpenTelemetry())", "")
    script = script.replace(
        "assert _telemetry._otel_module is None", "assert _telemetry._otel_module"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "opentelemetry.trace" in done.stdout
