"""Real and fixture captures decode with our schema subset, round-trip, and leave nothing unnamed.

The captures are in tests/data (see its SOURCES.md). A field that shows up
as unknown at the top of one of the core messages means Cursor added something our proto subset does
not model: the test fails so that someone looks, except for the allow-listed fields whose names no
known schema gives.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet

from cursor_byok.pb import agent_v1_pb2
from cursor_byok.pb import aiserver_v1_pb2
from cursor_byok.wire import bidi
from cursor_byok.wire import connect

CAPTURES = Path(__file__).resolve().parents[1] / "data"  # real traces; see data/SOURCES.md
GLIDER = CAPTURES / "glider_testdata"
ANON_ID = "00000000-1111-2222-3333-444444444444"  # Glider's anonymised request id

JSON_CAPTURES = [
    "run_request_agent.bidi.json",
    "run_request_ask.bidi.json",
    "run_request_plan.bidi.json",
]

# Messages whose own fields must all be named by our schema.
CORE = {
    "AgentClientMessage",
    "AgentRunRequest",
    "ConversationAction",
    "UserMessageAction",
    "UserMessage",
    "RequestContext",
    "ConversationStateStructure",
}
# (message, field number) seen in captures that no schema names: varint bools, true in captures.
ALLOWED_UNKNOWN = {("AgentRunRequest", 27), ("AgentRunRequest", 28)}


def _capture(path: Path) -> Path:
    assert path.is_file(), f"test vector {path} is missing (tests/data/SOURCES.md)"
    return path


def _walk(message: Message, path: str = "") -> list[tuple[str, Message]]:
    """Every message in a tree with its path, the root first."""
    out = [(path or message.DESCRIPTOR.name, message)]
    for fd, value in message.ListFields():
        if fd.message_type is None:
            continue
        sub = f"{path}.{fd.name}" if path else fd.name
        if fd.message_type.GetOptions().map_entry:
            if fd.message_type.fields_by_name["value"].type == FieldDescriptor.TYPE_MESSAGE:
                for key in value:
                    out += _walk(value[key], f"{sub}[{key!r}]")
        elif fd.is_repeated:
            for i, element in enumerate(value):
                out += _walk(element, f"{sub}[{i}]")
        else:
            out += _walk(value, sub)
    return out


def unknown_fields(message: Message) -> tuple[list[str], list[str]]:
    """(unknown fields atop CORE messages, unknown fields anywhere else) as readable lines."""
    core, deeper = [], []
    for path, sub in _walk(message):
        name = sub.DESCRIPTOR.name
        for field in UnknownFieldSet(sub):
            line = f"{path} ({name}) #{field.field_number} wire type {field.wire_type}"
            if name in CORE:
                if (name, field.field_number) not in ALLOWED_UNKNOWN:
                    core.append(line)
            else:
                deeper.append(line)
    return core, deeper


def _roundtrip(message: Message) -> None:
    again = type(message)()
    again.ParseFromString(message.SerializeToString())
    assert again == message
    # Unknown fields survive re-serialisation too (== ignores them).
    assert [(f.field_number, f.data) for f in UnknownFieldSet(again)] == [
        (f.field_number, f.data) for f in UnknownFieldSet(message)
    ]


def _check_unknown(message: Message, label: str) -> None:
    core, deeper = unknown_fields(message)
    print(f"{label}: {len(deeper)} unknown fields below the core messages")
    for line in deeper:
        print("  ", line)
    assert not core, "new unknown fields in core messages:\n" + "\n".join(core)


def _strip(value: Any, keys: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_strip(v, keys) for v in value]
    return value


# --- the three real run_request captures ----------------------------------------------------------


@pytest.mark.parametrize("name", JSON_CAPTURES)
def test_json_run_request(name: str) -> None:
    doc = json.loads(_capture(CAPTURES / name).read_text(encoding="utf-8"))
    raw = bytes.fromhex(doc["bidi_append_request"]["data"])
    message = bidi.parse_client_message(raw)
    assert message.WhichOneof("message") == doc["agent_client_kind"] == "run_request"
    _roundtrip(message)
    assert message.ByteSize() == len(raw)  # nothing lost; only the field order may differ
    _check_unknown(message, name)
    # 27 and 28 are modelled now (the SDK bundle's schema names 28, a newer schema 27)
    assert not {f.field_number for f in UnknownFieldSet(message.run_request)}
    assert message.run_request.client_supports_prompt_context_usage_rpc
    assert message.run_request.client_supports_routed_model_update

    # The capture tool's own rendering of the same bytes, field for field (it names 27 as we do
    # and leaves 28 unnamed).
    rendered = doc["agent_client_message"]
    ours = json_format.MessageToDict(message, preserving_proto_field_name=True)
    assert _strip(ours, {"client_supports_routed_model_update"}) == rendered

    run = message.run_request
    expected_run = rendered["run_request"]
    user = run.action.user_message_action.user_message
    expected_user = expected_run["action"]["user_message_action"]["user_message"]
    assert user.text == expected_user["text"]
    assert agent_v1_pb2.AgentMode.Name(user.mode) == expected_user["mode"]
    assert run.requested_model.model_id == expected_run["requested_model"]["model_id"]
    assert run.conversation_id == expected_run["conversation_id"]
    assert run.run_id == doc["bidi_append_request"]["request_id"]["request_id"]
    blob_ids = list(run.conversation_state.root_prompt_messages_json) + list(
        run.conversation_state.turns
    )
    assert blob_ids and all(len(b) == 32 for b in blob_ids)


def test_json_captures_modes() -> None:
    """The three captures differ in the user's mode; SOURCES.md says which."""
    modes = {}
    for name in JSON_CAPTURES:
        doc = json.loads(_capture(CAPTURES / name).read_text(encoding="utf-8"))
        message = bidi.parse_client_message(bytes.fromhex(doc["bidi_append_request"]["data"]))
        user = message.run_request.action.user_message_action.user_message
        modes[name] = agent_v1_pb2.AgentMode.Name(user.mode)
    assert modes == {
        "run_request_agent.bidi.json": "AGENT_MODE_AGENT",
        "run_request_ask.bidi.json": "AGENT_MODE_ASK",
        "run_request_plan.bidi.json": "AGENT_MODE_PLAN",
    }


# --- Glider fixtures (synthetic, anonymised) ------------------------------------------------------


def test_glider_heartbeat_append() -> None:
    append = bidi.decode_bidi_append(_capture(GLIDER / "bidi_append_ack_empty.bin").read_bytes())
    assert (append.request_id, append.seqno) == (ANON_ID, 1)
    assert append.message is not None
    assert append.message.WhichOneof("message") == "client_heartbeat"
    _roundtrip(append.message)
    _check_unknown(append.message, "bidi_append_ack_empty.bin")


@pytest.mark.parametrize(
    ("name", "seqno", "inner_hex"),
    [
        # field 2 (exec_client_message) holding a bare path string, not an ExecClientMessage
        ("bidi_append_content_path.bin", 10, None),
        # field 5 (exec_client_control_message) holding four zero bytes: field number 0 is invalid
        ("bidi_append_control_f5.bin", 2, "2a0400000000"),
    ],
)
def test_glider_synthetic_appends_are_not_agent_messages(
    name: str, seqno: int, inner_hex: str | None
) -> None:
    """Hand-built fixtures whose inner bytes are not a valid AgentClientMessage in any schema.

    The BidiAppendRequest wrapper decodes; the inner message is not an Agent message (not a
    crash, not half-parsed): an append like this goes to Cursor as it came, or is refused for a
    run we serve (proxy/agent_rpc.py).
    """
    body = _capture(GLIDER / name).read_bytes()
    request = aiserver_v1_pb2.BidiAppendRequest.FromString(body)
    assert (request.request_id.request_id, request.append_seqno) == (ANON_ID, seqno)
    if inner_hex is not None:
        assert request.data == inner_hex
    _roundtrip(request)
    append = bidi.decode_bidi_append(body)
    assert not append.agent and append.message is None


def test_glider_run_sse_request() -> None:
    body = _capture(GLIDER / "run_sse_request.bin").read_bytes()
    assert bidi.decode_run_sse_request(body) == ANON_ID
    (frame,) = connect.decode_envelopes(body)
    request = aiserver_v1_pb2.BidiRequestId.FromString(frame.payload)
    _roundtrip(request)
    assert not len(UnknownFieldSet(request))


def test_glider_run_sse_response() -> None:
    frames = connect.decode_envelopes(_capture(GLIDER / "runsse_resp_text_synth.bin").read_bytes())
    *data, end = frames
    assert end.is_end_stream and connect.parse_end_stream(end.payload).ok
    updates = []
    for frame in data:
        message = agent_v1_pb2.AgentServerMessage.FromString(frame.payload)
        _roundtrip(message)
        assert not any(len(UnknownFieldSet(sub)) for _, sub in _walk(message))
        updates.append(message.interaction_update.WhichOneof("message"))
    assert updates == [
        "heartbeat",
        "thinking_delta",
        "token_delta",
        "text_delta",
        "token_delta",
        "turn_ended",
    ]
    text = agent_v1_pb2.AgentServerMessage.FromString(
        data[3].payload
    ).interaction_update.text_delta.text
    assert text == "fixture-hello"


def test_unknown_field_guard_catches_new_fields() -> None:
    """The guard itself: an unnamed field in a core message is reported, deeper ones are counted."""
    run = agent_v1_pb2.AgentRunRequest(conversation_id="c")
    run.action.user_message_action.user_message.text = "hi"
    raw = agent_v1_pb2.AgentClientMessage(run_request=run).SerializeToString()
    message = agent_v1_pb2.AgentClientMessage.FromString(raw)
    # Unknown varint #99 inside UserMessage, plus the allowed #27 on AgentRunRequest.
    user = message.run_request.action.user_message_action.user_message
    user.MergeFromString(bytes([0x98, 0x06, 0x01]))
    message.run_request.MergeFromString(bytes([0xD8, 0x01, 0x01]))
    message.run_request.requested_model.MergeFromString(bytes([0xF8, 0x06, 0x01]))  # #111, deeper
    core, deeper = unknown_fields(message)
    assert len(core) == 1 and "(UserMessage) #99" in core[0]
    assert len(deeper) == 1 and "#111" in deeper[0]
