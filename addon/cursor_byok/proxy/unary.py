"""Answering a unary Connect RPC here: one helper for every call answered locally (the model
pickers, IsConnected, WarmUp, the calls around a BYOK run).

A unary Connect call comes as a bare protobuf (`application/proto`), JSON (`application/json`)
or, from some clients, one envelope (`application/connect+proto`); a Connect GET names its codec
in the query. The answer goes back in the same codec, 200, and is counted by the census as
served here.
"""

from __future__ import annotations

import base64

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from google.protobuf.message import Message
from mitmproxy import http

from cursor_byok.config.catalog import encode_answer
from cursor_byok.config.catalog import wire_format
from cursor_byok.errors import ByokError
from cursor_byok.errors import Code
from cursor_byok.proxy.activity_record import CENSUS_KEY
from cursor_byok.store.census import SERVED
from cursor_byok.wire import connect

MAX_REQUEST = 64 * 1024 * 1024  # a unary request body we decode (UploadConversationBlobs batches)
TOO_LARGE = Code.RESOURCE_EXHAUSTED  # a BadRequest's code when the body is over MAX_REQUEST


class BadRequest(ByokError, ValueError):
    """A request body that is not the message it should be."""

    code = Code.INVALID_ARGUMENT


def request_format(request: http.Request) -> str:
    """`proto`, `connect+proto`, `json` or `other` (a Connect GET: from its query)."""
    if request.method == "GET":
        return "json" if request.query.get("encoding") == "json" else "proto"
    return wire_format(request.headers.get("content-type"))


def message_bytes(request: http.Request) -> bytes:
    """The request's message as bytes, decompressed and out of its envelope: protobuf, or JSON
    text for the JSON codec (`request_format`); raises `BadRequest`."""
    fmt = request_format(request)
    if request.method == "GET":
        raw = request.query.get("message", "")
        if fmt != "proto":
            return raw.encode()
        try:
            return base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
        except ValueError as exc:
            raise BadRequest(f"the message query parameter is not base64: {exc}") from None
    size = len(request.raw_content or b"")
    if size > MAX_REQUEST:
        raise BadRequest(f"request body of {size} bytes is over {MAX_REQUEST}", TOO_LARGE)
    try:
        payloads = body_payloads(request, MAX_REQUEST, enveloped=fmt == "connect+proto")
    except connect.DecompressedTooLarge as exc:
        raise BadRequest(str(exc), TOO_LARGE) from None
    except connect.ConnectError as exc:
        raise BadRequest(str(exc)) from None
    return payloads[0] if payloads else b""


def body_payloads(request: http.Request, limit: int, *, enveloped: bool) -> list[bytes]:
    """A request body as its bytes mean it: decompressed (`content-encoding`) and, when
    `enveloped`, the payloads of its Connect or gRPC frames (`connect-content-encoding`), each
    step bounded by `limit`. What we answer and what we count as leaving read bodies alike.
    Raises connect.ConnectError (DecompressedTooLarge past `limit`)."""
    data = connect.decompress_body(
        request.raw_content or b"", request.headers.get("content-encoding"), limit=limit
    )
    if not enveloped:
        return [data]
    frames = connect.decode_envelopes(
        data,
        encoding=request.headers.get("connect-content-encoding"),
        max_decompressed_size=limit,
    )
    return [frame.payload for frame in frames]


def parse[M: Message](request: http.Request, message: M) -> M:
    """The request's message, in whatever codec it came; raises `BadRequest`."""
    data = message_bytes(request)
    try:
        if request_format(request) == "json":
            json_format.Parse(data or b"{}", message, ignore_unknown_fields=True)
        else:
            message.ParseFromString(data)
    except (DecodeError, json_format.ParseError, ValueError) as exc:
        raise BadRequest(f"not a {message.DESCRIPTOR.name}: {exc}") from None
    return message


def encode(message: Message, fmt: str) -> tuple[bytes, str]:
    """Body and content type of an answer in the client's codec."""
    return encode_answer(message, fmt)


def answer(flow: http.HTTPFlow, message: Message) -> None:
    """Answer the flow here with `message`, in the codec it came in."""
    body, ctype = encode(message, request_format(flow.request))
    answer_bytes(flow, body, ctype)


def answer_bytes(flow: http.HTTPFlow, body: bytes, content_type: str) -> None:
    flow.response = http.Response.make(200, body, {"content-type": content_type})
    flow.metadata[CENSUS_KEY] = SERVED


def error(flow: http.HTTPFlow, code: str, message: str) -> None:
    """Answer the flow with a Connect unary error (one line that says what is wrong)."""
    status, body = connect.unary_error(code, message)
    flow.response = http.Response.make(status, body, {"content-type": "application/json"})
    flow.metadata[CENSUS_KEY] = SERVED
