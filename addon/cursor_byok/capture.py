"""Recording Agent turns as capture files, and reading them back (`cursor-byok replay`).

One JSON-lines file per request id: a request id is one turn of the protocol (one RunSSE stream,
one append_seqno space, exec/KV ids counting from 1), so a file replays on its own. Lines are
written as things happen (append-only, flushed per line) so a crash loses at most the last line.
The format is documented in `captures/README.md`.

Secrets: header values that authenticate (Authorization, Cookie, Cursor's checksum/client key/
session id, anything whose name says key/token/secret) are replaced before anything is written,
and token-shaped strings (Bearer …, sk-…, JWTs, …) are scrubbed from every header value and from
the strings we write ourselves (provider errors, the end-stream error, config facts). Protobuf
payloads and provider events are kept verbatim: replay needs them byte for byte.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import logging
import re
import time
from collections.abc import AsyncGenerator
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import MutableMapping
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any
from typing import TextIO
from typing import cast

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError
from google.protobuf.message import Message

from cursor_byok import __version__
from cursor_byok.errors import ByokError
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.providers.base import Finish
from cursor_byok.providers.base import ModelRequest
from cursor_byok.providers.base import Provider
from cursor_byok.providers.base import ProviderError
from cursor_byok.providers.base import ProviderEvent
from cursor_byok.providers.base import ReasoningDelta
from cursor_byok.providers.base import TextDelta
from cursor_byok.providers.base import ToolCallArgsDelta
from cursor_byok.providers.base import ToolCallEnd
from cursor_byok.providers.base import ToolCallStart
from cursor_byok.providers.base import ToolSpec
from cursor_byok.providers.base import Usage

log = logging.getLogger(__name__)

FORMAT = "cursor-byok-capture"
VERSION = 1
SUFFIX = ".jsonl"
REDACTED = "<redacted>"

# --- redaction ------------------------------------------------------------------------------

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
# Per-request transport details: not worth a headers entry on every line.
_UNRECORDED_HEADERS = frozenset({"content-length", "transfer-encoding", "connection"})
# …and any header whose name says it carries one.
_SECRET_NAME_WORDS = ("auth", "token", "secret", "key", "cookie", "session", "password", "checksum")

# Token shapes, redacted wherever they appear. Prefixes are the vendors' documented key formats:
# OpenAI/Anthropic `sk-…`, Google `AIza…`, GitHub `ghp_…`/`gho_…`/…, Slack `xox?-…`, AWS
# `AKIA…`; JWTs start with `eyJ` (base64url of `{"`).
_SCHEME = re.compile(r"(?i)\b(bearer|basic|token)(\s+)[A-Za-z0-9._~+/=\-]{6,}")
_TOKENS = re.compile(
    r"\bsk-[A-Za-z0-9_\-]{8,}"
    r"|\beyJ[A-Za-z0-9_\-]*\.[A-Za-z0-9_.\-]+"
    r"|\bAIza[0-9A-Za-z_\-]{20,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{16,}"
    r"|\bxox[abprs]-[A-Za-z0-9\-]{10,}"
    r"|\bAKIA[0-9A-Z]{16}\b"
)


def scrub(text: str) -> str:
    """Replace every token-shaped substring; idempotent, so scrubbed text scrubs to itself."""
    text = _SCHEME.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    return _TOKENS.sub(REDACTED, text)


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


def redact_headers(headers: dict[str, str]) -> dict[str, str]:
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
    return {"type": _EVENT_TYPES[type(event)], **dataclasses.asdict(event)}


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
        "code": scrub(error.code) if error.code else error.code,
    }


def error_from_json(data: dict[str, Any]) -> ProviderError:
    return ProviderError(
        str(data.get("kind", "other")),
        str(data.get("message", "")),
        status=data.get("status"),
        retryable=data.get("retryable"),
        retry_after=data.get("retry_after"),
        provider=str(data.get("provider") or ""),
        code=data.get("code"),
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


def _blob_ids(message: Message) -> set[bytes]:
    """Every 32-byte bytes value in a message tree: the candidates for blob ids it refers to."""
    found: set[bytes] = set()
    for fd, value in message.ListFields():
        if fd.type == FieldDescriptor.TYPE_BYTES:
            for item in value if fd.is_repeated else [value]:
                if len(item) == 32:
                    found.add(bytes(item))
        else:
            for item in submessages(value) if fd.type == FieldDescriptor.TYPE_MESSAGE else []:
                found |= _blob_ids(item)
    return found


def _mitmproxy_option(name: str) -> Any:
    """An option of the running mitmproxy, or None outside one (unit tests, replay)."""
    try:
        from mitmproxy import ctx

        return getattr(ctx.options, name)
    except Exception:
        return None


def config_facts(config_path: Path) -> dict[str, Any]:
    """What replay needs of the config to route and run the turn the same way; no provider
    URLs, headers or key settings."""
    from cursor_byok.config import ConfigError
    from cursor_byok.config import ConfigSource

    try:
        config = ConfigSource(config_path).get()
    except ConfigError as exc:
        return {"error": scrub(str(exc))}
    models = []
    for model in config.models:
        models.append(
            {
                "name": model.name,
                "provider": model.provider,
                "model": model.model,
                "context_window": model.context_window,
                "max_output_tokens": model.max_output_tokens,
                "supports_images": model.supports_images,
                "supports_thinking": model.supports_thinking,
                "thinking": model.thinking,
                "params": scrub_json(model.params),
            }
        )
    return {
        "default_model": config.default_model,
        "max_steps": config.max_steps,
        "providers": {name: p.kind for name, p in config.providers.items()},
        "models": models,
    }


@dataclass
class _File:
    """One request's capture file and what the next lines are relative to."""

    path: Path
    started: float
    handle: TextIO | None = None
    frames: int = 0  # server lines (frames and the end) written so far
    calls: int = 0  # model calls started
    headers: dict[str, str] | None = None
    last_request: dict[str, Any] | None = None
    ran: bool = False  # the run request was seen (and the run meta written)
    ended_at: float | None = None
    broken: bool = False


class Recorder:
    """Writes one capture file per request id into `directory` (see the module docstring).

    `agent`, `config_path` and `data_dir` describe the proxy for the run meta line; left None
    they are read from the running mitmproxy's options when a run request arrives. Every public
    method swallows its own failures: recording must never break a turn.
    """

    KEEP_ENDED = 300.0  # forget an ended request's counters after this many seconds

    def __init__(
        self,
        directory: Path,
        *,
        agent: str | None = None,
        config_path: Path | None = None,
        data_dir: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._agent = agent
        self._config_path = config_path
        self._data_dir = data_dir
        self._clock = clock
        self._files: dict[str, _File] = {}
        self._closed = False
        self.paths: list[Path] = []  # every file created, in order

    # --- the hooks the addon calls ------------------------------------------------------

    def client(self, request_id: str, seqno: int, raw: bytes, headers: dict[str, str]) -> None:
        """One BidiAppend, in arrival order (`after_frames` ties it to the server's progress)."""
        try:
            file = self._file(request_id)
            kind = client_kind(raw)
            record: dict[str, Any] = {
                "type": "client",
                "seqno": seqno,
                "after_frames": file.frames,
                "kind": kind,
                "raw": _b64(raw),
            }
            redacted = redact_headers(
                {k: v for k, v in headers.items() if k.lower() not in _UNRECORDED_HEADERS}
            )
            if redacted != file.headers:
                record["headers"] = file.headers = redacted
            self._write(file, record)
            if kind == "run_request" and not file.ran:
                file.ran = True
                self._write(file, self._run_meta(raw))
        except Exception:
            log.exception("capture: cannot record a client message of %s", request_id)

    def server(self, request_id: str, payload: bytes, end_stream: bool) -> None:
        """One server frame in stream order; the end-stream closes the file."""
        try:
            file = self._file(request_id)
            if end_stream:
                record = {"type": "end", "end": scrub_end_stream(payload)}
            else:
                record = {"type": "server", "kind": server_kind(payload), "raw": _b64(payload)}
            file.frames += 1
            self._write(file, record)
            if end_stream:
                file.ended_at = self._clock()
                self._close(file)
        except Exception:
            log.exception("capture: cannot record a server frame of %s", request_id)

    def wrap_provider(self, provider: Provider, request_id: str) -> Provider:
        """The turn's provider, with every model call and its events recorded."""
        return _RecordingProvider(provider, self, request_id)

    def close(self) -> None:
        """Close every file; later calls (turns still winding down) are ignored."""
        self._closed = True
        for file in self._files.values():
            self._close(file)
        self._files.clear()

    # --- model calls -----------------------------------------------------------------------

    def _model_request(self, request_id: str, request: ModelRequest) -> int:
        try:
            file = self._file(request_id)
            file.calls += 1
            current = request_to_json(request)
            compact = _compact_request(current, file.last_request)
            file.last_request = current
            self._write(file, {"type": "provider_request", "call": file.calls, "request": compact})
            return file.calls
        except Exception:
            log.exception("capture: cannot record a model request of %s", request_id)
            return 0

    def _model_event(self, request_id: str, call: int, event: ProviderEvent) -> None:
        try:
            record = {"type": "provider_event", "call": call, "event": event_to_json(event)}
            self._write(self._file(request_id), record)
        except Exception:
            log.exception("capture: cannot record a provider event of %s", request_id)

    def _model_error(self, request_id: str, call: int, error: ProviderError) -> None:
        try:
            record = {"type": "provider_error", "call": call, "error": error_to_json(error)}
            self._write(self._file(request_id), record)
        except Exception:
            log.exception("capture: cannot record a provider error of %s", request_id)

    # --- files -----------------------------------------------------------------------------

    def _file(self, request_id: str) -> _File:
        file = self._files.get(request_id)
        if file is not None:
            return file
        if self._closed:
            return _File(self.directory / "closed", started=0.0, broken=True)
        self._forget_old()
        now = datetime.now(UTC)
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", request_id)[:80] or "request"
        # UTC with milliseconds first, so names sort in recording order.
        stamp = f"{now:%Y%m%d-%H%M%S}.{now.microsecond // 1000:03d}"
        path = self.directory / f"{stamp}-{safe}{SUFFIX}"
        file = _File(path, started=self._clock())
        self._files[request_id] = file
        self.paths.append(path)
        meta = {
            "type": "meta",
            "format": FORMAT,
            "version": VERSION,
            "request_id": request_id,
            "recorded_at": now.isoformat(timespec="seconds").replace("+00:00", "Z"),
            "cursor_byok": __version__,
        }
        self._write(file, meta)
        return file

    def _write(self, file: _File, record: dict[str, Any]) -> None:
        if file.broken or self._closed:
            return
        line = {"t": int((self._clock() - file.started) * 1000), **record}
        text = json.dumps(line, ensure_ascii=False, separators=(",", ":"), default=repr)
        try:
            if file.handle is None:
                file.handle = file.path.open("a", encoding="utf-8")
            file.handle.write(text + "\n")
            file.handle.flush()
        except OSError as exc:
            file.broken = True
            log.warning("capture: cannot write %s: %s; recording of it stops", file.path, exc)

    def _close(self, file: _File) -> None:
        if file.handle is not None:
            with contextlib.suppress(OSError):
                file.handle.close()
            file.handle = None

    def _forget_old(self) -> None:
        now = self._clock()
        for request_id, file in list(self._files.items()):
            if file.ended_at is not None and now - file.ended_at > self.KEEP_ENDED:
                self._close(file)
                del self._files[request_id]

    def _run_meta(self, raw: bytes) -> dict[str, Any]:
        """Agent, config facts and the stored blobs the run request refers to: what replay
        needs to run this turn the same way without the proxy's data directory."""
        run = pb.AgentClientMessage.FromString(raw).run_request
        agent = self._agent or _mitmproxy_option("cursor_byok_agent")
        meta: dict[str, Any] = {
            "type": "meta",
            "agent": agent,
            "conversation_id": run.conversation_id,
            "requested_model": run.requested_model.model_id or run.model_details.model_id,
        }
        config_path = self._config_path or _mitmproxy_option("cursor_byok_config")
        if agent == "provider" and config_path:
            meta["config"] = config_facts(Path(config_path).expanduser())
        data_dir = self._data_dir or _mitmproxy_option("cursor_byok_data_dir")
        if data_dir:
            meta["blobs"] = self._stored_blobs(Path(data_dir).expanduser() / "blobs", run)
        return meta

    @staticmethod
    def _stored_blobs(root: Path, run: pb.AgentRunRequest) -> dict[str, str]:
        if not root.is_dir():
            return {}
        from cursor_byok.blobs import BlobStore

        store = BlobStore(root)
        out = {}
        for ident in sorted(_blob_ids(run)):
            data = store.get(ident)
            if data is not None:
                out[ident.hex()] = _b64(data)
        return out


class _RecordingProvider:
    """A provider that records each call (request, events, error) of the provider it wraps."""

    def __init__(self, inner: Provider, recorder: Recorder, request_id: str) -> None:
        self._inner = inner
        self._recorder = recorder
        self._request_id = request_id

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        call = self._recorder._model_request(self._request_id, request)
        try:
            # Providers' streams are async generators (the Protocol says AsyncIterator).
            inner = cast(AsyncGenerator[ProviderEvent, None], self._inner.stream(request))
            async with contextlib.aclosing(inner) as events:
                async for event in events:
                    self._recorder._model_event(self._request_id, call, event)
                    yield event
        except ProviderError as exc:
            self._recorder._model_error(self._request_id, call, exc)
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()


# --- reading -----------------------------------------------------------------------------------


class CaptureError(ByokError, ValueError):
    """A file that is not a usable capture (replay exits with 2)."""


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
class Capture:
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


def parse_capture(lines: Iterable[str], path: Path | None = None) -> Capture:
    """Read capture lines (see captures/README.md); CaptureError says what is wrong where."""
    where = str(path) if path else "capture"
    capture: Capture | None = None
    previous: dict[str, Any] | None = None
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
            if capture is None:
                if kind != "meta" or line.get("format") != FORMAT:
                    raise CaptureError(f"not a {FORMAT} file (the first line is no format meta)")
                if line.get("version") != VERSION:
                    raise CaptureError(f"capture format version {line.get('version')!r}")
                capture = Capture(str(line["request_id"]), {}, path=path)
            if kind == "meta":
                capture.meta.update({k: v for k, v in line.items() if k not in ("t", "type")})
            elif kind == "client":
                raw = base64.b64decode(line["raw"])
                capture.client.append(
                    ClientLine(int(line["seqno"]), raw, int(line["after_frames"]), client_kind(raw))
                )
            elif kind == "server":
                capture.server.append(base64.b64decode(line["raw"]))
            elif kind == "end":
                capture.end = dict(line["end"])
            elif kind == "provider_request":
                full = _expand_request(line["request"], previous)
                previous = full
                capture.calls.append(ModelCall(request_from_json(full)))
            elif kind in ("provider_event", "provider_error"):
                index = int(line["call"]) - 1
                if not 0 <= index < len(capture.calls):
                    raise CaptureError(f"{kind} for call {line['call']} before its request")
                if kind == "provider_event":
                    capture.calls[index].events.append(event_from_json(line["event"]))
                else:
                    capture.calls[index].error = dict(line["error"])
            # Unknown line types are skipped: later versions may add informational lines.
        except CaptureError as exc:
            raise CaptureError(f"{where}:{number}: {exc}") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise CaptureError(f"{where}:{number}: bad {kind} line: {exc!r}") from None
    if capture is None:
        raise CaptureError(f"{where}: empty file")
    if not any(c.kind == "run_request" for c in capture.client):
        raise CaptureError(f"{where}: no run request was recorded; nothing to replay")
    return capture


def load_capture(path: Path) -> Capture:
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
