"""An addon that serves Tab (`AiService/StreamCpp`) from the user's model when
`[features] tab` names one (issue 35); with `"cursor"` (the default) it touches nothing.

The editor starts a Tab request on nearly every keystroke and abandons most of them, so:

- one provider call per editor at a time (`Slots`: keyed by the Authorization header's hash,
  else the client connection): a newer request cancels the older call at once, and the older
  request ends with an empty answer;
- a request the client resets or drops cancels its call at once (`tell_abandoned_requests` in
  mitmproxy_compat.py: mitmproxy would otherwise queue the reset behind our hook), as does a
  client connection that closes (`client_disconnected`);
- every call has a deadline (`cursor_byok_tab_timeout_ms`); nothing of a request is kept after
  it ends (counters only: `TabStats`).

The answer streams as the model writes (through the loopback server, like Cmd-K's:
`Loopback.serve_produced`, started in the request hook): model_info at once, the edit's start
with the first text, `text` deltas, then its end. `cursor/tab.py` makes the prompt and the
frames, and cleans the text as it comes (`Cleaner`: stop sequences, 12 lines). Tab's other calls are
answered by `tab_calls.py`'s table. Each call leaves one usage row of kind `tab`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass

from mitmproxy import connection
from mitmproxy import ctx
from mitmproxy import http

from cursor_byok.agent.chain import FALLBACK_KINDS
from cursor_byok.agent.error_details import provider_kind
from cursor_byok.config import Config
from cursor_byok.config import ModelConfig
from cursor_byok.cursor import tab as tabp
from cursor_byok.pb import aiserver_features_pb2 as fpb
from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.providers import FIM_KINDS
from cursor_byok.providers import ModelRequest
from cursor_byok.providers import ProviderError
from cursor_byok.providers import TextDelta
from cursor_byok.providers import Usage
from cursor_byok.proxy import options
from cursor_byok.proxy import unary
from cursor_byok.proxy.activity_record import CENSUS_KEY
from cursor_byok.proxy.hosts import cursor_host
from cursor_byok.proxy.loopback.addon import Loopback
from cursor_byok.proxy.mitmproxy_compat import ABANDON_KEY
from cursor_byok.proxy.mitmproxy_compat import ABANDONED_KEY
from cursor_byok.proxy.mitmproxy_compat import tell_abandoned_requests
from cursor_byok.proxy.spend_gate import SpendGate
from cursor_byok.proxy.tab_calls import CALLS
from cursor_byok.proxy.tab_calls import NEXT_CURSOR
from cursor_byok.proxy.tab_calls import STREAM_CPP
from cursor_byok.proxy.tab_calls import TabCall
from cursor_byok.proxy.turns import Turns
from cursor_byok.store.census import SERVED
from cursor_byok.store.census import Census
from cursor_byok.store.usage import TAB
from cursor_byok.store.usage import TurnUsage
from cursor_byok.store.usage import record_row
from cursor_byok.wire import connect

log = logging.getLogger(__name__)

STREAM_TYPE = "application/connect+proto"
TOKENS_KEY = "cursor_byok_tab_tokens"  # flow metadata: (input, output) tokens of its call


@dataclass
class TabStats:
    """What the live status shows about Tab (counters: memory stays flat); the doctor reads the
    same counts from the census (`Census.tab`)."""

    model: str = ""
    requests: int = 0
    suggestions: int = 0
    empty: int = 0  # answered with no suggestion
    cancelled: int = 0  # superseded by a newer request, or the client went away
    errors: int = 0
    other_calls: int = 0  # Tab's other calls answered here
    input_tokens: int = 0
    output_tokens: int = 0
    running: int = 0
    last: str = ""  # one line about the last call

    def line(self) -> str:
        """One line for the live status ("" before the first Tab request)."""
        if not self.requests:
            return ""
        return (
            f"Tab on {self.model}: {self.requests} request(s), {self.suggestions} suggestion(s), "
            f"{self.cancelled} cancelled, {self.errors} error(s), {self.input_tokens} tokens in, "
            f"{self.output_tokens} out" + (f"; last: {self.last}" if self.last else "")
        )


@dataclass(eq=False)
class _Call:
    task: asyncio.Task
    client: str


class Slots:
    """At most one provider call per editor: the newest wins (module doc)."""

    def __init__(self) -> None:
        self.by_editor: dict[str, _Call] = {}
        self.by_client: dict[str, set[_Call]] = {}

    def start(
        self, editor: str, client: str, task: asyncio.Task
    ) -> tuple[_Call, asyncio.Task | None]:
        """Register `task`; the editor's older call is cancelled and returned (the new call
        waits for its end, so one call per editor reaches the model at a time)."""
        older = self.by_editor.pop(editor, None)
        if older is not None:
            older.task.cancel()
        call = _Call(task, client)
        self.by_editor[editor] = call
        self.by_client.setdefault(client, set()).add(call)
        return call, None if older is None else older.task

    def end(self, editor: str, call: _Call) -> None:
        if self.by_editor.get(editor) is call:
            del self.by_editor[editor]
        calls = self.by_client.get(call.client)
        if calls is not None:
            calls.discard(call)
            if not calls:
                del self.by_client[call.client]

    def client_gone(self, client: str) -> int:
        calls = self.by_client.pop(client, set())
        for call in calls:
            call.task.cancel()
        return len(calls)

    def __len__(self) -> int:
        return len(self.by_editor)


def editor_key(flow: http.HTTPFlow) -> str:
    """Which editor a request is from: its token's hash (never the token), else its connection."""
    token = flow.request.headers.get("authorization", "")
    if token:
        return hashlib.sha256(token.encode()).hexdigest()[:24]
    return "conn:" + flow.client_conn.id


def stream_body(frames: list[bytes], error: connect.EndStreamError | None = None) -> bytes:
    return b"".join(connect.encode_frame(f) for f in frames) + connect.encode_end_stream(error)


def refetch_error(path: str) -> connect.EndStreamError:
    """A filesync-only request: we hold no copy of the file. `ErrorDetails` says the file was not
    found and the request may be retried, so the client re-sends with contents [inf]."""
    details = aipb.ErrorDetails(
        error=aipb.ErrorDetails.ERROR_FILE_NOT_FOUND,
        details=aipb.CustomErrorDetails(
            title="File not synced",
            detail=f"cursor-byok keeps no copy of {path or 'the file'}: send its contents",
            is_retryable=True,
        ),
        is_expected=True,
    )
    detail = connect.ErrorDetail("aiserver.v1.ErrorDetails", details.SerializeToString())
    return connect.EndStreamError(
        "failed_precondition", "the file is not synced: send its contents", (detail,)
    )


class Tab:
    def __init__(
        self, turns: Turns, census: Census | None = None, loopback: Loopback | None = None
    ) -> None:
        self.turns = turns
        self.loopback = loopback  # serves StreamCpp's body as the model writes
        self.census = census
        self.slots = Slots()
        self.stats = TabStats()
        self.spend = SpendGate()  # [limits]: checked before each model call
        self.timeout = 10.0

    def load(self, loader) -> None:
        tell_abandoned_requests()
        options.declare(
            loader,
            "cursor_byok_hosts",
            "cursor_byok_data_dir",
            "cursor_byok_tab_timeout_ms",
            "cursor_byok_config",
        )

    def configure(self, updated: set[str]) -> None:
        mine = options.changed(
            ctx.options, updated, "cursor_byok_tab_timeout_ms", "cursor_byok_config"
        )
        if "cursor_byok_tab_timeout_ms" in mine:
            self.timeout = ctx.options.cursor_byok_tab_timeout_ms / 1000
        if "cursor_byok_config" in mine:
            self._say_where_tab_goes()

    def _say_where_tab_goes(self) -> None:
        """The start banner's Tab line: plain about Tab still going to Cursor."""
        try:
            chosen = self.tab_model()
        except Exception:  # a broken config: Turns says so
            return
        if chosen is not None:
            log.info("Tab: on your model %s (nothing of the file goes to Cursor)", chosen[1].name)
        elif self.turns.routing_config() is not None:
            log.info(
                'Tab: still goes to Cursor ([features] tab = "cursor"): the open file and recent '
                "edits reach Cursor on nearly every keystroke; name a model in [features] tab"
            )

    def tab_model(self) -> tuple[Config, ModelConfig] | None:
        """The configured Tab model, or None when Tab is Cursor's."""
        config = self.turns.routing_config()
        name = config.features.model_for("tab") if config is not None else None
        if config is None or name is None:
            return None
        model = config.model(name)
        return None if model is None else (config, model)

    def _ours(self, flow: http.HTTPFlow) -> bool:
        if flow.response or flow.error or not flow.live:
            return False
        return cursor_host(flow)

    async def request(self, flow: http.HTTPFlow) -> None:
        path = flow.request.path.split("?", 1)[0]
        if path != STREAM_CPP and path not in CALLS:
            return
        if not self._ours(flow):
            return
        chosen = self.tab_model()
        if chosen is None:
            return  # Cursor's Tab: byte for byte
        try:
            if path == STREAM_CPP:
                await self._stream_cpp(flow, *chosen)
            else:
                self._other(flow, CALLS[path])
        except Exception as exc:  # never forwarded because of a bug of ours
            log.exception("%s: answered with an error here (a bug of cursor-byok)", path)
            if flow.response is None:
                unary.error(flow, "internal", f"cursor-byok could not handle {path}: {exc}")

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        """Cursor's own Tab streams (tab = "cursor") are relayed as they come, never buffered
        whole first (mitmproxy buffers a response unless told: docs/mitmproxy.md §4, pitfall 9)."""
        if flow.response is None or flow.metadata.get(CENSUS_KEY) == SERVED:
            return  # answered here
        path = flow.request.path.split("?", 1)[0]
        if path in (STREAM_CPP, NEXT_CURSOR) and cursor_host(flow):
            flow.response.stream = True

    def client_disconnected(self, client: connection.Client) -> None:
        gone = self.slots.client_gone(client.id)
        if gone:
            log.debug("Tab: %d call(s) cancelled: the client connection closed", gone)

    def _count(self, **counts: int) -> None:
        for key, count in counts.items():
            setattr(self.stats, key, getattr(self.stats, key) + count)
        if self.census is not None:
            self.census.tab(**counts)

    def _other(self, flow: http.HTTPFlow, call: TabCall) -> None:
        self.stats.other_calls += 1
        if call.answer is None:
            unary.answer_bytes(flow, stream_body([]), STREAM_TYPE)
        else:
            unary.answer(flow, call.answer)
        log.debug("%s: answered here (carries %s), not sent to Cursor", call.path, call.what)

    async def _stream_cpp(self, flow: http.HTTPFlow, config: Config, model: ModelConfig) -> None:
        self._count(requests=1)
        self.stats.model = model.name
        try:
            request = unary.parse(flow.request, fpb.StreamCppRequest())
            prompt = tabp.build_prompt(request)
        except unary.BadRequest as exc:
            unary.answer_bytes(
                flow, stream_body([], connect.EndStreamError(exc.code, str(exc))), STREAM_TYPE
            )
            return
        except tabp.NoContents as exc:
            self._count(empty=1)
            unary.answer_bytes(flow, stream_body([], refetch_error(str(exc))), STREAM_TYPE)
            return
        if flow.metadata.get(ABANDONED_KEY):  # reset while it waited behind other hooks
            self._count(cancelled=1)
            unary.answer_bytes(flow, stream_body(tabp.answer_frames([], prompt, "")), STREAM_TYPE)
            self._record(model, time.time(), TAB + ":cancelled", (0, 0))
            return
        capped = await self.spend.check(config, options.data_dir(ctx.options))
        if capped is not None:  # a spending cap is reached: no model call
            self._count(errors=1)
            self.stats.last = "refused: spending cap reached"
            unary.answer_bytes(flow, stream_body([], capped), STREAM_TYPE)
            return
        flow.metadata[CENSUS_KEY] = SERVED
        editor = editor_key(flow)
        started = time.time()
        pieces: asyncio.Queue[str | None] = asyncio.Queue()  # the text to show, then None
        older: asyncio.Future[asyncio.Task | None] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(self._complete(config, model, prompt, older, pieces))
        call, previous = self.slots.start(editor, flow.client_conn.id, task)
        older.set_result(previous)
        self.stats.running = len(self.slots)
        flow.metadata[ABANDON_KEY] = task.cancel  # the client reset or dropped it: stop now

        def ended(task: asyncio.Task) -> None:
            flow.metadata.pop(ABANDON_KEY, None)
            pieces.put_nowait(None)
            self.slots.end(editor, call)
            self.stats.running = len(self.slots)
            self._ended(task, model, started, prompt)

        task.add_done_callback(ended)
        produce = lambda: self._frames(task, pieces, prompt)  # noqa: E731
        if self.loopback is None or not await self.loopback.serve_produced(
            flow, produce, STREAM_TYPE, None
        ):  # no loopback server (unit tests): the answer whole, as it used to be
            body = b"".join([chunk async for chunk in produce()])
            unary.answer_bytes(flow, body, STREAM_TYPE)

    async def _frames(
        self, task: asyncio.Task, pieces: asyncio.Queue[str | None], prompt: tabp.FimPrompt
    ) -> AsyncGenerator[bytes]:
        """StreamCpp's body as the model writes (served by the loopback server): model_info at
        once; range_to_replace + begin_edit with the first text; `text` deltas; done_edit,
        cursor_prediction_target, done_stream. Closed early (the client went away): the call is
        cancelled at once. Superseded or cancelled: the edit so far is closed, no error."""
        try:
            yield _encode(tabp.MODEL_INFO)
            shown, done = "", False
            while not done and (piece := await pieces.get()) is not None:
                batch = [piece]
                while not pieces.empty():  # what else is ready goes in the same write
                    more = pieces.get_nowait()
                    if more is None:
                        done = True
                        break
                    batch.append(more)
                head = [] if shown else [tabp.begin_frame(prompt)]
                shown += "".join(batch)
                texts = [fpb.StreamCppResponse(text=text) for text in batch]
                yield b"".join(_encode(m) for m in [*head, *texts])
            problem = _problem(task)
            if problem is not None:
                yield connect.encode_end_stream(
                    connect.EndStreamError("unavailable", f"Tab model: {problem}")
                )
                return
            tail = tabp.end_frames(prompt, shown) if shown else []
            yield b"".join(_encode(m) for m in [*tail, tabp.DONE_STREAM])
            yield connect.encode_end_stream(None)
        finally:
            task.cancel()

    def _ended(
        self, task: asyncio.Task, model: ModelConfig, started: float, prompt: tabp.FimPrompt
    ) -> None:
        """A call's end: the counters, the last line, its usage row."""
        tokens = (0, 0)
        if task.cancelled():
            self._count(cancelled=1)
            outcome = TAB + ":cancelled"
        elif (problem := _problem(task)) is not None:
            self._count(errors=1)
            self.stats.last = f"error: {problem}"
            if isinstance(problem, ProviderError):
                log.warning("Tab: the provider failed: %s", problem)
            else:
                log.error("Tab: the call failed (a bug of cursor-byok): %r", problem)
            outcome = TAB + ":error"
        else:
            completion, tokens = task.result()
            self._count(input_tokens=tokens[0], output_tokens=tokens[1])
            if completion:
                self._count(suggestions=1)
                lines = completion.count("\n") + 1
                self.stats.last = f"{prompt.path}:{prompt.line + 1}: {lines} line(s)"
            else:
                self._count(empty=1)
            outcome = TAB
        self._record(model, started, outcome, tokens)

    async def _complete(
        self,
        config: Config,
        model: ModelConfig,
        prompt: tabp.FimPrompt,
        older: asyncio.Future[asyncio.Task | None],
        pieces: asyncio.Queue[str | None],
    ) -> tuple[str, tuple[int, int]]:
        """The model's completion, cleaned as it comes (`tabp.Cleaner`: each piece to show goes
        to `pieces`), within the Tab deadline, once the editor's older call (cancelled) has
        ended; returns (the completion shown, tokens). A model that fails before any text was
        shown, in a way its `fallbacks` may not (agent/chain.py FALLBACK_KINDS), hands over to
        the next."""
        previous = await older
        if previous is not None and not previous.done():
            await asyncio.wait([previous])
        chain = [model] + [m for n in model.fallbacks if (m := config.model(n)) is not None]
        async with asyncio.timeout(self.timeout):
            for i, option in enumerate(chain):
                cleaner = tabp.Cleaner(prompt, chat=not _is_fim(config, option))
                try:
                    tokens = await self._stream_model(config, option, prompt, pieces, cleaner)
                    break
                except ProviderError as exc:
                    last = i == len(chain) - 1
                    if last or cleaner.sent or provider_kind(exc) not in FALLBACK_KINDS:
                        raise
                    log.info("Tab: %s failed (%s): trying %s", option.name, exc, chain[i + 1].name)
        if piece := cleaner.finish():
            pieces.put_nowait(piece)
        return cleaner.sent, tokens

    async def _stream_model(
        self,
        config: Config,
        model: ModelConfig,
        prompt: tabp.FimPrompt,
        pieces: asyncio.Queue[str | None],
        cleaner: tabp.Cleaner,
    ) -> tuple[int, int]:
        """One model's answer into `cleaner` (what it lets out goes to `pieces`); its tokens."""
        settings = config.providers[model.provider].settings()
        provider = self.turns.providers.get(settings)
        if settings.kind in FIM_KINDS:
            request = ModelRequest(
                model=model.model,
                system="",
                messages=[],
                params=tabp.fim_params(prompt),
                max_output_tokens=tabp.MAX_TOKENS,
            )
        else:
            system, messages = tabp.chat_messages(prompt)
            request = ModelRequest(
                model=model.model,
                system=system,
                messages=messages,
                max_output_tokens=tabp.MAX_TOKENS,
            )
        tokens = (0, 0)
        async with contextlib.aclosing(provider.stream(request)) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    if piece := cleaner.feed(event.text):
                        pieces.put_nowait(piece)
                    if cleaner.done:
                        break  # a stop sequence or the last line: the rest is cut anyway
                elif isinstance(event, Usage):
                    tokens = (event.input_tokens or 0, event.output_tokens or 0)
        return tokens

    def _record(
        self, model: ModelConfig, started: float, outcome: str, tokens: tuple[int, int]
    ) -> None:
        record_row(
            options.data_dir(ctx.options),
            TurnUsage(
                started=started,
                duration=time.time() - started,
                conversation="",
                request="",
                model=model.name,
                input_tokens=tokens[0],
                output_tokens=tokens[1],
                outcome=outcome,
                route="StreamCpp",
            ),
        )


def _encode(message: fpb.StreamCppResponse) -> bytes:
    return connect.encode_frame(message.SerializeToString())


def _problem(task: asyncio.Task) -> BaseException | None:
    """What a finished call failed with (a timeout as the provider's), or None."""
    if task.cancelled() or not task.done():
        return None
    exc = task.exception()
    if isinstance(exc, TimeoutError):
        return ProviderError("timeout", "no answer within the Tab deadline")
    return exc


def _is_fim(config: Config, model: ModelConfig) -> bool:
    return config.providers[model.provider].kind in FIM_KINDS
