"""Cursor's Connect/protobuf bodies as readable text, for the mitmweb content view (`run --web`).

Pure (no mitmproxy): given a body, the RPC path and which side of the call it is, pick the
message type we know and render the same trees `cursor-byok decode` prints. Agent calls use the
capture decoders (BidiAppend uploads, RunSSE requests, RunSSE frame streams); the model-picker
calls use the catalog's types; anything else is split into Connect envelopes and left to a
schema-less decoder the caller supplies (mitmweb's own protobuf view).
"""

from __future__ import annotations

import io
from collections.abc import Callable

from google.protobuf.message import DecodeError
from google.protobuf.message import Message
from rich.console import Console
from rich.tree import Tree

from cursor_byok.capture import render as capture_render
from cursor_byok.capture import view as capture_view
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.wire import connect

CONNECT_TYPES = ("application/connect+proto", "application/proto", "application/grpc")
WIDTH = 140

# Picker calls (protocol.md §12): method -> (request type, response type).
_KNOWN: dict[str, tuple[type[Message], type[Message]]] = {
    "AvailableModels": (aipb.AvailableModelsRequest, aipb.AvailableModelsResponse),
    "GetUsableModels": (pb.GetUsableModelsRequest, pb.GetUsableModelsResponse),
    "GetDefaultModelForCli": (pb.GetDefaultModelForCliRequest, pb.GetDefaultModelForCliResponse),
}


def is_connect_body(content_type: str | None) -> bool:
    ctype = (content_type or "").split(";", 1)[0].strip().lower()
    return ctype in CONNECT_TYPES


def agent_kind(path: str, is_request: bool) -> str | None:
    """The capture kind of an Agent RPC body, or None for other calls."""
    method = path.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    if method == "BidiAppend":
        return "bidi" if is_request else None
    if method == "RunSSE":
        return "runsse-request" if is_request else "runsse-response"
    if method == "Run":  # the HTTP/2 stream: client envelopes up, the server's stream down
        return "run-request" if is_request else "runsse-response"
    return None


def _console() -> Console:
    return Console(width=WIDTH, record=True, color_system=None, file=_Null(), highlight=False)


class _Null(io.StringIO):
    """A text file that discards what it is given (the console records its own copy)."""

    def write(self, _text: str, /) -> int:
        return 0


def _tree_text(message: Message) -> str:
    console = _console()
    tree = Tree(message.DESCRIPTOR.full_name)
    capture_render.add_message(tree, message, capture_render.Style(max_string=2000, max_items=200))
    console.print(tree)
    return console.export_text()


def render(
    data: bytes,
    *,
    path: str,
    is_request: bool,
    content_type: str | None,
    fallback: Callable[[bytes], str] | None = None,
) -> str:
    """Text for one body; raises ValueError when it is not what the path says."""
    kind = agent_kind(path, is_request)
    if kind is not None:
        try:
            capture = capture_view.load_capture(data, kind, source=path.split("?", 1)[0])
        except capture_view.CaptureError as exc:
            raise ValueError(str(exc)) from None
        console = _console()
        capture_render.render_human(
            capture,
            console,
            capture_render.Style(max_string=2000, max_items=200),
            fold_heartbeats=True,
        )
        return console.export_text()
    method = path.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    types = _KNOWN.get(method)
    message_type = (types[0] if is_request else types[1]) if types else None
    payloads = _payloads(data, content_type)
    parts = []
    for index, (label, payload) in enumerate(payloads):
        header = f"── {label} {index} ({len(payload):,} B)" if len(payloads) > 1 else ""
        if message_type is not None and label != "end-stream":
            try:
                body = _tree_text(message_type.FromString(payload))
            except DecodeError:
                body = fallback(payload) if fallback else payload.hex()
        elif label == "end-stream":
            body = payload.decode("utf-8", "replace") + "\n"
        else:
            body = fallback(payload) if fallback else payload.hex()
        parts.append((header + "\n" if header else "") + body)
    return "".join(parts)


def _payloads(data: bytes, content_type: str | None) -> list[tuple[str, bytes]]:
    ctype = (content_type or "").split(";", 1)[0].strip().lower()
    if ctype == "application/proto" or not data:
        return [("message", data)]
    try:
        frames = connect.decode_envelopes(data)
    except connect.ConnectError:
        return [("message", data)]
    return [("end-stream" if f.is_end_stream else "frame", f.payload) for f in frames]
