"""Showing a decoded capture: protobuf trees for people (rich), a run request with its summary
(`run_summary.py`) above it, one JSON object per item for machines. `view.py` decodes; this
module only renders what it decoded.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet
from rich.console import Console
from rich.text import Text
from rich.tree import Tree

from cursor_byok.capture.items import BLOB_ID_SIZE
from cursor_byok.capture.items import WIRE_TYPES
from cursor_byok.capture.items import DecodedFile
from cursor_byok.capture.items import Item
from cursor_byok.capture.items import RawField
from cursor_byok.capture.items import _is_map
from cursor_byok.capture.items import _unknown_value
from cursor_byok.capture.items import iter_unknown
from cursor_byok.capture.items import raw_fields
from cursor_byok.capture.items import raw_json
from cursor_byok.capture.run_summary import elide
from cursor_byok.capture.run_summary import run_request_summary
from cursor_byok.pb import agent_v1_pb2


@dataclass(frozen=True, slots=True)
class Style:
    """Rendering limits; 0 means unlimited."""

    max_string: int = 100
    max_items: int = 20


def _bytes_text(value: bytes, max_string: int = 100) -> str:
    """32-byte values are blob ids (hex); text blobs (JSON etc.) preview as text, others as hex."""
    if len(value) == BLOB_ID_SIZE:
        return f"blob {value.hex()}"
    if not value:
        return "<0 bytes>"
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and text.replace("\n", "").replace("\t", "").isprintable():
        return f"<{len(value)} bytes> text {elide(text, max_string)}"
    head = value[:16].hex()
    return f"<{len(value)} bytes> {head}{'…' if len(value) > 16 else ''}"


def _scalar_text(fd: FieldDescriptor, value: Any, style: Style) -> str:
    if fd.type == FieldDescriptor.TYPE_ENUM:
        enum_value = fd.enum_type.values_by_number.get(value)
        return enum_value.name if enum_value is not None else str(value)
    if fd.type == FieldDescriptor.TYPE_STRING:
        return elide(value, style.max_string)
    if fd.type == FieldDescriptor.TYPE_BYTES:
        return _bytes_text(value, style.max_string)
    if fd.type == FieldDescriptor.TYPE_BOOL:
        return "true" if value else "false"
    return str(value)


def _label(name: str, value: str, *, dim: bool = False) -> Text:
    text = Text(name, style="cyan")
    text.append(" = ")
    text.append(value, style="dim" if dim else "")
    return text


def _type_label(name: str, message: Message) -> Text:
    text = Text(name, style="cyan")
    text.append(": ")
    text.append(message.DESCRIPTOR.name, style="bold")
    size = message.ByteSize()
    if size:
        text.append(f" ({size:,} B)", style="dim")
    return text


def add_message(tree: Tree, message: Message, style: Style) -> None:
    """Add one node per set field (and per unknown field) of `message` under `tree`."""
    for fd, value in message.ListFields():
        if _is_map(fd):
            _add_map(tree, fd, value, style)
        elif fd.is_repeated:
            _add_repeated(tree, fd, value, style)
        elif fd.message_type is not None:
            add_message(tree.add(_type_label(fd.name, value)), value, style)
        else:
            tree.add(_label(fd.name, _scalar_text(fd, value, style)))
    for unknown in UnknownFieldSet(message):
        kind = WIRE_TYPES.get(unknown.wire_type, str(unknown.wire_type))
        value = unknown.data
        if isinstance(value, bytes):
            shown = _bytes_text(value, style.max_string)
        elif unknown.wire_type == 3:
            shown = f"group of {len(value)} fields"
        else:
            shown = str(value)
        tree.add(Text(f"#{unknown.field_number} {kind} = {shown}", style="yellow"))


def _add_repeated(tree: Tree, fd: FieldDescriptor, values: Any, style: Style) -> None:
    type_name = fd.message_type.name if fd.message_type else _scalar_type_name(fd)
    node = tree.add(Text.assemble((fd.name, "cyan"), f": {type_name}[{len(values)}]"))
    limit = style.max_items or len(values)
    for i, value in enumerate(values):
        if i >= limit:
            node.add(Text(f"… {len(values) - limit} more", style="dim"))
            break
        if fd.message_type is not None:
            add_message(node.add(_type_label(f"[{i}]", value)), value, style)
        else:
            node.add(_label(f"[{i}]", _scalar_text(fd, value, style)))


def _add_map(tree: Tree, fd: FieldDescriptor, mapping: Any, style: Style) -> None:
    value_fd = fd.message_type.fields_by_name["value"]
    node = tree.add(Text.assemble((fd.name, "cyan"), f": map[{len(mapping)}]"))
    keys = sorted(mapping)
    limit = style.max_items or len(keys)
    for i, key in enumerate(keys):
        if i >= limit:
            node.add(Text(f"… {len(keys) - limit} more", style="dim"))
            break
        name = f"[{json.dumps(key, ensure_ascii=False) if isinstance(key, str) else key}]"
        if value_fd.message_type is not None:
            add_message(node.add(_type_label(name, mapping[key])), mapping[key], style)
        else:
            node.add(_label(name, _scalar_text(value_fd, mapping[key], style)))


def _scalar_type_name(fd: FieldDescriptor) -> str:
    if fd.enum_type is not None:
        return fd.enum_type.name
    names = {v: k[5:].lower() for k, v in vars(FieldDescriptor).items() if k.startswith("TYPE_")}
    return names.get(fd.type, "?")


def _item_header(item: Item) -> Text:
    meta = item.meta
    kind = item.kind
    if kind == "bidi_append" or (kind == "raw" and meta.get("of") == "bidi_append"):
        text = Text("BidiAppend", style="bold magenta")
        details = [f"request_id={meta.get('request_id') or '-'}"]
        if "seqno" in meta:
            details.append(f"seqno={meta['seqno']}")
        details.append(f"message={meta.get('size', 0):,} B")
        if "json_kind" in meta:
            details.append(f"json kind={meta['json_kind']}")
        text.append(" " + " ".join(details))
        return text
    if kind == "run_sse_request":
        return Text("RunSSE request", style="bold magenta")
    if "frame" in meta and kind in ("server_message", "client_message", "end_stream", "raw"):
        text = Text(f"frame {meta['frame']}", style="bold magenta")
        if "flags" in meta:
            text.append(f" flags=0x{meta['flags']:02x}")
        if "size" in meta:
            text.append(f" {meta['size']:,} B")
        if meta.get("t") is not None:
            text.append(f" t={meta['t']}ms", style="dim")
        if kind == "end_stream":
            end = meta["end_stream"]
            text.append(" end-stream ")
            text.append(json.dumps(end, ensure_ascii=False), style="green" if not end else "red")
        return text
    if kind == "client_message" and "seqno" in meta:
        text = Text(f"client seqno={meta['seqno']}", style="bold blue")
        text.append(f" {meta.get('size', 0):,} B")
        if meta.get("t") is not None:
            text.append(f" t={meta['t']}ms", style="dim")
        if meta.get("after_frames") is not None:
            text.append(f" after frame {meta['after_frames']}", style="dim")
        return text
    if kind == "error_detail":
        return Text(f"  error detail {meta['type']}", style="bold red")
    if kind in _RECORDING_HEADERS:
        return _RECORDING_HEADERS[kind](meta)
    return Text(kind.replace("_", " "), style="bold magenta")


def _recording_meta(meta: dict[str, Any]) -> Text:
    text = Text("recording", style="bold magenta")
    text.append(
        f" request_id={meta.get('request_id', '-')} recorded_at={meta.get('recorded_at', '-')}"
        f" by cursor-byok {meta.get('cursor_byok', '?')}"
    )
    return text


def _run_meta(meta: dict[str, Any]) -> Text:
    text = Text("run", style="bold magenta")
    text.append(
        f" agent={meta.get('agent', '-')} conversation={meta.get('conversation_id') or '-'}"
        f" model={meta.get('requested_model') or '-'} stored blobs={meta.get('blobs', 0)}"
    )
    config = meta.get("config")
    if isinstance(config, dict) and "error" in config:
        text.append(f" config error: {config['error']}", style="red")
    return text


def _provider_request(meta: dict[str, Any]) -> Text:
    text = Text(f"model call {meta['call']}", style="bold yellow")
    shown = f" request: model={meta.get('model')} messages={meta.get('messages', 0)}"
    if "messages_from" in meta:
        shown += f" (after the previous call's first {meta['messages_from']})"
    if "tools" in meta:
        shown += f" tools={len(meta['tools'])}"
    text.append(shown)
    return text


def _provider_events(meta: dict[str, Any]) -> Text:
    events = meta.get("events") or []
    text = Text(f"model call {meta['call']}", style="bold yellow")
    text.append(f" {len(events)} events: ")
    text.append(events_summary(events))
    return text


def _provider_error(meta: dict[str, Any]) -> Text:
    text = Text(f"model call {meta['call']} failed", style="bold red")
    text.append(
        f" {meta.get('kind', '?')} (HTTP {meta.get('status') or '-'}): {meta.get('message', '')}"
    )
    return text


_RECORDING_HEADERS: dict[str, Callable[[dict[str, Any]], Text]] = {
    "recording_meta": _recording_meta,
    "run_meta": _run_meta,
    "provider_request": _provider_request,
    "provider_events": _provider_events,
    "provider_error": _provider_error,
}


def events_summary(events: list[dict[str, Any]]) -> str:
    """A model call's normalised events in one line: text and thinking joined, tool calls
    named, then usage and how it finished."""
    parts: list[str] = []
    text = reasoning = ""
    for event in events:
        kind = event.get("type")
        if kind == "text":
            text += event.get("text", "")
        elif kind == "reasoning":
            reasoning += event.get("text", "")
        elif kind == "tool_call_end":
            args = json.dumps(event.get("args"), ensure_ascii=False)
            parts.append(f"tool call {event.get('name')} {_clip(args, 120)}")
        elif kind == "usage":
            counts = ", ".join(
                f"{k.removesuffix('_tokens')}={v}"
                for k, v in event.items()
                if k != "type" and isinstance(v, int) and v
            )
            parts.append(f"usage {counts}")
        elif kind == "finish":
            parts.append(f"finish {event.get('reason', '')}".strip())
    if text:
        parts.insert(0, f"text {elide(text, 200)}")
    if reasoning:
        parts.insert(0, f"thinking {elide(reasoning, 120)}")
    return "; ".join(parts) or "-"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def add_raw(tree: Tree, fields: tuple[RawField, ...], style: Style) -> None:
    """A schema-less tree: `#N type = value`, nested where bytes parse as a message."""
    for index, f in enumerate(fields):
        if style.max_items and index >= style.max_items * 5:
            tree.add(Text(f"… {len(fields) - index} more fields", style="dim"))
            break
        kind = WIRE_TYPES.get(f.wire_type, str(f.wire_type))
        if f.children is not None and isinstance(f.value, bytes):
            node = tree.add(Text(f"#{f.number} message ({len(f.value):,} B)", style="yellow"))
            add_raw(node, f.children, style)
        elif isinstance(f.value, bytes):
            tree.add(Text(f"#{f.number} {kind} = {_bytes_text(f.value, style.max_string)}"))
        else:
            tree.add(Text(f"#{f.number} {kind} = {f.value}"))


def render_human(
    capture: DecodedFile,
    console: Console,
    style: Style | None = None,
    *,
    fold_heartbeats: bool = False,
) -> None:
    """Print a capture as summary lines plus one tree per message (`fold_heartbeats`: one line
    per run of heartbeats instead of a tree each, as the traffic window shows a turn)."""
    style = style or Style()
    unwrapped = f" (from {' of '.join(reversed(capture.notes))})" if capture.notes else ""
    console.print(
        Text(
            f"{capture.source}: {capture.kind}{unwrapped}, {len(capture.items)} item(s)",
            style="bold",
        )
    )
    if capture.kind in ("runsse-response", "recording", "run-request"):
        _print_stream_summary(capture, console)
    folded = 0
    for item in capture.items:
        if fold_heartbeats and is_heartbeat(item):
            folded += 1
            continue
        if folded:
            console.print(Text(f"… {folded} heartbeat(s)", style="dim"))
            folded = 0
        console.print(_item_header(item))
        message = item.message
        if item.kind == "raw" and item.raw is not None:
            console.print(Text(f"  ({item.meta.get('note', 'no schema')})", style="yellow"))
            tree = Tree(Text(f"{len(item.raw):,} bytes", style="bold"))
            add_raw(tree, raw_fields(item.raw), style)
            console.print(tree)
            continue
        if message is None:
            if item.kind in ("bidi_append", "client_message"):
                console.print(Text("  (no data: a no-op append)", style="dim"))
            elif item.kind == "error_detail":
                console.print(Text("  (not an aiserver.v1.ErrorDetails)", style="dim"))
            continue
        if isinstance(message, agent_v1_pb2.AgentClientMessage) and message.HasField("run_request"):
            for label, value in run_request_summary(message.run_request, item.meta):
                console.print(Text.assemble(("  " + label + ": ", "bold"), value))
        tree = Tree(Text(message.DESCRIPTOR.full_name, style="bold"))
        add_message(tree, message, style)
        console.print(tree)
    if folded:
        console.print(Text(f"… {folded} heartbeat(s)", style="dim"))


def is_heartbeat(item: Item) -> bool:
    """A heartbeat either way: the client's, or the server's `interaction_update.heartbeat`."""
    message = item.message
    if isinstance(message, agent_v1_pb2.AgentClientMessage):
        return message.WhichOneof("message") == "client_heartbeat"
    if isinstance(message, agent_v1_pb2.AgentServerMessage):
        update = message.interaction_update
        return message.HasField("interaction_update") and update.HasField("heartbeat")
    return False


def _print_stream_summary(capture: DecodedFile, console: Console) -> None:
    for label, kind in (("client messages", "client_message"), ("messages", "server_message")):
        counts: dict[str, int] = {}
        for item in capture.items:
            if item.kind != kind or item.message is None:
                continue
            which = item.message.WhichOneof("message") or "empty"
            if which == "interaction_update":
                inner = item.message.interaction_update.WhichOneof("message")
                which = f"interaction_update.{inner}"
            counts[which] = counts.get(which, 0) + 1
        if counts:
            shown = ", ".join(f"{k} ×{n}" for k, n in counts.items())
            console.print(Text.assemble((f"  {label}: ", "bold"), shown))
    text = "".join(
        item.message.interaction_update.text_delta.text
        for item in capture.items
        if item.kind == "server_message"
        and item.message is not None
        and item.message.interaction_update.HasField("text_delta")
    )
    if text:
        console.print(Text.assemble(("  text: ", "bold"), elide(text, 400)))


def item_json(item: Item) -> dict[str, Any]:
    """One JSON object per message: metadata, the message as protobuf JSON, its unknown fields."""
    out: dict[str, Any] = {"_kind": item.kind}
    out.update({k: v for k, v in item.meta.items()})
    if item.raw is not None:
        out["raw_fields"] = raw_json(raw_fields(item.raw))
    if item.message is not None:
        out["_type"] = item.message.DESCRIPTOR.full_name
        out["message"] = json_format.MessageToDict(item.message, preserving_proto_field_name=True)
        out["_unknown"] = [
            {
                "path": u.path,
                "field": u.number,
                "wire_type": WIRE_TYPES.get(u.wire_type, u.wire_type),
                "value": _unknown_value(u),
            }
            for u in iter_unknown(item.message)
        ]
    return out


def render_json(capture: DecodedFile, write: Callable[[str], Any]) -> None:
    for item in capture.items:
        write(json.dumps(item_json(item), ensure_ascii=False, separators=(",", ":")) + "\n")
