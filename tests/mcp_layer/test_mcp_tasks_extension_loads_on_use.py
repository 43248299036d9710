"""An `MCPServer` loads the tasks extension only when a tool declares ``task_support``.

Same style as ``test_lazy_imports.py``: each check runs in a fresh interpreter, so what
this process imported does not count.
"""

from __future__ import annotations

import json
import subprocess
import sys


def _loaded_after(code: str) -> set[str]:
    """The modules ``sys.modules`` holds after running ``code`` in a fresh interpreter."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


SERVER = (
    "from mcp_layer import MCPServer\n"
    "server = MCPServer('s')\n"
    "def echo(text: str) -> str:\n"
    "    return text\n"
)


def test_an_http_server_without_task_tools_skips_the_tasks_extension() -> None:
    loaded = _loaded_after(SERVER + "server.add_tool(echo)\nserver.asgi_app()\n")
    assert {"mcp_layer._server", "mcp_layer._http"} <= loaded
    assert "mcp_layer._tasks" not in loaded


def test_a_task_tool_loads_the_tasks_extension() -> None:
    loaded = _loaded_after(SERVER + "server.add_tool(echo, task_support='optional')\n")
    assert "mcp_layer._tasks" in loaded


def test_a_server_given_a_task_manager_keeps_it() -> None:
    code = (
        "from mcp_layer import MCPServer, TaskManager\n"
        "manager = TaskManager()\n"
        "server = MCPServer('s', tasks=manager)\n"
        "server.add_tool(lambda text: text, name='echo', task_support='optional')\n"
        "assert server.tasks is manager\n"
    )
    assert "mcp_layer._tasks" in _loaded_after(code)
