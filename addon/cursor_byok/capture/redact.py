"""The one place that decides what a secret looks like, and replaces it.

Used for everything written or shown outside the process: capture files (headers, provider
errors, end-stream errors, config facts) and provider error messages shown in Cursor or logged.
Two things are redacted: values the caller knows are secrets (the configured key), and any
substring shaped like a credential, even one we were never told about.

Stdlib and protobuf only, so that `providers` can import it without importing the recorder.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import MutableMapping
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError
from google.protobuf.message import Message

from cursor_byok.protocol.checkpoint import varint

REDACTED = "<redacted>"

# Headers whose whole value is a credential (Cursor's own auth headers among them).
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-cursor-checksum",
        "x-client-key",
        "x-session-id",
        "x-api-key",
        "api-key",
    }
)
# …and any header whose name says it carries one.
_SECRET_NAME_WORDS = ("auth", "token", "secret", "key", "cookie", "session", "password", "checksum")

# Token shapes, redacted wherever they appear. Prefixes are the vendors' documented key formats:
# OpenAI/Anthropic/OpenRouter `sk-…` (also glued to a preceding `_` or `=`, as in
# `api_key_sk-…`), Google `AIza…`, GitHub `ghp_…`/`gho_…`/…, Slack `xox?-…`, AWS `AKIA…`; JWTs
# (Cursor's access tokens among them) start with `eyJ` (base64url of `{"`). A value after an
# auth scheme is hidden: any value after `Bearer`; after `Basic`/`token` (words prose uses too:
# "basic usage", "token limit") only a value that looks encoded: 8+ characters with a digit,
# `=` or an uppercase letter after the first, or 20+ characters.
_VALUE = r"[A-Za-z0-9._~+/=\-]"
_SCHEME = re.compile(
    rf"\b((?i:bearer))(\s+){_VALUE}{{6,}}"
    rf"|\b((?i:basic|token))(\s+)(?:(?=.{_VALUE}*[0-9=A-Z]){_VALUE}{{8,}}|{_VALUE}{{20,}})"
)
_TOKENS = re.compile(
    r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_\-]{8,}"
    r"|\beyJ[A-Za-z0-9_\-]*\.[A-Za-z0-9_.\-]+"
    r"|(?<![A-Za-z0-9])AIza[0-9A-Za-z_\-]{20,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{16,}"
    r"|\bxox[abprs]-[A-Za-z0-9\-]{10,}"
    r"|\bAKIA[0-9A-Z]{16}\b"
)
_MIN_SECRET = 4  # shorter "secrets" would redact ordinary words


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """Replace the given secrets and every token-shaped substring with `REDACTED`.

    Idempotent: scrubbed text scrubs to itself.
    """
    for secret in secrets:
        if secret and len(secret) >= _MIN_SECRET:
            text = text.replace(secret, REDACTED)
    text = _SCHEME.sub(_keep_scheme, text)
    return _TOKENS.sub(REDACTED, text)


def _keep_scheme(match: re.Match[str]) -> str:
    scheme, space = (match.group(1), match.group(2)) if match.group(1) else match.group(3, 4)
    return f"{scheme}{space}{REDACTED}"


def scrub_json(value: Any) -> Any:
    """`scrub` applied to every string (keys included) of a JSON value."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [scrub_json(v) for v in value]
    if isinstance(value, dict):
        return {scrub(str(k)): scrub_json(v) for k, v in value.items()}
    return value


def secret_header(name: str) -> bool:
    name = name.lower()
    return name in SECRET_HEADERS or any(word in name for word in _SECRET_NAME_WORDS)


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers safe to write: credentials replaced, token-shaped values scrubbed."""
    return {
        name.lower(): REDACTED if secret_header(name) else scrub(str(value))
        for name, value in headers.items()
    }


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
            key, pos = _read_varint(data, pos)
            wire_type = key & 7
            if key >> 3 == 0:
                return None
            if wire_type == 0:
                start = pos
                _, pos = _read_varint(data, pos)
                fields.append((key, 0, data[start:pos]))
            elif wire_type == 1:
                fields.append((key, 1, data[pos : pos + 8]))
                pos += 8
            elif wire_type == 5:
                fields.append((key, 5, data[pos : pos + 4]))
                pos += 4
            elif wire_type == 2:
                length, pos = _read_varint(data, pos)
                if pos + length > len(data):
                    return None
                fields.append((key, 2, data[pos : pos + length]))
                pos += length
            else:
                return None
    except IndexError:
        return None
    return fields if pos == len(data) and fields else None


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise IndexError("varint too long")


def redact_native(raw: bytes, *, client: bool) -> bytes:
    """A body of someone else's run (Cursor's backend), redacted for a capture file: credential
    fields of client messages, then token-shaped strings anywhere in the bytes."""
    if client:
        raw = redact_client_message(raw)
    return scrub_wire(raw)
