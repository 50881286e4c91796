"""The capture file format (`captures/README.md`): provider values as JSON, message kinds, and
reading a file back as a `RecordedTurn`.

One JSON-lines file per request id: a request id is one turn of the protocol (one RunSSE stream,
one append_seqno space, exec/KV ids counting from 1), so a file replays on its own.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import ClassVar

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError
from google.protobuf.message import Message

from cursor_byok.capture.redact import submessages
from cursor_byok.errors import ByokError
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.providers import Finish
from cursor_byok.providers import ModelRequest
from cursor_byok.providers import ProviderEvent
from cursor_byok.providers import ReasoningDelta
from cursor_byok.providers import TextDelta
from cursor_byok.providers import ToolCallArgsDelta
from cursor_byok.providers import ToolCallEnd
from cursor_byok.providers import ToolCallStart
from cursor_byok.providers import ToolSpec
from cursor_byok.providers import Usage
from cursor_byok.providers import event_fields
from cursor_byok.providers.provider_error import ProviderError
from cursor_byok.secrets import scrub

FORMAT = "cursor-byok-capture"
VERSION = 1
SUFFIX = ".jsonl"

# --- provider values as JSON ------------------------------------------------------------------

_EVENT_TYPES: dict[type, str] = {
    TextDelta: "text",
    ReasoningDelta: "reasoning",
    ToolCallStart: "tool_call_start",
    ToolCallArgsDelta: "tool_call_args",
    ToolCallEnd: "tool_call_end",
    Usage: "usage",
    Finish: "finish",
}
_EVENT_CLASSES = {name: cls for cls, name in _EVENT_TYPES.items()}


def event_to_json(event: ProviderEvent) -> dict[str, Any]:
    """One normalised provider event as a JSON object tagged by `type`."""
    return {"type": _EVENT_TYPES[type(event)], **event_fields(event)}


def event_from_json(data: dict[str, Any]) -> ProviderEvent:
    fields = dict(data)
    cls = _EVENT_CLASSES.get(fields.pop("type", None))
    if cls is None:
        raise CaptureError(f"unknown provider event type {data.get('type')!r}")
    try:
        return cls(**fields)
    except TypeError as exc:
        raise CaptureError(f"bad provider event {data!r}: {exc}") from None


def request_to_json(request: ModelRequest) -> dict[str, Any]:
    return {
        "model": request.model,
        "system": request.system,
        "messages": request.messages,
        "tools": [dataclasses.asdict(t) for t in request.tools],
        "max_output_tokens": request.max_output_tokens,
        "params": request.params,
        "cache_key": request.cache_key,
        "reasoning": request.reasoning,
    }


def request_from_json(data: dict[str, Any]) -> ModelRequest:
    try:
        return ModelRequest(
            model=data["model"],
            system=data.get("system", ""),
            messages=list(data.get("messages", [])),
            tools=[ToolSpec(**t) for t in data.get("tools", [])],
            max_output_tokens=data.get("max_output_tokens"),
            params=dict(data.get("params") or {}),
            cache_key=data.get("cache_key"),
            reasoning=bool(data.get("reasoning", False)),
        )
    except (KeyError, TypeError) as exc:
        raise CaptureError(f"bad provider request: {exc}") from None


def error_to_json(error: ProviderError) -> dict[str, Any]:
    return {
        "kind": error.kind,
        "status": error.status,
        "message": scrub(error.message),
        "retryable": error.retryable,
        "retry_after": error.retry_after,
        "provider": scrub(error.provider),
        "code": scrub(error.reason) if error.reason else error.reason,  # the file's key
    }


def error_from_json(data: dict[str, Any]) -> ProviderError:
    return ProviderError(
        str(data.get("kind", "other")),
        str(data.get("message", "")),
        status=data.get("status"),
        retryable=data.get("retryable"),
        retry_after=data.get("retry_after"),
        provider=str(data.get("provider") or ""),
        reason=data.get("code"),
    )


def _compact_request(current: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
    """Leave out what the previous call of the turn already had: system and tools when equal,
    the messages it already sent (`messages_from`). Each call repeats the whole history and the
    tool schemas (~10 KB), so this keeps captures small."""
    out = dict(current)
    if previous is None:
        return out
    for key in ("system", "tools"):
        if current[key] == previous[key]:
            del out[key]
    before = previous["messages"]
    if current["messages"][: len(before)] == before:
        out["messages_from"] = len(before)
        out["messages"] = current["messages"][len(before) :]
    return out


def _expand_request(compact: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
    full = dict(compact)
    start = full.pop("messages_from", 0)
    for key in ("system", "tools"):
        if key not in full:
            if previous is None:
                raise CaptureError(f"the first provider request has no {key}")
            full[key] = previous[key]
    if start:
        if previous is None or len(previous["messages"]) < start:
            raise CaptureError("messages_from points past the previous provider request")
        full["messages"] = previous["messages"][:start] + list(full.get("messages", []))
    return full


# --- recording -------------------------------------------------------------------------------


# --- message kinds ---------------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def client_kind(raw: bytes) -> str:
    """A readable name for a client message (`run_request`, `exec_client_message.read_result`)."""
    if not raw:
        return "empty"
    try:
        message = pb.AgentClientMessage.FromString(raw)
    except DecodeError:
        return "?"
    kind = message.WhichOneof("message")
    if kind is None or kind == "run_request":
        return kind or "?"
    sub = _oneof(getattr(message, kind))
    return f"{kind}.{sub}" if sub else kind


def server_kind(payload: bytes) -> str:
    """A readable name for a server frame (`interaction_update.text_delta`, …)."""
    try:
        message = pb.AgentServerMessage.FromString(payload)
    except DecodeError:
        return "?"
    kind = message.WhichOneof("message") or "?"
    sub = _oneof(getattr(message, kind, None)) if kind != "?" else None
    return f"{kind}.{sub}" if sub else kind


def _oneof(message: Message | None) -> str | None:
    if message is None:
        return None
    for oneof in message.DESCRIPTOR.oneofs:
        if oneof.name.startswith("_"):  # proto3 `optional` (a synthetic oneof), not a union
            continue
        which = message.WhichOneof(oneof.name)
        if which:
            return which
    return None


def blob_ids(message: Message) -> set[bytes]:
    """Every 32-byte bytes value in a message tree: the candidates for blob ids it refers to."""
    found: set[bytes] = set()
    for fd, value in message.ListFields():
        if fd.type == FieldDescriptor.TYPE_BYTES:
            for item in value if fd.is_repeated else [value]:
                if len(item) == 32:
                    found.add(bytes(item))
        else:
            for item in submessages(value) if fd.type == FieldDescriptor.TYPE_MESSAGE else []:
                found |= blob_ids(item)
    return found


class CaptureError(ByokError, ValueError):
    """A file that is not a usable capture, or that cannot be read or decoded; the message is
    shown to the user as one line (replay and decode exit with 2)."""


@dataclass
class ClientLine:
    seqno: int
    raw: bytes
    after_frames: int  # server lines recorded before this message arrived
    kind: str = ""


@dataclass
class ModelCall:
    request: ModelRequest
    events: list[ProviderEvent] = field(default_factory=list)
    error: dict[str, Any] | None = None

    @property
    def finished(self) -> bool:
        return any(isinstance(e, Finish) for e in self.events)


@dataclass
class RecordedTurn:
    """One recorded turn."""

    request_id: str
    meta: dict[str, Any]
    client: list[ClientLine] = field(default_factory=list)
    server: list[bytes] = field(default_factory=list)
    end: dict[str, Any] | None = None
    calls: list[ModelCall] = field(default_factory=list)
    path: Path | None = None

    @property
    def name(self) -> str:
        return self.path.name if self.path else self.request_id

    @property
    def agent(self) -> str:
        """The recorded agent; guessed from the lines for captures without the run meta."""
        agent = self.meta.get("agent")
        if agent:
            return str(agent)
        return "provider" if self.calls or "config" in self.meta else "scripted"

    @property
    def blobs(self) -> dict[bytes, bytes]:
        out = {}
        for ident, data in (self.meta.get("blobs") or {}).items():
            out[bytes.fromhex(ident)] = base64.b64decode(data)
        return out


def parse_capture(lines: Iterable[str], path: Path | None = None) -> RecordedTurn:
    """Read capture lines (see captures/README.md); CaptureError says what is wrong where."""
    where = str(path) if path else "capture"
    reader = _CaptureReader(path)
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except ValueError as exc:
            raise CaptureError(f"{where}:{number}: not JSON: {exc}") from None
        if not isinstance(line, dict) or "type" not in line:
            raise CaptureError(f"{where}:{number}: a line must be an object with a type")
        kind = line["type"]
        try:
            reader.add(kind, line)
        except CaptureError as exc:
            raise CaptureError(f"{where}:{number}: {exc}") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise CaptureError(f"{where}:{number}: bad {kind} line: {exc!r}") from None
    if reader.capture is None:
        raise CaptureError(f"{where}: empty file")
    if not any(c.kind == "run_request" for c in reader.capture.client):
        raise CaptureError(f"{where}: no run request was recorded; nothing to replay")
    return reader.capture


class _CaptureReader:
    """A capture as its lines are read: the first must be the format meta, then one method per
    line type; unknown line types are skipped (later versions may add informational lines)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.capture: RecordedTurn | None = None
        self.previous: dict[str, Any] | None = None  # the last full request (deltas build on it)

    def add(self, kind: Any, line: dict[str, Any]) -> None:
        if self.capture is None:
            if kind != "meta" or line.get("format") != FORMAT:
                raise CaptureError(f"not a {FORMAT} file (the first line is no format meta)")
            if line.get("version") != VERSION:
                raise CaptureError(f"capture format version {line.get('version')!r}")
            self.capture = RecordedTurn(str(line["request_id"]), {}, path=self.path)
        read = self._LINES.get(kind) if isinstance(kind, str) else None
        if read is not None:
            read(self, self.capture, line)

    def _meta(self, capture: RecordedTurn, line: dict[str, Any]) -> None:
        capture.meta.update({k: v for k, v in line.items() if k not in ("t", "type")})

    def _client(self, capture: RecordedTurn, line: dict[str, Any]) -> None:
        raw = base64.b64decode(line["raw"])
        capture.client.append(
            ClientLine(int(line["seqno"]), raw, int(line["after_frames"]), client_kind(raw))
        )

    def _server(self, capture: RecordedTurn, line: dict[str, Any]) -> None:
        capture.server.append(base64.b64decode(line["raw"]))

    def _end(self, capture: RecordedTurn, line: dict[str, Any]) -> None:
        capture.end = dict(line["end"])

    def _provider_request(self, capture: RecordedTurn, line: dict[str, Any]) -> None:
        full = _expand_request(line["request"], self.previous)
        self.previous = full
        capture.calls.append(ModelCall(request_from_json(full)))

    def _provider_event(self, capture: RecordedTurn, line: dict[str, Any]) -> None:
        """A `provider_event` or `provider_error` line, of a call whose request came before."""
        kind = line["type"]
        index = int(line["call"]) - 1
        if not 0 <= index < len(capture.calls):
            raise CaptureError(f"{kind} for call {line['call']} before its request")
        if kind == "provider_event":
            capture.calls[index].events.append(event_from_json(line["event"]))
        else:
            capture.calls[index].error = dict(line["error"])

    _LINES: ClassVar[dict[str, Callable[[_CaptureReader, RecordedTurn, dict[str, Any]], None]]] = {
        "meta": _meta,
        "client": _client,
        "server": _server,
        "end": _end,
        "provider_request": _provider_request,
        "provider_event": _provider_event,
        "provider_error": _provider_event,
    }


def load_capture(path: Path) -> RecordedTurn:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CaptureError(f"{path}: cannot read: {exc}") from None
    return parse_capture(text.splitlines(), Path(path))


def capture_files(paths: Iterable[Path]) -> list[Path]:
    """Files to replay: the files given, and every *.jsonl in the directories given (sorted)."""
    out: list[Path] = []
    for path in paths:
        path = Path(path)
        if path.is_dir():
            found = sorted(path.glob(f"*{SUFFIX}"))
            if not found:
                raise CaptureError(f"{path}: no *{SUFFIX} capture files in this directory")
            out += found
        elif path.exists():
            out.append(path)
        else:
            raise CaptureError(f"{path}: no such file or directory")
    return out
