"""Decode captured Agent traffic into items: messages with what is known about each.

Used by `cursor-byok decode` and mitmweb's content view. Reads every capture shape we keep, and
finds out which one a file is:

- what `cursor-byok record` writes (JSON lines, `captures/README.md`) and the capture tool's JSON
  of real Cursor traces (tests/data): `json_view.py`;
- a BidiAppend request body (`aiserver.v1.BidiAppendRequest`, maybe gzip or one Connect envelope);
- a RunSSE request body (one envelope around `aiserver.v1.BidiRequestId`);
- a stream of Connect envelopes: a RunSSE or `Run` response (`agent.v1.AgentServerMessage`, then
  an end-stream trailer) or a `Run` request body (`agent.v1.AgentClientMessage`), told apart by
  the trailer and by which schema names more of the fields;
- any of these as hex or base64 text (copied from a log or a debugger), or gzip;
- a bare serialised `AgentClientMessage` / `AgentServerMessage`.

Bytes our schema cannot parse are shown as a tree of field numbers (like `protoc
--decode_raw`) with a note, never as an error: a Cursor update that changes a message is exactly
when this tool is needed. Framing and BidiAppend decoding are the sans-IO `connect` and `bidi`
modules, so the CLI sees what the addon sees. Every failure is one `CaptureError` line.

Rendering what is decoded here is `render.py`.
"""

from __future__ import annotations

import base64
import binascii
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from google.protobuf.message import DecodeError
from google.protobuf.message import Message

from cursor_byok.capture.format import CaptureError
from cursor_byok.capture.items import BLOB_ID_SIZE
from cursor_byok.capture.items import WIRE_TYPES
from cursor_byok.capture.items import DecodedFile
from cursor_byok.capture.items import Item
from cursor_byok.capture.items import Unknown
from cursor_byok.capture.items import _bytes_json
from cursor_byok.capture.items import _is_map
from cursor_byok.capture.items import _unknown_value
from cursor_byok.capture.items import iter_unknown
from cursor_byok.capture.items import raw_fields
from cursor_byok.capture.items import unknown_count
from cursor_byok.capture.json_view import decode_json
from cursor_byok.capture.json_view import error_detail_items
from cursor_byok.pb import agent_v1_pb2
from cursor_byok.pb import aiserver_v1_pb2
from cursor_byok.wire import bidi
from cursor_byok.wire import connect

__all__ = [
    "BLOB_ID_SIZE",
    "KINDS",
    "WIRE_TYPES",
    "CaptureError",
    "DecodedFile",
    "Item",
    "Unknown",
    "_bytes_json",
    "_is_map",
    "_unknown_value",
    "detect_kind",
    "iter_unknown",
    "load_capture",
    "read_input",
]

KINDS = (
    "auto",
    "json",
    "bidi",
    "runsse-request",
    "runsse-response",
    "run-request",
    "client",
    "server",
)


MAX_FILE_SIZE = 256 * 1024 * 1024  # far above the ~2 MB first-turn JSON capture


_HEX_TEXT = re.compile(rb"(?:0x)?[0-9a-fA-F\s:]+")
_BASE64_TEXT = re.compile(rb"[A-Za-z0-9+/=_\-\s]+")


def read_input(path: str) -> bytes:
    """Read a file (or stdin for "-") with a size cap, turning OS errors into CaptureError."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read(MAX_FILE_SIZE + 1)
        else:
            with Path(path).open("rb") as fh:
                data = fh.read(MAX_FILE_SIZE + 1)
    except OSError as exc:
        raise CaptureError(exc.strerror or str(exc)) from None
    if len(data) > MAX_FILE_SIZE:
        raise CaptureError(f"file is larger than {MAX_FILE_SIZE} bytes")
    return data


def load_capture(data: bytes, kind: str = "auto", source: str = "<bytes>") -> DecodedFile:
    """Decode capture bytes of the given (or detected) kind."""
    if kind not in KINDS:
        raise CaptureError(f"unknown kind {kind!r}")
    if not data:
        raise CaptureError("file is empty")
    notes: list[str] = []
    try:
        data = unwrap(data, notes)
        if kind == "auto":
            kind = detect_kind(data)
        items = _DECODERS[kind](data)
        if items and items[0].kind == "recording_meta":
            kind = "recording"
        return DecodedFile(kind, source, items, notes)
    except CaptureError:
        raise
    except (bidi.BidiDecodeError, connect.ConnectError) as exc:
        raise CaptureError(str(exc)) from None
    except DecodeError as exc:
        raise CaptureError(f"protobuf does not parse: {exc}") from None


def unwrap(data: bytes, notes: list[str]) -> bytes:
    """Undo what wraps capture bytes: gzip (a body kept with its Content-Encoding), hex or
    base64 text (pasted from a log); `notes` says which was undone."""
    for _ in range(3):  # hex of gzip, base64 of hex...: a few layers at most
        if data[:2] == b"\x1f\x8b":
            data = connect.decompress(data, "gzip")
            notes.append("gzip")
            continue
        text = _as_text(data)
        if text is None:
            return data
        decoded = _from_hex(text)
        if decoded is not None:
            notes.append("hex")
            data = decoded
            continue
        decoded = _from_base64(text)
        if decoded is not None:
            notes.append("base64")
            data = decoded
            continue
        return data
    return data


def _as_text(data: bytes) -> bytes | None:
    """The data when it is printable ASCII text that is not JSON, else None."""
    stripped = data.strip()
    if not stripped or stripped[:1] in (b"{", b"["):
        return None
    if not all(32 <= b < 127 or b in (9, 10, 13) for b in stripped):
        return None
    return stripped


def _from_hex(text: bytes) -> bytes | None:
    if not _HEX_TEXT.fullmatch(text):
        return None
    digits = re.sub(rb"\s|:|0x", b"", text)
    if not digits or len(digits) % 2:
        return None
    try:
        return binascii.unhexlify(digits)
    except binascii.Error:
        return None


def _from_base64(text: bytes) -> bytes | None:
    if not _BASE64_TEXT.fullmatch(text) or len(text) < 4:
        return None
    compact = re.sub(rb"\s", b"", text)
    try:
        altchars = b"-_" if b"-" in compact or b"_" in compact else None
        padded = compact + b"=" * (-len(compact) % 4)
        return base64.b64decode(padded, altchars=altchars, validate=True)
    except (binascii.Error, ValueError):
        return None


def detect_kind(data: bytes) -> str:
    """Guess a capture's kind from its bytes; `--kind` overrides when this guesses wrong."""
    if data.lstrip()[:1] in (b"{", b"["):
        return "json"
    if _walks_as_envelopes(data):
        frames = connect.decode_envelopes(data)
        if len(frames) == 1 and not frames[0].is_end_stream:
            if _is_bidi_request_id(frames[0].payload):
                return "runsse-request"
            if _is_bidi_append(frames[0].payload):
                return "bidi"
        return _stream_direction(frames)
    if _is_bidi_append(data):
        return "bidi"
    return _message_direction(data)


def _stream_direction(frames: list[connect.Frame]) -> str:
    """A server's stream ends with a trailer; else the schema that names more of it wins."""
    if any(frame.is_end_stream for frame in frames):
        return "runsse-response"
    client = server = 0
    for frame in frames:
        client += _fit(agent_v1_pb2.AgentClientMessage, frame.payload)
        server += _fit(agent_v1_pb2.AgentServerMessage, frame.payload)
    return "run-request" if client < server else "runsse-response"


def _message_direction(data: bytes) -> str:
    client = _fit(agent_v1_pb2.AgentClientMessage, data)
    server = _fit(agent_v1_pb2.AgentServerMessage, data)
    return "server" if server < client else "client"


def _fit(message_type: type[Message], payload: bytes) -> int:
    """How badly a schema fits: unknown fields, or a large number when it does not parse."""
    message = message_type()
    try:
        message.ParseFromString(payload)
    except DecodeError:
        return 1_000_000
    if payload and not message.ListFields():
        return 1_000  # nothing named at all
    return unknown_count(message)


def _walks_as_envelopes(data: bytes) -> bool:
    """True when envelope headers chain exactly to the end of the data."""
    pos = 0
    while pos < len(data):
        if len(data) - pos < connect.HEADER_SIZE or data[pos] & ~0x03:
            return False
        length = int.from_bytes(data[pos + 1 : pos + 5], "big")
        pos += connect.HEADER_SIZE + length
    return pos == len(data)


def _is_bidi_request_id(payload: bytes) -> bool:
    msg = aiserver_v1_pb2.BidiRequestId()
    try:
        msg.ParseFromString(payload)
    except DecodeError:
        return False
    return bool(msg.request_id) and not unknown_count(msg)


def _is_bidi_append(payload: bytes) -> bool:
    msg = aiserver_v1_pb2.BidiAppendRequest()
    try:
        msg.ParseFromString(payload)
    except DecodeError:
        return False
    return bool(msg.request_id.request_id) and not unknown_count(msg)


def _decode_bidi(data: bytes) -> list[Item]:
    append = bidi.decode_bidi_append(data)
    meta = {"request_id": append.request_id, "seqno": append.seqno, "size": len(append.raw)}
    if not append.raw:
        return [Item("bidi_append", None, meta)]
    if append.agent and append.message is not None:
        return [Item("bidi_append", append.message, meta)]
    if append.message is not None:  # another service's upload (e.g. voice input)
        note = "another service's message (not an AgentClientMessage): fields without names"
        return [Item("raw", None, {**meta, "note": note, "of": "bidi_append"}, raw=append.raw)]
    return [_message_item("bidi_append", agent_v1_pb2.AgentClientMessage, append.raw, meta)]


def _message_item(kind: str, message_type: type[Message], raw: bytes, meta: dict[str, Any]) -> Item:
    """The typed message, or (when our schema cannot parse it) its fields without names."""
    message = message_type()
    try:
        message.ParseFromString(raw)
    except DecodeError as exc:
        try:
            raw_fields(raw)
        except ValueError:
            raise CaptureError(
                f"{message_type.DESCRIPTOR.name} does not parse: {exc}; not protobuf either"
            ) from None
        note = f"{message_type.DESCRIPTOR.name} does not parse ({exc}): fields without names"
        return Item("raw", None, {**meta, "note": note, "of": kind}, raw=raw)
    return Item(kind, message, meta)


def _decode_runsse_request(data: bytes) -> list[Item]:
    request_id = bidi.decode_run_sse_request(data)
    return [Item("run_sse_request", aiserver_v1_pb2.BidiRequestId(request_id=request_id))]


def _decode_stream(data: bytes, message_type: type[Message], kind: str) -> list[Item]:
    decoder = connect.EnvelopeDecoder()
    frames = decoder.feed(data)
    decoder.close()
    items = []
    for index, frame in enumerate(frames):
        meta: dict[str, Any] = {"frame": index, "flags": frame.flags, "size": len(frame.payload)}
        if frame.is_end_stream:
            end = connect.parse_end_stream(frame.payload)
            meta["end_stream"] = _end_stream_dict(end)
            items.append(Item("end_stream", None, meta))
            items.extend(error_detail_items(end))
            continue
        items.append(_message_item(kind, message_type, frame.payload, meta))
    return items


def _decode_runsse_response(data: bytes) -> list[Item]:
    return _decode_stream(data, agent_v1_pb2.AgentServerMessage, "server_message")


def _decode_run_request(data: bytes) -> list[Item]:
    return _decode_stream(data, agent_v1_pb2.AgentClientMessage, "client_message")


def _end_stream_dict(end: connect.EndStream) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if end.error is not None:
        out["error"] = {"code": end.error.code, "message": end.error.message}
    if end.metadata:
        out["metadata"] = dict(end.metadata)
    return out


def _decode_client(data: bytes) -> list[Item]:
    meta = {"size": len(data)}
    return [_message_item("client_message", agent_v1_pb2.AgentClientMessage, data, meta)]


def _decode_server(data: bytes) -> list[Item]:
    meta = {"size": len(data)}
    return [_message_item("server_message", agent_v1_pb2.AgentServerMessage, data, meta)]


_DECODERS: dict[str, Callable[[bytes], list[Item]]] = {
    "json": decode_json,
    "bidi": _decode_bidi,
    "runsse-request": _decode_runsse_request,
    "runsse-response": _decode_runsse_response,
    "run-request": _decode_run_request,
    "client": _decode_client,
    "server": _decode_server,
}
