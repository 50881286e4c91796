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
from cursor_byok.wire import bidi
from cursor_byok.wire import connect

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


def test_both_directions_of_run_decode_with_names_and_heartbeats_fold() -> None:
    """Cursor's default transport: the `Run` upload (client envelopes) and its response."""
    heartbeat = bidi.parse_client_message(bytes.fromhex("3a00")).SerializeToString()
    clients = [base64.b64decode(r["raw"]) for r in records() if r["type"] == "client"]
    upload = b"".join(connect.encode_frame(raw) for raw in [clients[0], heartbeat, heartbeat])
    text = traffic_view.render(
        upload, path="/agent.v1.AgentService/Run", is_request=True,
        content_type="application/connect+proto",
    )  # fmt: skip
    assert "run-request" in text and "agent.v1.AgentClientMessage" in text
    assert "run_request" in text and "… 2 heartbeat(s)" in text
    assert "client_heartbeat: ClientHeartbeat" not in text  # folded, not a tree each
    server = [base64.b64decode(r["raw"]) for r in records() if r["type"] == "server"]
    stream = b"".join(connect.encode_frame(raw) for raw in server) + connect.encode_end_stream()
    text = traffic_view.render(
        stream, path="/agent.v1.AgentService/Run", is_request=False,
        content_type="application/connect+proto",
    )  # fmt: skip
    assert "agent.v1.AgentServerMessage" in text and "text_delta" in text
    assert "end-stream {}" in text


def test_webview_marks_served_and_passed_through_flows() -> None:
    from mitmproxy.test import tflow

    from cursor_byok.proxy import webview
    from cursor_byok.proxy.agent_rpc import BIDI_APPEND_PATH
    from cursor_byok.proxy.agent_rpc import PASS_KEY
    from cursor_byok.proxy.agent_rpc import PATH_KEY

    served, passed = tflow.tflow(resp=True), tflow.tflow(resp=True)
    for flow in (served, passed):
        flow.metadata[PATH_KEY] = BIDI_APPEND_PATH
    passed.metadata[PASS_KEY] = True
    webview._mark(served)
    webview._mark(passed)
    assert served.marked == webview.SERVED_MARK and "answered here" in served.comment
    assert passed.marked == webview.PASSED_MARK and "Cursor's backend" in passed.comment
    other = tflow.tflow(resp=True)
    webview._mark(other)
    assert not other.marked and not other.comment  # not an Agent call: left alone
