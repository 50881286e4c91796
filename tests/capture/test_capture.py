"""Capture files: redaction, the format's round trip, and the replay comparison."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from cursor_byok.capture.format import CaptureError
from cursor_byok.capture.format import load_capture
from cursor_byok.capture.format import parse_capture
from cursor_byok.capture.recorder import Recorder
from cursor_byok.capture.redact import scrub_end_stream
from cursor_byok.cli import main as cli
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.providers.base import Finish
from cursor_byok.providers.base import ModelRequest
from cursor_byok.providers.base import ProviderEvent
from cursor_byok.providers.base import ReasoningDelta
from cursor_byok.providers.base import TextDelta
from cursor_byok.providers.base import ToolCallArgsDelta
from cursor_byok.providers.base import ToolCallEnd
from cursor_byok.providers.base import ToolCallStart
from cursor_byok.providers.base import ToolSpec
from cursor_byok.providers.base import Usage
from cursor_byok.providers.provider_error import ProviderError
from cursor_byok.replay.frames import compare
from cursor_byok.secrets import REDACTED
from cursor_byok.secrets import redact_headers
from cursor_byok.secrets import scrub
from cursor_byok.wire import connect
from cursor_byok.wire.connect import EndStreamError
from cursor_byok.wire.connect import ErrorDetail

RID = "req-1"

# --- helpers -----------------------------------------------------------------------------------


class ScriptedProvider:
    """Yields given events per call, then raises the given error (if any)."""

    def __init__(self, calls: list[tuple[list[ProviderEvent], ProviderError | None]]) -> None:
        self.calls = list(calls)
        self.closed = False

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        events, error = self.calls.pop(0)
        for event in events:
            yield event
        if error is not None:
            raise error

    async def aclose(self) -> None:
        self.closed = True


async def drain(provider, request: ModelRequest) -> list[ProviderEvent]:
    return [event async for event in provider.stream(request)]


def run_request(text: str = "hi") -> bytes:
    message = pb.AgentClientMessage()
    message.run_request.conversation_id = "conv-1"
    message.run_request.action.user_message_action.user_message.text = text
    message.run_request.requested_model.model_id = "Model A"
    return message.SerializeToString()


def text_frame(text: str) -> bytes:
    update = pb.InteractionUpdate(text_delta=pb.TextDeltaUpdate(text=text))
    return pb.AgentServerMessage(interaction_update=update).SerializeToString()


def end_payload(error: EndStreamError | None = None) -> bytes:
    return connect.encode_end_stream(error)[connect.HEADER_SIZE :]


def only_file(directory: Path) -> Path:
    [path] = list(directory.glob("*.jsonl"))
    return path


# --- redaction ---------------------------------------------------------------------------------

PLANTED = {
    "authorization": "Bearer planted-bearer-0123456789",
    "cookie": "WorkosCursorSessionToken=planted-cookie-value",
    "x-cursor-checksum": "planted-checksum-abcdef",
    "x-client-key": "planted-client-key-123456",
    "x-session-id": "planted-session-id-7890",
    "x-ghost-mode": "false",
    "x-custom-trace": "ok eyJhbGciOiJIUzI1NiJ9.eyJwbGFudGVkIjoxfQ.c2lnbmVk",
    "x-forwarded-note": "key sk-" + "ant-planted0123456789abcdef inside",
    "x-upstream-auth-info": "planted-upstream-credential",
}
SECRETS = [
    "planted-bearer-0123456789",
    "planted-cookie-value",
    "planted-checksum-abcdef",
    "planted-client-key-123456",
    "planted-session-id-7890",
    "eyJhbGciOiJIUzI1NiJ9",
    "sk-" + "ant-planted0123456789abcdef",
    "planted-upstream-credential",
    "sk-" + "proj-plantedinerror0123456789",
    "eyJwbGFudGVkIjoyfQ",
    "planted-error-bearer-0123",
    "planted-config-header-secret",
]


def test_scrub_replaces_token_shapes_and_is_idempotent() -> None:
    text = (
        "Bearer abcdef123456 and token xyz7890abc, key sk-" + "live_0123456789abcdef, "
        "jwt eyJhbGciOi.eyJzdWIi.sig, google AIzaSyA0123456789abcdefghijklmno, "
        "github ghp_0123456789abcdefABCDEF, aws AKIAABCDEFGHIJKLMNOP; plain words stay"
    )
    once = scrub(text)
    for secret in ("abcdef123456", "xyz7890abc", "sk-live", "eyJ", "AIza", "ghp_", "AKIA"):
        assert secret not in once
    assert once.startswith(f"Bearer {REDACTED} and token {REDACTED}")
    assert once.endswith("plain words stay")
    assert scrub(once) == once
    assert scrub("the task-runner risk-free basics") == "the task-runner risk-free basics"


def test_redact_headers() -> None:
    redacted = redact_headers(PLANTED)
    for name in (
        "authorization",
        "cookie",
        "x-cursor-checksum",
        "x-client-key",
        "x-session-id",
        "x-upstream-auth-info",
    ):
        assert redacted[name] == REDACTED
    assert redacted["x-ghost-mode"] == "false"
    assert redacted["x-custom-trace"] == f"ok {REDACTED}"
    assert redacted["x-forwarded-note"] == f"key {REDACTED} inside"


async def test_no_planted_secret_reaches_the_file(tmp_path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        """
[providers.p]
kind = "openai-chat"
base_url = "https://llm.example/v1"
api_key_env = "PLANTED_KEY_ENV"
headers = { "x-org-note" = "planted-config-header-secret", "x-api-key" = { env = "PLANTED_HDR" } }

[[models]]
name = "Model A"
provider = "p"
model = "upstream-a"
"""
    )
    recorder = Recorder(
        tmp_path / "rec", agent="provider", config_path=config, data_dir=tmp_path / "data"
    )
    recorder.client(RID, 0, run_request(), PLANTED)
    recorder.client(RID, 1, b"", {**PLANTED, "x-session-id": "planted-session-id-7890"})
    message = "bad key sk-" + "proj-plantedinerror0123456789, Bearer planted-error-bearer-0123"
    error = ProviderError("auth", message, status=401, provider="p", reason="eyJwbGFudGVkIjoyfQ.x")
    provider = recorder.wrap_provider(ScriptedProvider([([TextDelta("a")], error)]), RID)
    with pytest.raises(ProviderError):
        await drain(provider, ModelRequest(model="upstream-a", system="s", messages=[]))
    details = aipb.ErrorDetails(
        error=aipb.ErrorDetails.ERROR_PROVIDER_ERROR,
        details=aipb.CustomErrorDetails(title="t", detail=f"p: {message}"),
    )
    end = EndStreamError(
        "unavailable",
        f"p: {message}",
        (ErrorDetail("aiserver.v1.ErrorDetails", details.SerializeToString()),),
    )
    recorder.server(RID, end_payload(end), True)
    recorder.close()
    data = only_file(tmp_path / "rec").read_bytes()
    for secret in SECRETS:
        assert secret.encode() not in data, secret
    assert REDACTED.encode() in data
    capture = load_capture(only_file(tmp_path / "rec"))
    assert capture.meta["config"]["models"][0]["model"] == "upstream-a"
    assert capture.end is not None and "p: bad key" in capture.end["error"]["message"]
    [detail] = capture.end["error"]["details"]
    value = detail["value"] + "=" * (-len(detail["value"]) % 4)
    assert aipb.ErrorDetails.FromString(base64.b64decode(value)).details.title == "t"


def test_scrubbed_end_stream_is_stable() -> None:
    """Replay scrubs the replayed end-stream the same way, so equal turns compare equal."""
    end = end_payload(EndStreamError("unavailable", "p: Bearer planted-error-bearer-0123"))
    once = scrub_end_stream(end)
    again = scrub_end_stream(json.dumps(once).encode())
    assert once == again and REDACTED in once["error"]["message"]


# --- round trip ---------------------------------------------------------------------------------


async def test_recorded_capture_reads_back(tmp_path) -> None:
    clock = iter(i / 100 for i in range(1000))
    recorder = Recorder(tmp_path, agent="provider", clock=lambda: next(clock))
    heartbeat = pb.AgentClientMessage(client_heartbeat=pb.ClientHeartbeat()).SerializeToString()
    recorder.client(RID, 0, run_request("do it"), {"user-agent": "x"})
    frames = [text_frame("one"), text_frame("two")]
    recorder.server(RID, frames[0], False)
    tools = [ToolSpec("Read", "read a file", {"type": "object"})]
    first = ModelRequest(
        model="m",
        system="sys",
        messages=[{"role": "user", "content": [{"type": "text", "text": "do it"}]}],
        tools=tools,
        params={"temperature": 0.1},
        cache_key="conv-1",
        reasoning=True,
    )
    call_one: list[ProviderEvent] = [
        ReasoningDelta("hmm"),
        TextDelta("Reading."),
        ToolCallStart("c1", "Read"),
        ToolCallArgsDelta("c1", '{"path":'),
        ToolCallArgsDelta("c1", '"a.txt"}'),
        ToolCallEnd("c1", "Read", {"path": "a.txt"}, '{"path":"a.txt"}'),
        Usage(input_tokens=10, output_tokens=5, reasoning_tokens=2),
        Finish("tool_calls", {"role": "assistant", "content": [{"type": "tool-call"}]}),
    ]
    second = ModelRequest(
        model="m",
        system="sys",
        messages=[*first.messages, {"role": "tool", "content": []}],
        tools=tools,
        params={"temperature": 0.1},
        cache_key="conv-1",
        reasoning=True,
    )
    call_two: list[ProviderEvent] = [
        ToolCallEnd("c2", "Write", None, '{"pa', error="truncated"),
        Finish("stop", {"role": "assistant", "content": []}),
    ]
    provider = ScriptedProvider([(call_one, None), (call_two, None)])
    wrapped = recorder.wrap_provider(provider, RID)
    assert await drain(wrapped, first) == call_one
    recorder.server(RID, frames[1], False)
    recorder.client(RID, 2, heartbeat, {"user-agent": "x"})  # arrives before seqno 1
    recorder.client(RID, 1, heartbeat, {"user-agent": "y"})
    assert await drain(wrapped, second) == call_two
    await wrapped.aclose()
    assert provider.closed
    recorder.server(RID, end_payload(), True)
    recorder.client(RID, 3, b"", {"user-agent": "y"})  # after the end: reopens the file
    recorder.close()

    path = only_file(tmp_path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["t"] for line in lines] == sorted(line["t"] for line in lines)
    requests = [line for line in lines if line["type"] == "provider_request"]
    assert "tools" not in requests[1]["request"] and requests[1]["request"]["messages_from"] == 1
    assert sum("headers" in line for line in lines) == 2  # written when they change

    capture = load_capture(path)
    assert capture.request_id == RID and capture.agent == "provider"
    assert capture.meta["conversation_id"] == "conv-1"
    assert [(c.seqno, c.after_frames, c.kind) for c in capture.client] == [
        (0, 0, "run_request"),
        (2, 2, "client_heartbeat"),
        (1, 2, "client_heartbeat"),
        (3, 3, "empty"),
    ]
    assert capture.server == frames
    assert capture.end == {}
    assert [c.request for c in capture.calls] == [first, second]
    assert [c.events for c in capture.calls] == [call_one, call_two]
    assert all(c.finished and c.error is None for c in capture.calls)


async def test_provider_error_round_trip(tmp_path) -> None:
    recorder = Recorder(tmp_path, agent="provider")
    recorder.client(RID, 0, run_request(), {})
    error = ProviderError("rate_limit", "slow down", status=429, retry_after=0.0, provider="p")
    provider = recorder.wrap_provider(ScriptedProvider([([], error)]), RID)
    with pytest.raises(ProviderError):
        await drain(provider, ModelRequest(model="m", system="", messages=[]))
    recorder.close()
    [call] = load_capture(only_file(tmp_path)).calls
    assert call.error == {
        "kind": "rate_limit",
        "status": 429,
        "message": "slow down",
        "retryable": True,
        "retry_after": 0.0,
        "provider": "p",
        "code": None,
    }
    assert not call.finished


def test_a_closed_recorder_writes_nothing(tmp_path) -> None:
    """Turns still winding down after an option change or shutdown must not reopen files."""
    recorder = Recorder(tmp_path, agent="scripted")
    recorder.client(RID, 0, run_request(), {})
    recorder.close()
    size = only_file(tmp_path).stat().st_size
    recorder.server(RID, text_frame("late"), False)
    recorder.client("req-2", 0, run_request(), {})
    assert only_file(tmp_path).stat().st_size == size


def test_unusable_captures_are_rejected(tmp_path) -> None:
    with pytest.raises(CaptureError, match="not JSON"):
        parse_capture(["{nope"])
    with pytest.raises(CaptureError, match="not a cursor-byok-capture"):
        parse_capture(['{"type": "client"}'])
    meta = '{"t":0,"type":"meta","format":"cursor-byok-capture","version":1,"request_id":"r"}'
    with pytest.raises(CaptureError, match="no run request"):
        parse_capture([meta])
    with pytest.raises(CaptureError, match="version"):
        parse_capture([meta.replace('"version":1', '"version":99')])
    with pytest.raises(CaptureError, match="before its request"):
        parse_capture([meta, '{"type":"provider_event","call":1,"event":{"type":"text"}}'])
    with pytest.raises(CaptureError, match="capture:2: provider_error for call 2 before"):
        parse_capture([meta, '{"type":"provider_error","call":2,"error":{}}'])
    with pytest.raises(CaptureError, match="capture:3: bad client line: KeyError"):
        parse_capture([meta, "", '{"type":"client","raw":""}'])
    with pytest.raises(CaptureError, match="capture: empty file"):
        parse_capture(["", "  "])
    # Line types this version does not know (a later version's) are skipped, whatever they are.
    with pytest.raises(CaptureError, match="no run request"):
        parse_capture([meta, '{"type":"note"}', '{"type":["x"]}', '{"type":7}'])
    bad = tmp_path / "bad.jsonl"
    bad.write_text("hello\n")
    assert cli.main(["replay", str(bad)]) == 2
    assert cli.main(["replay", str(tmp_path / "missing.jsonl")]) == 2


# --- comparison ----------------------------------------------------------------------------------


def tool_started(model_call_id: str, started: int) -> bytes:
    call = pb.ToolCall(tool_call_id="c1", started_at_ms=started)
    call.read_tool_call.args.path = "a.txt"
    update = pb.ToolCallStartedUpdate(call_id="c1", tool_call=call, model_call_id=model_call_id)
    return pb.AgentServerMessage(
        interaction_update=pb.InteractionUpdate(tool_call_started=update)
    ).SerializeToString()


def step_completed(ms: int) -> bytes:
    update = pb.StepCompletedUpdate(step_id=1, step_duration_ms=ms)
    return pb.AgentServerMessage(
        interaction_update=pb.InteractionUpdate(step_completed=update)
    ).SerializeToString()


def exec_read(exec_id: str) -> bytes:
    read = pb.ExecServerMessage(id=1, exec_id=exec_id, read_args=pb.ReadArgs(path="a.txt"))
    return pb.AgentServerMessage(exec_server_message=read).SerializeToString()


def set_blob(data: bytes, ident: bytes) -> bytes:
    kv = pb.KvServerMessage(id=1, set_blob_args=pb.SetBlobArgs(blob_id=ident, blob_data=data))
    return pb.AgentServerMessage(kv_server_message=kv).SerializeToString()


def checkpoint(todo_id: bytes) -> bytes:
    state = pb.ConversationStateStructure(todos=[todo_id])
    return pb.AgentServerMessage(conversation_checkpoint_update=state).SerializeToString()


def test_volatile_fields_are_ignored() -> None:
    recorded = [text_frame("a"), tool_started("uuid-1", 1000), exec_read("e-1"), step_completed(5)]
    replayed = [text_frame("a"), tool_started("uuid-2", 2000), exec_read("e-2"), step_completed(9)]
    assert compare(recorded, {}, replayed, {}) is None


def test_changed_text_is_a_divergence() -> None:
    divergence = compare(
        [text_frame("a"), text_frame("b")], {}, [text_frame("a"), text_frame("c")], {}
    )
    assert divergence is not None
    assert (divergence.index, divergence.what) == (1, "differs")
    assert 'text: "b"' in divergence.recorded and 'text: "c"' in divergence.replayed
    assert any(line.startswith("-") and '"b"' in line for line in divergence.diff())


def test_missing_extra_frames_and_end() -> None:
    frames = [text_frame("a"), text_frame("b")]
    missing = compare(frames, {}, frames[:1], {})
    assert missing is not None and (missing.index, missing.what) == (1, "missing")
    extra = compare(frames[:1], {}, frames, {})
    assert extra is not None and (extra.index, extra.what) == (1, "extra")
    no_end = compare(frames, {}, frames, None)
    assert no_end is not None and no_end.what == "no end"
    error = {"error": {"code": "canceled", "message": "x"}}
    differs = compare(frames, {}, frames, error)
    assert differs is not None and (differs.index, differs.what) == (2, "end differs")
    assert compare(frames, None, frames, error) is None  # recording cut before the end


def test_blob_ids_pair_by_content_without_timestamps() -> None:
    """A todo blob holds wall-clock times, so its id differs between runs: pair and go on."""
    old = json.dumps({"id": "1", "content": "x", "created_at": 1, "updated_at": 1}).encode()
    new = json.dumps({"id": "1", "content": "x", "created_at": 2, "updated_at": 2}).encode()
    old_id, new_id = bytes(32), bytes([1] * 32)
    recorded = [set_blob(old, old_id), checkpoint(old_id)]
    assert compare(recorded, {}, [set_blob(new, new_id), checkpoint(new_id)], {}) is None
    other = json.dumps({"id": "1", "content": "y", "created_at": 2}).encode()
    divergence = compare(recorded, {}, [set_blob(other, new_id), checkpoint(new_id)], {})
    assert divergence is not None and divergence.index == 0


def test_step_blobs_compare_without_their_timings() -> None:
    from cursor_byok.replay.frames import canonical_blob

    def thinking(ms: int) -> bytes:
        step = pb.ConversationStep(thinking_message=pb.ThinkingMessage(text="hm", duration_ms=ms))
        return step.SerializeToString()

    def card(started: int) -> bytes:
        call = pb.ToolCall(started_at_ms=started, completed_at_ms=started + 5)
        call.read_tool_call.args.path = "a"
        return pb.ConversationStep(tool_call=call).SerializeToString()

    assert canonical_blob(thinking(1)) == canonical_blob(thinking(14))
    assert canonical_blob(card(1000)) == canonical_blob(card(2000))
    other = pb.ConversationStep(thinking_message=pb.ThinkingMessage(text="no", duration_ms=1))
    assert canonical_blob(thinking(1)) != canonical_blob(other.SerializeToString())
    assert canonical_blob(b"\xff\x00 not a step") == b"\xff\x00 not a step"
