"""A mutation fuzzer for running servers: valid messages of every method, corrupted.

`make_inputs` turns valid params (per method) into a list of `Input`: one line of bytes
each, with what the server must answer:

* ``"req"``: a request whose envelope keeps its id: exactly one response with that id.
* ``"null"``: bytes that are not JSON (invalid UTF-8, truncation, deep nesting past the
  parser's limit, stray bytes): exactly one error response with id ``null``.
* ``"either"``: a request nested close to the parser's depth limit: exactly one answer,
  with its id or (a parse error) with ``null``.

`StdioFuzz` drives a process over NDJSON; `post_one` one HTTP POST. Both check that
every response is well formed. Randomness comes from a seeded `random.Random`, so a
failing run can be repeated.
"""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import Process

from .kit import deep

__all__ = ["Input", "StdioFuzz", "check_response", "make_inputs", "mutate"]

_WEIRD: list[Any] = [
    None,
    True,
    -1,
    0,
    2**63,
    -(2**63) - 1,
    10**400,
    1e308,
    -1e308,
    5e-324,
    "",
    "\x00",
    "\u202e",
    "../../../../etc/passwd",
    "x" * 1000,
    [],
    {},
    [[[]]],
    {"": {}},
    {"$ref": "#"},
    {"__proto__": {"polluted": True}},
]


def _random_json(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.5:
        return rng.choice(
            [
                rng.choice(_WEIRD),
                rng.randint(-(2**70), 2**70),
                rng.random() * 10 ** rng.randint(-300, 300),
                "".join(chr(rng.randint(32, 0x2FFF)) for _ in range(rng.randint(0, 12))),
            ]
        )
    if roll < 0.75:
        return [_random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {
        "".join(chr(rng.randint(97, 122)) for _ in range(rng.randint(1, 8))): _random_json(
            rng, depth + 1
        )
        for _ in range(rng.randint(0, 4))
    }


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if len(prefix) >= 10:
        return found
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    clone = value.copy()
    clone[path[0]] = _set(value[path[0]], path[1:], new)
    return clone


def _delete(value: Any, path: tuple[Any, ...]) -> Any:
    clone = value.copy()
    if len(path) == 1:
        del clone[path[0]]
    else:
        clone[path[0]] = _delete(value[path[0]], path[1:])
    return clone


def mutate(rng: random.Random, valid: Any, long_string: int) -> Any:
    """``valid`` with one to three members replaced, removed, added or wrapped."""
    value = valid
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(_paths(value))
        action = rng.random()
        if action < 0.2 and path:
            value = _delete(value, path)
        elif action < 0.35:
            target = value
            for key in path:
                target = target[key]
            if isinstance(target, dict):
                value = _set(value, path, {**target, "x" * rng.randint(1, 300): _random_json(rng)})
            else:
                value = _set(value, path, [target])
        elif action < 0.42:
            value = _set(value, path, "y" * long_string)
        elif action < 0.47:
            value = _set(value, path, deep(rng.randint(1, 40)))
        else:
            value = _set(value, path, _random_json(rng))
    return value


@dataclass(frozen=True)
class Input:
    """One line to send and what it must be answered with (module docstring)."""

    kind: str
    id: str | None
    data: bytes
    method: str = ""


def _line(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8", "surrogatepass"
    )


def make_inputs(
    examples: Mapping[str, Sequence[Any]],
    count: int,
    *,
    seed: int,
    long_string: int,
    prefix: str = "fz",
    long_every: int = 40,
) -> list[Input]:
    """``count`` corrupted messages built from valid ``examples`` (method -> params)."""
    rng = random.Random(seed)
    methods = sorted(examples)
    inputs: list[Input] = []
    for n in range(count):
        method = rng.choice(methods)
        params = rng.choice(list(examples[method]))
        request_id = f"{prefix}-{n}"
        envelope: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        roll = rng.random()
        if n % long_every == 0:
            envelope["params"] = _set(params, rng.choice(_paths(params)), "L" * long_string)
        elif roll < 0.55:
            envelope["params"] = mutate(rng, params, 64)
        elif roll < 0.65:
            envelope["params"] = _random_json(rng)
        elif roll < 0.70:
            envelope["params"] = params
        elif roll < 0.75:
            envelope["method"] = rng.choice(
                [None, 7, [], {}, "", "x" * 10_000, method.upper(), method + "/x", "rpc.x"]
            )
            envelope["params"] = params
        elif roll < 0.80:
            envelope["jsonrpc"] = rng.choice(["1.0", 2.0, None, "2.0 "])
            envelope["params"] = params
        elif roll < 0.83:
            envelope["params"] = {"a": deep(rng.randint(60, 150))}
            inputs.append(Input("either", request_id, _line(envelope), method))
            continue
        else:
            data = _line({**envelope, "params": params})
            inputs.append(Input("null", None, _corrupt(rng, data), method))
            continue
        inputs.append(Input("req", request_id, _line(envelope), method))
    return inputs


def _corrupt(rng: random.Random, data: bytes) -> bytes:
    """Bytes that are certainly not JSON (and hold no newline)."""
    choice = rng.randrange(6)
    if choice == 0:  # invalid UTF-8 inside a string
        cut = data.index(b'"method":"') + 10
        return (
            data[:cut] + rng.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8"]) + data[cut:]
        )
    if choice == 1:  # truncated
        return data[: rng.randint(1, max(1, len(data) - 1))]
    if choice == 2:  # deep nesting past the parser's limit
        return b'{"jsonrpc":"2.0","id":1,"method":"x","params":' + b"[" * 5000 + b"]" * 5000 + b"}"
    if choice == 3:  # stray bytes in front
        return bytes(rng.randint(0x21, 0x7E) for _ in range(3)).replace(b"{", b"#") + b"\x01" + data
    if choice == 4:  # a lone surrogate escape, or a raw control character
        return data.replace(b'"jsonrpc"', rng.choice([b'"\\ud800"', b'"js\x01onrpc"']), 1)
    return b'{"jsonrpc":"2.0","id":' + str(rng.randint(0, 9)).encode() + b",}"


def check_response(obj: Any) -> Any:
    """Assert ``obj`` is a well-formed JSON-RPC response; return its id."""
    assert isinstance(obj, dict), obj
    assert obj.get("jsonrpc") == "2.0", obj
    assert "id" in obj, obj
    assert ("result" in obj) != ("error" in obj), obj
    if "error" in obj:
        error = obj["error"]
        assert isinstance(error, dict), obj
        assert isinstance(error.get("code"), int), obj
        assert isinstance(error.get("message"), str), obj
        assert len(error["message"]) < 8192, "an error message must not echo huge input"
    return obj["id"]


@dataclass
class StdioFuzz:
    """Talks raw NDJSON to a server process; answers its requests with -32601.

    Use inside ``async with fuzz.reading():`` so that the process's output is read all
    the time (a client that stops reading while it writes deadlocks any pipe server).
    """

    process: Process
    responses: dict[Any, int] = field(default_factory=dict)
    results: dict[Any, Any] = field(default_factory=dict)
    null_errors: int = 0
    _buffer: bytes = b""
    _changed: anyio.Event = field(default_factory=anyio.Event)
    _outgoing: list[bytes] = field(default_factory=list)

    @asynccontextmanager
    async def reading(self) -> AsyncIterator[StdioFuzz]:
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(self._read_forever)
            try:
                yield self
            finally:
                task_group.cancel_scope.cancel()

    async def _read_forever(self) -> None:
        assert self.process.stdout is not None
        async for chunk in self.process.stdout:
            self._buffer += chunk
            *lines, self._buffer = self._buffer.split(b"\n")
            for line in lines:
                if line.strip():
                    self._handle(json.loads(line))
            for data in self._outgoing:
                await self.send(data)
            self._outgoing.clear()
            self._changed.set()
            self._changed = anyio.Event()

    async def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(data + b"\n")

    async def _wait(self, done: Any) -> None:
        while not done():
            await self._changed.wait()

    async def request(self, request_id: str, method: str, params: Any = None) -> Any:
        """Send a well-formed request and wait for its answer (bounded)."""
        envelope: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            envelope["params"] = params
        await self.send(_line(envelope))
        with anyio.fail_after(30):
            await self._wait(lambda: request_id in self.results)
        return self.results[request_id]

    def _handle(self, obj: Any) -> None:
        if isinstance(obj, dict) and "method" in obj:
            if "id" in obj:  # the server asks us something: refuse it
                error = {"code": -32601, "message": "Method not found"}
                self._outgoing.append(_line({"jsonrpc": "2.0", "id": obj["id"], "error": error}))
            return
        request_id = check_response(obj)
        if request_id is None:
            self.null_errors += 1
            return
        self.responses[request_id] = self.responses.get(request_id, 0) + 1
        self.results[request_id] = obj

    async def run(self, inputs: Sequence[Input], *, window: int = 32) -> None:
        """Send ``inputs`` (at most ``window`` unanswered at a time) and collect every
        answer; fails if one is missing, doubled or malformed, or the server hangs.
        ``"either"`` inputs (nesting near the parser's limit) may be answered with their
        id or with ``null``, once."""
        null_before = self.null_errors
        ids = [i.id for i in inputs if i.kind != "null" and i.id is not None]
        either = {i.id for i in inputs if i.kind == "either"}
        strict_null = sum(1 for i in inputs if i.kind == "null")

        def unanswered() -> int:
            got = sum(1 for i in ids if i in self.responses)
            return len(ids) - got + strict_null - (self.null_errors - null_before)

        try:
            with anyio.fail_after(60 + len(inputs) * 0.05):
                for sent, item in enumerate(inputs, 1):
                    await self.send(item.data)
                    await self._wait(lambda s=sent: unanswered() - (len(inputs) - s) <= window)
                await self._wait(lambda: unanswered() <= 0)
        except TimeoutError:
            missing = [i.data[:300] for i in inputs if i.id and i.id not in self.responses]
            raise AssertionError(
                f"no answer (hang?): {self.null_errors - null_before} null-id errors for "
                f"{strict_null} non-JSON lines, unanswered: {missing[:10]}"
            ) from None
        doubled = {k: v for k, v in self.responses.items() if v != 1}
        assert not doubled, f"answered more than once: {doubled}"
        answered_either = sum(1 for i in either if i in self.responses)
        extra_null = self.null_errors - null_before - strict_null
        strict_missing = [i for i in ids if i not in either and i not in self.responses]
        assert not strict_missing, f"never answered: {strict_missing}"
        assert answered_either + extra_null == len(either), (answered_either, extra_null)
