"""ACP security: `LocalClient` confines file access and terminals to the session's workspace.

A hostile agent, on a real agent↔client connection (both ends speaking JSON-RPC over a
byte stream), tries every way out it can name: ``..`` traversal, absolute paths outside,
a sibling directory sharing the workspace's name as a prefix, symbolic links to files and
directories outside (chained, dangling), ``~``, NUL bytes, paths longer than the OS allows,
writes along the same routes, and terminals started outside. Each is refused with a clear
-32602 (or -32002 for what does not exist), nothing outside is read or written, and the
connection keeps serving. The last tests swap a checked directory for a symbolic link
between the check and the access.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp_fixtures.wire import connected, requires_acp_schema

from acp_layer import Agent, LocalClient
from acp_layer import schema as s
from jsonrpc_core import JsonRpcError

pytestmark = [
    pytest.mark.anyio,
    requires_acp_schema,
]

SECRET = "TOP-SECRET-4c1d9e"
OUTSIDE_MESSAGES = ("outside the session's workspace", "must be absolute")
INVALID_PARAMS = -32602
NOT_FOUND = -32002


class ProbeAgent(Agent):
    """Sends the raw client calls listed (as JSON ``[[method, params], ...]``) in each prompt
    and keeps every answer: ``{"ok": result}`` or ``{"code": ..., "message": ...}``.
    A ``terminalId`` of ``"$last"`` stands for the last terminal created in the prompt."""

    def __init__(self) -> None:
        self.results: list[dict[str, Any]] = []

    async def prompt(self, params: s.PromptRequest) -> s.StopReason:
        block = params.prompt[0]
        assert isinstance(block, s.TextContent)
        terminal_id = ""
        for method, call in json.loads(block.text):
            call = {"sessionId": params.session_id, **call}
            if call.get("terminalId") == "$last":
                call["terminalId"] = terminal_id
            try:
                result = await self.client.peer.request(method, call)
                self.results.append({"ok": result})
                if isinstance(result, dict) and "terminalId" in result:
                    terminal_id = result["terminalId"]
            except JsonRpcError as exc:
                self.results.append({"code": exc.code, "message": exc.message})
        return "end_turn"


class Tree:
    """A workspace and, beside it, what an agent must never reach."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path
        self.ws = tmp_path / "ws"
        self.outside = tmp_path / "outside"
        self.sibling = tmp_path / "ws-evil"  # shares the workspace's name as a prefix
        (self.ws / "sub").mkdir(parents=True)
        (self.ws / "dir").mkdir()
        (self.ws / "dir" / "secret.txt").write_text("inside\n")
        (self.ws / "lines.txt").write_text("one\ntwo\n")
        self.outside.mkdir()
        (self.outside / "secret.txt").write_text(SECRET + "\n")
        (self.outside / "sub").mkdir()
        self.sibling.mkdir()
        (self.sibling / "secret.txt").write_text(SECRET + "\n")
        (self.ws / "link_dir").symlink_to(self.outside)
        (self.ws / "link_file").symlink_to(self.outside / "secret.txt")
        (self.ws / "link_dangling").symlink_to(self.outside / "planted.txt")
        (self.ws / "sub" / "hop").symlink_to(self.ws / "link_dir")  # chained
        (self.ws / "link_rel").symlink_to(Path("..") / "outside" / "secret.txt")
        self.before = self.snapshot()

    def snapshot(self) -> dict[str, str | None]:
        """Every path outside the workspace, with a regular file's content."""
        seen: dict[str, str | None] = {}
        for path in sorted(self.root.rglob("*")):
            if path == self.ws or self.ws in path.parents:
                continue
            seen[str(path)] = path.read_text() if path.is_file() else None
        return seen

    def assert_outside_untouched(self) -> None:
        assert self.snapshot() == self.before


def read(path: str, **extra: Any) -> list[Any]:
    return ["fs/read_text_file", {"path": path, **extra}]


def write(path: str, content: str = "pwned") -> list[Any]:
    return ["fs/write_text_file", {"path": path, "content": content}]


def escapes(t: Tree) -> list[str]:
    """Paths that name something outside the workspace (or nothing in it)."""
    ws, out = str(t.ws), str(t.outside)
    return [
        # `..` traversal
        f"{ws}/../outside/secret.txt",
        f"{ws}/sub/../../outside/secret.txt",
        f"{ws}/" + "../" * 40 + "etc/passwd",
        f"{ws}/./sub/./../../outside/./secret.txt",
        f"{ws}//..//outside//secret.txt",
        # absolute paths outside, and a sibling sharing the prefix
        f"{out}/secret.txt",
        f"{t.sibling}/secret.txt",
        "/etc/passwd",
        "/",
        str(t.root),
        # symbolic links: to a directory, to a file, chained, relative, dangling
        f"{ws}/link_dir/secret.txt",
        f"{ws}/link_dir/sub/../secret.txt",
        f"{ws}/link_file",
        f"{ws}/sub/hop/secret.txt",
        f"{ws}/link_rel",
        f"{ws}/link_dangling",
        f"{ws}/link_dir/new/deep/planted.txt",
        # `~` is not expanded: relative, so refused
        "~/secret.txt",
        "~root/.profile",
        # relative paths, however innocent
        "lines.txt",
        "./lines.txt",
        "ws/lines.txt",
        "",
    ]


def assert_refused(answer: dict[str, Any], what: str, also: tuple[str, ...] = ()) -> None:
    """-32602 saying why (``also``: other reasons accepted), with no secret in it."""
    assert answer.get("code") == INVALID_PARAMS, (what, answer)
    assert any(m in answer["message"] for m in OUTSIDE_MESSAGES + also), (what, answer)
    assert SECRET not in json.dumps(answer)


async def run(
    t: Tree, client: LocalClient, *batches: list[list[Any]]
) -> tuple[list[dict[str, Any]], str]:
    """Run each batch of calls as one prompt; the answers, and everything the client sent."""
    agent = ProbeAgent()
    with anyio.fail_after(20):
        async with connected(agent, client) as (conn, agent_check, client_check):
            sid = (await conn.new_session(str(t.ws))).session_id
            for batch in batches:
                assert (await conn.prompt(sid, json.dumps(batch))).stop_reason == "end_turn"
            # Still serving: a legitimate read and write after every attack.
            await conn.prompt(
                sid,
                json.dumps([write(f"{t.ws}/after.txt", "still here"), read(f"{t.ws}/after.txt")]),
            )
    assert agent.results[-2:] == [{"ok": {}}, {"ok": {"content": "still here"}}]
    client_check.assert_valid()
    agent_check.assert_valid()
    return agent.results[:-2], json.dumps(client_check.sent())


async def test_reads_outside_the_workspace_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "outside"))  # `~` would land on the secret
    t = Tree(tmp_path)
    paths = escapes(t)
    answers, sent = await run(t, LocalClient(), [read(p) for p in paths])
    for path, answer in zip(paths, answers, strict=True):
        assert_refused(answer, path)
    assert SECRET not in sent
    t.assert_outside_untouched()


async def test_writes_outside_the_workspace_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "outside"))
    t = Tree(tmp_path)
    paths = escapes(t)
    answers, _ = await run(t, LocalClient(), [write(p) for p in paths])
    for path, answer in zip(paths, answers, strict=True):
        assert_refused(answer, path)
    t.assert_outside_untouched()
    assert not (t.outside / "planted.txt").exists()
    assert (t.ws / "link_file").read_text() == SECRET + "\n"  # the link still points out


async def test_inside_the_workspace_works_and_tilde_is_a_plain_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "outside"))
    t = Tree(tmp_path)
    ws = t.ws
    answers, _ = await run(
        t,
        LocalClient(),
        [
            read(f"{ws}/lines.txt", line=2, limit=1),
            read(f"{ws}/sub/../dir/secret.txt"),
            write(f"{ws}/~/note.txt", "tilde"),
            write(f"{ws}/sub/../made/deep/new.txt", "new"),
            read(f"{ws}/missing.txt"),
            read(f"{ws}/sub"),
            write(f"{ws}/sub", "over a directory"),
        ],
    )
    assert answers[0] == {"ok": {"content": "two\n"}}
    assert answers[1] == {"ok": {"content": "inside\n"}}
    assert answers[2:4] == [{"ok": {}}, {"ok": {}}]
    assert (ws / "~" / "note.txt").read_text() == "tilde"
    assert (ws / "made" / "deep" / "new.txt").read_text() == "new"
    assert answers[4]["code"] == NOT_FOUND
    assert answers[5]["code"] == INVALID_PARAMS and "not a file" in answers[5]["message"]
    assert answers[6]["code"] == INVALID_PARAMS and "directory" in answers[6]["message"]
    t.assert_outside_untouched()


async def test_nul_bytes_in_a_path_are_refused(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    ws, out = t.ws, t.outside
    escaping = [
        f"{out}/secret.txt\x00",
        f"{out}/\x00",
        f"{ws}/lines.txt\x00/../../outside/secret.txt",
    ]
    answers, sent = await run(
        t, LocalClient(), [read(p) for p in escaping], [write(p) for p in escaping]
    )
    for path, answer in zip(escaping * 2, answers, strict=True):
        assert_refused(answer, repr(path), also=("NUL", "null"))
    assert SECRET not in sent
    t.assert_outside_untouched()


async def test_a_nul_byte_inside_the_workspace_is_invalid_params(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    inside = [f"{t.ws}/lines.txt\x00", f"{t.ws}/new\x00.txt", f"{t.ws}/link_file\x00"]
    answers, _ = await run(t, LocalClient(), [read(p) for p in inside], [write(p) for p in inside])
    for answer in answers:
        assert answer.get("code") == INVALID_PARAMS, answer
    t.assert_outside_untouched()
    assert sorted(p.name for p in t.ws.iterdir()) == sorted(
        # after.txt: the write that shows the connection still serves
        [
            "dir",
            "sub",
            "lines.txt",
            "link_dir",
            "link_file",
            "link_dangling",
            "link_rel",
            "after.txt",
        ]
    )


async def test_very_long_paths_escaping_the_workspace_are_refused(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    ws = str(t.ws)
    escaping = [
        f"{ws}/" + "x/" * 3000 + "../" * 3001 + "outside/secret.txt",
        f"{ws}/link_dir/" + "a" * 5000,
        str(t.outside) + "/" + "b/" * 3000 + "secret.txt",
    ]
    answers, sent = await run(
        t, LocalClient(), [read(p) for p in escaping], [write(p) for p in escaping]
    )
    for answer in answers:
        assert_refused(answer, "a long path", also=("too long",))
    assert SECRET not in sent
    t.assert_outside_untouched()


async def test_a_path_the_os_refuses_is_invalid_params(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    ws = str(t.ws)
    too_long = [
        f"{ws}/" + "a" * 5000,  # one name over NAME_MAX
        f"{ws}/" + "d/" * 3000 + "f.txt",  # over PATH_MAX
        f"{ws}/lines.txt/under-a-file.txt",  # a file used as a directory
    ]
    answers, _ = await run(
        t, LocalClient(), [read(p) for p in too_long], [write(p) for p in too_long]
    )
    for answer in answers:
        assert answer.get("code") == INVALID_PARAMS, answer


async def test_terminals_cannot_start_outside_the_workspace(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    ws = str(t.ws)
    marker = "import pathlib; pathlib.Path('marker.txt').write_text('ran')"
    cwds = [
        str(t.outside),
        f"{ws}/..",
        f"{ws}/link_dir",
        f"{ws}/sub/hop",
        str(t.sibling),
        "/",
        "~",
        "sub",
        f"{ws}/lines.txt\x00/../../outside",
    ]
    client = LocalClient(commands="allow")
    calls = [
        ["terminal/create", {"command": sys.executable, "args": ["-c", marker], "cwd": cwd}]
        for cwd in cwds
    ]
    answers, _ = await run(t, client, calls)
    for cwd, answer in zip(cwds, answers, strict=True):
        assert_refused(answer, cwd, also=("NUL",))
    assert not client.terminals
    t.assert_outside_untouched()
    assert not list(t.root.rglob("marker.txt"))


async def test_a_terminal_inside_the_workspace_runs_there(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    client = LocalClient(commands="allow")
    script = "import os, pathlib; pathlib.Path('marker.txt').write_text(os.getcwd())"
    answers, _ = await run(
        t,
        client,
        [
            [
                "terminal/create",
                {"command": sys.executable, "args": ["-c", script], "cwd": f"{t.ws}/sub"},
            ],
            ["terminal/wait_for_exit", {"terminalId": "$last"}],
            ["terminal/release", {"terminalId": "$last"}],
            ["terminal/output", {"terminalId": "$last"}],
        ],
    )
    assert (
        answers[1] == {"ok": {"exitCode": 0, "signal": None}} or answers[1]["ok"]["exitCode"] == 0
    )
    assert answers[3].get("code") == NOT_FOUND  # released: a clean error, not a crash
    assert (t.ws / "sub" / "marker.txt").read_text() == str((t.ws / "sub").resolve())
    assert not client.terminals
    t.assert_outside_untouched()


# --- a directory swapped for a symbolic link after the check -----------------------------


class SwappingClient(LocalClient):
    """After the workspace check, replaces ``ws/dir`` by a symbolic link to ``outside``:
    what a process sharing the workspace (a terminal the agent started) could do at the
    wrong moment. The swap is made deterministic by doing it right after the check."""

    def __init__(self, tree: Tree) -> None:
        super().__init__()
        self.tree = tree
        self.swapped = False

    async def _path(self, session_id: str, path: str) -> Path:
        checked = await super()._path(session_id, path)
        if not self.swapped and "/dir/" in path:
            self.swapped = True
            (self.tree.ws / "dir").rename(self.tree.ws / "dir.moved")
            os.symlink(self.tree.outside, self.tree.ws / "dir")
        return checked


async def test_a_directory_swapped_after_the_check_does_not_leak_a_read(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    answers, sent = await run(t, SwappingClient(t), [read(f"{t.ws}/dir/secret.txt")])
    assert SECRET not in sent
    assert answers[0].get("code") in (INVALID_PARAMS, NOT_FOUND), answers


async def test_a_directory_swapped_after_the_check_does_not_take_a_write(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    answers, _ = await run(t, SwappingClient(t), [write(f"{t.ws}/dir/planted.txt")])
    assert not (t.outside / "planted.txt").exists()
    assert answers[0].get("code") in (INVALID_PARAMS, NOT_FOUND), answers


# --- hard links, and writes that replace the file ----------------------------------------

HARD_LINKS = "has other hard links"


def temporaries(directory: Path) -> list[str]:
    """Names a write may leave behind: anything hidden that the test did not make."""
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


async def test_a_hard_link_to_a_file_outside_is_not_read(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    os.link(t.outside / "secret.txt", t.ws / "hard.txt")
    os.link(t.outside / "secret.txt", t.ws / "sub" / "deeper.txt")
    answers, sent = await run(
        t,
        LocalClient(),
        [read(f"{t.ws}/hard.txt"), read(f"{t.ws}/sub/deeper.txt", line=1, limit=1)],
    )
    for answer in answers:
        assert_refused(answer, "a hard link", also=(HARD_LINKS,))
        assert HARD_LINKS in answer["message"]
    assert SECRET not in sent


async def test_a_hard_link_to_a_file_outside_is_not_written(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    secret = t.outside / "secret.txt"
    inode = secret.stat().st_ino
    os.link(secret, t.ws / "hard.txt")
    answers, _ = await run(t, LocalClient(), [write(f"{t.ws}/hard.txt", "pwned")])
    assert answers[0]["code"] == INVALID_PARAMS and HARD_LINKS in answers[0]["message"]
    assert secret.read_text() == SECRET + "\n"
    assert secret.stat().st_ino == inode and secret.stat().st_nlink == 2  # link left alone
    assert (t.ws / "hard.txt").stat().st_ino == inode
    t.assert_outside_untouched()
    assert temporaries(t.ws) == []


async def test_a_write_replaces_the_file_by_a_rename_and_keeps_its_mode(tmp_path: Path) -> None:
    t = Tree(tmp_path)
    target = t.ws / "sub" / "plain.txt"
    target.write_text("old content, longer than the new one\n")
    target.chmod(0o640)
    before = target.stat()
    answers, _ = await run(
        t,
        LocalClient(),
        [write(f"{t.ws}/sub/plain.txt", "new\n"), write(f"{t.ws}/sub/fresh.txt", "fresh\n")],
    )
    assert answers == [{"ok": {}}, {"ok": {}}]
    after = target.stat()
    assert after.st_ino != before.st_ino  # a new inode took the name: nothing was truncated
    assert target.read_text() == "new\n"
    assert after.st_mode & 0o7777 == 0o640 and after.st_nlink == 1
    umask = os.umask(0)
    os.umask(umask)
    assert (t.ws / "sub" / "fresh.txt").stat().st_mode & 0o777 == 0o666 & ~umask
    assert temporaries(t.ws / "sub") == [] and temporaries(t.ws) == []


async def test_a_failed_write_removes_its_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = Tree(tmp_path)
    target = t.ws / "dir" / "secret.txt"
    inode = target.stat().st_ino
    seen: list[list[str]] = []
    rename = os.rename

    def failing_rename(src: Any, dst: Any, **kwargs: Any) -> None:
        if str(src).startswith(".rpcweave-") and not seen:
            # The temporary file exists beside the target. (Once: the write `run` makes
            # afterwards to show the connection still serves must succeed.)
            seen.append(temporaries(t.ws / "dir"))
            raise OSError(28, "No space left on device")
        rename(src, dst, **kwargs)

    monkeypatch.setattr(os, "rename", failing_rename)
    answers, _ = await run(t, LocalClient(), [write(f"{t.ws}/dir/secret.txt", "replaced")])
    assert answers[0]["code"] == INVALID_PARAMS
    assert "No space left on device" in answers[0]["message"]
    assert len(seen) == 1 and len(seen[0]) == 1  # it was made, then removed
    assert temporaries(t.ws / "dir") == []
    assert target.read_text() == "inside\n" and target.stat().st_ino == inode


async def test_a_file_we_may_not_write_is_not_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Renaming over a name needs only the directory's permission: the file's own must
    # still be asked. (The tests run as root, for whom access() always says yes: the
    # answer a user without write permission gets is stood in for.)
    t = Tree(tmp_path)
    target = t.ws / "lines.txt"
    target.chmod(0o444)
    access = os.access

    def no_write_to_lines(path: Any, mode: int, **kwargs: Any) -> bool:
        if path == "lines.txt" and mode == os.W_OK:
            return False
        return access(path, mode, **kwargs)

    monkeypatch.setattr(os, "access", no_write_to_lines)
    answers, _ = await run(t, LocalClient(), [write(f"{t.ws}/lines.txt", "replaced")])
    assert answers[0]["code"] == INVALID_PARAMS and "Permission denied" in answers[0]["message"]
    assert target.read_text() == "one\ntwo\n"
    assert temporaries(t.ws) == []
