"""Attempts (request ids) feeding runs (run ids), and the registry of both. Sans-IO.

A **run** (`AgentRunRequest.run_id`) is one agent execution (`runs.py`). An **attempt** is one
transport carrying a run, named by its `request_id`: a RunSSE + BidiAppend pair or one `Run`
stream. Cursor reconnects by re-sending the same run request under a new request id (protocol.md
§7), so a run can have many attempts; a run request naming a run we know attaches to it and never
starts it again.

Everything here takes `now` as an input and returns `Command`s (`Note`s among them: what the
shell should log); nothing sleeps, reads a clock, logs or touches a socket. `Registry.tick(now)`
returns what it touched; `next_deadline()` says when it must run next, so the shell sleeps
exactly that long. What a stream reads is the replay rule, `replay.py`; what a client message
means for its run, `answers.py`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable

from cursor_byok.core import answers
from cursor_byok.core import eviction
from cursor_byok.core import replay
from cursor_byok.core.attempt import Attempt
from cursor_byok.core.attempt import Subscriber
from cursor_byok.core.attempt import Upload
from cursor_byok.core.attempt import digest as upload_digest
from cursor_byok.core.deadlines import Deadlines
from cursor_byok.core.inbox import Budget
from cursor_byok.core.inbox import Inbox
from cursor_byok.core.inbox import InboxOverflow
from cursor_byok.core.inbox import Outcome
from cursor_byok.core.runs import Command
from cursor_byok.core.runs import DropRun
from cursor_byok.core.runs import EndStreams
from cursor_byok.core.runs import Note
from cursor_byok.core.runs import Refused
from cursor_byok.core.runs import Run
from cursor_byok.core.runs import RunConfig
from cursor_byok.core.runs import StartTurn
from cursor_byok.core.runs import Tick
from cursor_byok.core.runs import Unresolved
from cursor_byok.core.states import AttemptState
from cursor_byok.core.states import RunState
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire.connect import EndStreamError

# what binds a run (proxy/agent_rpc.py), said to a client it refuses
NOT_YOURS = "belongs to another client (bound to its Authorization)"


_SELF_IDENTIFYING = frozenset(
    {
        "exec_client_message",
        "kv_client_message",
        "interaction_response",
        "client_heartbeat",
        "exec_client_control_message",
    }
)


class Registry:
    """Every attempt and run; the only way in for client messages and subscribers."""

    def __init__(
        self,
        config: RunConfig | None = None,
        *,
        supersedes: Callable[[pb.AgentRunRequest], bool] = lambda _request: True,
    ) -> None:
        self.config = config or RunConfig()
        self.supersedes = supersedes  # does this new run replace the conversation's running one?
        self.attempts: dict[str, Attempt] = {}
        self.runs: dict[str, Run] = {}
        # The runs that may still be running (a run never runs again once it stopped), so a
        # new run's checks read those and not the up-to-`max_attempts` finished ones lingering
        # for reconnects: those scans grew with every turn of the last ten minutes.
        self._live: dict[str, Run] = {}
        self.owners: Counter[bytes] = Counter()  # live request ids per owner (eviction.py)
        self.clients: Counter[str] = Counter()  # live request ids per client connection
        self.budget = Budget(self.config.max_buffered_bytes)
        self.timers: Deadlines[Run] = Deadlines()  # shared with every run
        self._next_sid = 1
        self.seqno_clashes = 0

    def configure(self, config: RunConfig) -> None:
        """Take a new config (options changed): every run and budget follows it."""
        self.config = config
        self.budget.limit = config.max_buffered_bytes
        for run in self.runs.values():
            run.config = config
        self.timers.due(-math.inf)  # every deadline may have moved: scan at the next tick

    # --- attempts ---------------------------------------------------------------------------

    def open_attempt(
        self,
        request_id: str,
        *,
        owner: bytes,
        now: float,
        transport: str = "bidi",
        client: str = "",
    ) -> tuple[Attempt, list[Command]]:
        """The attempt for a request id, created on first sight (making room if it must:
        `eviction.py`); refused for another owner, or when every attempt is busy."""
        attempt = self.attempts.get(request_id)
        if attempt is not None:
            if attempt.owner != owner:
                raise Refused("permission_denied", f"this request id {NOT_YOURS}")
            attempt.open(now=now)
            return attempt, []
        cfg = self.config
        commands: list[Command] = []
        if self.owners[owner] >= cfg.max_owner_attempts:
            commands += self._make_room(owner, now)
        while len(self.attempts) >= cfg.max_attempts:  # an ended one may still be writing
            held = len(self.attempts)
            commands += self._make_room(None, now, requester=(owner, client))
            if len(self.attempts) >= held:
                break  # one was ended to make room: it goes once its end is written
        attempt = Attempt(
            request_id,
            created_at=now,
            owner=owner,
            transport=transport,
            inbox=Inbox(max_buffered_bytes=cfg.max_attempt_buffered_bytes, budget=self.budget),
            client=client,
        )
        self.attempts[request_id] = attempt
        self.owners[owner] += 1
        if client:
            self.clients[client] += 1
        self.timers.due(now + cfg.run_request_timeout)
        return attempt, commands

    def run_of(self, request_id: str) -> Run | None:
        """The run a request id carries, if it carries one."""
        attempt = self.attempts.get(request_id)
        return None if attempt is None else attempt.run

    def _make_room(
        self, owner: bytes | None, now: float, requester: tuple[bytes, str] | None = None
    ) -> list[Command]:
        """Drop one attempt (of `owner`, at its own bound) as `eviction.victim` picks, cancelling
        a detached run no attempt carries any more. When every one is being read: at the global
        bound, the biggest holder (a credential or a connection) gives one up for a smaller
        client (`eviction.displace`); else the new request is refused."""
        floor = 0
        if requester is not None:
            mine, client = self.owners[requester[0]], requester[1]
            floor = max(mine, self.clients[client] if client else 0) + 1
        victim = eviction.victim(
            self.attempts.values(),
            self.owners,
            now=now,
            owner=owner,
            clients=self.clients,
            floor=floor,
            requester=requester[0] if requester is not None else None,
        )
        if victim is None and requester is not None:
            displaced = eviction.displace(
                self.attempts.values(), self.owners, self.clients, *requester
            )
            if displaced is not None:
                return self._displace(displaced, now)
        if victim is None:
            if requester is not None:
                raise Refused(
                    "resource_exhausted",
                    f"the proxy has {len(self.attempts)} Agent requests streaming at once and "
                    f"this client holds {floor - 1} of them, the most; try again when one ends",
                )
            held = self.owners[owner] if owner is not None else len(self.attempts)
            who = "this client has" if owner is not None else "the proxy has"
            raise Refused(
                "resource_exhausted",
                f"{who} {held} Agent requests streaming at once; try again when one ends",
            )
        run = victim.run
        self._forget_attempt(victim)
        commands: list[Command] = [
            Note.warning("request %s: dropped to make room for new requests", victim.request_id)
        ]
        if run is not None and run.running and not run.attempt_ids:
            commands += run.cancel("abandoned (no stream), and its client started more")
        return commands

    def _displace(self, attempt: Attempt, now: float) -> list[Command]:
        """End a read attempt of the biggest holder for a smaller client (its run fails); it is
        forgotten once its streams wrote that end (the bound is exceeded by those only)."""
        held = max(
            self.owners[attempt.owner], self.clients[attempt.client] if attempt.client else 0
        )
        message = (
            f"this client holds {held} of the proxy's {len(self.attempts)} live Agent requests, "
            "the most of any client; this one was ended to serve another client"
        )
        commands = self.close_attempt(
            attempt.request_id,
            EndStreamError("resource_exhausted", message),
            now=now,
        )
        return [
            *commands,
            EndStreams(attempt.request_id),
            Note.warning("request %s: ended to make room for another client", attempt.request_id),
        ]

    def _forget_attempt(self, attempt: Attempt) -> None:
        attempt.forget()
        if self.attempts.pop(attempt.request_id, None) is not None:
            self.owners[attempt.owner] -= 1
            if not self.owners[attempt.owner]:
                del self.owners[attempt.owner]
            if attempt.client:
                self.clients[attempt.client] -= 1
                if not self.clients[attempt.client]:
                    del self.clients[attempt.client]

    def close_attempt(
        self, request_id: str, error: EndStreamError | None, *, now: float
    ) -> list[Command]:
        """End one attempt's streams (bad input on a `Run` stream); fails its running run."""
        attempt = self.attempts.get(request_id)
        if attempt is None:
            return []
        self._close(attempt, error)
        run = attempt.run
        if error is not None and run is not None and run.running:
            return run.fail(error.code, error.message)
        return []

    def _close(self, attempt: Attempt, error: EndStreamError | None) -> None:
        attempt.close(error)
        if attempt.state is AttemptState.REFUSED:  # forgotten after the linger, if unread
            self.timers.due(attempt.last_active + self.config.linger)

    # --- client messages --------------------------------------------------------------------

    def receive(
        self,
        request_id: str,
        seqno: int | None,
        message: pb.AgentClientMessage | None,
        *,
        raw: bytes = b"",
        owner: bytes,
        now: float,
        transport: str = "bidi",
        client: str = "",
    ) -> list[Command]:
        """One client message: a BidiAppend (`seqno`) or the next message of a `Run` stream."""
        attempt, commands = self.open_attempt(
            request_id, owner=owner, now=now, transport=transport, client=client
        )
        if attempt.state is AttemptState.REFUSED and attempt.end is not None:
            raise Refused(attempt.end.code, attempt.end.message)
        if seqno is None:
            seqno = attempt.next_seqno()
        digest = upload_digest(raw) if raw else b""
        try:
            upload = Upload(message, raw)
            pushed = attempt.inbox.push(seqno, upload, size=len(raw), now=now)
        except InboxOverflow as exc:
            attempt.inbox.clear()
            failed = self._fail_attempt(attempt, "resource_exhausted", str(exc))
            if attempt.run is None:
                notes = [c for c in commands + failed if isinstance(c, Note)]
                raise Refused("resource_exhausted", str(exc), notes) from None
            return commands + failed
        if pushed.outcome is Outcome.DUPLICATE:
            commands += self._duplicate(attempt, seqno, message, digest, now)
        elif pushed.outcome is Outcome.BUFFERED:
            upload.park()
            self.timers.due(now + self.config.gap_timeout)
        if pushed.outcome is not Outcome.DUPLICATE and digest:
            attempt.remember(seqno, digest)
        for released in pushed.released:
            commands += self._dispatch(attempt, released.take(), now)
        return commands

    def _duplicate(
        self,
        attempt: Attempt,
        seqno: int,
        message: pb.AgentClientMessage | None,
        digest: bytes,
        now: float,
    ) -> list[Command]:
        """A seqno seen before: a retry (same bytes, dropped) or a clash (different bytes)."""
        if message is None or not attempt.clashes(seqno, digest):
            return [
                Note.debug(
                    "request %s: duplicate append_seqno %d dropped", attempt.request_id, seqno
                )
            ]
        self.seqno_clashes += 1
        kind = message.WhichOneof("message")
        note = Note.warning(
            "request %s: append_seqno %d reused by a different message (%s)%s",
            attempt.request_id,
            seqno,
            kind,
            "; applied, it names what it answers" if kind in _SELF_IDENTIFYING else "; dropped",
        )
        if kind in _SELF_IDENTIFYING:
            return [note, *self._dispatch(attempt, message, now)]
        return [note]

    def _dispatch(
        self, attempt: Attempt, message: pb.AgentClientMessage | None, now: float
    ) -> list[Command]:
        if message is None or attempt.state is AttemptState.REFUSED:
            return []
        attempt.last_active = now
        if message.WhichOneof("message") == "run_request":
            if attempt.state is not AttemptState.NEW:
                return [Note.info("request %s: repeated run request ignored", attempt.request_id)]
            return self._bind(attempt, message.run_request, now)
        run = attempt.run
        if run is None:
            if attempt.transport == "run":
                return self._fail_attempt(
                    attempt, "invalid_argument", "the first message must be a run request"
                )
            action = message.conversation_action
            if action.WhichOneof("action") == "user_message_action" and len(attempt.early) < 16:
                attempt.early.append(action)  # a queued message: its run request comes next
                return [
                    Note.info("request %s: a queued message, kept for its run", attempt.request_id)
                ]
            return [
                Note.info(
                    "request %s: %s before the run request ignored",
                    attempt.request_id,
                    message.WhichOneof("message"),
                )
            ]
        if attempt.transport == "run" and answers.answers_unissued(run, message):
            return self._fail_attempt(
                attempt, "invalid_argument", "protocol error: a result for a request never sent"
            )
        return answers.dispatch(run, message, now=now)

    def _bind(self, attempt: Attempt, run_request: pb.AgentRunRequest, now: float) -> list[Command]:
        run_id = run_request.run_id or attempt.request_id
        run = self.runs.get(run_id)
        commands: list[Command] = []
        if run is not None:
            if run.owner != attempt.owner:
                return self._fail_attempt(attempt, "permission_denied", f"this run {NOT_YOURS}")
            state = "running" if run.running else run.state.value
            commands.append(
                Note.info("request %s: attaches to run %s (%s)", attempt.request_id, run_id, state)
            )
            # A retry of the run carries the messages its first attempt queued: given once.
        else:
            live = self.running_runs()
            busy = eviction.running_turns(live, attempt.owner, run_request.conversation_id)
            if busy >= self.config.max_owner_turns and not run_request.subagent_type_name:
                return self._fail_attempt(attempt, "resource_exhausted", eviction.busy(busy))
            run = Run(
                run_id,
                run_request,
                owner=attempt.owner,
                now=now,
                config=self.config,
                deadlines=self.timers,
            )
            run.first_request_id = attempt.request_id
            self.runs[run_id] = self._live[run_id] = run
            for other in live if self.supersedes(run_request) else ():
                if (
                    other.running
                    and other.owner == run.owner
                    and run.conversation_id
                    and other.conversation_id == run.conversation_id
                ):
                    commands += other.cancel("superseded by a newer message", final="superseded")
            run.queued.extend(attempt.early)
            commands.append(StartTurn(run, run_request))
        attempt.bind(run, now=now)
        return commands

    def _fail_attempt(self, attempt: Attempt, code: str, message: str) -> list[Command]:
        self._close(attempt, EndStreamError(code, message))
        commands: list[Command] = [Note.warning("request %s: %s", attempt.request_id, message)]
        run = attempt.run
        if run is not None and run.running:
            commands += run.fail(code, message)
        return commands

    # --- subscribers ------------------------------------------------------------------------

    def subscribe(
        self,
        request_id: str,
        *,
        owner: bytes,
        now: float,
        encoding: str | None = None,
        grpc_web: bool = False,
        transport: str = "bidi",
        client: str = "",
    ) -> tuple[Subscriber, list[Command]]:
        """A new response stream of a request id (and the notes of opening its attempt)."""
        attempt, notes = self.open_attempt(
            request_id, owner=owner, now=now, transport=transport, client=client
        )
        sub = Subscriber(self._next_sid, attempt, encoding, grpc_web, last_sent_at=now)
        self._next_sid += 1
        attempt.subscribers[sub.sid] = sub
        self.timers.due(now + self.config.heartbeat_interval)
        run = attempt.run
        if run is not None:
            sub.joined_at = len(run.entries)
            run.stream_opened()
        return sub, notes

    def unsubscribe(self, sub: Subscriber, *, now: float) -> None:
        attempt = sub.attempt
        attempt.subscribers.pop(sub.sid, None)
        attempt.last_active = now
        run = attempt.run
        if run is not None:
            run.stream_closed(now=now)
            # the run was dropped while this stream still read it (`_drop` keeps read
            # attempts): the last reader forgets the attempt, or it holds the run's frames
            if run.state is RunState.DROPPED and not attempt.subscribers:
                self._forget_attempt(attempt)
        elif attempt.state is AttemptState.REFUSED:
            self.timers.due(now + self.config.linger)

    def read(
        self, sub: Subscriber, *, now: float, max_bytes: int | None = None
    ) -> tuple[list[bytes], bool]:
        """Encoded frames this subscriber has not been given yet, and whether its stream ended
        (the replay rule: `replay.read`)."""
        return replay.read(sub, now=now, max_bytes=max_bytes)

    # --- time -------------------------------------------------------------------------------

    def next_deadline(self) -> float | None:
        """When `tick` must run next (never later than the earliest timer; O(1))."""
        return self.timers.next()

    def _scan_deadline(self) -> float:
        """The earliest timer other than coalescing releases, exactly."""
        cfg = self.config
        deadlines: list[float] = []
        for attempt in self.attempts.values():
            deadlines += attempt.deadlines(cfg)
        for run in self.runs.values():
            deadlines += run.deadlines()
        return min(deadlines, default=math.inf)

    def tick(self, now: float) -> Tick:
        """Advance every timer that is due; returns what the shell must do and wake."""
        wake: set[str] = set()
        news: list[Run] = []
        for run in self.timers.releases_due(now):
            if run.release_due(now):
                news.append(run)
                wake.update(run.attempt_ids)
        commands: list[Command] = []
        if now >= self.timers.scan_at:
            commands = self._scan(now, wake)
            self.timers.scan_at = self._scan_deadline()
        return Tick(commands, wake, news)

    def _scan(self, now: float, wake: set[str]) -> list[Command]:
        """Every timer but the coalescing releases: heartbeats, time-outs, linger, grace."""
        cfg = self.config
        commands: list[Command] = []
        for attempt in list(self.attempts.values()):
            if (
                attempt.state is AttemptState.NEW
                and now >= attempt.created_at + cfg.run_request_timeout
            ):
                self._close(
                    attempt, EndStreamError("not_found", "no run request for this request id")
                )
                commands.append(Unresolved("request id", attempt.request_id))
                wake.add(attempt.request_id)
            gap = attempt.inbox.gap_since
            if gap is not None and now >= gap + cfg.gap_timeout:
                missing = attempt.inbox.next_seqno
                attempt.inbox.clear()
                commands += self._fail_attempt(
                    attempt,
                    "invalid_argument",
                    f"protocol error: append_seqno {missing} never arrived",
                )
                wake.add(attempt.request_id)
            if attempt.heartbeats(now, cfg.heartbeat_interval):
                wake.add(attempt.request_id)
            if (
                attempt.state is AttemptState.REFUSED
                and not attempt.subscribers
                and now >= attempt.last_active + cfg.linger
            ):
                self._forget_attempt(attempt)
        for run in list(self.runs.values()):
            for command in run.tick(now):
                if isinstance(command, DropRun):
                    self._drop(run)
                    commands.append(Note.debug("run %s: forgotten", run.run_id))
                commands.append(command)
        return commands

    def _drop(self, run: Run) -> None:
        """Forget a run that lingered long enough, and its attempts nobody reads."""
        run.drop()
        self.runs.pop(run.run_id, None)
        self._live.pop(run.run_id, None)
        for request_id in list(run.attempt_ids):
            carrier = self.attempts.get(request_id)
            if carrier is not None and carrier.run is run and not carrier.subscribers:
                self._forget_attempt(carrier)

    # --- queries ----------------------------------------------------------------------------

    def running_runs(self) -> list[Run]:
        """The runs still running (those that stopped are let go of here, once)."""
        live = self._live
        stopped = [run_id for run_id, run in live.items() if not run.running]
        for run_id in stopped:
            del live[run_id]
        return list(live.values())


__all__ = ["Attempt", "Registry", "RunState", "Subscriber", "Tick"]
