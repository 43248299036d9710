"""`a2a_layer` loads the parts a server does not use only when it uses them.

An `A2AServer` without push notifications, without the HTTP+JSON binding and without
A2A 0.3 compatibility does not import the push dispatcher, the REST routes or the 0.3
bridge; each of them loads as soon as the server is configured to need it. Each check
runs in a fresh interpreter, so what this process imported does not count.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _loaded_after(code: str) -> set[str]:
    """The modules ``sys.modules`` holds after running ``code`` in a fresh interpreter."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def _server_code(*, push: bool, rest: bool, compat: bool) -> str:
    rest_path = "'/rest'" if rest else "None"
    return (
        "from a2a_layer import A2AServer\n"
        "from a2a_layer.types import AgentCapabilities, AgentCard\n"
        "card = AgentCard(name='a', description='d', version='1',\n"
        f"    capabilities=AgentCapabilities(streaming=True, push_notifications={push}),\n"
        "    default_input_modes=['text/plain'], default_output_modes=['text/plain'])\n"
        "async def agent(context, updater):\n"
        "    await updater.complete()\n"
        f"server = A2AServer(card, agent, url='http://127.0.0.1:1', rest_path={rest_path},\n"
        f"    compat_v03={compat})\n"
        "server.asgi_app()\n"
    )


OPTIONAL_PARTS = {"a2a_layer._push", "a2a_layer._rest", "a2a_layer._http_binding"}
COMPAT = "a2a_layer._compat03"


def test_a_plain_server_skips_push_rest_and_the_03_bridge() -> None:
    loaded = _loaded_after(_server_code(push=False, rest=False, compat=False))
    assert {"a2a_layer._server", "a2a_layer._rpc", "a2a_layer._card"} <= loaded
    assert not loaded & (OPTIONAL_PARTS | {COMPAT, "a2a_layer._client", "httpx"})


@pytest.mark.parametrize(
    ("options", "needed"),
    [
        ({"push": True, "rest": False, "compat": False}, {"a2a_layer._push"}),
        ({"push": False, "rest": True, "compat": False}, {"a2a_layer._rest"}),
        ({"push": False, "rest": False, "compat": True}, {COMPAT}),
    ],
)
def test_each_optional_part_loads_when_configured(
    options: dict[str, bool], needed: set[str]
) -> None:
    loaded = _loaded_after(_server_code(**options))
    assert needed <= loaded


def test_the_card_resolver_still_reads_03_cards() -> None:
    code = (
        "import asyncio, httpx\n"
        "from a2a_layer import resolve_card\n"
        "card = {'name': 'a', 'description': 'd', 'version': '1', 'url': 'http://x/',\n"
        "    'protocolVersion': '0.3.0', 'capabilities': {}, 'skills': [],\n"
        "    'defaultInputModes': [], 'defaultOutputModes': []}\n"
        "def reply(request):\n"
        "    return httpx.Response(200, json=card)\n"
        "async def main():\n"
        "    async with httpx.AsyncClient(transport=httpx.MockTransport(reply)) as http:\n"
        "        got = await resolve_card(http, 'http://x')\n"
        "    assert got.name == 'a' and got.supported_interfaces, got\n"
        "asyncio.run(main())\n"
    )
    assert COMPAT in _loaded_after(code)


@pytest.mark.parametrize("package", ["a2a_layer", "acp_layer"])
def test_every_exported_name_resolves(package: str) -> None:
    optional = {"PostgresTaskStore"}  # needs the postgres extra
    code = (
        f"import {package}\n"
        f"missing = [n for n in {package}.__all__ if n not in {optional!r}\n"
        f"    and getattr({package}, n, None) is None]\n"
        "assert not missing, missing\n"
    )
    _loaded_after(code)
