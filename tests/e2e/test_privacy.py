"""Private by default (issue 26), end to end: a real mitmdump between a Cursor-like client and a
stand-in for Cursor's backend that records every byte it receives (tests/fakes/fake_cursor.py).

A BYOK conversation has a unique marker in its workspace and its message; before, during and
after its turn the client sends every content call (cursor/content_calls.py) with the marker
in it. The backend must receive the marker 0 times in any encoding (tests/e2e/leaks.py), every
call must get a valid answer, and the turn must answer. With `privacy = "cursor"` the same calls
reach the backend; a Cursor-model conversation's calls reach it byte for byte."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import sqlite3
import uuid
from dataclasses import dataclass

import pytest
from cursor_client import FAKE_TOKEN
from cursor_client import CursorLikeClient
from fakes.fake_cursor import FakeCursor
from fakes.fake_provider import FakeProvider
from fakes.script import Step
from google.protobuf import empty_pb2
from google.protobuf import json_format
from leaks import ENCODINGS
from leaks import gzip_body
from leaks import marker_counts
from mitm import start_in_front_of
from provider_config import MODEL
from provider_config import write_config

from cursor_byok.cli.doctor import check_census
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.pb import aiserver_features_pb2 as fpb
from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.wire import connect

pytestmark = pytest.mark.timeout(120)
AGENT = "/agent.v1.AgentService/"
AI = "/aiserver.v1.AiService/"
ANALYTICS = "/aiserver.v1.AnalyticsService/"
CMD_K = "/aiserver.v1.CmdKService/"
TITLE_MODEL = "Fake Title"
TITLE = "Reading the secret file"
CURSOR_MODEL = "composer-1"


@dataclass
class Call:
    """One content call as the client sends it, and what a valid answer parses as."""

    path: str
    message: object  # a protobuf message, or raw bytes
    answer: type = empty_pb2.Empty
    codec: str = "proto"  # "proto", "json", "gzip" (proto, gzip content-encoding), "stream"
    refused: str = ""  # a Connect error code expected instead of an answer

    def request(self) -> tuple[bytes, dict[str, str]]:
        headers = {"connect-protocol-version": "1", "authorization": FAKE_TOKEN}
        raw = self.message if isinstance(self.message, bytes) else self.message.SerializeToString()
        if self.codec == "json":
            text = json.dumps(json_format.MessageToDict(self.message))
            return text.encode(), {**headers, "content-type": "application/json"}
        if self.codec == "gzip":
            return gzip_body(raw), {
                **headers,
                "content-type": "application/proto",
                "content-encoding": "gzip",
            }
        if self.codec == "stream":
            return connect.encode_frame(raw), {
                **headers,
                "content-type": "application/connect+proto",
            }
        return raw, {**headers, "content-type": "application/proto"}


def track_event(name: str, **data: str) -> aipb.AnalyticsEvent:
    event = aipb.AnalyticsEvent(event_name=name, timestamp=1796127459211)
    for key, value in data.items():
        event.event_data[key].string_value = value
    return event


class Conversation:
    """A conversation's content calls, each carrying its marker."""

    def __init__(self, model: str, workspace) -> None:
        self.id = str(uuid.uuid4())
        self.request_id = str(uuid.uuid4())
        self.marker = f"PRIVATE-MARKER-{uuid.uuid4().hex[:16]}"
        self.model = model
        self.message = f"Read secret.txt and tell me what {self.marker} means"
        self.file = f"the codeword is {self.marker}\n".encode()
        self.workspace = workspace
        self.unrelated = track_event("app.heartbeat", os="linux")

    def prompt_hash(self) -> str:
        return hashlib.sha256(self.message.encode()).hexdigest()

    def before(self) -> list[Call]:
        upload = pb.UploadConversationBlobsRequest(
            conversation_id=self.id, chunk_index=0, total_chunks=1
        )
        upload.blobs.add(id=hashlib.sha256(self.file).digest(), value=self.file)
        media = pb.GetSignedUrlForAttachedMediaRequest(
            conversation_id=self.id, key=f"shot-{self.marker}.png", mime_type="image/png"
        )
        return [
            Call(
                AGENT + "NameAgent",
                pb.NameAgentRequest(user_message=self.message),
                pb.NameAgentResponse,
            ),
            Call(
                AGENT + "UploadConversationBlobs",
                upload,
                pb.UploadConversationBlobsResponse,
                "json",
            ),  # bytes as base64
            Call(
                AGENT + "GetSignedUrlForAttachedMedia",
                media,
                pb.GetSignedUrlForAttachedMediaResponse,
                "json",
            ),
        ]

    def during(self) -> list[Call]:
        metadata = pb.UpdateConversationMetadataRequest(
            conversation_id=self.id,
            name=f"About {self.marker}",
            workspace_paths=[str(self.workspace)],
        )
        events = aipb.TrackEventsRequest(
            events=[
                track_event(
                    "sdk.run.created",
                    agent_id=self.id,
                    request_id=self.request_id,
                    model=self.model,
                    prompt_hash=self.prompt_hash(),
                ),
                self.unrelated,
                track_event(
                    "sdk.run.completed",
                    request_id=self.request_id,
                    marker_sha256=hashlib.sha256(self.marker.encode()).hexdigest(),
                    marker_hex=self.marker.encode().hex(),
                ),
            ]
        )
        composed = aipb.BatchEvent(event="composer.submitted")
        composed.properties.update({"composer": {"id": self.id, "draft": self.marker}})
        focused = aipb.BatchEvent(event="window.focused")
        focused.properties.update({"window": 1})
        return [
            Call(
                AGENT + "UpdateConversationMetadata",
                metadata,
                pb.UpdateConversationMetadataResponse,
            ),
            Call(ANALYTICS + "TrackEvents", events, aipb.TrackEventsResponse),
            Call(
                ANALYTICS + "Batch",
                aipb.BatchRequest(events=[composed, focused]),
                aipb.BatchResponse,
                "json",
            ),
            Call(
                AI + "GetComposerAutocomplete",
                aipb.GetComposerAutocompleteRequest(input_text=self.marker, composer_id=self.id),
            ),
            Call(
                AI + "NameAgent",
                pb.NameAgentRequest(user_message=self.message),
                pb.NameAgentResponse,
                "json",
            ),
        ]

    def editor(self) -> list[Call]:
        """The editor's features (issue 34: Cmd-K, terminal Cmd-K, a commit message, their
        rerank calls, terminal autocomplete), each with the marker: not about a conversation,
        on the user's model by default (`[features]`), on Cursor's with privacy = "cursor"."""
        C = fpb.ContextItem
        cmd_k = fpb.StreamCmdKRequest(session_id=self.id)
        cmd_k.context_items.add(context_item=C(cmd_k_query=C.CmdKQuery(query=self.marker)))
        cmd_k.context_items.add(
            context_item=C(
                cmd_k_selection=C.CmdKSelection(lines=[self.marker], start_line_number=1)
            )
        )
        terminal = fpb.StreamTerminalCmdKRequest(session_id=self.id)
        terminal.context_items.add(
            context_item=C(terminal_history=C.TerminalHistory(history=f"$ cat {self.marker}"))
        )
        rerank = fpb.RerankCmdKContextRequest()
        rerank.context_items.add(context_item=C(cmd_k_query=C.CmdKQuery(query=self.marker)))
        diff = f"diff --git a/s.txt b/s.txt\n+++ b/s.txt\n+{self.marker}\n"
        return [
            Call(CMD_K + "StreamCmdK", cmd_k, codec="stream"),
            Call(CMD_K + "StreamTerminalCmdK", terminal, codec="stream"),
            Call(CMD_K + "RerankCmdKContext", rerank, fpb.RerankCmdKContextResponse),
            Call(
                AI + "WriteGitCommitMessage",
                fpb.WriteGitCommitMessageRequest(diffs=[diff], previous_commit_messages=["x"]),
                fpb.WriteGitCommitMessageResponse,
            ),
            Call(
                AI + "StreamTerminalAutocomplete",
                fpb.StreamTerminalAutocompleteRequest(current_command=self.marker),
                codec="stream",
            ),
        ]

    def after(self) -> list[Call]:
        quality = pb.UploadLocalAgentRunToPromptQualityRequest(conversation_id=self.id)
        # invocations (field 5, not modelled) with one message (field 9) carrying the marker
        invocation = b"\x4a" + bytes([len(self.marker)]) + self.marker.encode()
        quality_bytes = (
            quality.SerializeToString() + b"\x2a" + bytes([len(invocation)]) + invocation
        )
        chat = aipb.StreamUnifiedChatRequest(conversation_id=self.id)
        chat_bytes = (
            chat.SerializeToString() + b"\x0a" + bytes([len(self.marker)]) + self.marker.encode()
        )
        return [
            Call(
                AGENT + "CreateTranscriptOverview",
                pb.CreateTranscriptOverviewRequest(
                    formatted_conversation=f"User: {self.message}\nAssistant: it is a codeword"
                ),
                pb.CreateTranscriptOverviewResponse,
            ),
            Call(
                AGENT + "UploadLocalAgentRunToPromptQuality",
                quality_bytes,
                pb.UploadLocalAgentRunToPromptQualityResponse,
                "gzip",
            ),
            Call("/aiserver.v1.ChatService/GetConversationSummary", chat_bytes),
            Call("/aiserver.v1.ChatService/StreamSpeculativeSummaries", chat_bytes, codec="stream"),
            Call(
                ANALYTICS + "IngestConversation",
                aipb.IngestConversationRequest(
                    conversation_id=self.id, transcript=self.message, model=self.model
                ),
                aipb.IngestConversationResponse,
                "json",
            ),
            Call(
                AI + "SuggestQuickActions",
                aipb.SuggestQuickActionsRequest(
                    last_user_message=self.message, last_assistant_message=self.marker
                ),
            ),
            Call(
                AI + "ReportAgentMessageFeedback",
                aipb.ReportAgentMessageFeedbackRequest(
                    composer_id=self.id, selected_text=self.marker, comment="good"
                ),
            ),
            Call(
                AI + "WriteGitBranchName",
                aipb.WriteGitBranchNameRequest(diffs=f"+{self.marker}", conversation_id=self.id),
                aipb.WriteGitBranchNameResponse,
            ),
            Call(
                "/aiserver.v1.DashboardService/GetClientUsageData",
                aipb.GetClientUsageDataRequest(conversation_id=self.id),
            ),
            Call(
                "/aiserver.v1.DashboardService/ShareConversation",
                aipb.ShareConversationRequest(conversation_id=self.id, title=self.marker),
                refused="failed_precondition",
            ),
        ]


class Stack:
    def __init__(self, tmp_path, workspace, fp, backend, privacy: str, *extra: str) -> None:
        config = write_config(tmp_path, fp, "openai-chat")
        config.write_text(
            f'privacy = "{privacy}"\ntitle_model = "{TITLE_MODEL}"\n'
            + config.read_text()
            + f'\n[[models]]\nname = "{TITLE_MODEL}"\nprovider = "fake"\nmodel = "fake-title-1"\n'
            + "prices = { input = 1.0, output = 2.0 }\n"
        )
        backend.held_streams = 0  # Cursor's own runs answer at once
        self.backend = backend
        self.proxy = start_in_front_of(
            backend,
            tmp_path / "proxy",
            config,
            *extra,
        )
        self.client = CursorLikeClient.to_backend(
            backend.port,
            self.proxy,
            workspace,
        )

    async def send(self, call: Call):
        body, headers = call.request()
        return await self.client.http.post(
            self.client.base_url + call.path, content=body, headers=headers
        )

    async def close(self) -> None:
        await self.client.aclose()
        self.proxy.stop()


# the system prompts of Cmd-K, terminal Cmd-K and commit messages (agent/editor_prompts.py)
EDITOR_PROMPTS = re.compile(r"You edit code|one shell command|git commit messages")


def responder(conversation: Conversation):
    """The fake provider: titles for the title model; the turn reads secret.txt, then answers
    slowly (so the calls sent "during" the turn come while it runs)."""
    secret = str(conversation.workspace / "secret.txt")

    def answer(request) -> Step:
        if request.json.get("model") == "fake-title-1":
            return Step("reply", text=TITLE, usage=(30, 4, 0))
        if EDITOR_PROMPTS.search(json.dumps(request.json["messages"][0])):
            return Step("reply", text="an editor feature's answer")
        if not any(m.get("role") == "tool" for m in request.json["messages"]):
            return Step("reply", tool_calls=[("call_read", "Read", {"path": secret})])
        return Step("reply", text="It is the codeword of the secret file. " * 3, delay=0.02)

    return answer


async def converse(stack: Stack, fp: FakeProvider, conversation: Conversation):
    """The whole conversation: calls before the run request (they wait for its route), the
    turn, calls while it runs, calls after it. Returns (turn result, [(call, response)])."""
    (conversation.workspace / "secret.txt").write_bytes(conversation.file)
    answered: list[tuple[Call, object]] = []

    async def send_all(calls: list[Call]) -> None:
        responses = await asyncio.gather(*(stack.send(call) for call in calls))
        answered.extend(zip(calls, responses, strict=True))

    before = asyncio.ensure_future(send_all(conversation.before()))
    first = stack.client.run_request(
        conversation.message, conversation_id=conversation.id, model=conversation.model
    )
    turn = asyncio.ensure_future(stack.client.turn(first, request_id=conversation.request_id))
    if conversation.model == MODEL:  # ours: send while the model answers
        await fp.wait_until(
            lambda rs: any(any(m.get("role") == "tool" for m in r.json["messages"]) for r in rs)
        )
        assert not turn.done()
    editor = conversation.editor() if conversation.model == MODEL else []
    await send_all(conversation.during() + editor)
    result = await turn
    await before
    await send_all(conversation.after())
    return result, answered


def received(backend: FakeCursor) -> list[bytes]:
    out = []
    for request in backend.requests:
        out.append(request.path.encode())
        out.extend(f"{k}: {v}".encode() for k, v in request.headers.items())
        out.append(request.body)
    return out


def assert_valid(call: Call, response) -> None:
    if call.refused:
        assert response.status_code != 200, call.path
        assert response.json()["code"] == call.refused, call.path
        return
    assert response.status_code == 200, (call.path, response.status_code, response.text)
    if call.codec == "stream":
        frames = connect.decode_envelopes(response.content)
        assert frames[-1].is_end_stream, call.path
        assert connect.parse_end_stream(frames[-1].payload).ok, call.path
        return
    if response.headers["content-type"].startswith("application/json"):
        json_format.Parse(response.content or b"{}", call.answer(), ignore_unknown_fields=True)
    else:
        call.answer.FromString(response.content)


def census(stack: Stack) -> dict:
    return json.loads((stack.proxy.data_dir / "activity.json").read_text())["census"]


async def title_rows(data_dir, expected: int, timeout: float = 10) -> int:
    """How many title rows the usage database has, once it has `expected` (or the deadline)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        usage = sqlite3.connect(data_dir / "usage.sqlite3")
        try:
            rows = usage.execute(
                "SELECT model, outcome, input_tokens, output_tokens FROM turns"
            ).fetchall()
        finally:
            usage.close()
        found = rows.count((TITLE_MODEL, "title", 30, 4))
        if found >= expected or loop.time() >= deadline:
            return found
        await asyncio.sleep(0.05)


async def test_nothing_of_a_byok_conversation_reaches_cursor(tmp_path, workspace) -> None:
    """privacy = "local" (the default): the marker reaches the backend 0 times in any encoding,
    every content call is answered here (the title by the title model, counted in usage), media
    goes to our store, the turn answers; a Cursor-model conversation's calls in the same proxy
    reach the backend byte for byte."""
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        byok = Conversation(MODEL, workspace)
        fp.responder = responder(byok)
        stack = Stack(tmp_path, workspace, fp, backend, "local")
        try:
            result, answered = await converse(stack, fp, byok)
            signed = next(r for c, r in answered if c.path.endswith("GetSignedUrlForAttachedMedia"))
            urls = json_format.Parse(signed.content, pb.GetSignedUrlForAttachedMediaResponse())
            media = f"a screenshot of {byok.marker}".encode()
            put = await stack.client.http.put(
                urls.put_url, content=media, headers={"content-type": "image/png"}
            )
            got = await stack.client.http.get(urls.get_url)
            byok_received = received(backend)
            cursor = Conversation(CURSOR_MODEL, workspace)
            cursor_result, cursor_answered = await converse(stack, fp, cursor)
        finally:
            await stack.close()  # its last census is written on the way out
        counted = census(stack)
        doctor = check_census(stack.proxy.data_dir, before=None)
        requests = list(fp.requests)
    assert result.end.ok and "codeword" in result.text
    assert any(byok.marker in json.dumps(r.json) for r in requests)  # the provider saw it
    for call, response in answered:
        assert_valid(call, response)
    # terminal autocomplete was answered by the model (its suggestion, then done_stream)
    auto = next(r for c, r in answered if c.path.endswith("StreamTerminalAutocomplete"))
    frames = [f for f in connect.decode_envelopes(auto.content) if not f.is_end_stream]
    assert fpb.StreamTerminalAutocompleteResponse.FromString(frames[-1].payload).done_stream
    assert any("The command so far" in json.dumps(r.json) for r in requests)
    counts = marker_counts(byok_received, byok.marker)
    assert counts == dict.fromkeys(ENCODINGS, 0), counts
    assert not any(byok.prompt_hash().encode() in data for data in byok_received)
    assert not any(MODEL.encode() in data for data in byok_received)
    assert not any(byok.id.encode() in data for data in byok_received)
    # what was not about the conversation went on, as the very bytes the client sent
    tracked = [r.body for r in backend.requests if r.path == ANALYTICS + "TrackEvents"]
    assert tracked and byok.unrelated.SerializeToString() in tracked[0]
    batches = [r.body for r in backend.requests if r.path == ANALYTICS + "Batch"]
    assert batches and b"window.focused" in batches[0] and b"composer.submitted" not in batches[0]
    # answers made here
    titles = [
        pb.NameAgentResponse.FromString(r.content).name
        for c, r in answered
        if c.path == AGENT + "NameAgent"
    ]
    assert titles == [TITLE]
    assert put.status_code == 200 and got.status_code == 200 and got.content == media
    assert urls.put_url.startswith("https://127.0.0.1:")  # this proxy, as the client reached it
    titled = await title_rows(stack.proxy.data_dir, 2)  # written by the proxy's usage thread
    assert titled == 2  # agent.v1 and aiserver.v1 NameAgent
    # the proof the user sees
    privacy = counted["privacy"]
    assert privacy["mode"] == "local"
    mine = privacy["conversations"][byok.id]
    # every call but the two analytics batches, whose three events about it were dropped
    assert mine == {"answered": 16, "dropped": 3, "sent_bytes": 0, "sent_calls": 0}
    assert cursor.id not in privacy["conversations"]
    assert doctor is not None and doctor.status == "ok"  # what `doctor --watch` prints
    assert "16 call(s) answered here, 3 analytics event(s) dropped, 0 B sent to Cursor" in (
        doctor.detail
    )
    assert f"{byok.id}: 16 answered here, 3 event(s) dropped, 0 B to Cursor" in doctor.detail
    assert "attached media: 1 upload URL(s) of this proxy handed out, 1 kept" in doctor.detail
    assert counted["paths"]["PUT /cursor-byok/media/*"] == {"served": 1}
    # a Cursor-model conversation: every call reached the backend as it was sent
    assert cursor_result.end.ok and cursor_result.text == "cursor says hi from its own model"
    for call, response in cursor_answered:
        assert response.status_code == 200, call.path
        body, _headers = call.request()
        assert any(r.path == call.path and r.body == body for r in backend.requests), call.path


async def test_with_privacy_cursor_the_same_calls_reach_cursor(tmp_path, workspace) -> None:
    """privacy = "cursor": every content call of the BYOK conversation goes to the backend as
    it came (the turn is still served here); the census counts what went."""
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        byok = Conversation(MODEL, workspace)
        fp.responder = responder(byok)
        stack = Stack(tmp_path, workspace, fp, backend, "cursor")
        try:
            result, answered = await converse(stack, fp, byok)
        finally:
            await stack.close()
        counted = census(stack)
    assert result.end.ok and "codeword" in result.text
    for call, response in answered:
        assert response.status_code == 200, call.path
        body, _headers = call.request()
        assert any(r.path == call.path and r.body == body for r in backend.requests), call.path
    counts = marker_counts(received(backend), byok.marker)
    assert all(counts[name] > 0 for name in ENCODINGS), counts  # the detector sees every one
    privacy = counted["privacy"]
    assert privacy["mode"] == "cursor"
    assert privacy["conversations"][byok.id]["sent_bytes"] > 0
    assert AGENT + "RunSSE" not in [r.path for r in backend.requests]  # the turn stayed here


async def test_bad_input_gets_an_answer_and_nothing_goes_to_cursor(tmp_path, workspace) -> None:
    """A content call for a conversation nobody runs (answered here after the bounded wait), an
    unreadable one naming a BYOK conversation, an upload over the store's bound, media over it,
    a NameAgent whose title model fails or is too slow: each a valid answer or a clear Connect
    error, none forwarded, none hung."""
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        byok = Conversation(MODEL, workspace)
        fp.script.text("hello")  # the turn
        stack = Stack(
            tmp_path,
            workspace,
            fp,
            backend,
            "local",
            "--set",
            "cursor_byok_route_wait_ms=400",
            "--set",
            "cursor_byok_title_timeout_ms=500",
        )
        try:
            turn = await stack.client.turn(
                stack.client.run_request("hi", conversation_id=byok.id, model=MODEL)
            )
            loop = asyncio.get_running_loop()
            started = loop.time()
            unknown = await stack.send(
                Call(
                    AGENT + "UpdateConversationMetadata",
                    pb.UpdateConversationMetadataRequest(
                        conversation_id=str(uuid.uuid4()), name=byok.marker
                    ),
                )
            )
            waited = loop.time() - started
            unreadable = await stack.send(
                Call(
                    AGENT + "UpdateConversationMetadata",
                    b"\x0a\x24" + byok.id.encode() + b"\xff\xff\xff",
                )
            )
            bomb = await stack.send(
                Call(
                    AGENT + "UploadConversationBlobs",
                    b"\x0a\x24" + byok.id.encode() + b"\x12" + b"\x00" * (65 * 1024 * 1024),
                    codec="gzip",
                )
            )
            huge_media = await stack.send(
                Call(
                    AGENT + "GetSignedUrlForAttachedMedia",
                    pb.GetSignedUrlForAttachedMediaRequest(
                        conversation_id=byok.id, content_length_bytes=1 << 40
                    ),
                )
            )
            fp.script.error(500, message="the title model is down")
            failed = await stack.send(
                Call(
                    AGENT + "NameAgent",
                    pb.NameAgentRequest(user_message=f"{byok.marker} one two three four five six"),
                )
            )
            fp.script.hang()
            started = loop.time()
            slow = await stack.send(
                Call(AGENT + "NameAgent", pb.NameAgentRequest(user_message=f"{byok.marker} again"))
            )
            slow_took = loop.time() - started
        finally:
            await stack.close()
    assert turn.end.ok
    assert unknown.status_code == 200 and 0.3 <= waited < 10  # waited, bounded, answered here
    assert unreadable.status_code == 400 and unreadable.json()["code"] == "invalid_argument"
    assert bomb.status_code == 429 and bomb.json()["code"] == "resource_exhausted"
    assert huge_media.status_code == 429 and "at most" in huge_media.json()["message"]
    assert failed.status_code == 200
    assert (
        pb.NameAgentResponse.FromString(failed.content).name
        == f"{byok.marker} one two three four five…"
    )
    assert slow.status_code == 200 and slow_took < 10
    assert pb.NameAgentResponse.FromString(slow.content).name == f"{byok.marker} again"
    assert marker_counts(received(backend), byok.marker) == dict.fromkeys(ENCODINGS, 0)
    assert backend.requests == []
