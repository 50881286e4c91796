"""Decode captured Agent traffic into items: messages with what is known about each.

Used by `cursor-byok decode`. Understands every capture shape we keep:

- a BidiAppend request body (`aiserver.v1.BidiAppendRequest`, maybe gzip or one Connect envelope);
- a RunSSE request body (one envelope around `aiserver.v1.BidiRequestId`);
- a RunSSE response body (envelopes of `agent.v1.AgentServerMessage`, then an end-stream trailer);
- the JSON captures in tests/data (`{"bidi_append_request": {"data": hex, ...}, ...}`);
- a bare serialised `AgentClientMessage` / `AgentServerMessage` (only with an explicit kind).

Framing and BidiAppend decoding are delegated to the sans-IO `connect` and `bidi` modules so the
CLI sees exactly what the addon sees. Every failure surfaces as one `CaptureError` line.

Rendering what is decoded here is `render.py`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet

from cursor_byok.capture.format import CaptureError
from cursor_byok.pb import agent_v1_pb2
from cursor_byok.pb import aiserver_v1_pb2
from cursor_byok.protocol import bidi
from cursor_byok.protocol import connect

KINDS = ("auto", "json", "bidi", "runsse-request", "runsse-response", "client", "server")


MAX_FILE_SIZE = 256 * 1024 * 1024  # far above the ~2 MB first-turn JSON capture


BLOB_ID_SIZE = 32


WIRE_TYPES = {0: "varint", 1: "fixed64", 2: "bytes", 3: "group", 5: "fixed32"}


@dataclass(slots=True)
class Item:
    """One decoded protobuf message of a capture, with where it came from."""

    # bidi_append, run_sse_request, server_message, end_stream, error_detail or client_message
    kind: str
    message: Message | None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Capture:
    kind: str  # the detected (or forced) kind of the whole file
    source: str
    items: list[Item]


@dataclass(frozen=True, slots=True)
class Unknown:
    """An unknown field somewhere in a message tree; `path` is dotted field names from the root."""

    path: str
    number: int
    wire_type: int
    value: Any


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


def load_capture(data: bytes, kind: str = "auto", source: str = "<bytes>") -> Capture:
    """Decode capture bytes of the given (or detected) kind."""
    if kind not in KINDS:
        raise CaptureError(f"unknown kind {kind!r}")
    if not data:
        raise CaptureError("file is empty")
    try:
        if data[:2] == b"\x1f\x8b":  # a gzip file (HTTP Content-Encoding kept by the recorder)
            data = connect.decompress(data, "gzip")
        if kind == "auto":
            kind = detect_kind(data)
        return Capture(kind, source, _DECODERS[kind](data))
    except CaptureError:
        raise
    except (bidi.BidiDecodeError, connect.ConnectError) as exc:
        raise CaptureError(str(exc)) from None
    except DecodeError as exc:
        raise CaptureError(f"protobuf does not parse: {exc}") from None


def detect_kind(data: bytes) -> str:
    """Guess a capture's kind from its first bytes; `--kind` overrides when this guesses wrong."""
    if data.lstrip()[:1] in (b"{", b"["):
        return "json"
    if _walks_as_envelopes(data):
        frames = connect.decode_envelopes(data)
        if len(frames) == 1 and not frames[0].is_end_stream:
            if _is_bidi_request_id(frames[0].payload):
                return "runsse-request"
            if _is_bidi_append(frames[0].payload):
                return "bidi"
        return "runsse-response"
    return "bidi"


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
    return bool(msg.request_id) and not len(UnknownFieldSet(msg))


def _is_bidi_append(payload: bytes) -> bool:
    msg = aiserver_v1_pb2.BidiAppendRequest()
    try:
        msg.ParseFromString(payload)
    except DecodeError:
        return False
    return bool(msg.request_id.request_id)


def _decode_bidi(data: bytes) -> list[Item]:
    append = bidi.decode_bidi_append(data)
    meta = {"request_id": append.request_id, "seqno": append.seqno, "size": len(append.raw)}
    if not append.agent and append.raw:  # another service's upload (e.g. voice input)
        why = "does not parse" if append.message is None else "is another service's message"
        raise bidi.TruncatedMessage(f"AgentClientMessage {why}")
    return [Item("bidi_append", append.message, meta)]


def _decode_runsse_request(data: bytes) -> list[Item]:
    request_id = bidi.decode_run_sse_request(data)
    return [Item("run_sse_request", aiserver_v1_pb2.BidiRequestId(request_id=request_id))]


def _decode_runsse_response(data: bytes) -> list[Item]:
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
            for detail in end.error.details if end.error else ():
                items.append(Item("error_detail", _parse_detail(detail), {"type": detail.type}))
            continue
        message = agent_v1_pb2.AgentServerMessage()
        try:
            message.ParseFromString(frame.payload)
        except DecodeError as exc:
            raise CaptureError(f"frame {index}: AgentServerMessage does not parse: {exc}") from None
        items.append(Item("server_message", message, meta))
    return items


def _end_stream_dict(end: connect.EndStream) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if end.error is not None:
        out["error"] = {"code": end.error.code, "message": end.error.message}
    if end.metadata:
        out["metadata"] = dict(end.metadata)
    return out


def _parse_detail(detail: connect.ErrorDetail) -> Message | None:
    if detail.type.removeprefix("type.googleapis.com/") != "aiserver.v1.ErrorDetails":
        return None
    message = aiserver_v1_pb2.ErrorDetails()
    try:
        message.ParseFromString(detail.value)
    except DecodeError:
        return None
    return message


def _decode_json(data: bytes) -> list[Item]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CaptureError(f"JSON capture is not UTF-8: {exc}") from None
    try:
        try:
            docs = [json.loads(text)]
        except json.JSONDecodeError:  # maybe JSON lines
            docs = [json.loads(line) for line in text.splitlines() if line.strip()]
    except (json.JSONDecodeError, RecursionError) as exc:
        raise CaptureError(f"not valid JSON: {exc}") from None
    items = []
    for doc in docs:
        for record in doc if isinstance(doc, list) else [doc]:
            items.append(_json_record(record))
    if not items:
        raise CaptureError("JSON capture holds no records")
    return items


def _json_record(record: Any) -> Item:
    """One record of the capture tool's JSON: the BidiAppendRequest with hex `data`."""
    request = record.get("bidi_append_request") if isinstance(record, dict) else None
    if not isinstance(request, dict) or not isinstance(request.get("data"), str):
        raise CaptureError("JSON capture has no bidi_append_request.data hex string")
    try:
        raw = bytes.fromhex(request["data"])
    except ValueError as exc:
        raise CaptureError(f"bidi_append_request.data is not hex: {exc}") from None
    request_id = request.get("request_id")
    if isinstance(request_id, dict):
        request_id = request_id.get("request_id")
    message = bidi.parse_client_message(raw)
    meta: dict[str, Any] = {"request_id": request_id, "size": len(raw)}
    if "append_seqno" in request:
        try:
            meta["seqno"] = int(request["append_seqno"])
        except (TypeError, ValueError):
            raise CaptureError("bidi_append_request.append_seqno is not an integer") from None
    if "agent_client_kind" in record:
        meta["json_kind"] = record["agent_client_kind"]
    return Item("bidi_append", message, meta)


def _decode_client(data: bytes) -> list[Item]:
    return [Item("client_message", bidi.parse_client_message(data), {"size": len(data)})]


def _decode_server(data: bytes) -> list[Item]:
    message = agent_v1_pb2.AgentServerMessage()
    message.ParseFromString(data)
    return [Item("server_message", message, {"size": len(data)})]


_DECODERS: dict[str, Callable[[bytes], list[Item]]] = {
    "json": _decode_json,
    "bidi": _decode_bidi,
    "runsse-request": _decode_runsse_request,
    "runsse-response": _decode_runsse_response,
    "client": _decode_client,
    "server": _decode_server,
}


def iter_unknown(message: Message, path: str = "") -> Iterator[Unknown]:
    """Every unknown field in a message tree, depth first; what our schema subset cannot name."""
    for unknown in UnknownFieldSet(message):
        yield Unknown(path, unknown.field_number, unknown.wire_type, unknown.data)
    for fd, value in message.ListFields():
        if fd.message_type is None:
            continue
        sub = f"{path}.{fd.name}" if path else fd.name
        if _is_map(fd):
            if fd.message_type.fields_by_name["value"].message_type is None:
                continue
            for key in value:
                yield from iter_unknown(value[key], f"{sub}[{key!r}]")
        elif fd.is_repeated:
            for i, element in enumerate(value):
                yield from iter_unknown(element, f"{sub}[{i}]")
        else:
            yield from iter_unknown(value, sub)


def _is_map(fd: FieldDescriptor) -> bool:
    return fd.message_type is not None and fd.message_type.GetOptions().map_entry


def _unknown_value(unknown: Unknown) -> Any:
    if unknown.wire_type == 3:  # group: nested UnknownFieldSet
        return f"group of {len(unknown.value)} fields"
    if isinstance(unknown.value, bytes):
        return _bytes_json(unknown.value)
    return unknown.value


def _bytes_json(value: bytes) -> str:
    try:
        text = value.decode("utf-8")
        if text.isprintable():
            return text
    except UnicodeDecodeError:
        pass
    return value.hex()
