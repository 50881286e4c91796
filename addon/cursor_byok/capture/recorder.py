"""Recording Agent turns as capture files (`cursor_byok_record_dir`, `cursor-byok record`).

One JSON-lines file per request id (the format is in `format.py` and `captures/README.md`).
Lines are written as things happen (append-only, one open-write-close per line) so a crash loses
at most the last line and an idle request id holds no file descriptor: clients that open many
request ids cannot exhaust the proxy's descriptors. Files are 0600 in a 0700 directory: they
hold prompts and file contents.

Secrets (`redact.py`): header values that authenticate are replaced before anything is written,
and token-shaped strings are scrubbed from every header value and from the strings we write
ourselves (provider errors, the end-stream error, config facts). Protobuf payloads and provider
events are kept verbatim: replay needs them byte for byte.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import re
import time
from collections.abc import AsyncGenerator
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any
from typing import cast

from cursor_byok import __version__
from cursor_byok.capture.format import FORMAT
from cursor_byok.capture.format import SUFFIX
from cursor_byok.capture.format import VERSION
from cursor_byok.capture.format import _compact_request
from cursor_byok.capture.format import blob_ids
from cursor_byok.capture.format import client_kind
from cursor_byok.capture.format import error_to_json
from cursor_byok.capture.format import event_to_json
from cursor_byok.capture.format import request_to_json
from cursor_byok.capture.format import server_kind
from cursor_byok.capture.redact import redact_client_message
from cursor_byok.capture.redact import redact_native
from cursor_byok.capture.redact import scrub_end_stream
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.providers import ModelRequest
from cursor_byok.providers import Provider
from cursor_byok.providers import ProviderEvent
from cursor_byok.providers.provider_error import ProviderError
from cursor_byok.secrets import redact_headers
from cursor_byok.secrets import scrub
from cursor_byok.secrets import scrub_json
from cursor_byok.store.files import private_dir

log = logging.getLogger(__name__)

# Per-request transport details: not worth a headers entry on every line.
_UNRECORDED_HEADERS = frozenset({"content-length", "transfer-encoding", "connection"})
FILE_MODE = 0o600
DIR_MODE = 0o700


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def append_line(path: Path, text: str) -> None:
    """Append one line: open, write, close. Created 0600; the descriptor lives for one write."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    try:
        os.write(fd, (text + "\n").encode("utf-8"))
    finally:
        os.close(fd)


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
    facts = {
        "default_model": config.default_model,
        "max_steps": config.max_steps,
        "providers": {name: p.kind for name, p in config.providers.items()},
        "models": models,
    }
    if config.vision_model:  # its description calls are recorded model calls of the turn
        facts["vision_model"] = config.vision_model
    return facts


@dataclass
class _File:
    """One request's capture file and what the next lines are relative to."""

    path: Path
    started: float
    frames: int = 0  # server lines (frames and the end) written so far
    calls: int = 0  # model calls started
    headers: dict[str, str] | None = None
    last_request: dict[str, Any] | None = None
    ran: bool = False  # the run request was seen (and the run meta written)
    ended_at: float | None = None
    broken: bool = False
    written_at: float = 0.0  # clock of the last line


class Recorder:
    """Writes one capture file per request id into `directory` (see the module docstring).

    `agent`, `config_path` and `data_dir` describe the proxy for the run meta line (the addon
    that records keeps them current). Every public method swallows its own failures: recording
    must never break a turn.
    """

    KEEP_ENDED = 300.0  # forget an ended request's counters after this many seconds
    KEEP_IDLE = 3600.0  # …and a request's that never ended (junk ids) after this long idle

    def __init__(
        self,
        directory: Path,
        *,
        agent: str | None = None,
        config_path: Path | None = None,
        data_dir: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
        native: bool = False,
    ) -> None:
        self.directory = Path(directory)
        private_dir(self.directory)
        os.chmod(self.directory, DIR_MODE)  # an existing one too: captures hold prompts
        self.native = native  # also record runs passed through to Cursor (`passthrough_*`)
        self.agent = agent
        self.config_path = config_path
        self.data_dir = data_dir
        self._clock = clock
        self._files: dict[str, _File] = {}
        self._closed = False
        self.paths: list[Path] = []  # every file created, in order

    # --- the hooks the addon calls ------------------------------------------------------

    def client(self, request_id: str, seqno: int, raw: bytes, headers: dict[str, str]) -> None:
        """One BidiAppend, in arrival order (`after_frames` ties it to the server's progress).

        Credential fields Cursor may send (the user's own provider keys in the run request's
        model) are redacted; the server never reads them, so replay is unaffected."""
        self._client(request_id, seqno, redact_client_message(raw), headers)

    def passthrough_client(
        self, request_id: str, seqno: int, raw: bytes, headers: dict[str, str]
    ) -> None:
        """A BidiAppend of a run passed through to Cursor's backend (only when `native`):
        recorded like ours, with token-shaped strings scrubbed inside the protobuf too."""
        if self.native:
            self._client(request_id, seqno, redact_native(raw, client=True), headers, "cursor")

    def passthrough_server(self, request_id: str, payload: bytes, end_stream: bool) -> None:
        """A frame of Cursor's backend for a passed-through run (only when `native`)."""
        if self.native:
            self.server(
                request_id,
                payload if end_stream else redact_native(payload, client=False),
                end_stream,
            )

    def _client(
        self,
        request_id: str,
        seqno: int,
        raw: bytes,
        headers: dict[str, str],
        agent: str | None = None,
    ) -> None:
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
                self._write(file, self._run_meta(raw, agent))
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
        except Exception:
            log.exception("capture: cannot record a server frame of %s", request_id)

    def wrap_provider(self, provider: Provider, request_id: str) -> Provider:
        """The turn's provider, with every model call and its events recorded."""
        return _RecordingProvider(provider, self, request_id)

    def close(self) -> None:
        """Stop recording; later calls (turns still winding down) are ignored."""
        self._closed = True
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
        file.written_at = self._clock()
        line = {"t": int((file.written_at - file.started) * 1000), **record}
        text = json.dumps(line, ensure_ascii=False, separators=(",", ":"), default=repr)
        try:
            append_line(file.path, text)
        except OSError as exc:
            file.broken = True
            log.warning("capture: cannot write %s: %s; recording of it stops", file.path, exc)

    def _forget_old(self) -> None:
        now = self._clock()
        for request_id, file in list(self._files.items()):
            ended = file.ended_at is not None and now - file.ended_at > self.KEEP_ENDED
            if ended or now - file.written_at > self.KEEP_IDLE:
                del self._files[request_id]

    def _run_meta(self, raw: bytes, agent: str | None = None) -> dict[str, Any]:
        """Agent, config facts and the stored blobs the run request refers to: what replay
        needs to run this turn the same way without the proxy's data directory. `agent` is
        "cursor" for a run Cursor's backend served (no config, no blobs of ours)."""
        run = pb.AgentClientMessage.FromString(raw).run_request
        if agent == "cursor":
            return {
                "type": "meta",
                "agent": agent,
                "conversation_id": run.conversation_id,
                "requested_model": run.requested_model.model_id or run.model_details.model_id,
            }
        agent = self.agent
        meta: dict[str, Any] = {
            "type": "meta",
            "agent": agent,
            "conversation_id": run.conversation_id,
            "requested_model": run.requested_model.model_id or run.model_details.model_id,
        }
        config_path = self.config_path
        if agent == "provider" and config_path:
            meta["config"] = config_facts(Path(config_path).expanduser())
        data_dir = self.data_dir
        if data_dir:
            meta["blobs"] = self._stored_blobs(Path(data_dir).expanduser() / "blobs", run)
        return meta

    @staticmethod
    def _stored_blobs(root: Path, run: pb.AgentRunRequest) -> dict[str, str]:
        if not root.is_dir():
            return {}
        from cursor_byok.store.blobs import BlobStore

        store = BlobStore(root)
        out = {}
        for ident in sorted(blob_ids(run)):
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

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ProviderEvent]:
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
