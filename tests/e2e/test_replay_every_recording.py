"""Replay holds for every recording `record` makes (issue 17), recorded here, not shipped.

Each test records turns through a real mitmdump with `cursor_byok_record_dir` set, against the
fake provider speaking one wire format, then replays the capture files offline and expects
`match`. Replays run with the agent loop's clock frozen, the harshest case for timings: every
thinking step then lasts 1 ms, so steps equal but for timings have equal bytes in the replay and
different bytes in the recording.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
import types
import uuid
from pathlib import Path

import pytest
from cursor_client import CursorLikeClient
from cursor_client import TurnResult
from fakes.fake_provider import FakeProvider
from mitm import start_mitmdump
from provider_config import KEY_ENV
from provider_config import MODEL
from provider_config import write_config
from test_record_replay import PROVIDER_KEY
from test_record_replay import captures_in
from test_record_replay import make_workspace
from test_record_replay import run_cli

from cursor_byok.agent import model_call
from cursor_byok.capture.format import load_capture
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.replay import engine as replay

pytestmark = pytest.mark.timeout(180)

KINDS = ["openai-chat", "anthropic", "openai-responses"]
THOUGHT = "Look at the file first."


async def record_turns(
    tmp: Path, fp: FakeProvider, kind: str, messages: list[str], **client_options
) -> tuple[Path, list[TurnResult]]:
    """Run turns of one conversation with recording on; returns the capture directory."""
    workspace = tmp / "workspace"
    record_dir = tmp / "rec"
    proxy = start_mitmdump(
        tmp / "proxy",
        "--set",
        f"cursor_byok_record_dir={record_dir}",
        agent="provider",
        config=write_config(tmp, fp, kind),
        env={KEY_ENV: PROVIDER_KEY},
    )
    client = CursorLikeClient.through(proxy, workspace, **client_options)
    results: list[TurnResult] = []
    conversation = str(uuid.uuid4())
    try:
        for text in messages:
            state = results[-1].checkpoints[-1] if results else None
            request = client.run_request(
                text, conversation_id=conversation, model=MODEL, workspace=workspace, state=state
            )
            results.append(await client.turn(request))
    finally:
        await client.aclose()
        proxy.stop()
    assert all(r.end.ok for r in results), [r.end.error for r in results]
    return record_dir, results


def script_reasoning_with_a_tool(fp: FakeProvider, workspace: Path) -> None:
    """Two model calls thinking the same thing: two thinking steps equal but for durations."""
    notes = str(workspace / "notes.txt")
    fp.script.tool_calls([("call_read", "Read", {"path": notes})], reasoning=THOUGHT)
    fp.script.text("notes.txt says alpha and beta.", reasoning=THOUGHT)


@pytest.fixture
def frozen_clock(monkeypatch) -> None:
    """The model call's monotonic clock stands still during replays (thinking: 1 ms)."""
    frozen = types.SimpleNamespace(monotonic=lambda: 1000.0, time=time.time)
    monkeypatch.setattr(model_call, "time", frozen)


async def replay_all(paths: list[Path]) -> list[replay.Result]:
    results = await replay.replay_files(paths, stall=8)
    for result in results:
        assert result.ok, (result.capture.name, result.divergence, result.warnings)
        assert not result.stalled and result.sent == len(result.capture.client)
    return results


def thinking_steps(path: Path) -> list[int]:
    """Durations of the thinking-step blobs the recording SET, in order."""
    out = []
    for raw in load_capture(path).server:
        message = pb.AgentServerMessage.FromString(raw)
        data = message.kv_server_message.set_blob_args.blob_data
        step = pb.ConversationStep()
        try:
            step.ParseFromString(data)
        except Exception:
            continue
        if step.WhichOneof("message") == "thinking_message" and step.SerializeToString() == data:
            out.append(step.thinking_message.duration_ms)
    return out


@pytest.mark.parametrize("kind", KINDS)
async def test_reasoning_and_tools_replay_for_every_provider_kind(
    tmp_path, kind, frozen_clock
) -> None:
    make_workspace(tmp_path)
    async with FakeProvider() as fp:
        script_reasoning_with_a_tool(fp, tmp_path / "workspace")
        record_dir, [result] = await record_turns(tmp_path, fp, kind, ["what is in notes.txt?"])
    assert result.updates("thinking_delta") and "alpha" in result.text
    [path] = captures_in(record_dir)
    # One thinking blob: the second step reuses the first one's bytes (turn.Turn._add_step).
    assert len(thinking_steps(path)) == 1
    await replay_all([path])


async def test_think_tag_reasoning_replays(tmp_path, frozen_clock) -> None:
    """OpenAI-compatible servers that put reasoning in `<think>` tags inside the content."""
    make_workspace(tmp_path)
    notes = str(tmp_path / "workspace" / "notes.txt")
    async with FakeProvider() as fp:
        fp.script.tool_calls(
            [("call_read", "Read", {"path": notes})], text=f"<think>{THOUGHT}</think>"
        )
        fp.script.text(f"<think>{THOUGHT}</think>notes.txt says alpha and beta.")
        record_dir, [result] = await record_turns(tmp_path, fp, "openai-chat", ["notes?"])
    assert result.updates("thinking_delta") and "<think>" not in result.text
    await replay_all(captures_in(record_dir))


async def test_shuffled_and_duplicated_appends_replay(tmp_path, frozen_clock) -> None:
    make_workspace(tmp_path)
    async with FakeProvider() as fp:
        script_reasoning_with_a_tool(fp, tmp_path / "workspace")
        record_dir, _ = await record_turns(
            tmp_path,
            fp,
            "openai-chat",
            ["what is in notes.txt?"],
            shuffle_appends=True,
            duplicate_appends=True,
            seed=7,
        )
    [path] = captures_in(record_dir)
    seqnos = [line.seqno for line in load_capture(path).client]
    assert seqnos != sorted(set(seqnos))  # arrived out of order or twice
    await replay_all([path])


async def test_dropped_and_reopened_stream_replays(tmp_path, frozen_clock) -> None:
    make_workspace(tmp_path)
    async with FakeProvider() as fp:
        script_reasoning_with_a_tool(fp, tmp_path / "workspace")
        record_dir, [result] = await record_turns(
            tmp_path, fp, "openai-chat", ["what is in notes.txt?"], drop_after=[4, 9]
        )
    assert result.reconnects == 2
    await replay_all(captures_in(record_dir))


async def test_two_turns_of_one_conversation_replay(tmp_path, frozen_clock) -> None:
    make_workspace(tmp_path)
    async with FakeProvider() as fp:
        script_reasoning_with_a_tool(fp, tmp_path / "workspace")
        fp.script.text("You asked about notes.txt.", reasoning=THOUGHT)
        record_dir, results = await record_turns(
            tmp_path, fp, "openai-chat", ["what is in notes.txt?", "what did I ask?"]
        )
    assert len(results) == 2
    paths = captures_in(record_dir)
    assert len(paths) == 2 and load_capture(paths[1]).blobs  # turn 2 reads turn 1's history
    await replay_all(paths)


# --- what replay must still catch --------------------------------------------------------------


async def test_a_changed_server_is_reported_at_its_first_divergence(tmp_path, monkeypatch) -> None:
    make_workspace(tmp_path)
    async with FakeProvider() as fp:
        script_reasoning_with_a_tool(fp, tmp_path / "workspace")
        record_dir, _ = await record_turns(tmp_path, fp, "anthropic", ["what is in notes.txt?"])
    [path] = captures_in(record_dir)
    capture = load_capture(path)
    first_text = next(
        i
        for i, raw in enumerate(capture.server)
        if pb.AgentServerMessage.FromString(raw).interaction_update.HasField("text_delta")
    )
    from cursor_byok.agent import turn as turn_module

    original = turn_module.Turn.text

    def shouted(self, text, *_where) -> None:  # other text than the provider's part: no range
        original(self, text.upper())

    monkeypatch.setattr(turn_module.Turn, "text", shouted)
    [result] = await replay.replay_files([path], stall=5)
    assert not result.ok and result.divergence is not None
    assert result.divergence.index == first_text and result.divergence.what == "differs"
    assert "NOTE" in result.divergence.replayed


async def test_answers_are_sent_by_what_they_answer_not_by_position(tmp_path) -> None:
    """Recorded positions the replayed stream cannot reach (a client that answered late, out of
    order) do not stall the replay: an answer goes out once its request is in."""
    make_workspace(tmp_path)
    async with FakeProvider() as fp:
        script_reasoning_with_a_tool(fp, tmp_path / "workspace")
        record_dir, _ = await record_turns(tmp_path, fp, "openai-chat", ["what is in notes.txt?"])
    [path] = captures_in(record_dir)
    lines = path.read_text().splitlines()
    moved = 0
    for index, text in enumerate(lines):
        line = json.loads(text)
        if line["type"] == "client" and line["kind"].startswith(("exec_", "kv_")) and moved < 3:
            line["after_frames"] = 10_000  # "arrived" after frames that never come
            lines[index] = json.dumps(line)
            moved += 1
    assert moved == 3
    path.write_text("\n".join(lines) + "\n")
    [result] = await replay.replay_files([path], stall=5)
    assert result.ok, result.divergence
    assert not result.stalled


# --- real Cursor bytes -------------------------------------------------------------------------

REAL = sorted((Path(__file__).resolve().parents[1] / "data").glob("run_request_*.bidi.json"))


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
async def test_turns_started_by_real_cursor_run_requests_replay(tmp_path, path) -> None:
    """A real run request (its old checkpoint dropped: a new chat) recorded and replayed: every
    field Cursor sends goes through the recorder and back through replay."""
    workspace = make_workspace(tmp_path)
    data = json.loads(path.read_text())["bidi_append_request"]["data"]
    message = pb.AgentClientMessage.FromString(bytes.fromhex(data))
    message.run_request.conversation_state.Clear()
    message.run_request.conversation_state.SetInParent()
    message.run_request.action.user_message_action.user_message.text += " notes.txt"
    record_dir = tmp_path / "rec"
    proxy = start_mitmdump(tmp_path / "proxy", "--set", f"cursor_byok_record_dir={record_dir}")
    client = CursorLikeClient.through(proxy, workspace)
    try:
        result = await client.turn(message)
    finally:
        await client.aclose()
        proxy.stop()
    assert result.end.ok and "alpha" in result.text
    [capture_path] = captures_in(record_dir)
    assert load_capture(capture_path).client[0].raw == message.SerializeToString()
    await replay_all([capture_path])


# --- native captures and --compare --------------------------------------------------------------

PLANTED_KEY = "plain-cursor-byok-key-without-a-shape"
PLANTED_JWT = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJuYXRpdmUifQ.c2lnbmF0dXJl"


def as_native(source: Path, directory: Path, *, plant: bool = True) -> Path:
    """Pass a recording through the native recorder hooks as if Cursor's backend had served it
    (the lead wires `passthrough_*` into the pass-through path), with secrets planted in the
    protobuf bodies: a key in the run request's credentials, a JWT in the streamed text."""
    from cursor_byok.capture.recorder import Recorder

    capture = load_capture(source)
    recorder = Recorder(directory, native=True)
    request_id = capture.request_id

    def frame(raw: bytes) -> bytes:
        message = pb.AgentServerMessage.FromString(raw)
        if plant and message.interaction_update.HasField("text_delta"):
            message.interaction_update.text_delta.text += f" {PLANTED_JWT}"
            return message.SerializeToString()
        return raw

    frames = iter(capture.server)
    sent = 0
    for line in capture.client:
        while sent < min(line.after_frames, len(capture.server)):
            recorder.passthrough_server(request_id, frame(next(frames)), False)
            sent += 1
        raw = line.raw
        if plant and line.kind == "run_request":
            message = pb.AgentClientMessage.FromString(raw)
            message.run_request.requested_model.api_key_credentials.api_key = PLANTED_KEY
            raw = message.SerializeToString()
        recorder.passthrough_client(request_id, line.seqno, raw, {"authorization": "Bearer x"})
    for raw in frames:
        recorder.passthrough_server(request_id, frame(raw), False)
    recorder.passthrough_server(request_id, json.dumps(capture.end or {}).encode(), True)
    recorder.close()
    [path] = captures_in(directory)
    return path


async def test_native_capture_is_redacted_and_compares_structurally(tmp_path) -> None:
    make_workspace(tmp_path)
    async with FakeProvider() as fp:
        notes = str(tmp_path / "workspace" / "notes.txt")
        fp.script.tool_calls([("call_read", "Read", {"path": notes})], reasoning=THOUGHT)
        fp.script.text("It says alpha.", reasoning="Done.")
        record_dir, _ = await record_turns(tmp_path, fp, "openai-chat", ["what is in notes?"])
    [ours] = captures_in(record_dir)
    native = as_native(ours, tmp_path / "native")
    data = native.read_bytes()
    assert PLANTED_KEY.encode() not in data and PLANTED_JWT.encode() not in data
    assert b"Bearer x" not in data
    capture = load_capture(native)
    assert capture.agent == "cursor" and "config" not in capture.meta
    text = b"".join(capture.server)
    assert text.count(b"<redacted>") >= 2  # scrubbed inside the frames, which still parse
    assert b"<redacted>" in capture.client[0].raw  # the credential field
    for raw in capture.server:
        pb.AgentServerMessage.FromString(raw)

    from cursor_byok.replay import compare

    [same] = await compare.compare_files([native])
    assert same.differences == [], same.differences

    # Their server sets a checkpoint field ours does not, and streams one more kind of update.
    planted = tmp_path / "planted"
    lines = native.read_text().splitlines()
    for index, text in enumerate(lines):
        line = json.loads(text)
        if line["type"] == "server" and line["kind"] == "conversation_checkpoint_update":
            message = pb.AgentServerMessage.FromString(base64.b64decode(line["raw"]))
            message.conversation_checkpoint_update.file_states["planted.txt"] = b"x"
            line["raw"] = base64.b64encode(message.SerializeToString()).decode()
            lines[index] = json.dumps(line)
    planted.mkdir()
    (planted / native.name).write_text("\n".join(lines) + "\n")
    done = await asyncio.to_thread(run_cli, "replay", "--compare", str(planted / native.name))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DIFFERS" in done.stdout and "checkpoint fields: only theirs ['file_states']" in (
        done.stdout
    ), done.stdout

    refused = await asyncio.to_thread(run_cli, "replay", str(native))
    assert refused.returncode == 2 and "--compare" in refused.stdout
