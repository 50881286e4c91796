"""Replaying one capture through the proxy, offline: the in-process proxy, the provider that
answers from the capture, and the client that plays Cursor's part.

Each capture gets a fresh in-process mitmproxy (reverse mode on 127.0.0.1, port 0, lazy connections,
nothing upstream) whose addons (`proxy.compose`) run the recorded agent: the scripted agent,
or the real provider loop with a provider that answers each model call with the recorded normalised
events. A small client then plays Cursor's part from the file: it opens RunSSE and sends every
recorded BidiAppend, byte for byte with its seqno, in recorded order. An answer (exec result, KV
result, interaction response) is sent once the replayed server has asked for it by id (exec and KV
ids are counters from 1 in each turn, and the server's frames do not depend on the clock, so they
line up); everything is also held back until as many frames are in as when the original arrived, so
the recorded interleaving is kept where the stream allows it (`_due`).

Frames are compared (`frames.py`) after clearing what legitimately differs between runs
(`VOLATILE_FIELDS`: uuids, wall-clock times, durations) and pairing blob ids by content, since a
blob whose bytes hold a timestamp (todos) gets another id. Everything else must be equal, frame by
frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import tempfile
import warnings
from collections.abc import AsyncGenerator
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from cursor_byok.agent.turn import Turn
from cursor_byok.capture.format import CaptureError
from cursor_byok.capture.format import ClientLine
from cursor_byok.capture.format import ModelCall
from cursor_byok.capture.format import RecordedTurn
from cursor_byok.capture.format import capture_files
from cursor_byok.capture.format import error_from_json
from cursor_byok.capture.format import load_capture
from cursor_byok.capture.format import request_to_json
from cursor_byok.capture.redact import scrub_end_stream
from cursor_byok.errors import ByokError
from cursor_byok.providers import ModelRequest
from cursor_byok.providers import ProviderEvent
from cursor_byok.providers.provider_error import ProviderError
from cursor_byok.wire import connect
from cursor_byok.wire.bidi import encode_bidi_append
from cursor_byok.wire.bidi import encode_run_sse_request

if TYPE_CHECKING:
    from cursor_byok.config import Config
    from cursor_byok.outbound import Response
from cursor_byok.replay.frames import BIDI_APPEND
from cursor_byok.replay.frames import RUN_SSE
from cursor_byok.replay.frames import Divergence
from cursor_byok.replay.frames import answers
from cursor_byok.replay.frames import compare
from cursor_byok.replay.frames import parse_frame
from cursor_byok.replay.frames import requests_in

log = logging.getLogger(__name__)


class ReplayProvider:
    """Answers the k-th model call with the k-th recorded call: its events, then its error.

    A recorded call with neither a Finish nor an error was cut short (the turn was cancelled),
    so it waits here until the replayed turn is cancelled the same way.
    """

    def __init__(self, calls: list[ModelCall]) -> None:
        self.calls = calls
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ProviderEvent]:
        index = len(self.requests)
        self.requests.append(request)
        if index >= len(self.calls):
            raise ProviderError(
                "invalid_request",
                f"replay: the capture has {len(self.calls)} model call(s); the replayed turn "
                f"made call {index + 1}",
                retryable=False,
                provider="replay",
            )
        call = self.calls[index]
        for event in call.events:
            await asyncio.sleep(0)  # let the loop interleave as it did while streaming
            yield event
        if call.error is not None:
            raise error_from_json(call.error)
        if not call.finished:
            await asyncio.Event().wait()

    async def aclose(self) -> None:
        return None


class _NoProvider:
    """Stands in for the configured provider, which replay never calls."""

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ProviderEvent]:
        raise ProviderError("other", "replay: no provider", retryable=False)
        yield  # pragma: no cover - makes this an async generator

    async def aclose(self) -> None:
        return None


def replay_config(capture: RecordedTurn) -> Config:
    """The recorded config facts as a Config (providers never contacted), or a guess."""
    from cursor_byok.config import Config
    from cursor_byok.config import ModelConfig
    from cursor_byok.config import ProviderConfig

    facts = capture.meta.get("config")
    if not isinstance(facts, dict) or not facts.get("models"):
        # Recorded without the config: one model, named as the run asked, no step limit hit.
        first = capture.calls[0].request if capture.calls else None
        name = str(capture.meta.get("requested_model") or "replay")
        model = ModelConfig(
            name=name,
            provider="replay",
            model=first.model if first else name,
            thinking=bool(first and first.reasoning),
        )
        facts = {"providers": {"replay": "openai-chat"}, "max_steps": 1000}
        models = [model]
    else:
        known = {f.name for f in dataclasses.fields(ModelConfig)}
        models = [
            ModelConfig(**{k: v for k, v in m.items() if k in known}) for m in facts["models"]
        ]
    kinds = dict(facts.get("providers") or {})
    for model in models:
        kinds.setdefault(model.provider, "openai-chat")  # never contacted: any kind will do
    providers = {
        name: ProviderConfig(name=name, kind=kind, base_url="http://127.0.0.1:9")
        for name, kind in kinds.items()
    }
    default = facts.get("default_model") or models[0].name
    vision = facts.get("vision_model") if isinstance(facts.get("vision_model"), str) else None
    return Config(providers, models, default, int(facts.get("max_steps", 50)), vision_model=vision)


class ReplayAgent:
    """The agent the capture was recorded with, fed from the capture."""

    def __init__(self, capture: RecordedTurn) -> None:
        self.capture = capture
        self.provider = ReplayProvider(capture.calls)

    async def run(self, turn: Turn) -> None:
        if self.capture.agent == "scripted":
            from cursor_byok.agent.scripted import ScriptedAgent

            await ScriptedAgent().run(turn)
            return
        from cursor_byok.agent.loop import CUSTOM_MESSAGE
        from cursor_byok.agent.loop import ProviderAgent
        from cursor_byok.agent.turn import TurnError

        facts = self.capture.meta.get("config")
        if isinstance(facts, dict) and "error" in facts:
            raise TurnError(
                "failed_precondition",
                str(facts["error"]),
                title="cursor-byok configuration",
                error=CUSTOM_MESSAGE,
            )
        agent = ProviderAgent(
            replay_config(self.capture),
            provider_factory=lambda model: _NoProvider(),
            wrap_provider=lambda provider, request_id: self.provider,
        )
        await agent.run(turn)


class ReplayError(ByokError, RuntimeError):
    """The replay machinery itself failed (not a mismatch)."""


@contextlib.asynccontextmanager
async def _proxy(agent: ReplayAgent, confdir: Path, data_dir: Path) -> AsyncIterator[int]:
    """mitmproxy with our addon, in this process, on 127.0.0.1; yields the port."""
    from mitmproxy import hooks
    from mitmproxy import options
    from mitmproxy.master import Master

    with warnings.catch_warnings():  # a dependency of mitmproxy's proxyauth warns on import
        warnings.simplefilter("ignore", DeprecationWarning)
        from mitmproxy.addons import default_addons

    from cursor_byok.proxy.compose import compose

    opts = options.Options()
    master = Master(opts)
    proxy = compose(agent=agent)
    master.addons.add(*default_addons(), *proxy.addons)
    # mitmdump's script loader first configures an addon with every option; so does this
    master.addons.trigger(hooks.ConfigureHook(set(opts.keys())))
    opts.update(
        listen_host="127.0.0.1",
        listen_port=0,
        mode=["reverse:http://127.0.0.1:9"],  # never contacted: every flow is ours
        connection_strategy="lazy",
        confdir=str(confdir),
        cursor_byok_data_dir=str(data_dir),
        cursor_byok_config=str(data_dir / "unused-config.toml"),
        cursor_byok_heartbeat_ms=60_000,
        cursor_byok_coalesce_ms=0,  # recordings are made without coalescing (timing-free)
    )
    task = asyncio.ensure_future(master.run())
    try:
        server = master.addons.get("proxyserver")
        for _ in range(400):
            addrs = server.listen_addrs() if server is not None else []
            if addrs or task.done():
                break
            await asyncio.sleep(0.025)
        if task.done() or not addrs:
            raise ReplayError("the in-process proxy did not start")
        yield int(addrs[0][1])
    finally:
        # End any turn still running (a stalled replay) now, while its data directory exists
        # (the addon's `done` hook only schedules this).
        await proxy.stop()
        master.shutdown()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 10)


@dataclass
class _Stream:
    frames: list[bytes] = field(default_factory=list)
    end: dict[str, Any] | None = None
    requests: set[tuple[str, int]] = field(default_factory=set)  # what the server asked for
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def seen(self) -> int:
        return len(self.frames) + (1 if self.end is not None else 0)

    def notify(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()

    async def wait_until(self, ready: Callable[[], bool], idle: float) -> bool:
        """Until `ready()`; False when the stream ends first or sends nothing for `idle` s."""
        while not ready():
            if self.end is not None:
                return False
            changed = self.changed
            try:
                await asyncio.wait_for(changed.wait(), idle)
            except TimeoutError:
                return False
        return True

    async def wait_for(self, count: int, idle: float) -> bool:
        """Until `count` frames (the end counts) are in."""
        return await self.wait_until(lambda: self.seen() >= count, idle)


async def _read_stream(response: Response, stream: _Stream) -> None:
    from cursor_byok.outbound import ClientError

    decoder = connect.EnvelopeDecoder(encoding=response.headers.get("connect-content-encoding"))
    try:
        async for chunk in response.content.iter_any():
            for frame in decoder.feed(chunk):
                if frame.is_end_stream:
                    stream.end = scrub_end_stream(frame.payload)
                    stream.notify()
                    return
                message = parse_frame(frame.payload)
                if (
                    message is not None
                    and message.WhichOneof("message") == "interaction_update"
                    and message.interaction_update.WhichOneof("message") == "heartbeat"
                ):
                    continue
                stream.frames.append(frame.payload)
                request = requests_in(message)
                if request is not None:
                    stream.requests.add(request)
                stream.notify()
    except (ClientError, TimeoutError, connect.ConnectError) as exc:
        log.info("replay: RunSSE read ended: %s", exc)


@dataclass
class _Driven:
    frames: list[bytes]
    end: dict[str, Any] | None
    sent: int
    stalled: bool


async def _due(stream: _Stream, line: ClientLine, stall: float, settle: float) -> bool:
    """Wait until a recorded client message is due; False when the replayed stream stalled.

    A message that answers a request (exec, KV, interaction) is due once the replayed server has
    asked for it by id — however the frames around it are ordered — and then, to keep the
    recorded interleaving, once as many frames are in as when it was recorded, unless the stream
    goes quiet for `settle` s first (the recording's client sent it out of order; the server may
    need it to go on). Other messages (run request, heartbeats, cancels) have only their place
    in the stream to go by.
    """
    request = answers(line.raw)
    if request is not None and not await stream.wait_until(
        lambda: request in stream.requests, stall
    ):
        return False
    if await stream.wait_for(line.after_frames, settle if request is not None else stall):
        return True
    return request is not None and stream.end is None


async def _drive(port: int, capture: RecordedTurn, stall: float, settle: float = 1.0) -> _Driven:
    """Play Cursor's side of one recorded turn against the proxy on `port`."""
    from cursor_byok import outbound

    base = f"http://127.0.0.1:{port}"
    headers = {
        "connect-protocol-version": "1",
        "x-request-id": capture.request_id,
        # RunSSE and the BidiAppends come on connections of their own: a credential-less
        # client would be bound to one of them (proxy/agent_rpc.py), so this one has one.
        "authorization": "Bearer cursor-byok-replay",
    }
    stream = _Stream()
    sent = 0
    stalled = False
    async with outbound.new_session(connect_timeout=stall + 30, read_timeout=stall + 30) as http:
        body = connect.encode_frame(encode_run_sse_request(capture.request_id))
        async with http.post(
            base + RUN_SSE,
            data=body,
            headers={
                **headers,
                "content-type": "application/connect+proto",
                "connect-accept-encoding": "gzip",
            },
        ) as response:
            if response.status != 200:
                raise ReplayError(f"RunSSE answered HTTP {response.status}")
            reader = asyncio.ensure_future(_read_stream(response, stream))
            try:
                for line in capture.client:
                    if not await _due(stream, line, stall, settle):
                        stalled = stream.end is None
                        break
                    await _append(http, base + BIDI_APPEND, headers, capture.request_id, line)
                    sent += 1
                if not stalled:
                    # Everything is sent: read on until the end of stream, or until it stalls.
                    while stream.end is None and await stream.wait_for(stream.seen() + 1, stall):
                        pass
                    stalled = stream.end is None
            finally:
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reader
    return _Driven(list(stream.frames), stream.end, sent, stalled)


async def _append(
    http: Any, url: str, headers: dict[str, str], request_id: str, line: ClientLine
) -> None:
    """One recorded client message as its BidiAppend; ReplayError when it is not taken."""
    append = encode_bidi_append(request_id, line.seqno, line.raw, binary=True)
    async with http.post(
        url, data=append, headers={**headers, "content-type": "application/proto"}
    ) as reply:
        if reply.status != 200:
            text = (await reply.content.read(200)).decode("utf-8", "replace")
            raise ReplayError(f"BidiAppend seqno {line.seqno} answered HTTP {reply.status}: {text}")
        await reply.read()


@dataclass
class Result:
    """One capture's replay."""

    capture: RecordedTurn
    frames: list[bytes]
    end: dict[str, Any] | None
    divergence: Divergence | None
    sent: int
    stalled: bool
    requests: list[ModelRequest]
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.divergence is None

    def request_note(self) -> str | None:
        """Whether the model was asked the same things (informational, not part of `ok`)."""
        recorded = [request_to_json(c.request) for c in self.capture.calls]
        replayed = [request_to_json(r) for r in self.requests]
        if not recorded and not replayed:
            return None
        for index, (old, new) in enumerate(zip(recorded, replayed, strict=False), 1):
            keys = [k for k in old if old[k] != new.get(k)]
            if keys:
                return f"model request {index} differs from the recorded one in {', '.join(keys)}"
        if len(recorded) != len(replayed):
            return f"{len(replayed)} model call(s) replayed, {len(recorded)} recorded"
        return f"model requests: the same {len(recorded)} as recorded"


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname.lower()}: {record.getMessage()}")


async def replay_capture(
    capture: RecordedTurn, *, stall: float = 10.0, confdir: Path | None = None
) -> Result:
    """Replay one capture through a fresh in-process proxy and compare the streams."""
    from cursor_byok.store.blobs import BlobStore

    with tempfile.TemporaryDirectory(prefix="cursor-byok-replay-") as tmp:
        root = Path(tmp)
        data_dir = root / "data"
        store = BlobStore(data_dir / "blobs")
        for data in capture.blobs.values():
            store.put(data)
        agent = ReplayAgent(capture)
        collect = _Collect()
        logger = logging.getLogger("cursor_byok")
        logger.addHandler(collect)
        propagate, logger.propagate = logger.propagate, False  # the report shows them
        try:
            async with _proxy(agent, confdir or root / "conf", data_dir) as port:
                driven = await _drive(port, capture, stall)
        finally:
            logger.removeHandler(collect)
            logger.propagate = propagate
    divergence = compare(capture.server, capture.end, driven.frames, driven.end)
    return Result(
        capture,
        driven.frames,
        driven.end,
        divergence,
        driven.sent,
        driven.stalled,
        list(agent.provider.requests),
        collect.lines,
    )


async def replay_files(paths: Iterable[Path], *, stall: float = 10.0) -> list[Result]:
    """Load every capture first (CaptureError on unusable input), then replay them in order."""
    captures = [load_capture(p) for p in capture_files(paths)]
    for capture in captures:
        if capture.agent == "cursor":
            raise CaptureError(
                f"{capture.name}: a run Cursor's backend served (recorded natively); "
                "compare our server with it: cursor-byok replay --compare"
            )
    results = []
    with tempfile.TemporaryDirectory(prefix="cursor-byok-replay-ca-") as confdir:
        for capture in captures:
            results.append(await replay_capture(capture, stall=stall, confdir=Path(confdir)))
    return results
