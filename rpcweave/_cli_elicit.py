"""``rpcweave mcp call`` answering a tool's questions (elicitation) on the terminal.

Rules:

1. One handler serves both eras: `ClientSession` calls it for a handshake-era
   ``elicitation/create`` request and for each elicitation of a 2026-07-28
   input-required round alike.
2. On a terminal (stdin is a TTY) the question is asked on stderr (stdout keeps the
   tool's result): form mode asks each field of the requested schema with its type,
   description, default and choices, validates the answer and asks again when it does
   not fit, then whether to send the answers (accept), decline or cancel; URL mode
   prints the URL and asks whether to continue. End of input (Ctrl-D) cancels.
3. The user's time does not count against ``--timeout``: while a question is on the
   terminal the call's deadline (`TerminalElicitation.deadline`, a cancel scope the
   command puts around the call) is suspended, and what was left of it resumes after.
4. Without a terminal nothing is asked: the question is answered ``cancel`` (a user who
   dismissed it) and recorded in `TerminalElicitation.unanswered`, which the command
   turns into its one-line error (`no_terminal_error`).
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable
from typing import Any, TextIO

import anyio

from ._cli_common import CLIError

__all__ = ["TerminalElicitation", "describe_request", "no_terminal_error"]

_YES = {"y", "yes", "true", "t", "1", "on"}
_NO = {"n", "no", "false", "f", "0", "off"}
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATE_TIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?$"
)


class _Cancelled(Exception):
    """End of input: the user dismissed the question."""


def _data(value: Any) -> dict[str, Any]:
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        result: dict[str, Any] = dump(by_alias=True, exclude_none=True, mode="json")
        return result
    return dict(value) if isinstance(value, dict) else {}


def _fields(data: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], set[str]]:
    schema = data.get("requestedSchema") or {}
    properties = schema.get("properties") or {}
    return {k: v for k, v in properties.items() if isinstance(v, dict)}, set(
        schema.get("required") or []
    )


def _choices(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """(value, label) of a single- or multi-select field; empty for other fields."""
    source = spec.get("items") if spec.get("type") == "array" else spec
    if not isinstance(source, dict):
        return []
    titled = source.get("oneOf") or source.get("anyOf")
    if isinstance(titled, list):
        return [(str(o.get("const")), str(o.get("title", o.get("const")))) for o in titled]
    values = [str(v) for v in source.get("enum") or []]
    names = spec.get("enumNames") or values
    return list(zip(values, [str(n) for n in names], strict=False))


def _kind(spec: dict[str, Any]) -> str:
    kind = str(spec.get("type", "string"))
    if _choices(spec):
        return "choose several" if kind == "array" else "choose one"
    return f"{kind}, {spec['format']}" if spec.get("format") else kind


def describe_request(params: Any) -> str:
    """What an elicitation asks, in one line: its message and its fields (or URL)."""
    data = _data(params)
    message = " ".join(str(data.get("message", "")).split())
    if data.get("mode") == "url":
        return f"{message} at {data.get('url')}"
    fields, _ = _fields(data)
    listed = ", ".join(f"{name} ({_kind(spec)})" for name, spec in fields.items())
    return f"{message} fields: {listed}" if listed else message


def no_terminal_error(tool: str, asked: list[str]) -> CLIError:
    """The one line for a tool that asked for input with no terminal to ask on (rule 4)."""
    what = "; ".join(asked)
    return CLIError(f"tool {tool!r} asked for input ({what}) and there is no terminal to ask on")


def _parse(spec: dict[str, Any], text: str) -> Any:
    """The value ``text`` gives the field ``spec``; ValueError saying why it does not fit."""
    kind = spec.get("type", "string")
    choices = _choices(spec)
    if choices:
        picked = (
            [_pick(choices, part.strip()) for part in text.split(",")]
            if kind == "array"
            else [_pick(choices, text)]
        )
        if kind != "array":
            return picked[0]
        _check_range(len(picked), spec.get("minItems"), spec.get("maxItems"), " choices")
        return picked
    if kind == "boolean":
        if text.lower() in _YES:
            return True
        if text.lower() in _NO:
            return False
        raise ValueError("answer yes or no")
    if kind in ("number", "integer"):
        try:
            number: int | float = int(text) if kind == "integer" else float(text)
        except ValueError:
            raise ValueError(f"not {'an integer' if kind == 'integer' else 'a number'}") from None
        _check_range(number, spec.get("minimum"), spec.get("maximum"), "")
        return number
    return _check_string(spec, text)


def _check_range(value: float, low: float | None, high: float | None, unit: str) -> None:
    if low is not None and high is not None and not low <= value <= high:
        raise ValueError(f"must be between {low} and {high}{unit}")
    if low is not None and value < low:
        raise ValueError(f"at least {low}{unit}")
    if high is not None and value > high:
        raise ValueError(f"at most {high}{unit}")


def _check_string(spec: dict[str, Any], text: str) -> str:
    low, high = spec.get("minLength"), spec.get("maxLength")
    if low is not None and len(text) < low:
        raise ValueError(f"at least {low} characters")
    if high is not None and len(text) > high:
        raise ValueError(f"at most {high} characters")
    pattern = spec.get("pattern")
    if pattern and not re.search(pattern, text):
        raise ValueError(f"must match {pattern}")
    checks: dict[str, Callable[[str], bool]] = {
        "email": lambda t: bool(_EMAIL.match(t)),
        "uri": lambda t: bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$", t)),
        "date": lambda t: bool(_DATE.match(t)),
        "date-time": lambda t: bool(_DATE_TIME.match(t)),
    }
    check = checks.get(str(spec.get("format")))
    if check is not None and not check(text):
        raise ValueError(f"not a valid {spec['format']}")
    return text


def _pick(choices: list[tuple[str, str]], text: str) -> str:
    if text.isdigit() and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1][0]
    for value, label in choices:
        if text.lower() in (value.lower(), label.lower()):
            return value
    raise ValueError("pick one of the numbers or values shown")


class TerminalElicitation:
    """The elicitation handler of ``rpcweave mcp call`` (module rules 1-4).

    ``stdin``/``out`` default to the process's stdin and stderr; ``interactive``
    defaults to whether stdin is a terminal."""

    def __init__(
        self,
        tool: str,
        *,
        stdin: TextIO | None = None,
        out: TextIO | None = None,
        interactive: bool | None = None,
    ) -> None:
        self.tool = tool
        self.stdin = stdin if stdin is not None else sys.stdin
        self.out = out if out is not None else sys.stderr
        if interactive is None:
            try:
                interactive = self.stdin.isatty()
            except (AttributeError, ValueError):
                interactive = False
        self.interactive = interactive
        self.unanswered: list[str] = []
        """What the tool asked that could not be asked (rule 4)."""
        self.deadline: anyio.CancelScope | None = None
        """The call's deadline, suspended while the user answers (rule 3)."""
        self._asking = 0
        self._left = 0.0
        self._one_at_a_time = anyio.Lock()

    async def __call__(self, params: Any) -> Any:
        from mcp_layer.types import ElicitResult

        if not self.interactive:
            self.unanswered.append(describe_request(params))
            return ElicitResult(action="cancel")
        self._suspend()
        try:
            # The thread reads the terminal; a cancelled call leaves it blocked on its
            # read, which ends with the process.
            async with self._one_at_a_time:
                action, content = await anyio.to_thread.run_sync(
                    self._ask, _data(params), abandon_on_cancel=True
                )
        finally:
            self._resume()
        return ElicitResult(action=action, content=content)

    def _suspend(self) -> None:
        if self.deadline is not None and self._asking == 0:
            self._left = self.deadline.deadline - anyio.current_time()
            self.deadline.deadline = math.inf
        self._asking += 1

    def _resume(self) -> None:
        self._asking -= 1
        if self.deadline is not None and self._asking == 0:
            self.deadline.deadline = anyio.current_time() + self._left

    def _say(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def _read(self, prompt: str) -> str:
        self._say(prompt)
        line = self.stdin.readline()
        if not line:
            self._say("\n")
            raise _Cancelled
        return line.strip()

    def _ask(self, data: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        self._say(f"tool {self.tool!r} asks: {data.get('message', '')}\n")
        try:
            if data.get("mode") == "url":
                self._say(f"  open {data.get('url')}\n")
                return self._confirm("continue once done?"), None
            content = self._form(data)
            action = self._confirm("send these answers?")
        except _Cancelled:
            return "cancel", None
        return action, content if action == "accept" else None

    def _confirm(self, question: str) -> str:
        while True:
            answer = self._read(f"{question} [Y]es / [n]o, decline / [c]ancel: ").lower()
            if answer in ("", "y", "yes"):
                return "accept"
            if answer in ("n", "no", "decline"):
                return "decline"
            if answer in ("c", "cancel"):
                return "cancel"
            self._say("  ! answer y, n or c\n")

    def _form(self, data: dict[str, Any]) -> dict[str, Any]:
        fields, required = _fields(data)
        if fields:
            self._say("  (Enter keeps the default; '-' skips an optional field; Ctrl-D cancels)\n")
        content: dict[str, Any] = {}
        for name, spec in fields.items():
            value = self._field(name, spec, name in required)
            if value is not None:
                content[name] = value
        return content

    def _field(self, name: str, spec: dict[str, Any], required: bool) -> Any:
        title = spec.get("title")
        head = f"{name}" + (f" “{title}”" if title and title != name else "")
        details = _kind(spec) + ("" if required else ", optional")
        about = f": {spec['description']}" if spec.get("description") else ""
        self._say(f"  {head} ({details}){about}\n")  # unlike the prompt, "  name: "
        choices = _choices(spec)
        if choices:
            listed = "  ".join(f"{i}) {label}" for i, (_, label) in enumerate(choices, 1))
            self._say(f"    {listed}\n")
        default = spec.get("default")
        shown = "" if default is None else f" [{_show(default)}]"
        while True:
            text = self._read(f"  {name}{shown}: ")
            if not text:
                if default is not None:
                    return default
                if not required:
                    return None
                self._say("  ! required\n")
                continue
            if text == "-" and not required:
                return None
            try:
                return _parse(spec, text)
            except ValueError as exc:
                self._say(f"  ! {exc}\n")


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)
