"""The run core under any order of inputs (hypothesis `RuleBasedStateMachine`): new runs,
reconnects under new request ids, client answers, streams opening and closing, the turn's own
output, cancels, time passing, and eviction at small bounds. It checks the promises the core's
docstrings make:

- an answered request is never replayed to an attempt that joined after the answer
  (`replay.py`: nothing runs twice on the client);
- one end-stream per stream, as its last frame, and one end-stream frame per run;
- owners never cross: an attempt of owner A never carries B's run, and B's messages never
  reach an attempt of A (`Refused` instead);
- a run never runs its model call twice: `StartTurn` once per run id while the run is known,
  and a run is failed at most once.
"""

from __future__ import annotations

from collections import Counter
from collections import defaultdict

import hypothesis.strategies as st
from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine
from hypothesis.stateful import initialize
from hypothesis.stateful import invariant
from hypothesis.stateful import precondition
from hypothesis.stateful import rule

from cursor_byok.core.attempts import Registry
from cursor_byok.core.attempts import Subscriber
from cursor_byok.core.runs import CancelTurn
from cursor_byok.core.runs import Command
from cursor_byok.core.runs import DropRun
from cursor_byok.core.runs import FailTurn
from cursor_byok.core.runs import PendingKind
from cursor_byok.core.runs import Refused
from cursor_byok.core.runs import Run
from cursor_byok.core.runs import RunConfig
from cursor_byok.core.runs import StartTurn
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire import connect

OWNERS = (b"alice", b"bob")
CONFIG = RunConfig(
    heartbeat_interval=3,
    grace_period=10,
    run_request_timeout=5,
    gap_timeout=5,
    linger=20,
    exec_timeout=15,
    coalesce_window=0.5,
    max_attempts=5,
    max_owner_attempts=3,
    max_owner_turns=3,
    turn_timeout=200,
    max_backlog_bytes=160,  # a few frames: runs pass it, and are failed for it once
)


def _run_request(run_id: str, conversation: str) -> pb.AgentClientMessage:
    message = pb.AgentClientMessage()
    message.run_request.run_id = run_id
    message.run_request.conversation_id = conversation
    message.run_request.action.user_message_action.user_message.text = "hi"
    return message


def _answer(kind: PendingKind, ident: int) -> pb.AgentClientMessage:
    message = pb.AgentClientMessage()
    if kind is PendingKind.EXEC:
        message.exec_client_message.id = ident
        message.exec_client_message.read_result.success.content = "x"
    else:
        message.kv_client_message.id = ident
        message.kv_client_message.set_blob_result.SetInParent()
    return message


def _cancel() -> pb.AgentClientMessage:
    message = pb.AgentClientMessage()
    message.conversation_action.cancel_action.SetInParent()
    return message


class RegistryMachine(RuleBasedStateMachine):
    """One `Registry`; this machine plays the clients, the turns and the clock."""

    @initialize()
    def start(self) -> None:
        self.core = Registry(CONFIG)
        self.now = 0.0
        self.ids = 0
        self.owner_of: dict[str, bytes] = {}  # request id → the owner that first used it
        self.seqnos: Counter[str] = Counter()  # next append seqno per request id
        self.runs: dict[str, Run] = {}  # run id → its run, while the core knows it
        self.failed: Counter[Run] = Counter()  # FailTurns per run
        self.told: list[Run] = []  # runs told to stop, whose turns have not ended yet
        self.subs: list[tuple[Subscriber, bytes]] = []
        self.ended: set[int] = set()  # sids whose end-stream was read
        # request id → (run, the keys answered before it joined): never to be read by it
        self.joined_after: dict[str, tuple[Run, set[tuple[PendingKind, int]]]] = {}

    # --- helpers ------------------------------------------------------------------------------

    def _new_id(self) -> str:
        self.ids += 1
        return f"q{self.ids}"

    def _apply(self, commands: list[Command], owner: bytes | None = None) -> None:
        for command in commands:
            if isinstance(command, StartTurn):
                run = command.run
                assert run.run_id not in self.runs, f"run {run.run_id} started twice"
                assert owner is None or run.owner == owner, "a run started for another owner"
                self.runs[run.run_id] = run
            elif isinstance(command, DropRun):
                assert self.runs.get(command.run.run_id) is command.run
                del self.runs[command.run.run_id]
            elif isinstance(command, FailTurn):
                self.failed[command.run] += 1
                assert self.failed[command.run] == 1, "a run failed twice"
                self.told.append(command.run)
            elif isinstance(command, CancelTurn):
                assert command.run.running
                self.told.append(command.run)

    def _send(self, request_id: str, owner: bytes, message: pb.AgentClientMessage) -> None:
        seqno = self.seqnos[request_id]
        self.seqnos[request_id] += 1
        known = request_id in self.core.attempts
        if not known:  # new, or forgotten: whoever uses it now opens it
            self.owner_of[request_id] = owner
        first = self.owner_of[request_id]
        try:
            commands = self.core.receive(
                request_id,
                seqno,
                message,
                raw=message.SerializeToString(),
                owner=owner,
                now=self.now,
            )
        except Refused as refused:
            self.seqnos[request_id] -= 1  # not taken: the next message has this seqno
            if known and first != owner:
                assert refused.code == "permission_denied"
            return
        assert not known or first == owner, "another owner's message was taken"
        self._apply(commands, owner)

    def _bound(self, request_id: str) -> None:
        """Note what was answered before `request_id` joined its run."""
        attempt = self.core.attempts.get(request_id)
        if attempt is not None and attempt.run is not None and request_id not in self.joined_after:
            run = attempt.run
            self.joined_after[request_id] = (run, set(run.pending.resolved))

    # --- clients ------------------------------------------------------------------------------

    @rule(owner=st.sampled_from(OWNERS), conversation=st.sampled_from(["c1", "c2", ""]))
    def new_run(self, owner: bytes, conversation: str) -> None:
        request_id = self._new_id()
        self._send(request_id, owner, _run_request(request_id, conversation))
        self._bound(request_id)

    @precondition(lambda self: self.runs)
    @rule(data=st.data(), owner=st.sampled_from(OWNERS), dropped=st.booleans())
    def reconnect(self, data: st.DataObject, owner: bytes, dropped: bool) -> None:
        """The same run request under a new request id (possibly by another owner), after the
        run's streams dropped (`dropped`) or beside them."""
        # Runs with answered requests first: rejoining those is what the replay rule is about.
        runs = sorted(self.runs.values(), key=lambda r: (not r.pending.resolved, r.run_id))
        run = data.draw(st.sampled_from(runs))
        for sub, _ in list(self.subs) if dropped else ():
            if sub.attempt.run is run:
                self.subs.remove((sub, _))
                self.core.unsubscribe(sub, now=self.now)
        request_id = self._new_id()
        self._send(request_id, owner, _run_request(run.run_id, run.conversation_id))
        attempt = self.core.attempts.get(request_id)
        if owner != run.owner and attempt is not None:
            assert attempt.run is None and attempt.ended, "an attempt took another owner's run"
        self._bound(request_id)
        if attempt is not None:  # Cursor reads what it reconnected to at once
            self._subscribe(request_id, owner)
            self.read_all()

    @precondition(lambda self: self.owner_of)
    @rule(data=st.data(), owner=st.sampled_from(OWNERS))
    def subscribe(self, data: st.DataObject, owner: bytes) -> None:
        self._subscribe(data.draw(st.sampled_from(sorted(self.owner_of))), owner)

    def _subscribe(self, request_id: str, owner: bytes) -> None:
        known = request_id in self.core.attempts
        try:
            sub, notes = self.core.subscribe(request_id, owner=owner, now=self.now)
        except Refused as refused:
            assert refused.code in ("permission_denied", "resource_exhausted")
            return
        assert not known or self.owner_of[request_id] == owner, "a stream of another owner"
        self.owner_of[request_id] = owner
        self._apply(notes)
        self.subs.append((sub, owner))

    @precondition(lambda self: self.subs)
    @rule(data=st.data())
    def unsubscribe(self, data: st.DataObject) -> None:
        sub, _ = self.subs.pop(data.draw(st.integers(0, len(self.subs) - 1)))
        self.core.unsubscribe(sub, now=self.now)

    @precondition(lambda self: self.subs)
    @rule(data=st.data())
    def read(self, data: st.DataObject) -> None:
        self._read(self.subs[data.draw(st.integers(0, len(self.subs) - 1))])

    @rule()
    def read_all(self) -> None:
        for sub in list(self.subs):
            self._read(sub)

    def _read(self, subscribed: tuple[Subscriber, bytes]) -> None:
        sub, owner = subscribed
        attempt = sub.attempt
        assert attempt.owner == owner, "a stream reads another owner's attempt"
        assert attempt.run is None or attempt.run.owner == owner, "a stream reads another's run"
        frames, ended = self.core.read(sub, now=self.now)
        envelopes = connect.decode_envelopes(b"".join(frames))
        ends = [e for e in envelopes if e.is_end_stream]
        assert len(ends) == (1 if ended else 0), "not one end-stream per stream"
        assert not ends or envelopes[-1].is_end_stream, "frames after the end-stream"
        assert sub.sid not in self.ended, "a stream read after its end"
        self._check_not_replayed(attempt.request_id, envelopes)
        if ended:
            self.ended.add(sub.sid)
            self.subs.remove(subscribed)
            self.core.unsubscribe(sub, now=self.now)

    def _check_not_replayed(self, request_id: str, envelopes: list[connect.Frame]) -> None:
        joined = self.joined_after.get(request_id)
        if joined is None:
            return
        _, answered = joined
        for envelope in envelopes:
            if envelope.is_end_stream:
                continue
            message = pb.AgentServerMessage.FromString(envelope.payload)
            kind = message.WhichOneof("message")
            if kind == "exec_server_message":
                key = (PendingKind.EXEC, message.exec_server_message.id)
            elif kind == "kv_server_message":
                key = (PendingKind.KV, message.kv_server_message.id)
            else:
                continue
            assert key not in answered, f"{key} answered before {request_id} joined, replayed"

    def _attempt_with_run(self, data: st.DataObject) -> tuple[str, Run] | None:
        carrying = sorted(r for r, a in self.core.attempts.items() if a.run is not None)
        if not carrying:
            return None
        request_id = data.draw(st.sampled_from(carrying))
        run = self.core.attempts[request_id].run
        assert run is not None
        return request_id, run

    @precondition(lambda self: self.runs)
    @rule(data=st.data(), again=st.booleans())
    def answer(self, data: st.DataObject, again: bool) -> None:
        """A client answers a request of its attempt's run (or repeats an answer)."""
        candidates = []
        for request_id, attempt in sorted(self.core.attempts.items()):
            run = attempt.run
            keys = run.pending.resolved if run is not None and again else run and run.pending
            if keys:
                candidates += [(request_id, key) for key in sorted(keys, key=lambda k: k[1])]
        if not candidates:
            return
        request_id, (kind, ident) = data.draw(st.sampled_from(candidates))
        run = self.core.attempts[request_id].run
        assert run is not None
        before = set(run.pending.resolved)
        self._send(request_id, self.core.attempts[request_id].owner, _answer(kind, ident))
        if again:
            assert set(run.pending.resolved) == before, "an answer resolved twice"

    @precondition(lambda self: self.runs)
    @rule(data=st.data(), kv=st.booleans())
    def asked_and_answered(self, data: st.DataObject, kv: bool) -> None:
        """The turn asks the client, which answers on an attempt of the run (the usual case)."""
        found = self._attempt_with_run(data)
        if found is None or not found[1].running:
            return
        request_id, run = found
        if kv:
            ident = run.open_kv(pb.KvServerMessage(get_blob_args=pb.GetBlobArgs()), now=self.now)
            answer = _answer(PendingKind.KV, ident)
        else:
            request = pb.ExecServerMessage(read_args=pb.ReadArgs(path="a"))
            answer = _answer(PendingKind.EXEC, run.open_exec(request, now=self.now))
        self._send(request_id, self.core.attempts[request_id].owner, answer)

    @precondition(lambda self: self.runs)
    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        found = self._attempt_with_run(data)
        if found is not None:
            request_id, _ = found
            self._send(request_id, self.core.attempts[request_id].owner, _cancel())

    @precondition(lambda self: self.owner_of)
    @rule(data=st.data(), owner=st.sampled_from(OWNERS))
    def stray_message(self, data: st.DataObject, owner: bytes) -> None:
        """A heartbeat on any request id, by either owner."""
        request_id = data.draw(st.sampled_from(sorted(self.owner_of)))
        self._send(request_id, owner, pb.AgentClientMessage(client_heartbeat=pb.ClientHeartbeat()))

    @rule(data=st.data(), gap=st.booleans())
    def bad_input(self, data: st.DataObject, gap: bool) -> None:
        """An append that skips a seqno (the gap times out), or bad bytes on a `Run` stream."""
        # Read attempts first: what their streams write after it is the point.
        live = sorted(self.core.attempts.items(), key=lambda i: (not i[1].subscribers, i[0]))
        if not live:
            return
        request_id, attempt = data.draw(st.sampled_from(live))
        if gap:
            self.seqnos[request_id] += 1
            heartbeat = pb.AgentClientMessage(client_heartbeat=pb.ClientHeartbeat())
            self._send(request_id, attempt.owner, heartbeat)
        else:
            error = connect.EndStreamError("invalid_argument", "bad envelope")
            self._apply(self.core.close_attempt(request_id, error, now=self.now))

    # --- the turns ----------------------------------------------------------------------------

    def _running(self, data: st.DataObject) -> Run | None:
        running = sorted((r for r in self.runs.values() if r.running), key=lambda r: r.run_id)
        return data.draw(st.sampled_from(running)) if running else None

    @precondition(lambda self: self.runs)
    @rule(data=st.data(), what=st.sampled_from(["text", "exec", "exec", "kv", "abort", "finish"]))
    def turn(self, data: st.DataObject, what: str) -> None:
        run = self._running(data)
        if run is None:
            return
        if what == "text":
            update = pb.InteractionUpdate(text_delta=pb.TextDeltaUpdate(text="t"))
            run.emit(pb.AgentServerMessage(interaction_update=update), now=self.now)
        elif what == "exec":
            run.open_exec(pb.ExecServerMessage(read_args=pb.ReadArgs(path="a")), now=self.now)
        elif what == "kv":
            run.open_kv(pb.KvServerMessage(get_blob_args=pb.GetBlobArgs()), now=self.now)
        elif what == "abort":
            run.abort_pending(now=self.now)
        else:
            run.finish(now=self.now)

    @precondition(lambda self: self.told)
    @rule()
    def turns_end(self) -> None:
        """The turns told to stop end their runs (as `_close_interrupted` does)."""
        told, self.told = self.told, []
        for run in told:
            if run.running:
                run.abort_pending(now=self.now)
                run.finish(connect.EndStreamError("canceled", "stopped"), now=self.now)

    # --- time ---------------------------------------------------------------------------------

    @rule(seconds=st.sampled_from([0.0, 0.5, 1.0, 4.0, 11.0, 25.0]))
    def time_passes(self, seconds: float) -> None:
        self.now += seconds
        self._apply(self.core.tick(self.now).commands)

    # --- invariants ---------------------------------------------------------------------------

    @invariant()
    def owners_never_cross(self) -> None:
        if not hasattr(self, "core"):
            return
        per_owner: Counter[bytes] = Counter()
        for request_id, attempt in self.core.attempts.items():
            per_owner[attempt.owner] += 1
            assert attempt.owner == self.owner_of[request_id]
            assert attempt.run is None or attempt.run.owner == attempt.owner
        assert per_owner == +self.core.owners
        for run in self.core.runs.values():
            for request_id in run.attempt_ids:
                carrier = self.core.attempts.get(request_id)
                assert carrier is None or carrier.owner == run.owner

    @invariant()
    def one_end_per_run(self) -> None:
        if not hasattr(self, "core"):
            return
        for run in self.core.runs.values():
            ends = [i for i, e in enumerate(run.entries) if e.end_stream]
            assert ends == ([] if run.running else [len(run.entries) - 1])

    @invariant()
    def known_runs_started_once(self) -> None:
        if not hasattr(self, "core"):
            return
        assert dict(self.core.runs) == self.runs
        runs_per_id: defaultdict[str, int] = defaultdict(int)
        for run in self.core.runs.values():
            runs_per_id[run.run_id] += 1
        assert all(n == 1 for n in runs_per_id.values())


RegistryMachine.TestCase.settings = settings(
    max_examples=100, stateful_step_count=80, deadline=None
)
test_the_registry_keeps_its_promises = RegistryMachine.TestCase
