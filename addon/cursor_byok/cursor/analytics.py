"""Analytics events about private conversations, taken out of a batch that goes on. Sans-IO.

`AnalyticsService/TrackEvents` (Cursor's SDK: `sdk.run.created` with the model's name and the
prompt's SHA-256, ...) and `AnalyticsService/Batch` (the IDE) carry many events in one call, most
of them about nothing private. So the call is not answered or forwarded whole: each event is
judged by its string values (`private(value)` names the conversation a value is about, "" when
it is private without naming one (a BYOK model's name), None when it is not private), and what
goes on is the original body without the private events: for protobuf the original
bytes of every other field, sliced out of the wire format (nothing re-encoded, unknown fields
kept); for JSON the parsed document without them.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from google.protobuf import struct_pb2
from google.protobuf.message import DecodeError

from cursor_byok.errors import ByokError
from cursor_byok.errors import Code
from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.wire.varint import VarintError
from cursor_byok.wire.varint import read_varint

EVENTS_FIELD = 1  # TrackEventsRequest.events and BatchRequest.events
Private = Callable[[str], str | None]


class WireError(ByokError, ValueError):
    """Bytes that are not a protobuf message."""

    code = Code.INVALID_ARGUMENT


@dataclass(frozen=True, slots=True)
class Field:
    """One top-level field of a message as it lies in the bytes: [start, end) with its tag,
    the payload (a length-delimited field's bytes) at [payload, end)."""

    number: int
    wire_type: int
    start: int
    payload: int
    end: int


def fields(data: bytes) -> list[Field]:
    """Every top-level field of `data`, in order; raises `WireError` on bytes that are not one
    (a varint cut short too, so callers catch one error for bad bytes)."""
    out = []
    at = 0
    try:
        while at < len(data):
            start = at
            key, at = read_varint(data, at)
            number, wire_type = key >> 3, key & 7
            if number == 0:
                raise WireError("field number 0")
            payload = at
            if wire_type == 0:
                _, at = read_varint(data, at)
            elif wire_type == 1:
                at += 8
            elif wire_type == 2:
                size, payload = read_varint(data, at)
                at = payload + size
            elif wire_type == 5:
                at += 4
            else:
                raise WireError(f"wire type {wire_type} (groups are not used by Cursor)")
            if at > len(data):
                raise WireError(f"field {number} runs past the end of the message")
            out.append(Field(number, wire_type, start, payload, at))
    except VarintError as exc:
        raise WireError(str(exc)) from None
    return out


@dataclass(frozen=True, slots=True)
class Filtered:
    """What is left of a batch: `body` is None when nothing was dropped (send the original)."""

    body: bytes | None
    kept: int
    dropped: int
    owners: dict[str, int]  # whom the dropped events were about: how many each


def filter_events(data: bytes, strings: Callable[[bytes], list[str]], private: Private) -> Filtered:
    """The batch `data` without the events (`EVENTS_FIELD`) any of whose strings is private."""
    parts = fields(data)
    owners: dict[str, int] = {}
    drop = set()
    kept = 0
    for index, part in enumerate(parts):
        if part.number != EVENTS_FIELD or part.wire_type != 2:
            continue
        owner = _first_private(strings(data[part.payload : part.end]), private)
        if owner is None:
            kept += 1
        else:
            drop.add(index)
            owners[owner] = owners.get(owner, 0) + 1
    if not drop:
        return Filtered(None, kept, 0, {})
    body = b"".join(data[p.start : p.end] for i, p in enumerate(parts) if i not in drop)
    return Filtered(body, kept, len(drop), owners)


def filter_json_events(document: Any, private: Private) -> tuple[Any, Filtered]:
    """The same for a JSON batch (`{"events": [...]}`): the document without the private events
    (the same object when nothing was dropped) and the counts (`body` is left None)."""
    events = document.get("events") if isinstance(document, dict) else None
    if not isinstance(events, list):
        return document, Filtered(None, 0, 0, {})
    owners: dict[str, int] = {}
    kept_events = []
    for event in events:
        owner = _first_private(json_strings(event), private)
        if owner is None:
            kept_events.append(event)
        else:
            owners[owner] = owners.get(owner, 0) + 1
    dropped = len(events) - len(kept_events)
    counts = Filtered(None, len(kept_events), dropped, owners)
    if not dropped:
        return document, counts
    return {**document, "events": kept_events}, counts


def _first_private(values: Iterable[str], private: Private) -> str | None:
    """The conversation the first private value names; "" when the private values name none."""
    found = None
    for value in values:
        owner = private(value)
        if owner:
            return owner
        if owner is not None:
            found = owner
    return found


def track_event_strings(payload: bytes) -> list[str]:
    """An `AnalyticsEvent`'s name and string values (the SDK's ids, model, prompt_hash)."""
    try:
        event = aipb.AnalyticsEvent.FromString(payload)
    except DecodeError:
        return [payload.decode("utf-8", "replace")]  # judged by what it spells
    values = [event.event_name]
    for data in event.event_data.values():
        if data.WhichOneof("data") == "string_value":
            values.append(data.string_value)
    return values


def batch_event_strings(payload: bytes) -> list[str]:
    """A `BatchEvent`'s name, ids and every string in its properties."""
    try:
        event = aipb.BatchEvent.FromString(payload)
    except DecodeError:
        return [payload.decode("utf-8", "replace")]
    values = [event.event, event.user_id, event.anonymous_id, event.message_id]
    values.extend(struct_strings(event.properties))
    return values


def struct_strings(value: struct_pb2.Struct | struct_pb2.Value) -> Iterator[str]:
    """Every string in a `google.protobuf.Struct` (or `Value`), nested ones too, however deep:
    a depth limit let an id nested 40 levels down go to Cursor unseen (issue 33 item 8). The
    walk keeps its own stack (no recursion); the parser already bounded the message."""
    stack: list[struct_pb2.Struct | struct_pb2.Value] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, struct_pb2.Struct):
            stack.extend(item.fields.values())
            continue
        kind = item.WhichOneof("kind")
        if kind == "string_value":
            yield item.string_value
        elif kind == "struct_value":
            stack.append(item.struct_value)
        elif kind == "list_value":
            stack.extend(item.list_value.values)


def json_strings(value: Any) -> Iterator[str]:
    """Every string value (not key) of a parsed JSON document, however deep (own stack)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
