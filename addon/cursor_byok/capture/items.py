"""What a decoded capture is made of: items (one message each, with what is known about it),
the capture around them, and a schema-less reading of protobuf bytes for the messages our
schema subset cannot parse.

Its own module so the decoders of each capture shape (`view.py` for wire bytes, `json_view.py`
for JSON captures and recordings) share these types without importing each other.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet

from cursor_byok.wire.varint import read_varint

BLOB_ID_SIZE = 32


WIRE_TYPES = {0: "varint", 1: "fixed64", 2: "bytes", 3: "group", 5: "fixed32"}


MAX_RAW_DEPTH = 12  # nesting a schema-less tree follows before it shows bytes


@dataclass(slots=True)
class Item:
    """One decoded message of a capture, with where it came from.

    `kind` is bidi_append, run_sse_request, server_message, client_message, end_stream,
    error_detail, raw (bytes our schema cannot name: `raw` holds them, `meta["note"]` says why),
    or one of a recording's own lines (recording_meta, run_meta, provider_request,
    provider_events, provider_error)."""

    kind: str
    message: Message | None
    meta: dict[str, Any] = field(default_factory=dict)
    raw: bytes | None = None


@dataclass(slots=True)
class DecodedFile:
    kind: str  # the detected (or forced) kind of the whole file
    source: str
    items: list[Item]
    notes: list[str] = field(default_factory=list)  # how the bytes were unwrapped (hex, gzip…)


@dataclass(frozen=True, slots=True)
class Unknown:
    """An unknown field somewhere in a message tree; `path` is dotted field names from the root."""

    path: str
    number: int
    wire_type: int
    value: Any


@dataclass(frozen=True, slots=True)
class RawField:
    """One field of protobuf bytes read without a schema; `children` when the bytes of a
    length-delimited field parse as a message themselves (a guess, as in protoc --decode_raw)."""

    number: int
    wire_type: int
    value: int | bytes
    children: tuple[RawField, ...] | None = None


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


def unknown_count(message: Message) -> int:
    """How many fields of a parsed tree our schema could not name (a parse that fits well has
    few: used to tell a client stream from a server stream)."""
    return sum(1 for _ in iter_unknown(message))


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


# --- protobuf without a schema ------------------------------------------------------------------


def raw_fields(data: bytes, depth: int = 0) -> tuple[RawField, ...]:
    """Protobuf bytes as fields (number, wire type, value); ValueError when they are not."""
    fields: list[RawField] = []
    pos = 0
    while pos < len(data):
        key, pos = read_varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise ValueError("field number 0")
        if wire_type == 0:
            value, pos = read_varint(data, pos)
            fields.append(RawField(number, 0, value))
        elif wire_type in (1, 5):
            size = 8 if wire_type == 1 else 4
            if pos + size > len(data):
                raise ValueError("truncated fixed field")
            fields.append(
                RawField(number, wire_type, int.from_bytes(data[pos : pos + size], "little"))
            )
            pos += size
        elif wire_type == 2:
            length, pos = read_varint(data, pos)
            if pos + length > len(data):
                raise ValueError("truncated length-delimited field")
            chunk = data[pos : pos + length]
            pos += length
            fields.append(RawField(number, 2, chunk, _nested(chunk, depth)))
        else:
            raise ValueError(f"wire type {wire_type}")
    return tuple(fields)


def _nested(chunk: bytes, depth: int) -> tuple[RawField, ...] | None:
    """The fields inside a length-delimited value, when it reads as a message and not as text."""
    if not chunk or depth >= MAX_RAW_DEPTH or _is_text(chunk):
        return None
    try:
        return raw_fields(chunk, depth + 1)
    except ValueError:
        return None


def _is_text(chunk: bytes) -> bool:
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return text.replace("\n", "").replace("\t", "").isprintable()


def raw_json(fields: tuple[RawField, ...]) -> list[dict[str, Any]]:
    """A schema-less tree as JSON: field, wire type, value (text, hex or nested fields)."""
    out = []
    for f in fields:
        entry: dict[str, Any] = {"field": f.number, "wire_type": WIRE_TYPES[f.wire_type]}
        if f.children is not None:
            entry["fields"] = raw_json(f.children)
        elif isinstance(f.value, bytes):
            entry["value"] = _bytes_json(f.value)
        else:
            entry["value"] = f.value
        out.append(entry)
    return out
