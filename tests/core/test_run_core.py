"""The sans-IO core (attempts feeding runs), driven directly: no sockets, no loop, time as input."""

from __future__ import annotations

import random

import pytest

from cursor_byok.core.attempts import Registry
from cursor_byok.core.attempts import Subscriber
from cursor_byok.core.runs import CancelTurn
from cursor_byok.core.runs import DropRun
from cursor_byok.core.runs import FailTurn
from cursor_byok.core.runs import Note
from cursor_byok.core.runs import PendingKind
from cursor_byok.core.runs import Refused
from cursor_byok.core.runs import Resolve
from cursor_byok.core.runs import RunConfig
from cursor_byok.core.runs import StartTurn
from cursor_byok.core.runs import StreamEvent
from cursor_byok.core.states import RunState
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire import connect

OWNER = b"owner"


def run_request(
    text: str = "hi", *, run_id: str = "", conversation: str = "c"
) -> pb.AgentClientMessage:
    msg = pb.AgentClientMessage()
    msg.run_request.action.user_message_action.user_message.text = text
    msg.run_request.run_id = run_id
    msg.run_request.conversation_id = conversation
    return msg


def heartbeat() -> pb.AgentClientMessage:
    return pb.AgentClientMessage(client_heartbeat=pb.ClientHeartbeat())


def kv_ack(ident: int) -> pb.AgentClientMessage:
    msg = pb.AgentClientMessage()
    msg.kv_client_message.id = ident
    msg.kv_client_message.set_blob_result.SetInParent()
    return msg


def read_result(ident: int, content: str = "x") -> pb.AgentClientMessage:
    msg = pb.AgentClientMessage()
    msg.exec_client_message.id = ident
    msg.exec_client_message.read_result.success.content = content
    return msg


def text(t: str) -> pb.AgentServerMessage:
    return pb.AgentServerMessage(
        interaction_update=pb.InteractionUpdate(text_delta=pb.TextDeltaUpdate(text=t))
    )


def decode(frames: list[bytes]) -> list[pb.AgentServerMessage]:
    out = []
    for frame in connect.decode_envelopes(b"".join(frames)):
        if not frame.is_end_stream:
            out.append(pb.AgentServerMessage.FromString(frame.payload))
    return out


def end_of(frames: list[bytes]) -> connect.EndStream:
    return connect.parse_end_stream(connect.decode_envelopes(b"".join(frames))[-1].payload)


def send_all(core: Registry, request_id: str, seqno, message, now: float = 0, owner=OWNER):
    return core.receive(
        request_id, seqno, message, raw=message.SerializeToString(), owner=owner, now=now
    )


def send(core: Registry, request_id: str, seqno, message, now: float = 0, owner=OWNER):
    """The commands of one client message, without the notes for the log."""
    commands = send_all(core, request_id, seqno, message, now, owner)
    return [c for c in commands if not isinstance(c, Note)]


def subscribe(core: Registry, request_id: str = "r", now: float = 0, **kw) -> Subscriber:
    sub, notes = core.subscribe(request_id, owner=kw.pop("owner", OWNER), now=now, **kw)
    assert notes == []
    return sub


def ticked(core: Registry, now: float) -> list:
    """The commands of a tick, without the notes for the log."""
    return [c for c in core.tick(now).commands if not isinstance(c, Note)]


def started(core: Registry, request_id: str = "r", **kw):
    [cmd] = send(core, request_id, 0, run_request(**kw))
    assert isinstance(cmd, StartTurn)
    return cmd.run


# --- runs and attempts ----------------------------------------------------------------------------


def test_run_request_starts_the_turn_once() -> None:
    core = Registry()
    run = started(core)
    assert run.run_id == "r" and run.state is RunState.RUNNING
    assert run.detached  # no stream reads it yet
    assert send(core, "r", 0, run_request(), now=2) == []  # retried upload: duplicate seqno


def test_reconnect_under_a_new_request_id_attaches_to_the_run() -> None:
    core = Registry()
    run = started(core, "first", run_id="first")
    assert send(core, "second", 0, run_request(run_id="first"), now=1) == []  # no new turn
    assert core.attempts["second"].run is run
    assert run.attempt_ids == ["first", "second"]


def test_new_attempt_is_not_sent_answered_requests_but_gets_pending_ones() -> None:
    core = Registry()
    run = started(core, "a", run_id="a")
    sub_a = subscribe(core, "a", now=0)
    answered = run.open_exec(pb.ExecServerMessage(read_args=pb.ReadArgs(path="x")), now=0)
    [resolve] = send(core, "a", 1, read_result(answered), now=1)
    assert isinstance(resolve, Resolve)
    run.emit(text("between"), now=2)
    pending = run.open_exec(pb.ExecServerMessage(read_args=pb.ReadArgs(path="y")), now=3)
    seen_a, _ = core.read(sub_a, now=3)
    assert [
        m.exec_server_message.id for m in decode(seen_a) if m.HasField("exec_server_message")
    ] == [
        answered,
        pending,
    ]
    send(core, "b", 0, run_request(run_id="a"), now=4)
    sub_b = subscribe(core, "b", now=4)
    seen_b, _ = core.read(sub_b, now=4)
    messages = decode(seen_b)
    assert [m.exec_server_message.id for m in messages if m.HasField("exec_server_message")] == [
        pending
    ]
    assert any(m.interaction_update.text_delta.text == "between" for m in messages)
    # the same attempt reopened gets exactly what it got before (the client skips that prefix)
    again = subscribe(core, "a", now=5)
    assert core.read(again, now=5)[0] == seen_a


def test_retry_after_the_run_finished_gets_the_ending_and_starts_nothing() -> None:
    core = Registry(RunConfig(linger=100))
    run = started(core, "a", run_id="a")
    run.emit(text("done"), now=1)
    run.finish(now=2)
    assert send(core, "retry", 0, run_request(run_id="a"), now=50) == []
    sub = subscribe(core, "retry", now=50)
    frames, ended = core.read(sub, now=50)
    assert ended and end_of(frames).ok
    assert decode(frames)[0].interaction_update.text_delta.text == "done"


def test_a_new_message_in_the_conversation_supersedes_the_running_run() -> None:
    core = Registry()
    old = started(core, "a", run_id="a")
    commands = send(core, "b", 0, run_request(run_id="b"), now=1)
    assert isinstance(commands[0], CancelTurn) and commands[0].run is old
    assert commands[0].final == "superseded"  # its end tells the client not to retry it
    assert isinstance(commands[1], StartTurn) and commands[1].run is not old


def test_another_clients_run_is_neither_superseded_nor_joined() -> None:
    core = Registry()
    started(core, "a", run_id="a")
    commands = core.receive("b", 0, run_request(run_id="b"), raw=b"x", owner=b"someone else", now=1)
    assert [type(c) for c in commands] == [StartTurn]
    send(core, "c", 0, run_request(run_id="a"), owner=b"someone else")
    assert core.attempts["c"].ended and core.attempts["c"].end.code == "permission_denied"


def test_request_id_is_bound_to_its_owner() -> None:
    core = Registry()
    started(core, "a")
    with pytest.raises(Refused) as refused:
        send(core, "a", 1, heartbeat(), owner=b"intruder")
    assert refused.value.code == "permission_denied"
    with pytest.raises(Refused):
        core.subscribe("a", owner=b"intruder", now=0)


# --- ordering, duplicates, clashes ---------------------------------------------------------------


def test_every_client_message_processed_once_in_seqno_order_under_permutations() -> None:
    rng = random.Random(7)
    for _ in range(200):
        core = Registry()
        [cmd] = send(core, "r", 0, run_request())
        run = cmd.run
        kv_ids = [
            run.open_kv(pb.KvServerMessage(set_blob_args=pb.SetBlobArgs()), now=0) for _ in range(8)
        ]
        stream = [kv_ack(i) for i in kv_ids] + [heartbeat()] * 3
        arrivals = [(i + 1, m) for i, m in enumerate(stream)] * 2  # every upload sent twice
        rng.shuffle(arrivals)
        commands = []
        for seqno, message in arrivals:
            commands += send(core, "r", seqno, message, now=1)
        resolved = [c.key for c in commands if isinstance(c, Resolve)]
        assert resolved == [(PendingKind.KV, i) for i in kv_ids]
        assert not run.pending
        assert core.seqno_clashes == 0


def test_a_result_reusing_a_seqno_is_still_applied_and_counted() -> None:
    core = Registry()
    run = started(core)
    ident = run.open_kv(pb.KvServerMessage(set_blob_args=pb.SetBlobArgs()), now=0)
    send(core, "r", 1, heartbeat())
    [note, cmd] = send_all(core, "r", 1, kv_ack(ident))  # same seqno, different message
    assert isinstance(cmd, Resolve)
    assert core.seqno_clashes == 1
    assert note.level == "warning"
    assert str(note) == (
        "request r: append_seqno 1 reused by a different message (kv_client_message)"
        "; applied, it names what it answers"
    )


def test_result_for_unknown_id_is_ignored() -> None:
    core = Registry()
    run = started(core)
    assert send(core, "r", 1, kv_ack(99)) == []
    assert run.ignored_results == 1


def test_empty_exec_result_is_not_a_result() -> None:
    core = Registry()
    run = started(core)
    ident = run.open_exec(pb.ExecServerMessage(read_args=pb.ReadArgs(path="a")), now=0)
    empty = pb.AgentClientMessage()
    empty.exec_client_message.id = ident
    assert send(core, "r", 1, empty) == []
    assert (PendingKind.EXEC, ident) in run.pending


def test_shell_stream_events_then_terminal_result() -> None:
    core = Registry()
    run = started(core)
    ident = run.open_exec(pb.ExecServerMessage(shell_stream_args=pb.ShellArgs(command="ls")), now=0)
    out = pb.AgentClientMessage()
    out.exec_client_message.id = ident
    out.exec_client_message.shell_stream.stdout.data = "x"
    [event] = send(core, "r", 1, out)
    assert isinstance(event, StreamEvent)
    done = pb.AgentClientMessage()
    done.exec_client_message.id = ident
    done.exec_client_message.shell_stream.exit.code = 0
    [final] = send(core, "r", 2, done)
    assert isinstance(final, Resolve)
    assert not run.pending


def test_run_stream_must_start_with_a_run_request_and_answer_only_what_was_asked() -> None:
    core = Registry()
    core.receive("s", None, heartbeat(), owner=OWNER, now=0, transport="run")
    assert core.attempts["s"].end.code == "invalid_argument"
    core.receive("t", None, run_request(run_id="t"), owner=OWNER, now=0, transport="run")
    [note, fail] = core.receive("t", None, read_result(7), owner=OWNER, now=1, transport="run")
    assert isinstance(fail, FailTurn) and "never sent" in fail.message
    assert str(note) == "request t: protocol error: a result for a request never sent"


# --- outbox -------------------------------------------------------------------------------------


def test_cancel_action_and_abort_frames() -> None:
    core = Registry()
    run = started(core)
    sub = subscribe(core, "r", now=0)
    ident = run.open_exec(pb.ExecServerMessage(read_args=pb.ReadArgs(path="a")), now=0)
    cancel = pb.AgentClientMessage()
    cancel.conversation_action.cancel_action.reason = "stop"
    [cmd] = send(core, "r", 1, cancel, now=1)
    assert isinstance(cmd, CancelTurn) and cmd.final == "user"
    run.abort_pending(now=1)
    run.finish(connect.EndStreamError("canceled", "stop"), now=1)
    frames, ended = core.read(sub, now=1)
    assert ended
    assert decode(frames)[-1].exec_server_control_message.abort.id == ident
    assert send(core, "r", 2, read_result(ident, "late"), now=2) == []  # aborted: dropped
    assert run.ignored_results == 0


def test_reconnect_replays_backlog_from_start_without_heartbeats() -> None:
    core = Registry(RunConfig(heartbeat_interval=1, coalesce_window=0))
    first = subscribe(core, "r", now=0)
    run = started(core)
    run.emit(text("a"), now=0)
    core.read(first, now=0)
    ticked(core, 5)  # silence → a live heartbeat
    beat, _ = core.read(first, now=5)
    assert decode(beat)[0].interaction_update.HasField("heartbeat")
    core.unsubscribe(first, now=5)
    run.emit(text("b"), now=6)
    second = subscribe(core, "r", now=7)
    again, ended = core.read(second, now=7)
    assert not ended
    assert [m.interaction_update.text_delta.text for m in decode(again)] == ["a", "b"]


def test_deltas_within_the_window_are_held_and_go_out_as_one_frame() -> None:
    core = Registry(RunConfig(coalesce_window=0.015))
    run = started(core)
    sub = subscribe(core, "r", now=0)

    def texts(now: float) -> list[str]:
        core.tick(now)  # time passing: the core releases what is due
        return [m.interaction_update.text_delta.text for m in decode(core.read(sub, now=now)[0])]

    run.emit(text("a"), now=1.000)
    assert texts(1.000) == ["a"]  # the first delta of a burst: out at once
    run.emit(text("b"), now=1.005)
    run.emit(text("c"), now=1.010)
    assert run.held_from is not None and run.hold_until == pytest.approx(1.015)
    assert core.next_deadline() == pytest.approx(1.015)  # the release is the core's deadline
    assert texts(1.012) == []  # held: within the window of the last release
    assert texts(1.015) == ["bc"]  # the window has passed: one frame
    run.emit(text("d"), now=1.020)  # within the window of that release: held again
    run.open_kv(pb.KvServerMessage(set_blob_args=pb.SetBlobArgs()), now=1.021)
    run.emit(text("e"), now=1.022)  # never merged across another frame
    kinds = [m.WhichOneof("message") for m in decode(core.read(sub, now=1.022)[0])]
    # Another frame releases what is held (order is kept); e came after it, so it waits.
    assert kinds == ["interaction_update", "kv_server_message"]
    assert texts(1.040) == ["e"]
    run.emit(text("f"), now=2.0)
    run.emit(text("g"), now=2.1)  # after a quiet spell: at once, its own frame
    assert texts(2.1) == ["f", "g"]
    run.finish(now=2.2)
    again = subscribe(core, "r", now=3)  # replays what was sent, byte-identical
    assert [
        m.interaction_update.text_delta.text
        for m in decode(core.read(again, now=3)[0])
        if m.HasField("interaction_update")
    ] == ["a", "bc", "d", "e", "f", "g"]


def test_a_lagging_stream_takes_the_deltas_queued_meanwhile_as_one_frame() -> None:
    core = Registry(RunConfig(coalesce_window=0.015))
    run = started(core)
    sub = subscribe(core, "r", now=0)
    run.emit(text("a"), now=1.0)
    run.emit(text("b"), now=1.1)  # readable at once (quiet spell) but nobody read a yet
    frames, _ = core.read(sub, now=1.1)
    assert [m.interaction_update.text_delta.text for m in decode(frames)] == ["a", "b"]
    run.emit(text("c"), now=2.0)  # readable at once; the stream is busy and has not taken it
    run.emit(text("d"), now=2.005)  # so d and e join it
    run.emit(text("e"), now=2.012)
    assert run.final() == len(run.entries) - 1  # the unread delta tail may still change
    frames, _ = core.read(sub, now=2.02)
    assert [m.interaction_update.text_delta.text for m in decode(frames)] == ["cde"]
    assert run.final() == len(run.entries)  # taken by a stream: final


def test_no_window_holds_nothing() -> None:
    core = Registry(RunConfig(coalesce_window=0))
    run = started(core)
    sub = subscribe(core, "r", now=0)
    for i, ch in enumerate("abc"):
        run.emit(text(ch), now=1 + i * 0.001)
    frames, _ = core.read(sub, now=1.002)
    assert [m.interaction_update.text_delta.text for m in decode(frames)] == ["a", "b", "c"]
    assert run.held_from is None


def test_large_frames_compressed_for_gzip_subscribers() -> None:
    core = Registry(RunConfig(coalesce_window=0))
    run = started(core)
    sub = subscribe(core, "r", now=0, encoding="gzip")
    run.emit(text("x" * 10000), now=0)
    run.emit(text("y"), now=0)
    frames, _ = core.read(sub, now=0)
    chunk = b"".join(frames)
    assert chunk[0] == connect.FLAG_COMPRESSED and len(frames[0]) < 1000
    decoded = connect.decode_envelopes(chunk, encoding="gzip")
    assert pb.AgentServerMessage.FromString(decoded[0].payload) == text("x" * 10000)
    assert decoded[1].flags == 0


def test_grpc_web_subscribers_get_a_grpc_trailer() -> None:
    core = Registry()
    run = started(core)
    sub = subscribe(core, "r", now=0, grpc_web=True)
    run.finish(connect.EndStreamError("permission_denied", "no key"), now=1)
    frames, ended = core.read(sub, now=1)
    assert ended and frames[-1][0] == 0x80
    assert b"grpc-status: 7" in frames[-1] and b"grpc-message: no key" in frames[-1]


# --- time ---------------------------------------------------------------------------------------


def test_grace_period_cancels_once_when_every_stream_is_gone() -> None:
    core = Registry(RunConfig(grace_period=10))
    sub = subscribe(core, "r", now=0)
    started(core)
    core.unsubscribe(sub, now=1)
    assert core.next_deadline() <= 11
    assert ticked(core, 5) == []
    [cmd] = ticked(core, 11)
    assert isinstance(cmd, CancelTurn) and cmd.final is None  # the client may come back
    assert ticked(core, 12) == []


def test_run_request_timeout_ends_with_not_found() -> None:
    core = Registry(RunConfig(run_request_timeout=3))
    sub = subscribe(core, "r", now=0)
    ticked(core, 4)
    frames, ended = core.read(sub, now=4)
    assert ended and end_of(frames).error.code == "not_found"


def test_seqno_gap_fails_a_running_turn() -> None:
    core = Registry(RunConfig(gap_timeout=30))
    started(core)
    send(core, "r", 2, heartbeat(), now=1)
    assert ticked(core, 20) == []
    [cmd] = ticked(core, 32)
    assert isinstance(cmd, FailTurn) and "append_seqno 1 never arrived" in cmd.message
    assert core.budget.used == 0


def test_unanswered_exec_fails_the_run_naming_it() -> None:
    core = Registry(RunConfig(exec_timeout=60))
    run = started(core)
    run.open_exec(pb.ExecServerMessage(shell_stream_args=pb.ShellArgs(command="sleep")), now=0)
    ident = run.open_exec(pb.ExecServerMessage(read_args=pb.ReadArgs(path="a")), now=0)
    assert core.next_deadline() == 60
    [cmd] = ticked(core, 60)
    assert isinstance(cmd, FailTurn) and cmd.code == "deadline_exceeded"
    assert f"exec {ident} (read_args" in cmd.message and "shell" not in cmd.message
    assert ticked(core, 120) == []


def test_heartbeat_deadline_is_exact_and_live_only() -> None:
    core = Registry(RunConfig(heartbeat_interval=5))
    run = started(core)
    sub = subscribe(core, "r", now=0)
    assert core.next_deadline() == 5
    ticked(core, 5)
    frames, _ = core.read(sub, now=5)
    assert decode(frames)[0].interaction_update.HasField("heartbeat")
    assert run.entries == []


def test_finished_run_is_dropped_after_linger() -> None:
    core = Registry(RunConfig(linger=30))
    run = started(core)
    run.finish(now=1)
    assert ticked(core, 10) == []
    [drop] = ticked(core, 31)
    assert isinstance(drop, DropRun) and drop.run.state is RunState.DROPPED
    assert "r" not in core.runs and "r" not in core.attempts


# --- bounds -------------------------------------------------------------------------------------


def test_out_of_order_uploads_share_one_global_budget() -> None:
    core = Registry(RunConfig(max_buffered_bytes=1000, max_attempt_buffered_bytes=800))
    big = pb.AgentClientMessage(client_heartbeat=pb.ClientHeartbeat())
    core.receive("a", 5, big, raw=b"x" * 600, owner=OWNER, now=0)
    assert core.budget.used == 600
    with pytest.raises(Refused) as refused:
        core.receive("b", 5, big, raw=b"x" * 600, owner=OWNER, now=0)
    assert refused.value.code == "resource_exhausted"
    assert core.attempts["b"].end.code == "resource_exhausted"
    assert core.budget.used == 600
    with pytest.raises(Refused):  # the refused request id stays refused
        core.receive("b", 6, big, raw=b"x", owner=OWNER, now=0)


def test_too_many_attempts_evicts_the_idle_or_refuses() -> None:
    core = Registry(RunConfig(max_attempts=2))
    core.open_attempt("idle", owner=OWNER, now=0)
    subscribe(core, "busy", now=1)
    _, [note] = core.open_attempt("new", owner=OWNER, now=2)
    assert set(core.attempts) == {"busy", "new"}
    assert str(note) == "request idle: dropped to make room for new requests"
    subscribe(core, "new", now=3)
    with pytest.raises(Refused) as refused:
        core.open_attempt("more", owner=OWNER, now=4)
    assert refused.value.code == "resource_exhausted"


def test_the_transition_table_rejects_illegal_events() -> None:
    from cursor_byok.core.states import RUN_TRANSITIONS
    from cursor_byok.core.states import IllegalEvent
    from cursor_byok.core.states import RunEvent

    core = Registry()
    run = started(core)
    run.finish(now=1)
    with pytest.raises(IllegalEvent):
        run.emit(text("late"), now=2)
    with pytest.raises(IllegalEvent):
        run.open_exec(pb.ExecServerMessage(read_args=pb.ReadArgs(path="a")), now=2)
    assert send(core, "r", 1, heartbeat(), now=3) == []  # late client messages are fine
    assert (RunState.FINISHED, RunEvent.EMIT) not in RUN_TRANSITIONS


def test_an_attempt_lives_new_bound_ended_then_forgotten() -> None:
    from cursor_byok.core.states import AttemptState
    from cursor_byok.core.states import IllegalEvent

    core = Registry(RunConfig(linger=30, run_request_timeout=5))
    attempt, _ = core.open_attempt("a", owner=OWNER, now=0)
    assert attempt.state is AttemptState.NEW
    run = started(core, "a")
    assert attempt.state is AttemptState.BOUND and attempt.run is run
    core.close_attempt("a", connect.EndStreamError("invalid_argument", "bad frame"), now=1)
    assert attempt.state is AttemptState.ENDED and attempt.end.code == "invalid_argument"
    assert send(core, "a", 1, heartbeat(), now=2) == []  # an ended attempt still feeds its run
    # Ended before it carried a run: refused from then on, forgotten after the linger.
    lone, _ = core.open_attempt("lone", owner=OWNER, now=0)
    ticked(core, 5)
    assert lone.state is AttemptState.REFUSED and lone.end.code == "not_found"
    with pytest.raises(Refused) as refused:
        send(core, "lone", 0, run_request(), now=6)
    assert refused.value.code == "not_found"
    run.finish(now=10)
    ticked(core, 40)
    assert lone.state is AttemptState.FORGOTTEN and attempt.state is AttemptState.FORGOTTEN
    assert core.attempts == {} and core.runs == {}
    with pytest.raises(IllegalEvent):  # a forgotten attempt is never used again
        attempt.close(None)


def test_the_next_deadline_is_never_later_than_any_timer() -> None:
    """next_deadline() is kept, not computed (the shell asks after every frame): whatever the
    inputs, it must never be later than the earliest timer the core has, or a timer is missed."""
    rng = random.Random(3)
    # Timers far apart, so that one kept deadline cannot hide another one's.
    config = RunConfig(
        heartbeat_interval=5, grace_period=40, run_request_timeout=30, gap_timeout=20,
        linger=60, exec_timeout=10, coalesce_window=0.5,
    )  # fmt: skip
    for _ in range(60):
        core = Registry(config)
        now, subs, runs, seqnos = 0.0, [], [], {}
        for _ in range(120):
            now += rng.choice([0.0, 0.1, 0.3, 1.0, 2.5, 9.0])
            op = rng.randrange(8)
            rid = f"r{rng.randrange(4)}"
            try:
                if op == 0:
                    subs.append(subscribe(core, rid, now=now))
                elif op == 1 and subs:
                    core.unsubscribe(subs.pop(rng.randrange(len(subs))), now=now)
                elif op == 2:
                    seqno = seqnos.get(rid, 0) + rng.choice([0, 1, 2])  # duplicates and gaps
                    seqnos[rid] = seqno
                    message = run_request(run_id=rid) if seqno == 0 else heartbeat()
                    for c in send_all(core, rid, seqno, message, now=now):
                        if isinstance(c, StartTurn):
                            runs.append(c.run)
                elif op in (3, 4) and runs:
                    run = rng.choice(runs)
                    if run.running:
                        run.emit(text("x"), now=now)
                elif op == 5 and runs:
                    run = rng.choice(runs)
                    if run.running:
                        run.open_exec(
                            pb.ExecServerMessage(read_args=pb.ReadArgs(path="a")), now=now
                        )
                elif op == 6 and runs:
                    rng.choice(runs).finish(now=now)
                else:
                    core.tick(now)
            except Refused:
                pass
            for sub in subs:
                core.read(sub, now=now)
            held = [r.hold_until for r in core.runs.values() if r.held_from is not None]
            earliest = min([core._scan_deadline(), *held])
            if earliest != float("inf"):
                assert core.next_deadline() <= earliest


def test_what_brings_a_timer_forward_lowers_the_next_deadline() -> None:
    """After a tick the kept deadline is exact; each input that starts a shorter timer lowers it."""
    core = Registry(RunConfig(heartbeat_interval=50, grace_period=10, linger=20))
    sub = subscribe(core, "r", now=0)
    run = started(core)
    assert core.next_deadline() == 10  # a lower bound: the grace of the run before it was read
    ticked(core, 10)  # nothing due: the deadline is exact again (the heartbeat at 50)
    assert core.next_deadline() == 50
    core.unsubscribe(sub, now=11)  # the last stream: the grace period starts
    assert core.next_deadline() == 21
    subscribe(core, "r", now=12)  # a stream again: no grace; its heartbeat at 62
    ticked(core, 21)
    assert core.next_deadline() == 62
    run.finish(now=22)
    assert core.next_deadline() == 42  # the linger


def test_a_frame_is_made_once_when_final_and_shared_by_every_stream() -> None:
    """One pass per frame: a held delta is not serialised until its frame is final; then its
    envelope (and each compressed envelope) is made once and every stream writes those bytes."""
    core = Registry(RunConfig(coalesce_window=0.015))
    run = started(core, "a", run_id="a")
    send(core, "b", 0, run_request(run_id="a"))  # a second attempt of the run
    one, two = subscribe(core, "a"), subscribe(core, "b")
    gzip_one = subscribe(core, "a", encoding="gzip")
    gzip_two = subscribe(core, "b", encoding="gzip")
    assert run.emit(text("first"), now=1.0)  # out at once: news for the streams
    [first_a], _ = core.read(one, now=1.0)
    [first_b], _ = core.read(two, now=1.0)
    assert first_a is first_b is run.entries[0].frame  # one envelope, made when taken
    assert not run.emit(text("second"), now=1.005)  # held: news for nobody yet
    assert not run.emit(text(" and third"), now=1.010)
    held = run.entries[-1]
    assert held.frame is None  # nothing serialised while it may still grow
    core.tick(1.015)
    [merged_a], _ = core.read(one, now=1.015)
    [merged_b], _ = core.read(two, now=1.015)
    assert merged_a is merged_b is held.frame
    assert held.delta is None  # final: bytes only
    assert decode([merged_a])[0] == text("second and third")
    run.emit(text("x" * 10_000), now=2.0)
    [*_, big_one], _ = core.read(gzip_one, now=2.0)
    [*_, big_two], _ = core.read(gzip_two, now=2.0)
    assert big_one is big_two and big_one[0] == connect.FLAG_COMPRESSED  # compressed once


def test_a_backlog_past_its_bound_fails_the_turn_once_naming_the_limit() -> None:
    core = Registry(RunConfig(max_backlog_bytes=1000, coalesce_window=0))
    run = started(core)
    checkpoint = pb.AgentServerMessage(
        conversation_checkpoint_update=pb.ConversationStateStructure(
            root_prompt_messages_json=[b"x" * 400]
        )
    )
    run.emit(checkpoint, now=1)
    run.emit(checkpoint, now=1)
    assert ticked(core, 1) == []  # 2 frames of ~410 bytes: within the bound
    run.emit(text("y" * 300), now=2)
    assert core.next_deadline() == 2  # over it: the next tick fails the turn
    [fail] = ticked(core, 2)
    assert isinstance(fail, FailTurn) and fail.code == "resource_exhausted"
    assert "passed 1000 bytes" in fail.message and "cursor_byok_max_turn_output_mb" in fail.message
    run.emit(text("z"), now=3)  # the turn stops at its next await: no second failure
    assert ticked(core, 3) == []
    assert run.outbox.size == sum(len(e.frame) for e in run.entries if e.frame is not None)


def test_a_turn_past_its_time_limit_fails_once_naming_the_option() -> None:
    core = Registry(RunConfig(turn_timeout=100, grace_period=1000, heartbeat_interval=1000))
    run = started(core)
    start = run.created_at
    assert core.next_deadline() <= start + 100
    assert ticked(core, start + 99) == []
    [fail] = ticked(core, start + 100)
    assert isinstance(fail, FailTurn) and fail.code == "deadline_exceeded"
    assert "ran for 100 s" in fail.message and "cursor_byok_turn_timeout_ms" in fail.message
    assert ticked(core, start + 200) == []  # once; the turn stops at its next await


def test_a_cancelled_run_still_fails_and_a_failed_one_is_told_nothing_more() -> None:
    """CANCELLED and FAILED are states: a cancelled turn (it may still publish a checkpoint)
    is held to its limits; a failed one ends when it hears of it, so it hears once."""
    core = Registry(RunConfig(turn_timeout=100, grace_period=10, heartbeat_interval=1000))
    run = started(core)
    [cancel] = ticked(core, 10)  # no stream for the grace period
    assert isinstance(cancel, CancelTurn) and run.state is RunState.CANCELLED
    [fail] = ticked(core, 100)
    assert isinstance(fail, FailTurn) and run.state is RunState.FAILED
    cancel_action = pb.AgentClientMessage()
    cancel_action.conversation_action.cancel_action.SetInParent()
    assert send(core, "r", 1, cancel_action, now=101) == []  # no cancel after the failure
    assert ticked(core, 200) == [] and core.next_deadline() is None
    run.finish(now=201)
    assert run.state is RunState.FINISHED


def test_a_backlog_past_its_bound_is_a_state_until_the_next_tick() -> None:
    core = Registry(RunConfig(max_backlog_bytes=100, coalesce_window=0, turn_timeout=5))
    run = started(core, "r", run_id="r")
    [cancel] = send(core, "r", 1, _cancel_action(), now=0)  # a cancelled turn is still bound
    assert isinstance(cancel, CancelTurn) and run.state is RunState.CANCELLED
    run.emit(text("y" * 200), now=1)
    assert run.state is RunState.OVER_BACKLOG and core.next_deadline() == 1
    # Until the next tick the turn goes on as before: it emits, asks, hears, is rejoined.
    run.emit(text("more"), now=1)
    ident = run.open_exec(pb.ExecServerMessage(read_args=pb.ReadArgs(path="a")), now=1)
    assert isinstance(send(core, "r", 2, read_result(ident), now=1)[0], Resolve)
    send(core, "r2", 0, run_request(run_id="r"), now=1)
    [again] = send(core, "r", 3, _cancel_action(), now=1)
    assert isinstance(again, CancelTurn) and run.state is RunState.OVER_BACKLOG
    [fail] = ticked(core, 6)  # the output limit, not the time limit that passed meanwhile
    assert isinstance(fail, FailTurn) and fail.code == "resource_exhausted"
    assert run.state is RunState.FAILED
    run.emit(text("z"), now=7)  # still over the bound: said once
    assert run.state is RunState.FAILED and ticked(core, 8) == []


def test_a_reconnect_after_every_attempt_was_evicted_is_not_sent_answered_requests() -> None:
    """Found by tests/core/test_registry_stateful.py: the run's only attempt was dropped to make
    room, and the attempt that came back to it was bound as if first, so the exec the client
    had answered went to it again (and would have run twice on the client)."""
    core = Registry(RunConfig(max_owner_attempts=2))
    run = started(core, "a", run_id="a")
    answered = run.open_exec(pb.ExecServerMessage(read_args=pb.ReadArgs(path="x")), now=0)
    core.unsubscribe(subscribe(core, "a", now=0), now=1)  # its client left it
    send(core, "a", 1, read_result(answered), now=1)
    subscribe(core, "busy", now=2)
    core.open_attempt("new", owner=OWNER, now=3)  # "a" (its run unread now) makes room
    assert "a" not in core.attempts and run.attempt_ids == []
    send_all(core, "back", 0, run_request(run_id="a"), now=4)  # "new" (idle) makes room
    frames, _ = core.read(subscribe(core, "back", now=4), now=4)
    assert not [m for m in decode(frames) if m.HasField("exec_server_message")]


def _cancel_action() -> pb.AgentClientMessage:
    message = pb.AgentClientMessage()
    message.conversation_action.cancel_action.SetInParent()
    return message


def test_the_core_states_hash_by_identity() -> None:
    """Every table lookup hashes a state and an event: by identity, not `Enum.__hash__` (a
    Python call per hash), and a member still finds itself in the tables and sets."""
    from cursor_byok.core import states
    from cursor_byok.core.outbox import PendingKind

    kinds = [
        states.AttemptState,
        states.AttemptEvent,
        states.RunState,
        states.RunEvent,
        states.HoldState,
        states.HoldEvent,
        PendingKind,
    ]
    for kind in kinds:
        for member in kind:
            assert type(member).__hash__ is object.__hash__, kind
            assert kind(member.value) is member and {member: 1}[member] == 1
    assert (
        states.step(states.RUN_TRANSITIONS, states.RunState.RUNNING, states.RunEvent.FINISH, "run")
        is states.RunState.FINISHED
    )
