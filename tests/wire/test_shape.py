"""Agent-shaped or not (wire/shape.py): real captures are, Cursor's voice-input uploads
mostly are not, and the unknown fields of a Cursor update are named for the census."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire.shape import Unmodelled
from cursor_byok.wire.shape import classify
from cursor_byok.wire.shape import unmodelled

DATA = Path(__file__).resolve().parents[1] / "data"


def tag(number: int, wire: int) -> bytes:
    value = number << 3 | wire
    out = b""
    while True:
        byte, value = value & 0x7F, value >> 7
        out += bytes([byte | (0x80 if value else 0)])
        if not value:
            return out


def ld(number: int, payload: bytes) -> bytes:
    return tag(number, 2) + bytes([len(payload)]) + payload


def varint(number: int, value: int) -> bytes:
    return tag(number, 0) + bytes([value])


# aiserver.v1.SttClientMessage{config=1 SttConfig{language=1, punctuate=2} | audio=2
# SttAudioChunk{pcm16=1} | control=3 SttControl{type=1}} (the reference schema)
STT_CONFIG = ld(1, ld(1, b"en-US") + varint(2, 1))
STT_CONFIG_LANGUAGE_ONLY = ld(1, ld(1, b"en-US"))
STT_AUDIO = ld(2, ld(1, bytes(range(40))))
STT_STOP = ld(3, varint(1, 1))


@pytest.mark.parametrize(
    "name",
    ["run_request_agent.bidi.json", "run_request_ask.bidi.json", "run_request_plan.bidi.json"],
)
def test_captured_run_requests_are_agent_messages(name) -> None:
    raw = bytes.fromhex(json.loads((DATA / name).read_text())["bidi_append_request"]["data"])
    classified = classify(raw)
    assert classified.agent and classified.message is not None
    # fields 27 and 28 of the run request are newer than the reference; we model them now
    assert classified.message.run_request.client_supports_prompt_context_usage_rpc
    assert unmodelled(classified.message) == []


@pytest.mark.parametrize(
    "message",
    [
        pb.AgentClientMessage(client_heartbeat=pb.ClientHeartbeat()),
        pb.AgentClientMessage(
            kv_client_message=pb.KvClientMessage(id=3, set_blob_result=pb.SetBlobResult())
        ),
        pb.AgentClientMessage(
            exec_client_message=pb.ExecClientMessage(
                id=2, read_result=pb.ReadResult(success=pb.ReadSuccess(content="x"))
            )
        ),
        pb.AgentClientMessage(run_request=pb.AgentRunRequest(conversation_id="c", run_id="r")),
    ],
    ids=["heartbeat", "kv-ack", "exec-result", "run-request"],
)
def test_agent_messages_are_agent_shaped(message) -> None:
    assert classify(message.SerializeToString()).agent


@pytest.mark.parametrize(
    "raw",
    [STT_CONFIG, STT_CONFIG_LANGUAGE_ONLY, STT_AUDIO, b"\xff\xfe\xfd", b"not protobuf at all"],
    ids=["stt-config", "stt-config-language", "stt-audio", "garbage", "text"],
)
def test_other_payloads_are_not(raw) -> None:
    assert not classify(raw).agent


def test_an_stt_stop_looks_like_a_kv_message_so_only_the_request_id_tells() -> None:
    # SttControl{STOP} is byte for byte KvClientMessage{id=1}: the edge decides by request id.
    assert classify(STT_STOP).agent


def test_a_new_case_is_agent_shaped_and_named() -> None:
    raw = ld(12, varint(1, 5))
    classified = classify(raw)
    assert classified.agent and classified.message is not None
    assert unmodelled(classified.message) == [Unmodelled("AgentClientMessage", 12, "case")]


def test_unknown_action_fields_and_unhandled_actions_are_named() -> None:
    run = pb.AgentRunRequest(conversation_id="c")
    run.action.subscription_notification_action.SetInParent()
    raw = pb.AgentClientMessage(run_request=run).SerializeToString()
    classified = classify(raw)
    assert classified.message is not None
    [found] = unmodelled(classified.message)
    assert found.key == "ConversationAction.subscription_notification_action"
    assert "field 16" in found.describe()
    action = pb.ConversationAction()
    action.user_message_action.user_message.text = "hi"
    message = pb.AgentClientMessage(conversation_action=action).SerializeToString()
    message = message[:1] + bytes([message[1] + 3]) + message[2:] + varint(40, 1)
    keys = [u.key for u in unmodelled(classify(message).message)]
    assert keys == ["ConversationAction.40"]
