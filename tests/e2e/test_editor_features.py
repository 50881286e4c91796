"""Cmd-K, terminal Cmd-K and commit messages on the user's own model (issue 34), end to end: a
client of ours speaking each RPC from the reference schema, through a real mitmdump with the
addon, against the fake provider on 127.0.0.1 and a stand-in Cursor backend that records every
byte it receives. Served here, the backend sees nothing of the request (a unique marker is in
every one, searched in every encoding); with "cursor" each call reaches it byte for byte."""

from __future__ import annotations

import json
import os
import sqlite3
import uuid

import pytest
from cursor_client import FAKE_TOKEN
from cursor_client import CursorLikeClient
from fakes.fake_cursor import FakeCursor
from fakes.fake_provider import FakeProvider
from leaks import marker_counts
from mitm import start_in_front_of
from provider_config import write_config

from cursor_byok.pb import aiserver_features_pb2 as fpb
from cursor_byok.wire import connect

pytestmark = pytest.mark.timeout(120)
CMDK = "/aiserver.v1.CmdKService/StreamCmdK"
TERMINAL = "/aiserver.v1.CmdKService/StreamTerminalCmdK"
COMMIT = "/aiserver.v1.AiService/WriteGitCommitMessage"
RERANK = "/aiserver.v1.CmdKService/RerankCmdKContext"
AUTOCOMPLETE = "/aiserver.v1.AiService/StreamTerminalAutocomplete"
CURSOR_FEATURES = '\n[features]\ncmd_k = "cursor"\nterminal = "cursor"\ncommit_message = "cursor"\n'
Wrapped = fpb.StreamCmdKResponseContextWrapped
# A 1x1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d4944415478da63f8cfc0f01f0005000201a5d6dd3c0000000049454e44ae426082"
)


def with_images(config: str) -> str:
    return config.replace(
        "context_window = 64000", "context_window = 64000\nsupports_images = true"
    )


class Setup:
    def __init__(
        self,
        tmp_path,
        workspace,
        fp,
        backend,
        *,
        cursor: bool = False,
        edit=None,
        extra: tuple[str, ...] = (),
        http2: bool = False,
    ) -> None:
        config = write_config(tmp_path, fp, "openai-chat")
        if cursor:
            config.write_text(config.read_text() + CURSOR_FEATURES)
        if edit is not None:
            config.write_text(edit(config.read_text()))
        self.backend = backend
        self.proxy = start_in_front_of(backend, tmp_path / "proxy", config, *extra)
        self.client = CursorLikeClient.to_backend(backend.port, self.proxy, workspace, http2=http2)

    def headers(self, ctype: str) -> dict[str, str]:
        return {
            "content-type": ctype,
            "connect-protocol-version": "1",
            "authorization": FAKE_TOKEN,
        }

    async def unary(self, path: str, message):
        return await self.client.http.post(
            self.client.base_url + path,
            content=message.SerializeToString(),
            headers=self.headers("application/proto"),
        )

    async def stream(self, path: str, message, answer=Wrapped, *, stop_after: int | None = None):
        """The stream's messages and its end; `stop_after`: go away after that many."""
        decoder = connect.EnvelopeDecoder()
        messages, end = [], None
        async with self.client.http.stream(
            "POST",
            self.client.base_url + path,
            content=connect.encode_frame(message.SerializeToString()),
            headers=self.headers("application/connect+proto"),
        ) as response:
            assert response.status_code == 200
            async for chunk in response.aiter_raw():
                for frame in decoder.feed(chunk):
                    if frame.is_end_stream:
                        end = connect.parse_end_stream(frame.payload)
                    else:
                        messages.append(answer.FromString(frame.payload))
                if stop_after is not None and len(messages) >= stop_after:
                    return messages, None
        return messages, end

    async def close(self) -> None:
        await self.client.aclose()
        self.proxy.stop()


def item(**kwargs) -> fpb.PotentiallyCachedContextItem:
    return fpb.PotentiallyCachedContextItem(context_item=fpb.ContextItem(**kwargs))


def cmd_k_request(marker: str, *, chat: bool = False, lines: int = 3) -> fpb.StreamCmdKRequest:
    C = fpb.ContextItem
    immediate = C.CmdKImmediateContext(relative_workspace_path="src/app.py")
    for number in range(1, lines + 1):
        immediate.lines.add(line=f"x{number} = {number}  # {marker}", line_number=number)
    request = fpb.StreamCmdKRequest(session_id=str(uuid.uuid4()))
    request.cmd_k_options.chat_mode = chat
    request.context_items.extend(
        [
            item(cmd_k_query=C.CmdKQuery(query=f"double the values {marker}")),
            item(cmd_k_selection=C.CmdKSelection(lines=["x2 = 2", "x3 = 3"], start_line_number=2)),
            item(cmd_k_immediate_context=immediate),
        ]
    )
    return request


def kinds(messages) -> list[str]:
    out = []
    for message in messages:
        kind = message.WhichOneof("response")
        if kind == "real_response":
            kind = message.real_response.WhichOneof("response")
        if not out or out[-1] != kind:
            out.append(kind)
    return out


def edit_text(messages) -> str:
    return "".join(
        m.real_response.edit_stream.text
        for m in messages
        if m.WhichOneof("response") == "real_response"
        and m.real_response.WhichOneof("response") == "edit_stream"
    )


def leaked(backend: FakeCursor, marker: str) -> int:
    received = [r.path.encode() + b"".join(v.encode() for v in r.headers.values()) + r.body
                for r in backend.requests]  # fmt: skip
    return sum(marker_counts(received, marker).values())


def census(proxy) -> dict:
    """The census the proxy wrote at exit (activity.json)."""
    return json.loads((proxy.data_dir / "activity.json").read_text())["census"]


def usage_kinds(proxy) -> list[str]:
    db = proxy.data_dir / "usage.sqlite3"
    for _ in range(100):  # the writer thread commits shortly after the call
        if db.exists():
            with sqlite3.connect(db) as conn:
                rows = [r[0] for r in conn.execute("SELECT outcome FROM turns")]
            if rows:
                return rows
        proxy.wait_for_log(lambda lines: True, timeout=0.05)
    return []


@pytest.mark.parametrize("http2", [False, True], ids=["http1", "http2"])
async def test_cmd_k_edit_on_a_selection_served_here(tmp_path, workspace, http2) -> None:
    """An edit on lines 2-3: edit_start over them, the model's code without its fences as
    edit_stream deltas, edit_end; the provider got the query and selection; Cursor got nothing."""
    marker = f"CMDK-MARKER-{uuid.uuid4().hex[:12]}"
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        fp.script.text("```python\nx2 = 4\nx3 = 6\n```")
        setup = Setup(tmp_path, workspace, fp, backend, http2=http2, edit=with_images)
        request = cmd_k_request(marker)
        request.images.add(data=PNG)
        try:
            messages, end = await setup.stream(CMDK, request)
            rerank = await setup.unary(RERANK, fpb.RerankCmdKContextRequest())
        finally:
            await setup.close()
        sent = fp.requests[0].json
    assert end is not None and end.ok
    assert kinds(messages) == ["edit_start", "edit_stream", "edit_end"]
    start = messages[0].real_response.edit_start
    assert (start.start_line_number, start.max_end_line_number_exclusive) == (2, 4)
    assert messages[-1].real_response.edit_end.end_line_number_exclusive == 4
    assert edit_text(messages) == "x2 = 4\nx3 = 6\n"
    prompt = str(sent["messages"])
    assert f"double the values {marker}" in prompt and "x2 = 2" in prompt
    parts = sent["messages"][-1]["content"]
    assert any(p.get("type") == "image_url" for p in parts)  # the attached image
    assert rerank.status_code == 200
    assert leaked(backend, marker) == 0 and backend.requests == []
    assert "cmd_k" in usage_kinds(setup.proxy)
    counted = census(setup.proxy)
    assert counted["features"] == {"cmd_k": {"answered": 2, "sent_bytes": 0, "sent_calls": 0}}
    assert counted["paths"][CMDK] == {"served": 1} and counted["paths"][RERANK] == {"served": 1}


async def test_cmd_k_chat_mode_answers_as_chat(tmp_path, workspace) -> None:
    """chat_mode: the answer as chat text; request_is_for_caching: ended at once, no model call."""
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        fp.script.text("It sets three **variables**.")
        setup = Setup(tmp_path, workspace, fp, backend)
        caching = cmd_k_request("m")
        caching.cmd_k_options.request_is_for_caching = True
        try:
            warmed, warm_end = await setup.stream(CMDK, caching)
            messages, end = await setup.stream(CMDK, cmd_k_request("m", chat=True))
        finally:
            await setup.close()
    assert warm_end is not None and warm_end.ok and warmed == []
    assert len(fp.requests) == 1 and backend.requests == []
    assert end is not None and end.ok
    assert kinds(messages) == ["chat"]
    assert "".join(m.real_response.chat.text for m in messages) == "It sets three **variables**."


async def test_hash_only_item_is_asked_for_then_kept(tmp_path, workspace) -> None:
    """An item sent only by hash we never saw: missing_context_items with that hash, end; the
    client sends it whole in the same place; a later request naming the hash is served."""
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        fp.script.text("y = 1\n")
        fp.script.text("y = 2\n")
        setup = Setup(tmp_path, workspace, fp, backend)
        full = cmd_k_request("RESENT-ITEM")
        hashed = fpb.StreamCmdKRequest()
        hashed.CopyFrom(full)
        hashed.context_items[2].Clear()
        hashed.context_items[2].context_item_hash = "hash-of-immediate"
        try:
            first, end1 = await setup.stream(CMDK, hashed)
            second, end2 = await setup.stream(CMDK, full)
            later = fpb.StreamCmdKRequest()
            later.CopyFrom(hashed)
            later.session_id = str(uuid.uuid4())
            third, end3 = await setup.stream(CMDK, later)
        finally:
            await setup.close()
        prompts = [str(r.json["messages"]) for r in fp.requests]
    assert end1 is not None and end1.ok and len(first) == 1
    assert list(first[0].missing_context_items.missing_context_item_hashes) == ["hash-of-immediate"]
    assert end2 is not None and end2.ok and edit_text(second) == "y = 1\n"
    assert end3 is not None and end3.ok and edit_text(third) == "y = 2\n"
    assert len(prompts) == 2 and all("RESENT-ITEM" in p for p in prompts)


async def test_terminal_cmd_k_streams_a_command(tmp_path, workspace) -> None:
    marker = f"TERM-MARKER-{uuid.uuid4().hex[:12]}"
    C = fpb.ContextItem
    request = fpb.StreamTerminalCmdKRequest(session_id="s")
    request.context_items.extend(
        [
            item(
                terminal_history=C.TerminalHistory(history=f"$ ls\n{marker}.log\n", cwd_full="/w")
            ),
            item(terminal_cmd_k_query=C.TerminalCmdKQuery(query="count lines of the log")),
        ]
    )
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        fp.script.text(f"$ wc -l {marker}.log")
        setup = Setup(tmp_path, workspace, fp, backend)
        try:
            messages, end = await setup.stream(
                TERMINAL, request, fpb.StreamTerminalCmdKResponseContextWrapped
            )
        finally:
            await setup.close()
        prompt = str(fp.requests[0].json["messages"])
    assert end is not None and end.ok
    command = "".join(m.real_response.terminal_command.partial_command for m in messages)
    assert command == f"wc -l {marker}.log"
    assert "count lines of the log" in prompt and marker in prompt
    assert leaked(backend, marker) == 0
    assert "terminal" in usage_kinds(setup.proxy)


async def test_terminal_autocomplete_continues_the_command(tmp_path, workspace) -> None:
    """The model echoes the command typed so far and writes a second line: the client gets
    only the rest of the first line as `text`, then `done_stream`, then the end-stream; the
    prompt has the history, the diff and the command; a small max_tokens; a usage row of
    kind terminal_autocomplete with the provider's token counts."""
    marker = f"AUTO-MARKER-{uuid.uuid4().hex[:12]}"
    request = fpb.StreamTerminalAutocompleteRequest(
        current_command="git commit",
        command_history=["ls", f"git add {marker}.py"],
        git_diff=f"+++ b/{marker}.py\n+print(1)\n",
        commit_history=["Add the parser"],
    )
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        fp.script.text(f"git commit -m 'Print {marker}'\ngit push", usage=(321, 17, 0))
        setup = Setup(tmp_path, workspace, fp, backend)
        try:
            messages, end = await setup.stream(
                AUTOCOMPLETE, request, fpb.StreamTerminalAutocompleteResponse
            )
        finally:
            await setup.close()
        sent = fp.requests[0].json
    assert end is not None and end.ok
    assert "".join(m.text for m in messages) == f" -m 'Print {marker}'"
    assert messages[-1].done_stream and not messages[-1].text
    assert not any(m.done_stream for m in messages[:-1])
    prompt = str(sent["messages"])
    assert f"git add {marker}.py" in prompt and "Add the parser" in prompt and "print(1)" in prompt
    assert prompt.rstrip("'}]").endswith("git commit")
    assert sent.get("max_tokens", sent.get("max_completion_tokens")) == 64
    assert leaked(backend, marker) == 0
    db = setup.proxy.data_dir / "usage.sqlite3"
    assert usage_kinds(setup.proxy) == ["terminal_autocomplete"]
    with sqlite3.connect(db) as conn:
        tokens = conn.execute("SELECT input_tokens, output_tokens FROM turns").fetchall()
    assert tokens == [(321, 17)]


def diff(name: str, marker: str) -> str:
    return (
        f"diff --git a/{name} b/{name}\n--- a/{name}\n+++ b/{name}\n@@ -1 +1 @@\n"
        f"-old {marker}\n+new {marker}\n"
    )


async def test_commit_message_from_a_three_file_diff(tmp_path, workspace) -> None:
    marker = f"COMMIT-MARKER-{uuid.uuid4().hex[:12]}"
    request = fpb.WriteGitCommitMessageRequest(
        diffs=[diff(n, marker) for n in ("a.py", "b.py", "docs/c.md")],
        previous_commit_messages=["tests: cover the parser", "parser: accept tabs"],
    )
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        fp.script.text("parser: rename old to new in a, b and c")
        setup = Setup(tmp_path, workspace, fp, backend)
        try:
            answer = await setup.unary(COMMIT, request)
        finally:
            await setup.close()
        prompt = str(fp.requests[0].json["messages"])
    assert answer.status_code == 200
    message = fpb.WriteGitCommitMessageResponse.FromString(answer.content).commit_message
    assert message == "parser: rename old to new in a, b and c"
    assert "docs/c.md" in prompt and "parser: accept tabs" in prompt
    assert leaked(backend, marker) == 0
    assert "commit_message" in usage_kinds(setup.proxy)


async def test_provider_401_ends_the_stream_with_unauthenticated(tmp_path, workspace) -> None:
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        fp.script.error(401, message="bad key")
        fp.script.error(401, message="bad key")
        setup = Setup(tmp_path, workspace, fp, backend)
        try:
            _, end = await setup.stream(CMDK, cmd_k_request("m"))
            commit = await setup.unary(COMMIT, fpb.WriteGitCommitMessageRequest(diffs=["x"]))
        finally:
            await setup.close()
    assert end is not None and end.error is not None
    assert end.error.code == "unauthenticated" and "bad key" in end.error.message
    assert commit.status_code == 401 and commit.json()["code"] == "unauthenticated"


async def test_commit_message_falls_back_to_a_summary_line_in_time(tmp_path, workspace) -> None:
    """A model that does not answer within cursor_byok_commit_message_ms: a summary line from
    the diff, never the client's own timeout."""
    request = fpb.WriteGitCommitMessageRequest(diffs=[diff(n, "m") for n in ("a.py", "b.py")])
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        fp.script.stall()
        setup = Setup(
            tmp_path, workspace, fp, backend, extra=("--set", "cursor_byok_commit_message_ms=500")
        )
        try:
            answer = await setup.unary(COMMIT, request)
        finally:
            await setup.close()
    assert answer.status_code == 200
    message = fpb.WriteGitCommitMessageResponse.FromString(answer.content).commit_message
    assert message == "Update a.py and b.py"
    assert backend.requests == []


async def test_missing_key_and_unknown_model_end_with_a_message(tmp_path, workspace) -> None:
    """No API key in the environment: failed_precondition naming the variable; a [features]
    model that is not configured: the config's own error, not a pass to Cursor."""
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        setup = Setup(
            tmp_path, workspace, fp, backend,
            edit=lambda text: text.replace("FAKE_PROVIDER_KEY", "NOT_SET_ANYWHERE_KEY"),
        )  # fmt: skip
        try:
            _, no_key = await setup.stream(CMDK, cmd_k_request("m"))
            config = tmp_path / "config.toml"
            config.write_text(config.read_text() + '\n[features]\ncmd_k = "Nope"\n')
            stamp = config.stat().st_mtime + 5
            os.utime(config, (stamp, stamp))  # seen as changed whatever the clock's grain
            _, unknown = await setup.stream(CMDK, cmd_k_request("m"))
        finally:
            await setup.close()
    assert no_key is not None and no_key.error is not None
    assert no_key.error.code == "failed_precondition"
    assert "NOT_SET_ANYWHERE_KEY" in no_key.error.message
    assert unknown is not None and unknown.error is not None
    assert unknown.error.code == "failed_precondition" and "features.cmd_k" in unknown.error.message
    assert backend.requests == [] and fp.requests == []


async def test_client_going_away_cancels_the_provider_call(tmp_path, workspace) -> None:
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        fp.script.hang(text="x2 = 4\n")
        setup = Setup(tmp_path, workspace, fp, backend)
        try:
            messages, _ = await setup.stream(CMDK, cmd_k_request("m"), stop_after=2)
            await fp.wait_for_disconnect(0, timeout=10)
        finally:
            await setup.close()
    assert kinds(messages) == ["edit_start", "edit_stream"]
    assert fp.requests[0].disconnected


async def test_five_megabytes_of_context_are_cut_to_the_window(tmp_path, workspace) -> None:
    """5 MB of file lines around a selection at line 30000: the prompt fits the model's window
    (64000 tokens) and keeps the lines next to the selection, not the far ones."""
    lines = 60_000
    request = cmd_k_request("m", lines=lines)
    selection = request.context_items[1].context_item.cmd_k_selection
    selection.start_line_number = 30_000
    immediate = request.context_items[2].context_item.cmd_k_immediate_context
    for line in immediate.lines:
        line.line = f"value_{line.line_number} = {'z' * 70}"
    assert request.ByteSize() > 5_000_000
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        fp.script.text("done\n")
        setup = Setup(tmp_path, workspace, fp, backend)
        try:
            _, end = await setup.stream(CMDK, request)
        finally:
            await setup.close()
        prompt = str(fp.requests[0].json["messages"])
    assert end is not None and end.ok
    assert len(prompt) < 64_000 * 4
    assert "value_29999 =" in prompt and "value_30002 =" in prompt
    assert "value_1 =" not in prompt and f"value_{lines} =" not in prompt


@pytest.mark.parametrize("path", [CMDK, TERMINAL, COMMIT, RERANK, AUTOCOMPLETE])
async def test_cursor_setting_passes_each_call_through_byte_for_byte(
    tmp_path, workspace, path
) -> None:
    marker = f"PASS-MARKER-{uuid.uuid4().hex[:12]}"
    if path == CMDK:
        message = cmd_k_request(marker)
    elif path == TERMINAL:
        message = fpb.StreamTerminalCmdKRequest(session_id=marker)
    elif path == COMMIT:
        message = fpb.WriteGitCommitMessageRequest(diffs=[diff("a.py", marker)])
    elif path == RERANK:
        message = fpb.RerankCmdKContextRequest(context_items=[fpb.PotentiallyCachedContextItem(
            context_item_hash=marker)])  # fmt: skip
    else:
        message = fpb.StreamTerminalAutocompleteRequest(current_command=marker)
    streamed = path in (CMDK, TERMINAL, AUTOCOMPLETE)
    body = message.SerializeToString()
    if streamed:
        body = connect.encode_frame(body)
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        setup = Setup(tmp_path, workspace, fp, backend, cursor=True)
        try:
            ctype = "application/connect+proto" if streamed else "application/proto"
            answer = await setup.client.http.post(
                setup.client.base_url + path, content=body, headers=setup.headers(ctype)
            )
        finally:
            await setup.close()
    assert answer.status_code == 200
    assert [r.path for r in backend.requests] == [path]
    assert backend.requests[0].body == body
    assert fp.requests == []
    feature = "cmd_k" if path in (CMDK, RERANK) else "terminal"
    feature = "commit_message" if path == COMMIT else feature
    counts = census(setup.proxy)["features"][feature]
    assert counts == {"answered": 0, "sent_bytes": len(body), "sent_calls": 1}
