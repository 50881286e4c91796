"""Decoding the Agent request bodies (BidiAppend uploads, the RunSSE and RunPoll requests) and
encoding RunPoll's answers.

Sans-IO. Every failure is a `BidiDecodeError` subclass, which the addon answers with a Connect
`invalid_argument` error instead of a traceback.

An append's payload is checked for its shape (`shape.py`): `agent` says whether it is an Agent
client message at all; Cursor's voice input reuses the envelope for other messages.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from google.protobuf.message import DecodeError
from google.protobuf.message import Message

from cursor_byok.errors import ByokError
from cursor_byok.errors import Code
from cursor_byok.pb import agent_v1_pb2
from cursor_byok.pb import aiserver_v1_pb2
from cursor_byok.wire.connect import ConnectError
from cursor_byok.wire.connect import decode_unary_body
from cursor_byok.wire.shape import classify


class BidiDecodeError(ByokError, ValueError):
    """A request body we cannot use; `code` is the Connect code to answer with."""

    code = Code.INVALID_ARGUMENT


class InvalidHex(BidiDecodeError):
    """`BidiAppendRequest.data` is not an even-length hex string."""


class TruncatedMessage(BidiDecodeError):
    """The protobuf bytes end early or are otherwise not parseable."""


class MissingRequestId(BidiDecodeError):
    """No `request_id`: the upload cannot be routed to a session."""


class BadFraming(BidiDecodeError):
    """Compression or envelope problems (too large, corrupt, bomb)."""


class BadRequestId(BidiDecodeError):
    """A request id we will not use as a key, a header value or in a log line."""


MAX_REQUEST_ID = 128
_REQUEST_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:")


def validate_request_id(request_id: str) -> str:
    """Cursor's request ids are UUIDs: accept 1–128 characters of [A-Za-z0-9._:-] only, so an
    id can never forge a log line, break a header or hide in white space."""
    if not request_id:
        raise MissingRequestId("no request_id")
    if len(request_id) > MAX_REQUEST_ID:
        raise BadRequestId(f"request_id longer than {MAX_REQUEST_ID} characters")
    if not _REQUEST_ID_CHARS.issuperset(request_id):
        raise BadRequestId("request_id has characters other than letters, digits and -_.:")
    return request_id


@dataclass(frozen=True, slots=True)
class BidiAppend:
    """One decoded upload. `message` is None for an append that carries no data (a no-op) and
    for a payload that does not parse; `agent` is False for a payload that is not an Agent
    client message (`shape.classify`: another service's message, e.g. voice input)."""

    request_id: str
    seqno: int
    message: agent_v1_pb2.AgentClientMessage | None
    raw: bytes  # serialised AgentClientMessage as sent, for recording and replay
    agent: bool = True


def _unwrap(body: bytes, content_type: str | None, content_encoding: str | None) -> bytes:
    try:
        return decode_unary_body(body, content_type=content_type, content_encoding=content_encoding)
    except ConnectError as exc:
        raise BadFraming(str(exc)) from None


def _parse[M: Message](message: M, data: bytes) -> M:
    try:
        message.ParseFromString(data)
    except DecodeError as exc:
        name = message.DESCRIPTOR.name
        raise TruncatedMessage(f"{name} does not parse: {exc}") from None
    return message


def parse_client_message(raw: bytes) -> agent_v1_pb2.AgentClientMessage:
    return _parse(agent_v1_pb2.AgentClientMessage(), raw)


def decode_bidi_append(
    body: bytes, content_type: str | None = None, content_encoding: str | None = None
) -> BidiAppend:
    """BidiAppendRequest bytes → (request_id, append_seqno, AgentClientMessage)."""
    body = _unwrap(body, content_type, content_encoding)
    request = _parse(aiserver_v1_pb2.BidiAppendRequest(), body)
    request_id = request.request_id.request_id
    if not request_id:
        raise MissingRequestId("BidiAppendRequest has no request_id")
    validate_request_id(request_id)
    if request.append_seqno < 0:
        raise BidiDecodeError(f"negative append_seqno {request.append_seqno}")
    if request.data:
        try:
            raw = binascii.unhexlify(request.data)
        except (binascii.Error, ValueError) as exc:
            raise InvalidHex(f"BidiAppendRequest.data is not hex: {exc}") from None
    else:
        raw = request.data_binary
    if not raw:
        return BidiAppend(request_id, request.append_seqno, None, raw)
    classified = classify(raw)
    return BidiAppend(
        request_id, request.append_seqno, classified.message, raw, agent=classified.agent
    )


def decode_run_sse_request(
    body: bytes,
    content_type: str | None = "application/connect+proto",
    content_encoding: str | None = None,
) -> str:
    """The RunSSE request (one envelope around BidiRequestId) → its request_id."""
    body = _unwrap(body, content_type, content_encoding)
    request = _parse(aiserver_v1_pb2.BidiRequestId(), body)
    if not request.request_id:
        raise MissingRequestId("RunSSE request has no request_id")
    return validate_request_id(request.request_id)


def encode_bidi_append(
    request_id: str, seqno: int, message_bytes: bytes, *, binary: bool = False
) -> bytes:
    """Build a BidiAppendRequest body the way Cursor does (hex in field 1, or bytes in field 4)."""
    request = aiserver_v1_pb2.BidiAppendRequest(append_seqno=seqno)
    request.request_id.request_id = request_id
    if binary:
        request.data_binary = message_bytes
    else:
        request.data = message_bytes.hex()
    return request.SerializeToString()


def encode_run_sse_request(request_id: str) -> bytes:
    """The protobuf payload of a RunSSE request (the caller envelopes it)."""
    return aiserver_v1_pb2.BidiRequestId(request_id=request_id).SerializeToString()


# --- RunPoll ------------------------------------------------------------------------------------

# How `BidiPollResponse.data` carries a server message: lowercase hex of the serialised
# AgentServerMessage, as `BidiAppendRequest.data` carries a client one [inf, protocol.md §15.1],
# or standard base64 (what one public client decodes). `cursor_byok_poll_data` picks one.
POLL_DATA_ENCODINGS = ("hex", "base64")


@dataclass(frozen=True, slots=True)
class PollRequest:
    """One `BidiPollRequest`: whose stream, and whether the client says it starts it."""

    request_id: str
    start: bool


def decode_run_poll_request(
    body: bytes,
    content_type: str | None = "application/connect+proto",
    content_encoding: str | None = None,
) -> PollRequest:
    """The RunPoll request (one envelope around BidiPollRequest)."""
    body = _unwrap(body, content_type, content_encoding)
    request = _parse(aiserver_v1_pb2.BidiPollRequest(), body)
    if not request.request_id.request_id:
        raise MissingRequestId("RunPoll request has no request_id")
    return PollRequest(validate_request_id(request.request_id.request_id), request.start_request)


def encode_run_poll_request(request_id: str, *, start: bool = False) -> bytes:
    """The protobuf payload of a RunPoll request (the caller envelopes it)."""
    request = aiserver_v1_pb2.BidiPollRequest(start_request=start)
    request.request_id.request_id = request_id
    return request.SerializeToString()


def encode_poll_response(
    seqno: int, payload: bytes = b"", *, eof: bool = False, data: str = "hex"
) -> bytes:
    """One `BidiPollResponse`: server message `payload` (serialised AgentServerMessage) as
    `data` in the chosen encoding; `eof` on the response that ends the stream."""
    response = aiserver_v1_pb2.BidiPollResponse(seqno=seqno)
    if payload:
        response.data = payload.hex() if data == "hex" else base64.b64encode(payload).decode()
    if eof:
        response.eof = True
    return response.SerializeToString()
