"""The capture package: one redactor for captures and provider errors, private files, no
descriptor kept per request id."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from cursor_byok.capture import redact
from cursor_byok.capture.format import load_capture
from cursor_byok.capture.recorder import Recorder
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.providers import provider_error
from cursor_byok.providers.provider_error import ProviderError
from cursor_byok.secrets import REDACTED

# Shapes only the capture redactor used to catch, and shapes only the provider-error redactor
# used to catch (a key glued to a preceding `_`, no word boundary before `sk-`).
CAPTURE_SHAPES = [
    "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln",
    "github ghp_0123456789abcdefABCDEF",
    "slack xoxb-0123456789-abcdef",
    "aws AKIAABCDEFGHIJKLMNOP",
    "lower bearer abcdef123456",
    "short key sk-abcd1234",
    "google AIzaSyA0123456789abcdefghij",
]
PROVIDER_SHAPES = [
    "api_key_sk-" + "proj-0123456789abcdefghij",
    "key=AIzaSyA0123456789abcdefghijklmnopqrstu",
    "Authorization: Bearer abcdefghijkl0123",
]


@pytest.mark.parametrize("text", CAPTURE_SHAPES + PROVIDER_SHAPES)
def test_one_redactor_catches_every_shape(text: str) -> None:
    secret = text.split()[-1].split("=")[-1].removeprefix("api_key_")
    for scrubbed in (redact.scrub(text), provider_error.scrub(text, [])):
        assert secret not in scrubbed and REDACTED in scrubbed, scrubbed
        assert redact.scrub(scrubbed) == scrubbed


def test_known_secrets_and_prose() -> None:
    assert provider_error.scrub("the key is hunter2-secret", ["hunter2-secret"]) == (
        f"the key is {REDACTED}"
    )
    assert provider_error.scrub("abc", ["a"]) == "abc"  # too short to be a secret
    prose = "basic usage: the token limit is reached, Basic Information; task-runner basics"
    assert redact.scrub(prose) == prose
    assert redact.scrub("Basic dXNlcjpwYXNz") == f"Basic {REDACTED}"
    assert redact.scrub("token abcdefghijklmnopqrstuvwxyz") == f"token {REDACTED}"


def test_provider_errors_use_the_same_redactor() -> None:
    error = ProviderError("auth", "bad key api_key_sk-" + "abcdefgh12345678 and eyJa.eyJb.c")
    error.redact(["never-there"])
    assert "sk-" not in error.message and "eyJ" not in error.message
    assert error.message.count(REDACTED) == 2


def _run_request() -> bytes:
    message = pb.AgentClientMessage()
    message.run_request.conversation_id = "conv-1"
    return message.SerializeToString()


def test_files_are_private_even_with_a_permissive_umask(tmp_path) -> None:
    old = os.umask(0)
    try:
        recorder = Recorder(tmp_path / "deep" / "rec", agent="scripted")
        recorder.client("r1", 0, _run_request(), {})
        recorder.server("r1", b"", True)
        recorder.close()
    finally:
        os.umask(old)
    directory = tmp_path / "deep" / "rec"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    [path] = directory.glob("*.jsonl")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_capture(path).request_id == "r1"


def test_an_existing_directory_is_made_private(tmp_path) -> None:
    directory = tmp_path / "rec"
    directory.mkdir(mode=0o755)
    directory.chmod(0o755)
    Recorder(directory).close()
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc (Linux)")
def test_idle_request_ids_hold_no_descriptor(tmp_path) -> None:
    recorder = Recorder(tmp_path / "rec", agent="scripted")
    before = _open_fds()
    for index in range(400):
        recorder.client(f"junk-{index}", 0, b"\x3a\x00", {})  # a client heartbeat each
    assert _open_fds() <= before
    assert len(list((tmp_path / "rec").glob("*.jsonl"))) == 400
    # Writing to any of them later still works (the file is reopened per line).
    recorder.client("junk-7", 1, b"\x3a\x00", {})
    recorder.close()
    [path] = (tmp_path / "rec").glob("*junk-7.jsonl")
    assert path.read_text().count('"type":"client"') == 2


# --- protobuf bodies ---------------------------------------------------------------------------


def _run_with_secrets() -> pb.AgentClientMessage:
    message = pb.AgentClientMessage()
    message.run_request.conversation_id = "conv-1"
    model = message.run_request.requested_model
    model.model_id = "gpt-x"
    model.api_key_credentials.api_key = "shapeless-user-key"
    message.run_request.model_details.bedrock_credentials.secret_key = "shapeless-aws-secret"
    text = "use sk-" + "abcdefgh01234567 please"
    message.run_request.action.user_message_action.user_message.text = text
    return message


def test_our_recordings_drop_cursors_credential_fields(tmp_path) -> None:
    recorder = Recorder(tmp_path / "rec", agent="scripted")
    recorder.client("r1", 0, _run_with_secrets().SerializeToString(), {})
    recorder.close()
    [path] = (tmp_path / "rec").glob("*.jsonl")
    data = path.read_bytes()
    assert b"shapeless" not in data
    raw = load_capture(path).client[0].raw
    message = pb.AgentClientMessage.FromString(raw)
    assert message.run_request.requested_model.api_key_credentials.api_key == REDACTED
    assert message.run_request.requested_model.model_id == "gpt-x"
    # Our own captures keep prompts verbatim (replay needs them); native ones do not.
    assert "sk-" in message.run_request.action.user_message_action.user_message.text


def test_native_bodies_are_scrubbed_inside_and_still_parse(tmp_path) -> None:
    off = Recorder(tmp_path / "off")
    off.passthrough_client("r0", 0, _run_with_secrets().SerializeToString(), {})
    assert not list((tmp_path / "off").glob("*.jsonl"))  # native recording is off by default

    recorder = Recorder(tmp_path / "rec", native=True)
    recorder.passthrough_client("r1", 0, _run_with_secrets().SerializeToString(), {"cookie": "c"})
    jwt = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.c2ln"
    update = pb.InteractionUpdate(text_delta=pb.TextDeltaUpdate(text=f"token: {jwt}"))
    recorder.passthrough_server(
        "r1", pb.AgentServerMessage(interaction_update=update).SerializeToString(), False
    )
    recorder.passthrough_server("r1", b"{}", True)
    recorder.close()
    [path] = (tmp_path / "rec").glob("*.jsonl")
    data = path.read_bytes()
    for secret in (b"shapeless", b"abcdefgh01234567", jwt.encode()):
        assert secret not in data
    capture = load_capture(path)
    assert capture.agent == "cursor" and capture.end == {}
    text = pb.AgentServerMessage.FromString(capture.server[0]).interaction_update.text_delta.text
    assert text == f"token: {REDACTED}"


def test_scrub_wire_leaves_what_is_not_protobuf_alone() -> None:
    for data in (b"", b"\xff\xff\xff", b"plain text sk-" + b"abcdefgh01234567"):
        assert redact.scrub_wire(data) == data
    clean = _run_with_secrets().SerializeToString()
    assert redact.scrub_wire(redact.scrub_wire(clean)) == redact.scrub_wire(clean)


def test_idle_request_ids_are_forgotten(tmp_path) -> None:
    """Junk request ids that never end do not pile up in memory either."""
    now = [0.0]
    recorder = Recorder(tmp_path / "rec", agent="scripted", clock=lambda: now[0])
    for index in range(100):
        recorder.client(f"junk-{index}", 0, b"\x3a\x00", {})
    now[0] = Recorder.KEEP_IDLE - 1
    recorder.client("live", 0, b"\x3a\x00", {})
    assert len(recorder._files) == 101
    now[0] = Recorder.KEEP_IDLE + 1
    recorder.client("new", 0, b"\x3a\x00", {})
    assert set(recorder._files) == {"live", "new"}
