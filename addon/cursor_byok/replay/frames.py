"""Comparing server frames: what legitimately differs between runs is cleared (`VOLATILE_FIELDS`:
uuids, wall-clock times, durations), blob ids are paired by content (a blob whose bytes hold a
timestamp gets another id), and the first difference is reported readably. Also which client
answer a frame asks for, and which request a client message answers. Pure: no I/O.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any

from google.protobuf import text_format
from google.protobuf.message import DecodeError

from cursor_byok.capture.format import server_kind
from cursor_byok.cursor.checkpoint import VOLATILE_FIELDS
from cursor_byok.cursor.checkpoint import clear_volatile
from cursor_byok.pb import agent_v1_pb2 as pb

if TYPE_CHECKING:
    pass


RUN_SSE = "/agent.v1.AgentService/RunSSE"


BIDI_APPEND = "/aiserver.v1.BidiService/BidiAppend"


BLOB_ID_SIZE = 32


def _drop_volatile_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_volatile_keys(v) for k, v in value.items() if k not in VOLATILE_FIELDS}
    if isinstance(value, list):
        return [_drop_volatile_keys(v) for v in value]
    return value


def _canonical_step(data: bytes) -> bytes:
    """A ConversationStep blob (thinking, text, tool card) without its timings; other bytes as
    they are. A blob counts as a step only if it parses and re-serialises to the same bytes."""
    step = pb.ConversationStep()
    try:
        step.ParseFromString(data)
    except DecodeError:
        return data
    if step.WhichOneof("message") is None or step.SerializeToString() != data:
        return data
    clear_volatile(step)
    return step.SerializeToString()


def canonical_blob(data: bytes) -> bytes:
    """Blob bytes as compared: JSON blobs without volatile keys, step blobs without timings,
    anything else as is."""
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return _canonical_step(data)
    if not isinstance(value, dict | list):
        return data
    cleaned = _drop_volatile_keys(value)
    return json.dumps(cleaned, ensure_ascii=False, separators=(",", ":")).encode()


def parse_frame(payload: bytes) -> pb.AgentServerMessage | None:
    try:
        return pb.AgentServerMessage.FromString(payload)
    except DecodeError:
        return None


def _set_blob(message: pb.AgentServerMessage) -> pb.SetBlobArgs | None:
    if (
        message.WhichOneof("message") == "kv_server_message"
        and message.kv_server_message.WhichOneof("message") == "set_blob_args"
    ):
        return message.kv_server_message.set_blob_args
    return None


def normalise(message: pb.AgentServerMessage) -> pb.AgentServerMessage:
    """A copy without volatile fields, blob data in canonical form."""
    out = pb.AgentServerMessage()
    out.CopyFrom(message)
    clear_volatile(out)
    blob = _set_blob(out)
    if blob is not None:
        blob.blob_data = canonical_blob(blob.blob_data)
    return out


def render(message: pb.AgentServerMessage | None, payload: bytes = b"") -> str:
    """A frame for people: its kind, then its fields (long lines cut)."""
    if message is None:
        return f"(not an AgentServerMessage: {len(payload)} bytes)"
    kind = server_kind(message.SerializeToString())
    body = text_format.MessageToString(message, as_utf8=True)
    lines = [kind] + ["  " + _cut(line) for line in body.splitlines()]
    if len(lines) > 60:
        lines = [*lines[:60], f"  … {len(lines) - 60} more lines"]
    return "\n".join(lines)


def render_end(end: dict[str, Any] | None) -> str:
    if end is None:
        return "(no end of stream)"
    return "end of stream " + _cut(json.dumps(end, ensure_ascii=False), 1000)


def _cut(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more chars)"


@dataclass
class Divergence:
    """The first place where the replayed stream is not the recorded one."""

    index: int  # frame index; len(recorded frames) for the end of stream
    what: str  # "differs", "missing", "extra", "end differs", "no end"
    recorded: str
    replayed: str

    def diff(self, limit: int = 40) -> list[str]:
        lines = list(
            difflib.unified_diff(
                self.recorded.splitlines(),
                self.replayed.splitlines(),
                "recorded",
                "replayed",
                n=2,
                lineterm="",
            )
        )
        return lines if len(lines) <= limit else [*lines[:limit], "…"]


def compare(
    recorded: list[bytes],
    recorded_end: dict[str, Any] | None,
    replayed: list[bytes],
    replayed_end: dict[str, Any] | None,
) -> Divergence | None:
    """The first divergence between two streams (frames, then the end of stream), or None.

    `replayed_end` must be scrubbed like recorded ends are (`redact.scrub_end_stream`).
    """
    pairs: dict[bytes, bytes] = {}  # replayed blob id → recorded blob id, for equal content
    for index in range(max(len(recorded), len(replayed))):
        if index >= len(replayed):
            gone = recorded[index]
            return Divergence(index, "missing", render(parse_frame(gone), gone), "(nothing)")
        if index >= len(recorded):
            more = replayed[index]
            return Divergence(index, "extra", "(nothing)", render(parse_frame(more), more))
        expected_raw, actual_raw = recorded[index], replayed[index]
        for new, old in pairs.items():
            actual_raw = actual_raw.replace(new, old)
        expected, actual = parse_frame(expected_raw), parse_frame(actual_raw)
        if expected is None or actual is None:
            if expected_raw != actual_raw:
                return Divergence(
                    index,
                    "differs",
                    render(expected, expected_raw),
                    render(actual, actual_raw),
                )
            continue
        _pair_blob(expected, actual, pairs)
        left, right = normalise(expected), normalise(actual)
        if left != right:
            return Divergence(index, "differs", render(left), render(right))
    if recorded_end is None:
        return None  # the recording stopped before the end (proxy killed): nothing to compare
    index = len(recorded)
    if replayed_end is None:
        return Divergence(index, "no end", render_end(recorded_end), render_end(None))
    if recorded_end != replayed_end:
        return Divergence(index, "end differs", render_end(recorded_end), render_end(replayed_end))
    return None


def _pair_blob(
    expected: pb.AgentServerMessage, actual: pb.AgentServerMessage, pairs: dict[bytes, bytes]
) -> None:
    """Two SETs of the same blob content under different ids: use the recorded id from now on."""
    left, right = _set_blob(expected), _set_blob(actual)
    if left is None or right is None or left.blob_id == right.blob_id:
        return
    if len(left.blob_id) != BLOB_ID_SIZE or len(right.blob_id) != BLOB_ID_SIZE:
        return
    if canonical_blob(left.blob_data) == canonical_blob(right.blob_data):
        pairs[bytes(right.blob_id)] = bytes(left.blob_id)
        right.blob_id = left.blob_id


def answers(raw: bytes) -> tuple[str, int] | None:
    """The server request a client message answers, as (kind, id): exec results and stream
    closes answer ("exec", id), KV results ("kv", id), interaction responses ("interaction",
    id). None for messages that answer nothing (run request, heartbeats, actions)."""
    try:
        message = pb.AgentClientMessage.FromString(raw)
    except DecodeError:
        return None
    match message.WhichOneof("message"):
        case "exec_client_message":
            return ("exec", message.exec_client_message.id)
        case "exec_client_control_message":
            control = message.exec_client_control_message
            which = control.WhichOneof("message")
            return ("exec", getattr(control, which).id) if which == "stream_close" else None
        case "kv_client_message":
            return ("kv", message.kv_client_message.id)
        case "interaction_response":
            return ("interaction", message.interaction_response.id)
    return None


def requests_in(message: pb.AgentServerMessage | None) -> tuple[str, int] | None:
    """The (kind, id) of a server frame that asks the client for something."""
    if message is None:
        return None
    match message.WhichOneof("message"):
        case "exec_server_message":
            return ("exec", message.exec_server_message.id)
        case "kv_server_message":
            return ("kv", message.kv_server_message.id)
        case "interaction_query":
            return ("interaction", message.interaction_query.id)
    return None
