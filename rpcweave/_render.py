"""Terminal output: colours when they help, a live status line, and ACP session updates.

Rules:

1. Colour and redrawn lines only on a terminal (``isatty``), never with ``NO_COLOR`` or
   ``TERM=dumb``; otherwise every line is plain text, printed once.
2. `AcpView` is called on the connection's read loop: it prints and returns, never waits.
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, TextIO

import anyio

if TYPE_CHECKING:
    from acp_layer import LocalClient
    from acp_layer import schema as acp

__all__ = ["AcpView", "StatusLine", "Style", "indent", "permission_choice"]

_MAX_LINES = 40


class Style:
    """ANSI styles for one output stream (rule 1)."""

    def __init__(self, stream: TextIO, *, color: bool | None = None) -> None:
        if color is None:
            color = _is_terminal(stream) and "NO_COLOR" not in os.environ
        self.color = color

    def _wrap(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def bold(self, text: str) -> str:
        """Bold text."""
        return self._wrap("1", text)

    def dim(self, text: str) -> str:
        """Dimmed text."""
        return self._wrap("2", text)

    def red(self, text: str) -> str:
        """Red text."""
        return self._wrap("31", text)

    def green(self, text: str) -> str:
        """Green text."""
        return self._wrap("32", text)

    def yellow(self, text: str) -> str:
        """Yellow text."""
        return self._wrap("33", text)

    def cyan(self, text: str) -> str:
        """Cyan text."""
        return self._wrap("36", text)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


def indent(text: str, prefix: str = "    ", *, max_lines: int = _MAX_LINES) -> str:
    """``text`` indented, cut after ``max_lines`` lines."""
    lines = text.rstrip("\n").splitlines() or [""]
    shown = lines[:max_lines]
    if len(lines) > max_lines:
        shown.append(f"… ({len(lines) - max_lines} more lines)")
    return "\n".join(prefix + line for line in shown)


class StatusLine:
    """A live status: a spinner redrawn in place on a terminal, plain lines otherwise.

    `set` changes the text; on a terminal `running` keeps the spinner turning, elsewhere
    each new text is printed once as a line of its own (unless ``plain`` is false).
    """

    FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(
        self, out: TextIO | None = None, *, live: bool | None = None, plain: bool = True
    ) -> None:
        self.out = out if out is not None else sys.stdout
        self.live = _is_terminal(self.out) if live is None else live
        self.plain = plain
        self.text = ""
        self._frame = 0
        self._drawn = False

    def set(self, text: str) -> None:
        """Show ``text`` as the current status."""
        if text == self.text:
            return
        self.text = text
        if self.live:
            self._draw()
        elif self.plain:
            print(text, file=self.out, flush=True)

    def _draw(self) -> None:
        frame = self.FRAMES[self._frame % len(self.FRAMES)]
        self.out.write(f"\r\x1b[2K{frame} {self.text}")
        self.out.flush()
        self._drawn = True

    def clear(self) -> None:
        """Remove the live line (before printing something else)."""
        if self.live and self._drawn:
            self.out.write("\r\x1b[2K")
            self.out.flush()
            self._drawn = False

    @asynccontextmanager
    async def running(self, interval: float = 0.1) -> AsyncIterator[StatusLine]:
        """Turn the spinner while the block runs (on a terminal); clear it afterwards."""
        async with anyio.create_task_group() as task_group:
            if self.live:

                async def spin() -> None:
                    while True:
                        await anyio.sleep(interval)
                        self._frame += 1
                        if self.text:
                            self._draw()

                task_group.start_soon(spin)
            try:
                yield self
            finally:
                task_group.cancel_scope.cancel()
                self.clear()


# -- ACP -----------------------------------------------------------------------------------

_PLAN_MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}


def permission_choice(answer: str, options: Sequence[acp.PermissionOption]) -> str | None:
    """The option id an answer picks: a number, an option id or name, yes or no."""
    text = answer.strip().lower()
    if not text:
        return None
    if text.isdigit() and 1 <= int(text) <= len(options):
        return options[int(text) - 1].option_id
    for option in options:
        if text in (option.option_id.lower(), option.name.lower()):
            return option.option_id
    wanted = {"y": "allow", "yes": "allow", "n": "reject", "no": "reject"}.get(text)
    if wanted is not None:
        for option in options:
            if option.kind.startswith(wanted):
                return option.option_id
    return None


class AcpView:
    """Prints a session's updates as they stream (rule 2): message text as it arrives, tool
    calls with their status, plans, diffs and the output of the client's terminals."""

    def __init__(
        self,
        out: TextIO,
        *,
        client: LocalClient | None = None,
        style: Style | None = None,
        chunks_as_lines: bool = False,
    ) -> None:
        self.out = out
        self.client = client
        self.style = style or Style(out)
        self.chunks_as_lines = chunks_as_lines
        self._stream: str | None = None  # the kind of chunk being streamed, if any
        self._titles: dict[str, str] = {}
        self._diffs: set[tuple[str, int]] = set()
        self._terminal_shown: dict[str, int] = {}
        self._call_terminals: dict[str, list[str]] = {}  # tool call id -> its terminals
        self._prompt: tuple[str, TextIO] | None = None  # the input prompt being shown

    def show_prompt(self, prompt: str, stream: TextIO) -> None:
        """Write the input prompt on ``stream``; a line printed before it is answered
        goes above it, and the prompt is drawn again under that line."""
        self._end_stream()
        stream.write(prompt)
        stream.flush()
        self._prompt = (prompt, stream)

    def prompt_answered(self) -> None:
        """The prompt got its line (or was given up): no more redrawing."""
        self._prompt = None

    def _line(self, text: str) -> None:
        self._end_stream()
        if self._prompt is None:
            print(text, file=self.out, flush=True)
            return
        prompt, stream = self._prompt
        # Take the prompt off its line (a new line where a terminal cannot erase one).
        stream.write("\r\x1b[2K" if _is_terminal(stream) else "\n")
        stream.flush()
        print(text, file=self.out, flush=True)
        stream.write(prompt)
        stream.flush()

    def _end_stream(self) -> None:
        if self._stream is not None:
            self._stream = None
            print(file=self.out, flush=True)

    def _chunk(self, kind: str, block: acp.ContentBlock) -> None:
        from acp_layer import schema as s

        text = block.text if isinstance(block, s.TextContent) else f"[{block.type}]"
        if self.chunks_as_lines:  # when other output interleaves (the demo's wire lines)
            label = {"agent": "agent says", "thought": "agent thinks", "user": "user said"}[kind]
            self._line(indent(text, f"{self.style.cyan(label)}: ", max_lines=_MAX_LINES))
            return
        if self._stream != kind:
            self._end_stream()
            self._stream = kind
            if kind == "thought":
                self.out.write(self.style.dim("(thinking) "))
            elif kind == "user":
                self.out.write(self.style.cyan("> "))
        self.out.write(self.style.dim(text) if kind == "thought" else text)
        self.out.flush()

    def update(self, note: acp.SessionNotification) -> None:
        """Print one ``session/update``."""
        from acp_layer import schema as s

        update = note.update
        if isinstance(update, s.AgentMessageChunk):
            self._chunk("agent", update.content)
        elif isinstance(update, s.AgentThoughtChunk):
            self._chunk("thought", update.content)
        elif isinstance(update, s.UserMessageChunk):
            self._chunk("user", update.content)
        elif isinstance(update, s.ToolCall):
            self._titles[update.tool_call_id] = update.title
            kind = f" [{update.kind}]" if update.kind else ""
            self._line(f"{self.style.cyan('⚙')} {update.title}{kind} {self._status(update.status)}")
            self._contents(update.tool_call_id, update.content)
        elif isinstance(update, s.ToolCallProgress):
            title = update.title or self._titles.get(update.tool_call_id, update.tool_call_id)
            self._line(f"  {self.style.cyan('↳')} {title} {self._status(update.status)}")
            self._contents(update.tool_call_id, update.content or [])
        elif isinstance(update, s.Plan):
            self._line(self.style.bold("Plan:"))
            for entry in update.entries:
                mark = _PLAN_MARKS.get(entry.status, "[?]")
                self._line(f"  {mark} {entry.content} ({entry.priority})")
        elif isinstance(update, s.AvailableCommandsUpdate):
            names = " ".join("/" + command.name for command in update.available_commands)
            self._line(self.style.dim(f"(commands: {names})"))
        elif isinstance(update, s.CurrentModeUpdate):
            self._line(self.style.dim(f"(mode: {update.current_mode_id})"))
        elif isinstance(update, s.SessionInfoUpdate):
            if isinstance(update.title, str):
                self._line(self.style.dim(f"(session: {update.title})"))
        elif isinstance(update, s.UsageUpdate):
            self._line(self.style.dim(f"(context: {update.used}/{update.size} tokens)"))
        elif isinstance(update, s.ConfigOptionUpdate):
            self._line(self.style.dim("(configuration options updated)"))
        else:
            self._line(self.style.dim(f"({getattr(update, 'session_update', 'update')})"))

    def _status(self, status: str | None) -> str:
        if status is None:
            return ""
        if status == "completed":
            return self.style.green(status)
        if status == "failed":
            return self.style.red(status)
        return self.style.yellow(status)

    def _contents(self, call_id: str, contents: Sequence[acp.ToolCallContent]) -> None:
        from acp_layer import schema as s

        terminals = self._call_terminals.setdefault(call_id, [])
        for item in contents:
            if isinstance(item, s.Terminal) and item.terminal_id not in terminals:
                terminals.append(item.terminal_id)
        for item in contents:
            if isinstance(item, s.Diff):
                self._diff(item)
            elif isinstance(item, s.Terminal):
                self._terminal(item.terminal_id)
            elif isinstance(item, s.Content):
                block = item.content
                text = block.text if isinstance(block, s.TextContent) else f"[{block.type}]"
                text = self._without_terminal_output(text, terminals)
                if text:
                    self._line(self.style.dim(indent(text)))

    def _without_terminal_output(self, text: str, terminals: Sequence[str]) -> str:
        """``text`` less the output of the call's terminals, already shown in their
        blocks (an agent often repeats it as text, in a code fence or not)."""
        if self.client is None:
            return text
        repeated = False
        for terminal_id in terminals:
            output = (self.client.displayed_output(terminal_id) or "").strip("\n")
            if output.strip() and output in text:
                text = text.replace(output, "", 1)
                repeated = True
        if not repeated:
            return text
        kept = [line for line in text.splitlines() if line.strip()]
        if all(line.strip().startswith("```") for line in kept):
            return ""  # nothing but the fences around the output
        return "\n".join(kept)

    def _diff(self, diff: acp.Diff) -> None:
        key = (diff.path, hash((diff.old_text, diff.new_text)))
        if key in self._diffs:
            return  # the same diff again (a status update repeats it)
        self._diffs.add(key)
        old = (diff.old_text or "").splitlines(keepends=True)
        new = diff.new_text.splitlines(keepends=True)
        label_old = diff.path if diff.old_text is not None else "/dev/null"
        lines = list(difflib.unified_diff(old, new, label_old, diff.path, lineterm=""))
        shown = []
        for line in lines[:_MAX_LINES]:
            line = line.rstrip("\n")
            if line.startswith("+") and not line.startswith("+++"):
                line = self.style.green(line)
            elif line.startswith("-") and not line.startswith("---"):
                line = self.style.red(line)
            shown.append("    " + line)
        if len(lines) > _MAX_LINES:
            shown.append(f"    … ({len(lines) - _MAX_LINES} more lines)")
        self._line("\n".join(shown))

    def _terminal(self, terminal_id: str) -> None:
        text = self.client.displayed_output(terminal_id) if self.client is not None else None
        if text is None:
            return
        shown = self._terminal_shown.get(terminal_id, 0)
        if len(text) > shown:
            self._terminal_shown[terminal_id] = len(text)
            self._line(self.style.dim(indent(text[shown:], "    │ ")))

    def permission(self, request: acp.RequestPermissionRequest) -> str:
        """The question for a permission request, its options numbered."""
        self._end_stream()
        title = request.tool_call.title or self._titles.get(request.tool_call.tool_call_id, "")
        lines = [self.style.bold(f"? The agent asks permission: {title}")]
        for number, option in enumerate(request.options, 1):
            lines.append(f"  {number}) {option.name} ({option.kind})")
        return "\n".join(lines)

    def not_found(self, path: str) -> None:
        """Note a file the agent looked for that is not there (information: an agent reads
        a file before writing it, for the diff, and a new file is not there yet)."""
        self._line(self.style.dim(f"(the agent looked for {path}: not there yet)"))

    def end_turn(self, stop_reason: str) -> None:
        """Close the turn's output with its stop reason."""
        mark = self.style.green if stop_reason == "end_turn" else self.style.yellow
        self._line(mark(f"[turn ended: {stop_reason}]"))

    def finish(self) -> None:
        """End a line left open by streamed text."""
        self._end_stream()
