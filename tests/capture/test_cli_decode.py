"""`cursor-byok decode`: captures render, JSON lines parse, bad input gives one line + exit 2."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from rich.console import Console

from cursor_byok.capture import render as capture_render
from cursor_byok.capture import view as capture_view
from cursor_byok.cli import main as cli
from cursor_byok.pb import agent_v1_pb2
from cursor_byok.pb import aiserver_v1_pb2
from cursor_byok.wire import connect
from cursor_byok.wire.bidi import encode_bidi_append

CAPTURES = Path(__file__).resolve().parents[1] / "data"  # real traces; see data/SOURCES.md
GLIDER = CAPTURES / "glider_testdata"
JSON_CAPTURES = [
    "run_request_agent.bidi.json",
    "run_request_ask.bidi.json",
    "run_request_plan.bidi.json",
]


def _capture(path: Path) -> Path:
    assert path.is_file(), f"test vector {path} is missing (tests/data/SOURCES.md)"
    return path


def _decode(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["decode", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _json_lines(out: str) -> list[dict]:
    lines = out.splitlines()
    assert lines, "no JSON output"
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize("name", JSON_CAPTURES)
def test_run_request_summary(capsys: pytest.CaptureFixture[str], name: str) -> None:
    path = _capture(CAPTURES / name)
    doc = json.loads(path.read_text(encoding="utf-8"))
    run = doc["agent_client_message"]["run_request"]
    user = run["action"]["user_message_action"]["user_message"]
    code, out, err = _decode(capsys, str(path))
    assert (code, err) == (0, "")
    header = out[: out.index("agent.v1.AgentClientMessage")]  # the summary precedes the tree
    assert f"mode: {user['mode']} (message)" in header
    assert f"model: {run['requested_model']['model_id']} " in header
    assert f"conversation id: {run['conversation_id']}" in header
    assert f"user text: {json.dumps(user['text'], ensure_ascii=False)}" in header
    assert f"request id: {doc['bidi_append_request']['request_id']['request_id']}" in header
    assert "root prompt blobs" in header and "turns" in header
    # fields 27 and 28 are modelled now (docs/protocol.md §11.9): shown by name
    assert "client_supports_prompt_context_usage_rpc = true" in out
    assert "client_supports_routed_model_update = true" in out
    assert "blob 3f784b31ca7e238c0a8f59718d49860c83cd75de09357bd97bfc457ee543c6c7" in out


@pytest.mark.parametrize("name", JSON_CAPTURES)
def test_run_request_json(capsys: pytest.CaptureFixture[str], name: str) -> None:
    path = _capture(CAPTURES / name)
    code, out, _ = _decode(capsys, str(path), "--json")
    assert code == 0
    (record,) = _json_lines(out)
    assert record["_type"] == "agent.v1.AgentClientMessage"
    assert record["message"]["run_request"]["conversation_id"]
    assert record.get("_unknown", []) == []  # 27 and 28 are modelled now
    assert record["message"]["run_request"]["client_supports_prompt_context_usage_rpc"] is True


def test_unknown_fields_are_shown(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """A field our schema lacks (what a Cursor update adds) is shown by number, and listed."""
    from cursor_byok.wire.bidi import encode_bidi_append

    message = agent_v1_pb2.AgentClientMessage()
    message.run_request.conversation_id = "c"
    raw = message.SerializeToString()
    raw = raw[:1] + bytes([raw[1] + 3]) + raw[2:] + bytes([0x98, 0x06, 0x01])  # run_request #99
    path = tmp_path / "append.bin"
    path.write_bytes(encode_bidi_append("r-1", 0, raw))
    code, out, _ = _decode(capsys, str(path))
    assert code == 0 and "#99 varint = 1" in out
    code, out, _ = _decode(capsys, str(path), "--json")
    (record,) = _json_lines(out)
    assert {(u["path"], u["field"]) for u in record["_unknown"]} == {("run_request", 99)}


def test_glider_captures(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _decode(capsys, str(_capture(GLIDER / "bidi_append_ack_empty.bin")))
    assert code == 0 and "seqno=1" in out and "client_heartbeat" in out

    code, out, _ = _decode(capsys, str(_capture(GLIDER / "run_sse_request.bin")))
    assert code == 0 and "runsse-request" in out and "00000000-1111-2222-3333-444444444444" in out

    path = str(_capture(GLIDER / "runsse_resp_text_synth.bin"))
    code, out, _ = _decode(capsys, path)
    assert code == 0 and 'text: "fixture-hello"' in out and "end-stream {}" in out
    code, out, _ = _decode(capsys, path, "--json")
    records = _json_lines(out)
    assert [r["_kind"] for r in records] == ["server_message"] * 6 + ["end_stream"]


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("bidi_append_content_path.bin", 'text "D:\\\\repos\\\\Glider'),
        ("bidi_append_control_f5.bin", "#5 bytes = <4 bytes> 00000000"),
    ],
)
def test_glider_synthetic_appends_show_raw_fields(
    capsys: pytest.CaptureFixture[str], name: str, shown: str
) -> None:
    """Hand-built appends our schema cannot parse: shown as field numbers with a note, not
    refused (a Cursor update that changes a message is when decode is needed most)."""
    code, out, err = _decode(capsys, str(_capture(GLIDER / name)))
    assert (code, err) == (0, "")
    assert "AgentClientMessage does not parse" in out and "fields without names" in out
    assert shown in out
    code, out, _ = _decode(capsys, str(GLIDER / name), "--json")
    (record,) = _json_lines(out)
    assert record["_kind"] == "raw" and record["raw_fields"][0]["field"] in (2, 5)


# --- every capture kind we keep ---------------------------------------------------------------

RECORDINGS = sorted((Path(__file__).resolve().parents[2] / "captures").glob("*.jsonl"))
EVERY_FILE = [
    *RECORDINGS,
    *(CAPTURES / name for name in JSON_CAPTURES),
    *sorted(GLIDER.iterdir()),
]


def test_every_shipped_capture_is_covered() -> None:
    assert len(RECORDINGS) >= 3 and len(EVERY_FILE) >= 11


@pytest.mark.parametrize("path", EVERY_FILE, ids=lambda p: p.name)
def test_every_shipped_capture_decodes(capsys: pytest.CaptureFixture[str], path: Path) -> None:
    code, out, err = _decode(capsys, str(path))
    assert (code, err) == (0, ""), err
    assert out.startswith(f"{path}: ") and "Traceback" not in out
    code, out, err = _decode(capsys, str(path), "--json")
    assert (code, err) == (0, "")
    assert all("_kind" in record for record in _json_lines(out))


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name)
def test_recordings(capsys: pytest.CaptureFixture[str], path: Path) -> None:
    """What `record` writes: every client and server line, the model calls, the end."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    code, out, _ = _decode(capsys, str(path), "--json")
    records = _json_lines(out)
    kinds = [r["_kind"] for r in records]
    assert kinds[0] == "recording_meta" and "run_meta" in kinds
    clients = [line for line in lines if line["type"] == "client"]
    servers = [line for line in lines if line["type"] == "server"]
    assert kinds.count("client_message") == len(clients)
    assert kinds.count("server_message") == len(servers)
    assert kinds.count("end_stream") == 1
    calls = {line["call"] for line in lines if line["type"] == "provider_request"}
    assert {r["call"] for r in records if r["_kind"] == "provider_request"} == calls
    run = next(r for r in records if r["_kind"] == "client_message" and r["seqno"] == 0)
    assert run["message"]["run_request"]["conversation_id"]
    code, human, _ = _decode(capsys, str(path))
    assert f"{path}: recording, " in human and "client seqno=0" in human
    assert "end-stream" in human
    # --kind json reads a recording too (the JSON shapes are told apart by their first line)
    code, forced, _ = _decode(capsys, str(path), "--json", "--kind", "json")
    assert code == 0 and forced == out


def test_recording_with_an_error_shows_what_cursor_shows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = Path(__file__).resolve().parents[2] / "captures" / "provider-auth-error.jsonl"
    code, out, _ = _decode(capsys, str(path))
    assert code == 0
    assert "model call 1 failed auth (HTTP 401)" in out
    assert "aiserver.v1.ErrorDetails" in out and "Provider rejected the API key" in out


def _recorded(path: Path, side: str) -> list[bytes]:
    import base64

    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [base64.b64decode(line["raw"]) for line in lines if line["type"] == side and line["raw"]]


SHELL = Path(__file__).resolve().parents[2] / "captures" / "provider-read-edit-shell.jsonl"


def _run_bodies() -> dict[str, bytes]:
    """A `Run` stream's two bodies, rebuilt from a recording: the client's envelopes of
    AgentClientMessage, the server's envelopes of AgentServerMessage and the trailer."""
    upload = b"".join(connect.encode_frame(raw) for raw in _recorded(SHELL, "client"))
    answer = b"".join(connect.encode_frame(raw) for raw in _recorded(SHELL, "server"))
    return {"run-request": upload, "runsse-response": answer + connect.encode_end_stream(None)}


@pytest.mark.parametrize("wrap", ["binary", "hex", "spaced hex", "base64", "gzip", "hex of gzip"])
@pytest.mark.parametrize("side", ["run-request", "runsse-response"])
def test_raw_connect_bodies_and_hex(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, side: str, wrap: str
) -> None:
    import base64

    body = _run_bodies()[side]
    data = {
        "binary": body,
        "hex": body.hex().encode(),
        "spaced hex": body.hex(" ", 2).encode() + b"\n",
        "base64": base64.b64encode(body) + b"\n",
        "gzip": gzip.compress(body),
        "hex of gzip": gzip.compress(body).hex().encode(),
    }[wrap]
    path = tmp_path / "body"
    path.write_bytes(data)
    code, out, err = _decode(capsys, str(path))
    assert (code, err) == (0, "")
    assert out.startswith(f"{path}: {side}")
    if side == "run-request":
        assert "client messages: run_request ×1" in out and "exec_client_message" in out
    else:
        assert 'text: "Done: beta is now gamma."' in out and "end-stream {}" in out
    code, out, _ = _decode(capsys, str(path), "--json")
    expected = "client_message" if side == "run-request" else "server_message"
    count = len(_recorded(SHELL, "client" if side == "run-request" else "server"))
    assert [r["_kind"] for r in _json_lines(out)].count(expected) == count


def test_bare_messages_as_hex(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """One message, as a debugger prints it: which side's it is comes from the schema."""
    server = _recorded(SHELL, "server")[-1]
    path = tmp_path / "msg.hex"
    path.write_text(server.hex())
    code, out, _ = _decode(capsys, str(path), "--json")
    assert code == 0 and _json_lines(out)[0]["_type"] == "agent.v1.AgentServerMessage"
    path.write_text("3a00")  # the client heartbeat of protocol.md §2.9
    code, out, _ = _decode(capsys, str(path))
    assert code == 0 and "client_heartbeat" in out and "(from hex)" in out


# --- synthetic inputs (no shared captures needed) -------------------------------------------------


def _client_message() -> agent_v1_pb2.AgentClientMessage:
    message = agent_v1_pb2.AgentClientMessage()
    message.kv_client_message.id = 4
    message.kv_client_message.set_blob_result.SetInParent()
    return message


def test_garbage_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "garbage.bin"
    path.write_bytes(b"\xff\xfe not a capture \x00\x01")
    code, out, err = _decode(capsys, str(path))
    assert (code, out) == (2, "")
    assert err.startswith("cursor-byok: error: ") and len(err.splitlines()) == 1
    assert "Traceback" not in err


def test_missing_and_empty_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _decode(capsys, str(tmp_path / "nope.bin"))
    assert code == 2 and len(err.splitlines()) == 1
    (tmp_path / "empty").write_bytes(b"")
    code, _, err = _decode(capsys, str(tmp_path / "empty"))
    assert code == 2 and "empty" in err


def test_usage_errors_return_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    assert cli.main(["decode"]) == 2
    assert cli.main(["decode", "x", "--kind", "nonsense"]) == 2
    capsys.readouterr()


@pytest.mark.parametrize("wrap", ["plain", "gzip", "envelope"])
def test_bidi_append_variants(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, wrap: str
) -> None:
    body = encode_bidi_append(
        "req-1", 3, _client_message().SerializeToString(), binary=wrap == "plain"
    )
    if wrap == "gzip":
        body = gzip.compress(body)
    elif wrap == "envelope":
        body = connect.encode_frame(body)
    path = tmp_path / "append.bin"
    path.write_bytes(body)
    code, out, _ = _decode(capsys, str(path))
    assert code == 0 and "request_id=req-1 seqno=3" in out and "set_blob_result" in out
    code, out, _ = _decode(capsys, str(path), "--json")
    (record,) = _json_lines(out)
    assert record["seqno"] == 3 and record["message"]["kv_client_message"]["id"] == 4


def test_error_trailer_details(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    details = aiserver_v1_pb2.ErrorDetails(error=aiserver_v1_pb2.ErrorDetails.ERROR_PROVIDER_ERROR)
    details.details.title = "Server Error"
    text = agent_v1_pb2.AgentServerMessage()
    text.interaction_update.text_delta.text = "Hi"
    error = connect.EndStreamError(
        "unavailable",
        "provider 429",
        (connect.ErrorDetail("aiserver.v1.ErrorDetails", details.SerializeToString()),),
    )
    body = connect.encode_frame(
        text.SerializeToString(), encoding="gzip"
    ) + connect.encode_end_stream(error)
    path = tmp_path / "runsse.bin"
    path.write_bytes(body)
    code, out, _ = _decode(capsys, str(path))
    assert code == 0
    assert "flags=0x01" in out and '"code": "unavailable"' in out and "ERROR_PROVIDER_ERROR" in out
    code, out, _ = _decode(capsys, str(path), "--json")
    kinds = [r["_kind"] for r in _json_lines(out)]
    assert kinds == ["server_message", "end_stream", "error_detail"]


def test_forced_kinds(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "raw.bin"
    path.write_bytes(_client_message().SerializeToString())
    code, out, _ = _decode(capsys, str(path), "--kind", "client")
    assert code == 0 and "kv_client_message" in out
    code, _, err = _decode(capsys, str(path), "--kind", "json")
    assert code == 2 and len(err.splitlines()) == 1


def test_long_strings_are_elided(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    message = agent_v1_pb2.AgentClientMessage()
    message.run_request.action.user_message_action.user_message.text = "x" * 500
    path = tmp_path / "run.bin"
    path.write_bytes(encode_bidi_append("r", 0, message.SerializeToString()))
    code, out, _ = _decode(capsys, str(path))
    assert code == 0 and "(+400 chars)" in out and "(+300 chars)" in out  # tree; summary
    assert "x" * 201 not in out


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=200),
        st.builds(lambda b: b"\x00" + len(b).to_bytes(4, "big") + b, st.binary(max_size=60)),
        st.builds(lambda b: b"{" + b, st.binary(max_size=60)),
        st.builds(gzip.compress, st.binary(max_size=60)),
    ),
    st.sampled_from(capture_view.KINDS),
)
def test_any_bytes_decode_or_fail_cleanly(data: bytes, kind: str) -> None:
    """Whatever the input, decoding ends in a DecodedFile or a CaptureError, and rendering works."""
    try:
        capture = capture_view.load_capture(data, kind)
    except capture_view.CaptureError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    console = Console(file=open("/dev/null", "w"), width=200)  # noqa: SIM115
    capture_render.render_human(capture, console)
    capture_render.render_json(capture, lambda _s: None)


def test_summary_lists_attached_images() -> None:
    from cursor_byok.capture.run_summary import run_request_summary
    from cursor_byok.pb import agent_v1_pb2 as pb

    run = pb.AgentRunRequest()
    images = run.action.user_message_action.user_message.selected_context.selected_images
    inline = images.add(mime_type="image/png", data=b"\x89PNG" + b"\0" * 2000)
    inline.dimension.width, inline.dimension.height = 640, 480
    images.add(mime_type="image/jpeg", blob_id=b"\x01" * 32)
    run.pre_fetched_blobs.add(id=b"\x01" * 32, value=b"\xff" * 100)
    rows = dict(run_request_summary(run, {}))
    assert rows["images"] == "2 (image/png 2.0 KB 640x480, image/jpeg 100 B (pre-fetched blob))"
