"""Redaction of protobuf bodies and end-stream errors for capture files.

What a secret looks like, and replacing it in text and headers, is decided in one place,
`cursor_byok.secrets`; this module applies it to the message trees a capture holds.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from collections.abc import MutableMapping
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError
from google.protobuf.message import Message

from cursor_byok.secrets import REDACTED
from cursor_byok.secrets import scrub
from cursor_byok.secrets import scrub_json
from cursor_byok.wire.varint import VarintError
from cursor_byok.wire.varint import read_varint
from cursor_byok.wire.varint import varint


def submessages(value: Any) -> list[Message]:
    """The messages held by one field value: a message, a repeated field or a map."""
    if isinstance(value, Message):
        return [value]
    items = value.values() if isinstance(value, Mapping) else value
    return [item for item in items if isinstance(item, Message)]


def scrub_proto(message: Message) -> None:
    """`scrub` every string field of a protobuf message tree, in place."""
    for fd, value in message.ListFields():
        if fd.type == FieldDescriptor.TYPE_STRING:
            if fd.is_repeated:
                value[:] = [scrub(v) for v in value]
            else:
                setattr(message, fd.name, scrub(value))
        elif isinstance(value, MutableMapping):
            for key in list(value):
                if isinstance(value[key], str):
                    value[key] = scrub(value[key])
                elif isinstance(value[key], Message):
                    scrub_proto(value[key])
        elif fd.type == FieldDescriptor.TYPE_MESSAGE:
            for item in submessages(value):
                scrub_proto(item)


def scrub_end_stream(payload: bytes) -> dict[str, Any]:
    """The end-stream JSON with secrets scrubbed, inside known error details too.

    Replay applies the same function to the replayed end-stream, so both sides compare equal.
    """
    try:
        body = json.loads(payload.decode("utf-8")) if payload else {}
    except (UnicodeDecodeError, ValueError):
        return {"unparsed": scrub(payload.decode("utf-8", "replace"))}
    if not isinstance(body, dict):
        return {"unparsed": scrub(json.dumps(body))}
    error = body.get("error")
    if isinstance(error, dict) and isinstance(error.get("details"), list):
        error["details"] = [_scrub_detail(d) for d in error["details"]]
    return scrub_json(body)


def _scrub_detail(detail: Any) -> Any:
    from cursor_byok.pb import aiserver_v1_pb2 as aipb

    if not isinstance(detail, dict) or detail.get("type") != "aiserver.v1.ErrorDetails":
        return detail
    value = str(detail.get("value", ""))
    try:
        parsed = aipb.ErrorDetails.FromString(base64.b64decode(value + "=" * (-len(value) % 4)))
    except (ValueError, DecodeError):
        return detail
    scrub_proto(parsed)
    encoded = base64.b64encode(parsed.SerializeToString()).decode().rstrip("=")
    return {**detail, "value": encoded}


# --- protobuf bodies -------------------------------------------------------------------------

# String fields that hold a credential by name (Cursor's BYOK credentials in RequestedModel and
# ModelDetails: ApiKeyCredentials, AzureCredentials, BedrockCredentials), whatever the value.
SECRET_FIELDS = frozenset({"api_key", "access_key", "secret_key", "session_token", "password"})


def redact_secret_fields(message: Message) -> bool:
    """Replace non-empty `SECRET_FIELDS` strings in a message tree, in place; True if any."""
    changed = False
    for fd, value in message.ListFields():
        if fd.type == FieldDescriptor.TYPE_STRING and fd.name in SECRET_FIELDS:
            if not fd.is_repeated and value and value != REDACTED:
                setattr(message, fd.name, REDACTED)
                changed = True
        elif fd.type == FieldDescriptor.TYPE_MESSAGE:
            for item in submessages(value):
                changed |= redact_secret_fields(item)
    return changed


def redact_client_message(raw: bytes) -> bytes:
    """An `AgentClientMessage` with its credential fields redacted; the same bytes when it has
    none (or does not parse), so what replay sends stays what the server saw."""
    from cursor_byok.pb import agent_v1_pb2 as pb

    try:
        message = pb.AgentClientMessage.FromString(raw)
    except DecodeError:
        return raw
    return message.SerializeToString() if redact_secret_fields(message) else raw


def scrub_wire(raw: bytes, depth: int = 0) -> bytes:
    """Token-shaped strings scrubbed anywhere in protobuf bytes, without a schema.

    Each length-delimited value that walks as a message is scrubbed recursively (lengths
    re-encoded); one that does not and is UTF-8 text is scrubbed as text; anything else is kept.
    Bytes that do not walk as protobuf at all are returned unchanged.
    """
    fields = _walk(raw)
    if fields is None or depth > 64:
        return raw
    out = bytearray()
    changed = False
    for key, wire_type, value in fields:
        out += varint(key)
        if wire_type != 2:
            out += value
            continue
        inner = scrub_wire(value, depth + 1) if _walk(value) else _scrub_text(value)
        changed |= inner != value
        out += varint(len(inner)) + inner
    return bytes(out) if changed else raw


def _scrub_text(value: bytes) -> bytes:
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        return value
    return scrub(text).encode("utf-8")


def _walk(data: bytes) -> list[tuple[int, int, bytes]] | None:
    """(key, wire type, raw value) per field, or None when `data` is not a plain message
    (groups and unknown wire types count as not one: text rarely walks without them)."""
    fields = []
    pos = 0
    try:
        while pos < len(data):
            key, pos = read_varint(data, pos)
            wire_type = key & 7
            if key >> 3 == 0:
                return None
            if wire_type == 0:
                start = pos
                _, pos = read_varint(data, pos)
                fields.append((key, 0, data[start:pos]))
            elif wire_type == 1:
                fields.append((key, 1, data[pos : pos + 8]))
                pos += 8
            elif wire_type == 5:
                fields.append((key, 5, data[pos : pos + 4]))
                pos += 4
            elif wire_type == 2:
                length, pos = read_varint(data, pos)
                if pos + length > len(data):
                    return None
                fields.append((key, 2, data[pos : pos + length]))
                pos += length
            else:
                return None
    except VarintError:
        return None
    return fields if pos == len(data) and fields else None


def redact_native(raw: bytes, *, client: bool) -> bytes:
    """A body of someone else's run (Cursor's backend), redacted for a capture file: credential
    fields of client messages, then token-shaped strings anywhere in the bytes."""
    if client:
        raw = redact_client_message(raw)
    return scrub_wire(raw)
