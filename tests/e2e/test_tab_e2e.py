"""Tab on the user's model (issue 35), end to end: our Tab client (tab_client.py) → a real
mitmdump with the addon → the fake FIM or chat provider on 127.0.0.1; Cursor's side is the
stand-in backend (fakes/fake_cursor.py), which records every byte it is sent."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3

import httpx
import pytest
from cursor_client import CursorLikeClient
from fakes.fake_cursor import FakeCursor
from fakes.fake_fim import FakeFim
from h2_client import H2Client
from mitm import start_in_front_of
from provider_config import KEY_ENV
from tab_client import MARKER
from tab_client import STREAM_CPP
from tab_client import cpp_request
from tab_client import h2_stream_cpp
from tab_client import other_calls
from tab_client import stream_cpp
from tab_client import unary

from cursor_byok.pb import aiserver_features_pb2 as fpb
from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.wire import connect

pytestmark = pytest.mark.timeout(240)
SOURCE = "import math\n\n\ndef area(r):\n    return \n\n\nprint(area(2))\n"


def write_config(tmp_path, fim: FakeFim, kind: str, tab: str = "Tab model"):
    path = tmp_path / "config.toml"
    path.write_text(
        f"""
default_model = "Chat"
[providers.chat]
kind = "openai-chat"
base_url = "{fim.base_url}"
api_key_env = "{KEY_ENV}"
[providers.tabp]
kind = "{kind}"
base_url = "{fim.base_url}"
api_key_env = "{KEY_ENV}"
max_retries = 0
[[models]]
name = "Chat"
provider = "chat"
model = "chat-1"
[[models]]
name = "Tab model"
provider = "tabp"
model = "coder-fim"
[features]
tab = "{tab}"
"""
    )
    return path


class Setup:
    def __init__(
        self,
        tmp_path,
        workspace,
        backend,
        fim,
        kind="openai-fim",
        tab="Tab model",
        http2=False,
        edit=None,
    ):
        backend.held_streams = 0
        self.backend = backend
        config = write_config(tmp_path, fim, kind, tab)
        if edit is not None:
            config.write_text(edit(config.read_text()))
        self.proxy = start_in_front_of(backend, tmp_path / "proxy", config)
        self.client = CursorLikeClient.to_backend(backend.port, self.proxy, workspace, http2=http2)
        self.http: httpx.AsyncClient = self.client.http
        self.base = self.client.base_url

    async def close(self) -> None:
        await self.client.aclose()
        self.proxy.stop()

    def to_cursor(self, path: str) -> list[bytes]:
        return [r.body for r in self.backend.requests if r.path.split("?")[0] == path]


@pytest.fixture
async def backend(tmp_path):
    async with FakeCursor(tmp_path / "cursor") as server:
        yield server


async def test_mid_line_completion_from_a_fim_model(tmp_path, workspace, backend):
    async with FakeFim(answer="round(area(2), 2)") as fim:
        setup = Setup(tmp_path, workspace, backend, fim)
        try:
            # print(|)  — the cursor mid-line, a closing parenthesis after it
            source = SOURCE.replace("print(area(2))", "print()")
            answer = await stream_cpp(setup.http, setup.base, cpp_request(source, 7, 6))
        finally:
            await setup.close()
    assert answer.status == 200 and answer.end is not None and answer.end.ok
    assert answer.frames[0].HasField("model_info")
    assert answer.range is not None
    assert (answer.range.start_line_number, answer.range.end_line_number_inclusive) == (8, 8)
    assert answer.edit == "print(round(area(2), 2))"
    assert any(f.begin_edit for f in answer.frames) and any(f.done_edit for f in answer.frames)
    assert answer.frames[-1].done_stream
    body = fim.requests[0]
    assert fim.paths == ["/v1/completions"]
    assert body["prompt"].endswith("print(") and body["suffix"].startswith(")\n")
    assert body["max_tokens"] <= 256 and body["stop"]
    assert not setup.to_cursor(STREAM_CPP)  # nothing of it went to Cursor
    # What `doctor --watch` reads: the census counts the Tab call, served here.
    census = json.loads((setup.proxy.data_dir / "activity.json").read_text())["census"]
    assert census["tab"]["requests"] == 1 and census["tab"]["suggestions"] == 1
    assert census["paths"][STREAM_CPP] == {"served": 1}
    assert "Tab: on your model Tab model" in setup.proxy.log()  # the start banner says where


async def test_the_suggestion_streams_as_the_model_writes(tmp_path, workspace, backend):
    """The editor sees the edit's start and the model's first piece while the model is still
    writing (it waits on `hold` after its first piece), then the rest as `text` deltas."""
    hold = asyncio.Event()
    async with FakeFim(answer="math.pi * r * r", chunks=3, hold=hold) as fim:
        setup = Setup(tmp_path, workspace, backend, fim, http2=True)
        h2 = await H2Client.connect(
            setup.proxy.port, "127.0.0.1", setup.proxy.ca_file, backend.port
        )
        try:
            stream = await h2.request(
                STREAM_CPP,
                {
                    ":authority": f"127.0.0.1:{backend.port}",
                    "content-type": "application/connect+proto",
                    "connect-protocol-version": "1",
                    "authorization": "Bearer t",
                },
                body=connect.encode_frame(cpp_request(SOURCE, 4, 11).SerializeToString()),
                end=True,
            )
            body = b""
            chunks = stream.chunks()
            async with asyncio.timeout(60):
                while b"math" not in body:  # the model's first piece, shown
                    body += await anext(chunks)
            early = [
                fpb.StreamCppResponse.FromString(f.payload)
                for f in connect.decode_envelopes(body)
                if not f.is_end_stream
            ]
            assert not hold.is_set() and fim.finished == 0  # the model is mid-answer
            hold.set()
            async with asyncio.timeout(60):
                body += b"".join([chunk async for chunk in chunks])
        finally:
            await h2.aclose()
            await setup.close()
    assert early[0].HasField("model_info") and early[1].begin_edit
    assert early[1].range_to_replace.start_line_number == 5
    assert not any(f.done_edit or f.done_stream for f in early)
    frames = [
        fpb.StreamCppResponse.FromString(f.payload)
        for f in connect.decode_envelopes(body)
        if not f.is_end_stream
    ]
    assert "".join(f.text for f in frames) == "    return math.pi * r * r"
    assert len([f for f in frames if f.text and not f.begin_edit and not f.done_edit]) >= 2
    assert frames[-1].done_stream and any(f.done_edit for f in frames)
    assert connect.parse_end_stream(list(connect.decode_envelopes(body))[-1].payload).ok


async def test_multi_line_completion_from_a_chat_model(tmp_path, workspace, backend):
    answer_text = "```python\nmath.pi * r * r\n\nprint(area(3))\n```"
    async with FakeFim(answer=answer_text) as fim:
        setup = Setup(tmp_path, workspace, backend, fim, kind="openai-chat")
        try:
            answer = await stream_cpp(setup.http, setup.base, cpp_request(SOURCE, 4, 11))
        finally:
            await setup.close()
    assert fim.paths == ["/v1/chat/completions"]
    assert "<CURSOR>" in fim.requests[0]["messages"][-1]["content"]
    assert answer.range is not None and answer.range.start_line_number == 5
    assert answer.range.end_line_number_inclusive == 5
    assert answer.edit == "    return math.pi * r * r\n\nprint(area(3))"
    assert answer.end is not None and answer.end.ok


async def test_filesync_only_request_asks_for_contents(tmp_path, workspace, backend):
    async with FakeFim(answer="x") as fim:
        setup = Setup(tmp_path, workspace, backend, fim)
        try:
            request = cpp_request("", 3, 0, rely_on_filesync=True, sha_256_hash="ab" * 32)
            answer = await stream_cpp(setup.http, setup.base, request)
            enabled = await unary(
                setup.http,
                setup.base,
                "/aiserver.v1.FileSyncService/FSIsEnabledForUser",
                fpb.FSIsEnabledForUserRequest(uuid="u"),
            )
        finally:
            await setup.close()
    assert not fim.requests
    assert answer.end is not None and answer.end.error is not None
    assert answer.end.error.code == "failed_precondition"
    detail = aipb.ErrorDetails.FromString(answer.end.error.details[0].value)
    assert detail.error == aipb.ErrorDetails.ERROR_FILE_NOT_FOUND
    assert detail.details.is_retryable
    assert not fpb.FSIsEnabledForUserResponse.FromString(enabled.content).enabled
    assert not setup.to_cursor(STREAM_CPP)


async def test_provider_error_ends_the_stream_with_an_error(tmp_path, workspace, backend):
    async with FakeFim(answer="x", fail=500) as fim:
        setup = Setup(tmp_path, workspace, backend, fim)
        try:
            answer = await stream_cpp(setup.http, setup.base, cpp_request(SOURCE, 4, 11))
            after = await stream_cpp(setup.http, setup.base, cpp_request(SOURCE, 4, 11))
        finally:
            await setup.close()
    assert answer.status == 200 and answer.end is not None and answer.end.error is not None
    assert answer.end.error.code == "unavailable"
    assert "500" in answer.end.error.message or "overloaded" in answer.end.error.message
    assert not answer.edit
    assert after.end is not None and after.end.error is not None  # still answered, still here
    assert not setup.to_cursor(STREAM_CPP)


async def test_abandoned_requests_cancel_their_calls_and_the_next_answers(
    tmp_path, workspace, backend
):
    """The editor's churn, over one HTTP/2 connection as Cursor keeps it: 500 requests
    abandoned (stream reset) after 20-50 ms each, 8 at a time, then one that must answer."""
    gate = asyncio.Event()  # the model answers nothing until the churn is over
    rng = random.Random(35)
    async with FakeFim(answer="math.pi * r * r", gate=gate) as fim:
        setup = Setup(tmp_path, workspace, backend, fim)
        h2 = await H2Client.connect(
            setup.proxy.port, "127.0.0.1", setup.proxy.ca_file, backend.port
        )
        authority = f"127.0.0.1:{backend.port}"
        try:
            limit = asyncio.Semaphore(8)
            abandoned = 0

            async def keystroke(i: int) -> None:
                nonlocal abandoned
                async with limit:
                    request = cpp_request(SOURCE, 4, 11)
                    request.current_file.contents += f"# keystroke {i}\n"
                    delay = rng.uniform(0.020, 0.050)
                    early = await h2_stream_cpp(h2, authority, request, abandon=delay)
                    if early is None:
                        abandoned += 1
                    else:  # a newer request superseded it first: no suggestion, at once
                        assert early.edit == "" and early.end is not None and early.end.ok

            await asyncio.gather(*(keystroke(i) for i in range(500)))
            # Every call the proxy started is cancelled: the model is left idle. The proxy may
            # still be working through the churn (a loaded machine): wait for each request's
            # usage row first (one per request, written when its call has ended).
            async with asyncio.timeout(120):
                while sum(usage_rows(setup.proxy.data_dir).values()) < 500:
                    await asyncio.sleep(0.05)  # a poll of the database, under the deadline
                await fim.idle.wait()
            gate.set()
            answer = await h2_stream_cpp(h2, authority, cpp_request(SOURCE, 4, 11))
        finally:
            await h2.aclose()
            await setup.close()
    assert answer is not None
    assert answer.edit == "    return math.pi * r * r"
    assert fim.finished == 1  # only the last one was answered by the model
    assert fim.cancelled == len(fim.requests) - 1  # every other call that reached it: cancelled
    # One call per editor: the proxy starts a call once the older one has ended on its side; the
    # fake sees a closed connection a little later, so it may count one or two being torn down.
    # Without the rule it would count 8 (the client's concurrency).
    assert fim.max_active <= 4
    assert "Traceback" not in setup.proxy.log()
    rows = usage_rows(setup.proxy.data_dir)
    assert abandoned >= 1
    assert rows.get("tab") == 1 and rows.get("tab:cancelled", 0) >= 100


async def test_a_dropped_connection_cancels_its_call(tmp_path, workspace, backend):
    """HTTP/1.1: the editor closes the connection of a request the model is answering."""
    gate = asyncio.Event()
    async with FakeFim(answer="math.pi * r * r", gate=gate) as fim:
        setup = Setup(tmp_path, workspace, backend, fim)
        try:
            pending = asyncio.create_task(
                stream_cpp(setup.http, setup.base, cpp_request(SOURCE, 4, 11))
            )
            async with asyncio.timeout(30):
                await fim.arrived.wait()
            pending.cancel()  # httpx closes the connection
            async with asyncio.timeout(30):
                while fim.cancelled < 1:
                    fim.idle.clear()
                    await fim.idle.wait()
            gate.set()
            answer = await stream_cpp(setup.http, setup.base, cpp_request(SOURCE, 4, 11))
        finally:
            await setup.close()
    assert fim.cancelled == 1 and fim.finished == 1
    assert answer.edit == "    return math.pi * r * r"


def usage_rows(data_dir) -> dict[str, int]:
    with sqlite3.connect(data_dir / "usage.sqlite3") as db:
        return dict(db.execute("SELECT outcome, COUNT(*) FROM turns GROUP BY outcome").fetchall())


async def test_cursor_tab_passes_through_byte_for_byte(tmp_path, workspace, backend):
    async with FakeFim(answer="x") as fim:
        setup = Setup(tmp_path, workspace, backend, fim, tab="cursor")
        try:
            request = cpp_request(SOURCE + MARKER, 4, 11)
            sent = connect.encode_frame(request.SerializeToString())
            await stream_cpp(setup.http, setup.base, request)
            for path, message in other_calls(MARKER):
                await unary(setup.http, setup.base, path, message)
        finally:
            await setup.close()
    assert not fim.requests
    assert 'Tab: still goes to Cursor ([features] tab = "cursor")' in setup.proxy.log()
    assert setup.to_cursor(STREAM_CPP) == [sent]
    for path, message in other_calls(MARKER):
        assert setup.to_cursor(path) == [message.SerializeToString()], path


async def test_tab_privacy_marker_no_byte_of_the_file_to_cursor(tmp_path, workspace, backend):
    async with FakeFim(answer="MARKER_ECHO") as fim:
        setup = Setup(tmp_path, workspace, backend, fim)
        try:
            request = cpp_request(SOURCE + f"# {MARKER}\n", 4, 11)
            request.file_diff_histories.add(file_name="src/app.py", diff_history=[MARKER])
            request.additional_files.add(
                relative_workspace_path="b.py", visible_range_content=[MARKER]
            )
            answer = await stream_cpp(setup.http, setup.base, request)
            answers = {}
            for path, message in other_calls(MARKER):
                answers[path] = await unary(setup.http, setup.base, path, message)
            nxt = await setup.http.post(
                setup.base + "/aiserver.v1.AiService/StreamNextCursorPrediction",
                content=connect.encode_frame(
                    fpb.StreamNextCursorPredictionRequest(
                        current_file=request.current_file
                    ).SerializeToString()
                ),
                headers={"content-type": "application/connect+proto"},
            )
        finally:
            await setup.close()
    assert answer.end is not None and answer.end.ok
    assert MARKER in fim.requests[0]["prompt"]  # the user's model saw it
    leaked = [r.path for r in backend.requests if MARKER.encode() in r.body]
    assert leaked == []  # 0 bytes of the file to Cursor
    reached = {r.path for r in backend.requests}
    # The only Tab calls passed on: no code in either (docs/protocol.md §17).
    assert reached <= {
        "/aiserver.v1.AiService/CppConfig",
        "/aiserver.v1.CppService/AvailableModels",
    }
    assert all(r.status_code == 200 for r in answers.values())
    assert nxt.status_code == 200


async def test_a_failing_tab_model_hands_over_to_its_fallback(tmp_path, workspace, backend):
    """`fallbacks` of the Tab model: a 503 before any text went out → the next model (here a
    chat model on another provider) answers the same keystroke."""
    async with FakeFim(answer="x", fail=503) as bad, FakeFim(answer="math.pi * r * r") as good:

        def with_fallback(config: str) -> str:
            config = config.replace(bad.base_url, good.base_url, 1)  # [providers.chat]
            return config.replace(
                'model = "coder-fim"', 'model = "coder-fim"\nfallbacks = ["Chat"]'
            )

        setup = Setup(tmp_path, workspace, backend, bad, edit=with_fallback)
        try:
            answer = await stream_cpp(setup.http, setup.base, cpp_request(SOURCE, 4, 11))
        finally:
            await setup.close()
    assert bad.paths == ["/v1/completions"] and good.paths == ["/v1/chat/completions"]
    assert answer.end is not None and answer.end.ok
    assert answer.edit == "    return math.pi * r * r"
