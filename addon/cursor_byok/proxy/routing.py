"""Which way one Agent run goes: served here (a model we serve) or to Cursor's backend.

The decision is made once per request id, from the run request's requested model, and
remembered (bounded, expiring) so every other request of that run (its RunSSE, later appends,
reconnects) follows it. Requests that arrive before the run request can wait for it.

A conversation's route is its latest run's; the calls around it (uploads, titles, analytics:
`proxy/privacy.py`) follow that, and may wait for it too (`wait_for`). So they can be attributed,
every routed run's ids, prompt hash and message are remembered (`cursor/privacy.py`).
Conversation routes are also kept in the data dir (`store/routes.py`): a restart does not
forget which conversations are BYOK.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from mitmproxy import ctx

from cursor_byok.config import Config
from cursor_byok.config.routes import model_for_run
from cursor_byok.cursor.actions import resolve as resolve_action
from cursor_byok.cursor.privacy import Identifiers
from cursor_byok.cursor.privacy import Messages
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.proxy import options
from cursor_byok.proxy.run_registry import RunRegistry
from cursor_byok.proxy.turns import Turns
from cursor_byok.store.routes import RouteLog
from cursor_byok.wire.bidi import BidiAppend

log = logging.getLogger(__name__)

LOCAL = "local"
CURSOR = "cursor"
MAX_ENTRIES = 4096
TTL = 3600.0  # seconds a decision is remembered (a run, its reconnects and retries)
RECENT = 5  # runs sent to Cursor that the live status lists


@dataclass(frozen=True, slots=True)
class RoutedRun:
    """A run that went to Cursor's backend, for the live status (metadata only)."""

    request_id: str
    conversation_id: str
    model: str
    at: float  # time.monotonic()


def requested_model(run_request: pb.AgentRunRequest) -> str:
    return run_request.requested_model.model_id or run_request.model_details.model_id


def decide(config: Config | None, run_request: pb.AgentRunRequest) -> str:
    """LOCAL iff the requested model is one we serve, or we cannot tell (`config` None: no
    provider agent, or a broken config whose error the turn shows); else the config's choice:
    CURSOR, or LOCAL with `route_other_models = "error"` (the turn then names our models)."""
    if config is None:
        return LOCAL
    # child runs go to the subagent route whatever Cursor asks for; a run with no BYOK model
    # picked (Auto) to its mode's route, when the config has one (config/routes.py)
    served = model_for_run(
        config,
        requested_model(run_request),
        resolve_action(run_request).mode,
        subagent=bool(run_request.subagent_type_name),
    )
    if served is not None:
        return LOCAL
    return CURSOR if config.route_other_models == "cursor" else LOCAL


class Routes:
    """Decisions by request id; the first one for an id wins. Waiters wake when it is made."""

    def __init__(
        self,
        max_entries: int = MAX_ENTRIES,
        ttl: float = TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_entries = max_entries
        self.ttl = ttl
        self.clock = clock
        self._routes: OrderedDict[str, tuple[str, float]] = OrderedDict()
        self._waiters: dict[str, tuple[asyncio.Event, list[int]]] = {}  # event, [waiting]
        self.patience = 10.0  # seconds a request waits for its run's route (the option)
        self.recent: deque[RoutedRun] = deque(maxlen=RECENT)  # latest runs sent to Cursor

    def __len__(self) -> int:
        return len(self._routes)

    @property
    def waiting(self) -> int:
        """Requests held right now for a decision (each holds its body in memory)."""
        return sum(count[0] for _, count in self._waiters.values())

    def decide(self, request_id: str, route: str) -> str:
        """Remember `route` for `request_id` unless one is already known; the route in force."""
        known = self.get(request_id)
        if known is not None:
            return known
        self._routes[request_id] = (route, self.clock() + self.ttl)
        self._prune()
        waiter = self._waiters.pop(request_id, None)
        if waiter is not None:
            waiter[0].set()
        return route

    def get(self, request_id: str) -> str | None:
        entry = self._routes.get(request_id)
        if entry is None:
            return None
        route, expires = entry
        if expires <= self.clock():
            del self._routes[request_id]
            return None
        return route

    async def wait(self, request_id: str, timeout: float) -> str | None:
        """The route once decided, or None after `timeout` seconds."""
        route = self.get(request_id)
        if route is not None:
            return route
        waiter = self._waiters.setdefault(request_id, (asyncio.Event(), [0]))
        event, waiting = waiter
        waiting[0] += 1
        try:
            async with asyncio.timeout(timeout):
                await event.wait()
        except TimeoutError:
            return None
        finally:
            waiting[0] -= 1
            if not waiting[0] and self._waiters.get(request_id) is waiter:
                del self._waiters[request_id]  # nobody waits: forget it (no leak)
        return self.get(request_id)

    def _prune(self) -> None:
        now = self.clock()
        while self._routes:
            oldest, (_, expires) = next(iter(self._routes.items()))
            if expires > now and len(self._routes) <= self.max_entries:
                break
            del self._routes[oldest]


MAX_ROUTE_WAITERS = 256  # requests held at once while their run's route is undecided


class Routing:
    """An addon: the route of each run, decided by its run request, and how long requests that
    come before it wait for it (`cursor_byok_route_wait_ms`)."""

    def __init__(self, turns: Turns, registry: RunRegistry) -> None:
        self.turns = turns
        self.registry = registry
        self.routes = Routes()
        # conversation id → the route of its latest run (the calls around a run follow it)
        self.conversations: OrderedDict[str, str] = OrderedDict()
        self.last_route: str | None = None  # the route of the latest run decided
        self.known = Identifiers()  # every routed run's ids and prompt hash → its conversation
        self.messages = Messages()  # every routed run's user message
        self._changed = asyncio.Event()  # set (and replaced) when a conversation's route is known
        self.waiting = 0  # calls held in `wait_for` right now
        self._route_log: RouteLog | None = None

    def conversation_route(self, conversation_id: str) -> str | None:
        """The route of a conversation's latest run, if one was decided here."""
        return self.conversations.get(conversation_id) if conversation_id else None

    def note_conversation(self, conversation_id: str, route: str) -> None:
        if not conversation_id:
            return
        changed = self.conversations.get(conversation_id) != route
        self.conversations[conversation_id] = route
        self.conversations.move_to_end(conversation_id)
        while len(self.conversations) > MAX_ENTRIES:
            self.conversations.popitem(last=False)
        if changed and self._route_log is not None:  # kept across restarts (store/routes.py)
            self._route_log.append(conversation_id, route, self.conversations)
        self._changed.set()
        self._changed = asyncio.Event()

    def remember(self, request_id: str, run_request: pb.AgentRunRequest) -> None:
        """A routed run's ids, prompt hash and message, as its conversation's."""
        conversation = run_request.conversation_id
        if not conversation:
            return
        self.known.note(conversation, request_id, run_request.run_id, run_request.agent_session_id)
        action = run_request.action
        if action.WhichOneof("action") == "user_message_action":
            text = action.user_message_action.user_message.text
            self.known.note_prompt(conversation, text)
            self.messages.note(conversation, text, time.monotonic())

    async def wait_for[T](self, found: Callable[[], T | None], timeout: float) -> T | None:
        """`found()` once it is not None, trying again whenever a conversation's route becomes
        known; None after `timeout` seconds (or at once when MAX_ROUTE_WAITERS already wait)."""
        result = found()
        if result is not None or self.waiting >= MAX_ROUTE_WAITERS:
            return result
        self.waiting += 1
        try:
            async with asyncio.timeout(timeout):
                while (result := found()) is None:
                    await self._changed.wait()
        except TimeoutError:
            return found()
        finally:
            self.waiting -= 1
        return result

    def load(self, loader) -> None:
        options.declare(loader, "cursor_byok_route_wait_ms", "cursor_byok_data_dir")

    def configure(self, updated: set[str]) -> None:
        mine = options.changed(
            ctx.options, updated, "cursor_byok_route_wait_ms", "cursor_byok_data_dir"
        )
        if "cursor_byok_route_wait_ms" in mine:
            self.routes.patience = ctx.options.cursor_byok_route_wait_ms / 1000
        data_dir = options.data_dir(ctx.options)
        if self._route_log is None or (
            "cursor_byok_data_dir" in mine and self._route_log.path.parent != data_dir
        ):
            self._route_log = RouteLog(data_dir, MAX_ENTRIES)
            self._restore(self._route_log.load())

    def _restore(self, kept: OrderedDict[str, str]) -> None:
        """Routes of earlier runs of the proxy, under the ones this one decided; a BYOK
        conversation's id is known again, so a value that carries it is attributed to it."""
        merged = OrderedDict(kept)
        for conversation, route in self.conversations.items():
            merged[conversation] = route
            merged.move_to_end(conversation)
        while len(merged) > MAX_ENTRIES:
            merged.popitem(last=False)
        self.conversations = merged
        for conversation, route in kept.items():
            if route == LOCAL and self.known.owner(conversation) is None:
                self.known.note(conversation)
        if kept:
            log.debug("%d conversation route(s) restored", len(kept))

    def may_pass(self) -> bool:
        """Whether any run can go to Cursor: only then do requests wait for their route."""
        config = self.turns.routing_config()
        return config is not None and config.route_other_models == "cursor"

    def decide(
        self,
        request_id: str,
        run_request: pb.AgentRunRequest,
        opened: str = "",
        parent: str = "",
    ) -> str:
        """The route of a run, from its run request, or its parent's (`parent`: the request id
        in a subagent's `x-parent-request-id`); logged with how its stream `opened` (a `Run`
        stream: one line for both, one log record less per turn)."""
        known = self.routes.get(request_id)
        inherited = self.routes.get(parent) if parent else None
        chosen = inherited or decide(self.turns.routing_config(), run_request)
        route = self.routes.decide(request_id, chosen)
        self.remember(request_id, run_request)
        self.note_conversation(run_request.conversation_id, route)
        self.last_route = route
        if known is None and route == CURSOR:
            self.routes.recent.append(
                RoutedRun(
                    request_id,
                    run_request.conversation_id,
                    requested_model(run_request),
                    time.monotonic(),
                )
            )
        log.info(
            "%s: model %r → %s",
            f"Run {request_id} opened ({opened})" if opened else f"run {request_id}",
            requested_model(run_request),
            "Cursor's backend" if route == CURSOR else "served here",
        )
        return route

    def decide_first(
        self, request_id: str, message: pb.AgentClientMessage, opened: str = "", parent: str = ""
    ) -> str:
        """The route of a `Run` stream, from its first client message."""
        if message.WhichOneof("message") == "run_request":
            return self.decide(request_id, message.run_request, opened, parent)
        if opened:
            log.info("Run %s opened (%s)", request_id, opened)
        return self.routes.decide(request_id, LOCAL)

    async def append_route(self, append: BidiAppend, parent: str = "") -> str:
        """The route of this append's run; the run request decides it, other appends of a run
        not yet decided wait for it (bounded; then they go to Cursor as they came).

        Only Agent messages of runs we serve are ours (protocol.md §2.5): an append that is not
        an Agent message goes to Cursor at once unless its request id is one we hold (its run
        then refuses it), and an Agent-looking append of a request id another service's stream
        opened goes there too (voice input's bytes can look like an Agent message)."""
        message = append.message
        request_id = append.request_id
        if append.agent and message is not None and message.WhichOneof("message") == "run_request":
            return self.decide(request_id, message.run_request, parent=parent)
        route = self.routes.get(request_id)
        if route is not None:
            return route
        known = self.registry.knows(request_id)
        if not append.agent and not known:
            return CURSOR  # nobody's run: another service's upload, as it came
        if self.registry.run_for(request_id) is not None or not self.may_pass():
            # Every run is served here: an Agent message is ours (its run request may come
            # later); another service's stream has claimed its id above (`routes.get`).
            return LOCAL
        if self.routes.waiting >= MAX_ROUTE_WAITERS:
            return LOCAL  # bounded: a flood of appends for unknown ids is not held in memory
        route = await self.routes.wait(request_id, self.routes.patience)
        # No run request within the wait: this id goes to Cursor from now on, so its later
        # appends do not wait again (and a run split across both sides cannot happen).
        return route or self.routes.decide(request_id, CURSOR)

    async def poll_route(self, request_id: str) -> str:
        """The route of a RunPoll: its run's. Cursor polls after its first append, so the route
        is normally known; a poll of a request id nobody opened waits for it like an append."""
        route = self.routes.get(request_id)
        if route is not None:
            return route
        if self.registry.knows(request_id) or not self.may_pass():
            return LOCAL  # served here; a request id without a run request ends with not_found
        if self.routes.waiting >= MAX_ROUTE_WAITERS:
            return LOCAL
        route = await self.routes.wait(request_id, self.routes.patience)
        return route or self.routes.decide(request_id, CURSOR)
