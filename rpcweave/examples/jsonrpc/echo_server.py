"""A stdio JSON-RPC server built on jsonrpc_core.

Methods:
  echo   returns its params unchanged
  add    {"a": number, "b": number} -> a + b (anything else: -32602)
  sleep  {"seconds": number} -> null after that long; honours cancellation
  fail   its handler raises; the caller gets -32603
  $/cancel_request  notification {"requestId": id}: cancels that running request,
         which is then answered with -32800
  ask    {"question": str} -> calls the client's "client/answer" while this call is in
         flight and returns {"question": ..., "answer": <the client's result>}

Run: python -m rpcweave.examples.jsonrpc.echo_server [--max-message-size BYTES]
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict

from jsonrpc_core import (
    MethodRegistry,
    NotificationType,
    Peer,
    RequestContext,
    RequestId,
    RequestType,
    stdio_server,
)


class AddParams(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    a: float
    b: float


class SleepParams(BaseModel):
    model_config = ConfigDict(strict=True)
    seconds: int | float


class AskParams(BaseModel):
    question: str


class CancelParams(BaseModel):
    requestId: RequestId


ECHO = RequestType[Any, Any]("echo")
ADD = RequestType("add", AddParams, float)
SLEEP = RequestType[SleepParams, None]("sleep", SleepParams)
FAIL = RequestType[Any, Any]("fail")
ASK = RequestType[AskParams, Any]("ask", AskParams)
CLIENT_ANSWER = RequestType[Any, Any]("client/answer")
CANCEL_REQUEST = NotificationType("$/cancel_request", CancelParams)

registry = MethodRegistry()


@registry.method(ECHO)
def echo(params: Any, ctx: RequestContext) -> Any:
    return ctx.raw_params


@registry.method(ADD)
def add(params: AddParams, ctx: RequestContext) -> int | float:
    total = params.a + params.b
    return int(total) if total.is_integer() else total


@registry.method(SLEEP)
async def sleep(params: SleepParams, ctx: RequestContext) -> None:
    await anyio.sleep(params.seconds)


@registry.method(FAIL)
def fail(params: Any, ctx: RequestContext) -> None:
    raise RuntimeError("this handler always fails (secret internals must not leak)")


@registry.method(ASK)
async def ask(params: AskParams, ctx: RequestContext) -> dict[str, Any]:
    answer = await ctx.peer.request(CLIENT_ANSWER, {"question": params.question}, timeout=30)
    return {"question": params.question, "answer": answer}


@registry.method(CANCEL_REQUEST)
def cancel_request(params: CancelParams, ctx: RequestContext) -> None:
    ctx.peer.cancel_incoming(params.requestId)


async def main(max_message_size: int) -> None:
    async with stdio_server(max_message_size=max_message_size) as stream:
        await Peer(stream, registry, name="echo-server").run()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-message-size", type=int, default=16 * 1024 * 1024)
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    args = parser.parse_args()
    anyio.run(main, args.max_message_size, backend=args.backend)
