"""The JSON shapes of capture: what `cursor-byok record` writes and the capture tool's JSON.

- a cursor-byok recording (captures/README.md): JSON lines with `type` meta / client / server /
  end / provider_*; the client and server lines carry base64 protobuf (`raw`);
- the capture tool's JSON of real Cursor traces (tests/data): `{"bidi_append_request": {"data":
  hex, "request_id": ...}, "agent_client_kind": ..., "agent_client_message": {...}}`, one
  document, a list of them, or JSON lines.

Each becomes the same items the wire decoders make (`view.py`), so rendering is shared.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from google.protobuf.message import DecodeError
from google.protobuf.message import Message

from cursor_byok.capture.format import FORMAT
from cursor_byok.capture.format import CaptureError
from cursor_byok.capture.items import Item
from cursor_byok.pb import agent_v1_pb2
from cursor_byok.pb import aiserver_v1_pb2
from cursor_byok.wire import bidi
from cursor_byok.wire import connect


def json_docs(data: bytes) -> list[Any]:
    """The documents of a JSON file: one document, or one per line (JSON lines)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CaptureError(f"JSON capture is not UTF-8: {exc}") from None
    try:
        try:
            return [json.loads(text)]
        except json.JSONDecodeError:  # maybe JSON lines
            return [json.loads(line) for line in text.splitlines() if line.strip()]
    except (json.JSONDecodeError, RecursionError) as exc:
        raise CaptureError(f"not valid JSON: {exc}") from None


def is_recording(docs: list[Any]) -> bool:
    first = docs[0] if docs else None
    return isinstance(first, dict) and first.get("format") == FORMAT


def decode_json(data: bytes) -> list[Item]:
    docs = json_docs(data)
    if is_recording(docs):
        return decode_recording(docs)
    items = []
    for doc in docs:
        for record in doc if isinstance(doc, list) else [doc]:
            items.append(_tool_record(record))
    if not items:
        raise CaptureError("JSON capture holds no records")
    return items


def _tool_record(record: Any) -> Item:
    """One record of the capture tool's JSON: the BidiAppendRequest with hex `data`."""
    request = record.get("bidi_append_request") if isinstance(record, dict) else None
    if not isinstance(request, dict) or not isinstance(request.get("data"), str):
        if isinstance(record, dict) and "type" in record:
            raise CaptureError(
                "JSON lines with a `type` but no cursor-byok-capture meta line first: "
                "not a recording this version reads"
            )
        raise CaptureError(
            "JSON that is neither a cursor-byok recording nor a capture-tool record "
            "(no bidi_append_request.data hex string)"
        )
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


# --- recordings ---------------------------------------------------------------------------------


def decode_recording(docs: list[Any]) -> list[Item]:
    """A cursor-byok recording, line by line in the order it was written."""
    items: list[Item] = []
    events: dict[Any, Item] = {}  # a model call's events, gathered into one item
    frames = 0
    for number, line in enumerate(docs, 1):
        if not isinstance(line, dict) or "type" not in line:
            raise CaptureError(f"line {number}: a line must be an object with a type")
        try:
            frames += _recording_line(line, items, frames, events)
        except CaptureError as exc:
            raise CaptureError(f"line {number}: {exc}") from None
        except (KeyError, TypeError, ValueError, binascii.Error) as exc:
            raise CaptureError(f"line {number}: bad {line['type']} line: {exc!r}") from None
    return items


def _recording_line(
    line: dict[str, Any], items: list[Item], frames: int, events: dict[Any, Item]
) -> int:
    """Append the items of one line; how many server frames it was (for frame numbers).

    A model call's events are one item (at its first event): they interleave with the frames
    they caused, and one line per text delta would bury the stream."""
    kind = line["type"]
    base = {"t": line.get("t")}
    if kind == "meta":
        items.append(_meta_item(line))
    elif kind == "client":
        raw = base64.b64decode(line["raw"])
        meta = {**base, "seqno": int(line["seqno"]), "after_frames": line.get("after_frames")}
        meta["size"] = len(raw)
        if not raw:
            items.append(Item("client_message", None, meta))
        else:
            items.append(_parsed("client_message", agent_v1_pb2.AgentClientMessage, raw, meta))
    elif kind == "server":
        raw = base64.b64decode(line["raw"])
        meta = {**base, "frame": frames, "size": len(raw)}
        items.append(_parsed("server_message", agent_v1_pb2.AgentServerMessage, raw, meta))
        return 1
    elif kind == "end":
        items.extend(_end_items(line["end"], {**base, "frame": frames}))
    elif kind == "provider_request":
        items.append(_request_item(line, base))
    elif kind == "provider_event":
        gathered = events.get(line["call"])
        if gathered is None:
            gathered = Item("provider_events", None, {**base, "call": line["call"], "events": []})
            events[line["call"]] = gathered
            items.append(gathered)
        gathered.meta["events"].append(line["event"])
    elif kind == "provider_error":
        items.append(Item("provider_error", None, {**base, "call": line["call"], **line["error"]}))
    # Other line types are skipped, as replay skips them: later versions may add some.
    return 0


def _meta_item(line: dict[str, Any]) -> Item:
    """The recording's format line, or a run's meta (its blobs counted, not shown)."""
    meta = {k: v for k, v in line.items() if k not in ("t", "type")}
    if "format" in meta:
        if meta.get("version") != 1:
            raise CaptureError(f"capture format version {meta.get('version')!r}")
        return Item("recording_meta", None, meta)
    blobs = meta.pop("blobs", None) or {}
    meta["blobs"] = len(blobs)
    return Item("run_meta", None, meta)


def _end_items(end: Any, meta: dict[str, Any]) -> list[Item]:
    """The end-stream as recorded, then its error's typed details."""
    payload = json.dumps(end).encode()
    try:
        parsed = connect.parse_end_stream(payload)
    except connect.ConnectError as exc:
        raise CaptureError(str(exc)) from None
    return [Item("end_stream", None, {**meta, "end_stream": end}), *error_detail_items(parsed)]


def _request_item(line: dict[str, Any], base: dict[str, Any]) -> Item:
    """A model call's request, summarised: model, message count, tool names."""
    request = line["request"]
    meta = {**base, "call": line["call"], "model": request.get("model")}
    meta["messages"] = len(request.get("messages") or [])
    if "messages_from" in request:
        meta["messages_from"] = request["messages_from"]
    if "tools" in request:
        meta["tools"] = [t.get("name") for t in request.get("tools") or []]
    return Item("provider_request", None, meta)


def _parsed(kind: str, message_type: type[Message], raw: bytes, meta: dict[str, Any]) -> Item:
    """A message of the recording; one our schema cannot parse is shown without names."""
    message = message_type()
    try:
        message.ParseFromString(raw)
    except DecodeError as exc:
        note = f"{message_type.DESCRIPTOR.name} does not parse ({exc}): fields without names"
        return Item("raw", None, {**meta, "note": note}, raw=raw)
    return Item(kind, message, meta)


def error_detail_items(end: connect.EndStream) -> list[Item]:
    """The typed details of an end-stream error (Cursor shows `aiserver.v1.ErrorDetails`)."""
    items = []
    for detail in end.error.details if end.error else ():
        items.append(Item("error_detail", _parse_detail(detail), {"type": detail.type}))
    return items


def _parse_detail(detail: connect.ErrorDetail) -> aiserver_v1_pb2.ErrorDetails | None:
    if detail.type.removeprefix("type.googleapis.com/") != "aiserver.v1.ErrorDetails":
        return None
    message = aiserver_v1_pb2.ErrorDetails()
    try:
        message.ParseFromString(detail.value)
    except DecodeError:
        return None
    return message
