"""The content view's decoding (pure part): a captured BidiAppend upload and a RunSSE stream,
rebuilt from the shipped capture captures/scripted-read.jsonl, and a model-picker answer."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from cursor_byok.capture import traffic_view
from cursor_byok.config import parse_config
from cursor_byok.config.catalog import available_models_response
from cursor_byok.protocol import bidi
from cursor_byok.protocol import connect

CAPTURE = Path(__file__).resolve().parents[2] / "captures" / "scripted-read.jsonl"


def records() -> list[dict]:
    return [json.loads(line) for line in CAPTURE.read_text().splitlines()]


def test_a_captured_bidi_append_upload_decodes() -> None:
    meta, first = records()[0], next(r for r in records() if r["type"] == "client")
    body = bidi.encode_bidi_append(meta["request_id"], 0, base64.b64decode(first["raw"]))
    text = traffic_view.render(
        body, path="/aiserver.v1.BidiService/BidiAppend", is_request=True,
        content_type="application/proto",
    )  # fmt: skip
    assert "BidiAppend" in text and meta["request_id"] in text
    assert "agent.v1.AgentClientMessage" in text and "read notes.txt" in text
    assert traffic_view.agent_kind("/aiserver.v1.BidiService/BidiAppend", False) is None


def test_a_captured_run_sse_stream_decodes_frame_by_frame() -> None:
    server = [base64.b64decode(r["raw"]) for r in records() if r["type"] == "server"]
    stream = b"".join(connect.encode_frame(raw) for raw in server)
    stream += connect.encode_frame(server[0], encoding="gzip")  # a compressed frame too
    stream += connect.encode_end_stream()
    text = traffic_view.render(
        stream, path="/agent.v1.AgentService/RunSSE", is_request=False,
        content_type="text/event-stream",
    )  # fmt: skip
    assert text.count("agent.v1.AgentServerMessage") == len(server) + 1
    assert "thinking_delta" in text and "end-stream" in text
    with pytest.raises(ValueError):
        traffic_view.render(
            b"\x00\x00\x00\x00\x09abc", path="/x/RunSSE", is_request=False, content_type=None
        )


def test_a_picker_answer_and_an_unknown_call() -> None:
    config = parse_config(
        {
            "providers": {"p": {"kind": "openai-chat", "base_url": "http://127.0.0.1:1/v1"}},
            "models": [{"name": "Mine (BYOK)", "provider": "p", "model": "m"}],
        }
    )
    body = available_models_response(config).SerializeToString()
    text = traffic_view.render(
        body, path="/aiserver.v1.AiService/AvailableModels", is_request=False,
        content_type="application/proto",
    )  # fmt: skip
    assert "aiserver.v1.AvailableModelsResponse" in text and "Mine (BYOK)" in text
    enveloped = connect.encode_frame(b"\x08\x01") + connect.encode_end_stream()
    other = traffic_view.render(
        enveloped, path="/aiserver.v1.Other/Call", is_request=False,
        content_type="application/connect+proto", fallback=lambda p: f"<{p.hex()}>",
    )  # fmt: skip
    assert "<0801>" in other and "end-stream" in other
    assert traffic_view.is_connect_body("application/connect+proto; charset=x")
    assert not traffic_view.is_connect_body("application/json")
