"""An addon: which agent runs the turns we serve, and starting each turn a run asks for.

The provider agent runs on the user's config (re-read when it changes; a running turn keeps the
snapshot it started with), the scripted one needs no provider (for checking a setup). A broken
config is not an error of the proxy: every turn ends with that error in Cursor until it is fixed.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import OrderedDict
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from mitmproxy import ctx
from mitmproxy import exceptions

from cursor_byok.agent import live_actions
from cursor_byok.agent.loop import CUSTOM_MESSAGE
from cursor_byok.agent.loop import ProviderAgent
from cursor_byok.agent.scripted import ScriptedAgent
from cursor_byok.agent.steering import Injection
from cursor_byok.agent.steering import MessageQueue
from cursor_byok.agent.tool_choice import ALLOWED_HEADER
from cursor_byok.agent.tool_choice import EXCLUDED_HEADER
from cursor_byok.agent.tool_choice import ToolChoice
from cursor_byok.agent.turn import ACK_TIMEOUT
from cursor_byok.agent.turn import DETACHED_CALL_LIMIT
from cursor_byok.agent.turn import Agent
from cursor_byok.agent.turn import Turn
from cursor_byok.agent.turn import TurnError
from cursor_byok.agent.turn import TurnOptions
from cursor_byok.agent.turn import run_turn
from cursor_byok.config import Config
from cursor_byok.config import ConfigError
from cursor_byok.config import ConfigSource
from cursor_byok.config.catalog import find_model
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.providers.keys import KeyPools
from cursor_byok.providers.pool import ProviderPool
from cursor_byok.proxy import options
from cursor_byok.proxy.housekeeping import Housekeeping
from cursor_byok.proxy.recording import Recording
from cursor_byok.proxy.run_registry import LiveRun
from cursor_byok.proxy.turn_pacing import Pacer
from cursor_byok.store import run_journal
from cursor_byok.store import usage
from cursor_byok.store.activity import route_label
from cursor_byok.store.blobs import BlobStore
from cursor_byok.store.files import MiB
from cursor_byok.store.files import low_space

log = logging.getLogger(__name__)
_OPTIONS = (
    "cursor_byok_agent",
    "cursor_byok_config",
    "cursor_byok_data_dir",
    "cursor_byok_ack_timeout_ms",
    "cursor_byok_min_free_mb",
    "cursor_byok_detached_call_ms",
    "cursor_byok_blobs_max_mb",
)
MAX_METERS = 1024
CONFIG_POLL = 1.0  # seconds between looks at the config file (a reload is said at once)


@dataclass(frozen=True, slots=True)
class ContextMeter:
    """A conversation's context meter as its latest turn left it (what the context ring shows)."""

    used_tokens: int
    max_tokens: int
    category_bytes: dict[str, int] = field(default_factory=dict)


def meter_of(turn: Turn) -> ContextMeter:
    transcript = turn.transcript
    return ContextMeter(
        transcript.used_tokens, transcript.context_window, dict(transcript.category_bytes)
    )


class FailingAgent:
    """Ends every turn with one error Cursor shows (e.g. a broken config)."""

    def __init__(self, error: TurnError) -> None:
        self.error = error

    async def run(self, turn: Turn) -> None:
        raise self.error


class ToolChoices:
    """The tool limits each attempt's request headers carried (`ToolChoice`), by request id,
    for the turn its run starts. Bounded: only the newest `limit` attempts are remembered."""

    def __init__(self, limit: int = 1024) -> None:
        self.limit = limit
        self._by_request: OrderedDict[str, ToolChoice] = OrderedDict()

    def note(self, request_id: str | None, headers: Mapping[str, str]) -> None:
        if not request_id:
            return
        carried = {h: headers[h] for h in (ALLOWED_HEADER, EXCLUDED_HEADER) if h in headers}
        choice = ToolChoice.from_headers(carried)
        if choice is None:
            return
        self._by_request[request_id] = choice
        self._by_request.move_to_end(request_id)
        while len(self._by_request) > self.limit:
            self._by_request.popitem(last=False)

    def get(self, request_id: str) -> ToolChoice | None:
        return self._by_request.get(request_id)


class Turns:
    def __init__(self, recording: Recording, agent: Agent | None = None) -> None:
        self.recording = recording
        self.fixed_agent = agent  # embedders and tests: this agent, whatever the options say
        self.providers = ProviderPool()  # provider clients shared across turns
        self.keys = KeyPools()  # which keys of each pool rest or were refused (agent/chain.py)
        self.blobs: BlobStore | None = None
        self.ack_timeout = ACK_TIMEOUT
        self.detached_call_limit = DETACHED_CALL_LIMIT
        self.tool_choices = ToolChoices()  # filled by the Agent RPC hooks from request headers
        self._source: ConfigSource | None = None
        self._source_key: tuple[str, str | None] | None = None  # (option text, HOME) it is for
        self._tasks: set[asyncio.Task[Any]] = set()
        self.meters: OrderedDict[str, ContextMeter] = OrderedDict()  # by conversation id
        self.on_unresolved: Callable[[str, str], None] | None = None  # the census
        # conversation id → user messages queued while no turn of it ran (given to the next)
        self.queued: OrderedDict[str, MessageQueue] = OrderedDict()
        self.housekeeping = Housekeeping()  # the blob store's size cap
        self.pacer = Pacer()  # turns' set-ups and closes, one per pass of the loop

    def load(self, loader) -> None:
        options.declare(loader, *_OPTIONS)

    def configure(self, updated: set[str]) -> None:
        opts = ctx.options
        updated = options.changed(opts, updated, *_OPTIONS)
        if "cursor_byok_blobs_max_mb" in updated:
            self.housekeeping.limit = opts.cursor_byok_blobs_max_mb * MiB
        if "cursor_byok_ack_timeout_ms" in updated:
            self.ack_timeout = opts.cursor_byok_ack_timeout_ms / 1000
        if "cursor_byok_detached_call_ms" in updated:
            self.detached_call_limit = opts.cursor_byok_detached_call_ms / 1000
        if updated & {"cursor_byok_agent", "cursor_byok_config"} and self.serves_config():
            try:
                config = self.config()
                log.info("config %s: models %s", config.path, ", ".join(config.model_names()))
            except ConfigError as exc:
                # Not an error: mitmdump exits on errors logged at startup, and the file is
                # re-read on every turn, so the user can fix it while the proxy runs.
                log.warning("%s (Agent turns will show this error until it is fixed)", exc)
        if "cursor_byok_data_dir" in updated or self.blobs is None:
            try:
                self.blobs = BlobStore(options.data_dir(opts) / "blobs")
            except OSError as exc:
                raise exceptions.OptionsError(f"cursor_byok_data_dir: {exc}") from None
            usage.writer_for(options.data_dir(opts))  # its thread imports rows left spooled

    def running(self) -> None:
        self.tidy()  # the store's size, once at start
        if self.blobs is not None:  # journals of runs nobody retried (store/run_journal.py)
            self._spawn(asyncio.to_thread(run_journal.prune, self.blobs.root.parent))
        self._spawn(self._watch_config())

    async def _watch_config(self) -> None:
        """Say a config edit at once, in one line: reloaded (its models), or what is wrong with
        it; not at the next turn. One `stat` a second."""
        seen = _stamp(options.config_path(ctx.options))
        while True:
            await asyncio.sleep(CONFIG_POLL)
            path = options.config_path(ctx.options)
            stamp = _stamp(path)
            if stamp == seen or not self.serves_config():
                seen = stamp
                continue
            seen = stamp
            try:
                config = self.config()
            except ConfigError as exc:
                log.warning("config not reloaded: %s (Agent turns show this until fixed)", exc)
                continue
            log.info("config %s reloaded: models %s", path, ", ".join(config.model_names()))

    def tidy(self) -> None:
        """Keep the blob store under its cap (after turns and uploads write to it)."""
        self.housekeeping.tidy(self.blobs)

    def done(self) -> None:
        self._spawn(self.providers.aclose())
        usage.close_writers()  # what the database would not take stays in its spool

    # --- the agent ------------------------------------------------------------------------

    def serves_config(self) -> bool:
        """Whether turns run on the user's config (the provider agent)."""
        return self.fixed_agent is None and ctx.options.cursor_byok_agent == "provider"

    def config(self) -> Config:
        """The current config snapshot; running turns keep the one they started with. The
        source is kept while the option's text and HOME (which `~` means) are unchanged:
        routing asks for every Agent request, and making the path again was ~1 % of a turn."""
        key = (ctx.options.cursor_byok_config, os.environ.get("HOME"))
        if self._source is None or self._source_key != key:
            path = options.config_path(ctx.options)
            if self._source is None or self._source.path != path:
                self._source = ConfigSource(path)
            self._source_key = key
        return self._source.get()

    def routing_config(self) -> Config | None:
        """The config routing decides by; None when every run is served here (another agent,
        or a broken config whose error the turn shows)."""
        if not self.serves_config():
            return None
        try:
            return self.config()
        except ConfigError:
            return None

    def agent(self) -> Agent:
        if self.fixed_agent is not None:
            return self.fixed_agent
        if ctx.options.cursor_byok_agent == "scripted":
            return ScriptedAgent()
        try:
            recorder = self.recording.recorder
            wrap = recorder.wrap_provider if recorder is not None else None
            return ProviderAgent(
                self.config(), wrap_provider=wrap, pool=self.providers, keys=self.keys
            )
        except ConfigError as exc:
            return FailingAgent(
                TurnError(
                    "failed_precondition",
                    str(exc),
                    title="cursor-byok configuration",
                    error=CUSTOM_MESSAGE,
                )
            )

    async def run_turn(self, live: LiveRun, run_request: pb.AgentRunRequest) -> None:
        if self.blobs is None:  # configure() has run before any flow can start a turn
            raise RuntimeError("the blob store is not configured")
        if live.parent is not None:
            run_request = self._child_request(live, run_request, live.parent)
        waiting = self.queued.pop(run_request.conversation_id, None)
        messages = MessageQueue(
            [a.user_message_action.user_message for a in live.core.queued]
            + (waiting.earlier if waiting is not None else [])
        )
        agent = self.agent()
        data_dir = self.blobs.root.parent
        full = await asyncio.to_thread(low_space, data_dir, ctx.options.cursor_byok_min_free_mb)
        if full is not None:  # before any provider token is spent on an answer we cannot keep
            agent = FailingAgent(
                TurnError(
                    "resource_exhausted",
                    full,
                    title="cursor-byok's data directory is full",
                    error=CUSTOM_MESSAGE,
                )
            )
        self.housekeeping.started(live.request_id, run_request)
        try:
            await run_turn(
                live,
                run_request,
                blobs=self.blobs,
                agent=agent,
                options=TurnOptions(
                    ack_timeout=self.ack_timeout,
                    detached_call_limit=self.detached_call_limit,
                    tool_choice=self.tool_choices.get(live.request_id),
                    on_unresolved=self.on_unresolved,
                    parent_tool_call_id=live.parent[1] if live.parent else "",
                    route=route_of(live),
                    journal=True,  # a run retried after a crash continues (issue 37)
                    pace=self.pacer.slot,  # set-ups and closes one per pass (turn_pacing.py)
                ),
                messages=messages,
            )
        finally:
            self.housekeeping.ended(live.request_id)
            self.tidy()
            turn = live.turn
            if turn is not None and run_request.conversation_id:
                self.meters[run_request.conversation_id] = meter_of(turn)
                self.meters.move_to_end(run_request.conversation_id)
                while len(self.meters) > MAX_METERS:
                    self.meters.popitem(last=False)

    def live_action(self, live: LiveRun, action: pb.ConversationAction) -> None:
        """A conversation action sent on a run: mid-run (steering, stop one subagent, send work
        to the background), or after it ended (a message queued for the next turn)."""
        kind = action.WhichOneof("action")
        if kind == "inject_context_action":
            injection = action.inject_context_action
            if live.finished or live.turn is None:
                # Documented no-op: unconfirmed, the client sends it again as a new message.
                log.info(
                    "run %s: steering %s came after its turn; the client sends it as a message",
                    live.request_id,
                    injection.injection_id,
                )
                return
            live.turn.messages.offer(injection, live.core.run_id)
            return
        if kind == "user_message_action":
            message = action.user_message_action.user_message
            if live.finished or live.turn is None:
                self._queue(live.core.conversation_id, message, live.request_id)
            else:
                live.turn.messages.add(Injection("", message))
            return
        if not live_actions.handles(action):
            log.info("run %s: %s ignored mid-run", live.request_id, action.WhichOneof("action"))
            return
        self._spawn(live_actions.handle(live.turn, action))

    def _child_request(
        self, live: LiveRun, run_request: pb.AgentRunRequest, parent: tuple[str, str]
    ) -> pb.AgentRunRequest:
        """A subagent run linked to its parent by headers takes the parent's model when it names
        none we serve (Cursor names the model of its Task args, or none at all)."""
        parent_run = live.registry.run_for(parent[0])
        model = parent_run.turn.status.model if parent_run is not None and parent_run.turn else ""
        log.info(
            "run %s: subagent of run %s (tool call %s)%s",
            live.request_id,
            parent[0],
            parent[1],
            f", parent's model {model!r}" if model else "",
        )
        if not model or not self.serves_config():
            return run_request
        try:
            config = self.config()
        except ConfigError:
            return run_request
        named = run_request.requested_model.model_id or run_request.model_details.model_id
        if find_model(config, named) is not None:
            return run_request
        child = pb.AgentRunRequest()
        child.CopyFrom(run_request)
        child.requested_model.model_id = model
        return child

    def _queue(self, conversation_id: str, message: pb.UserMessage, request_id: str) -> None:
        """A message for the conversation's next turn (bounded per conversation and in all)."""
        if not conversation_id:
            return
        self.queued.setdefault(conversation_id, MessageQueue()).queue_next(message)
        self.queued.move_to_end(conversation_id)
        while len(self.queued) > MAX_METERS:
            self.queued.popitem(last=False)
        log.info("run %s: a message queued for the next turn of %s", request_id, conversation_id)

    def _spawn(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _stamp(path: Path) -> tuple[str, int, int] | None:
    try:
        status = path.stat()
    except OSError:
        return None
    return str(path), status.st_mtime_ns, status.st_mode


def route_of(live: LiveRun) -> str:
    """How a turn's calls reached the proxy, for its usage row: the proxy mode and the
    transport (`regular proxy, Run (HTTP/2)`)."""
    try:
        modes = ctx.options.mode
    except AttributeError:  # outside a running mitmproxy (unit tests)
        modes = []
    transport = "Run (HTTP/2)" if live.transport == "run" else "RunSSE + BidiAppend"
    return f"{route_label(modes)}, {transport}"
