"""The per-request state machine, driven directly: no sockets, no event loop, time as input."""

from __future__ import annotations

import random

from cursor_byok import connect
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.session import CancelTurn
from cursor_byok.session import Expire
from cursor_byok.session import FailTurn
from cursor_byok.session import PendingKind
from cursor_byok.session import Resolve
from cursor_byok.session import RunState
from cursor_byok.session import Session
from cursor_byok.session import SessionConfig
from cursor_byok.session import StartTurn
from cursor_byok.session import StreamEvent


def run_request(text: str = "hi") -> pb.AgentClientMessage:
    msg = pb.AgentClientMessage()
    msg.run_request.action.user_message_action.user_message.text = text
    return msg


def heartbeat() -> pb.AgentClientMessage:
    return pb.AgentClientMessage(client_heartbeat=pb.ClientHeartbeat())


def kv_ack(ident: int) -> pb.AgentClientMessage:
    msg = pb.AgentClientMessage()
    msg.kv_client_message.id = ident
    msg.kv_client_message.set_blob_result.SetInParent()
    return msg


def decode(frames: list[bytes]) -> list[pb.AgentServerMessage]:
    out = []
    for frame in connect.decode_envelopes(b"".join(frames)):
        if not frame.is_end_stream:
            out.append(pb.AgentServerMessage.FromString(frame.payload))
    return out


def test_run_request_starts_the_turn_once() -> None:
    s = Session("r", created_at=0)
    [cmd] = s.receive(0, run_request(), now=1)
    assert isinstance(cmd, StartTurn)
    assert s.state is RunState.RUNNING
    assert s.receive(0, run_request(), now=2) == []  # retried upload: duplicate seqno


def test_every_client_message_processed_once_in_seqno_order_under_permutations() -> None:
    rng = random.Random(7)
    for _ in range(300):
        s = Session("r", created_at=0)
        kv_ids = [
            s.open_kv(pb.KvServerMessage(set_blob_args=pb.SetBlobArgs()), now=0) for _ in range(8)
        ]
        stream = [run_request()] + [kv_ack(i) for i in kv_ids] + [heartbeat()] * 3
        arrivals = list(enumerate(stream)) * 2  # every upload sent twice
        rng.shuffle(arrivals)
        commands = []
        for seqno, message in arrivals:
            commands += s.receive(seqno, message, now=1)
        assert isinstance(commands[0], StartTurn)
        resolved = [c.key for c in commands if isinstance(c, Resolve)]
        assert resolved == [(PendingKind.KV, i) for i in kv_ids]
        assert s.inbox.next_seqno == len(stream)
        assert not s.pending


def test_result_for_unknown_id_is_ignored() -> None:
    s = Session("r", created_at=0)
    s.receive(0, run_request(), now=0)
    assert s.receive(1, kv_ack(99), now=1) == []
    assert s.ignored_results == 1


def test_empty_exec_result_is_not_a_result() -> None:
    s = Session("r", created_at=0)
    s.receive(0, run_request(), now=0)
    ident = s.open_exec(pb.ExecServerMessage(read_args=pb.ReadArgs(path="a")), now=0)
    empty = pb.AgentClientMessage()
    empty.exec_client_message.id = ident
    assert s.receive(1, empty, now=1) == []
    assert (PendingKind.EXEC, ident) in s.pending


def test_shell_stream_events_then_terminal_result() -> None:
    s = Session("r", created_at=0)
    s.receive(0, run_request(), now=0)
    ident = s.open_exec(pb.ExecServerMessage(shell_stream_args=pb.ShellArgs(command="ls")), now=0)
    out = pb.AgentClientMessage()
    out.exec_client_message.id = ident
    out.exec_client_message.shell_stream.stdout.data = "x"
    [event] = s.receive(1, out, now=1)
    assert isinstance(event, StreamEvent)
    done = pb.AgentClientMessage()
    done.exec_client_message.id = ident
    done.exec_client_message.shell_stream.exit.code = 0
    [final] = s.receive(2, done, now=2)
    assert isinstance(final, Resolve)
    assert not s.pending


def test_cancel_action_and_abort_frames() -> None:
    s = Session("r", created_at=0)
    s.receive(0, run_request(), now=0)
    sub = s.subscribe(now=0)
    ident = s.open_exec(pb.ExecServerMessage(read_args=pb.ReadArgs(path="a")), now=0)
    cancel = pb.AgentClientMessage()
    cancel.conversation_action.cancel_action.reason = "stop"
    [cmd] = s.receive(1, cancel, now=1)
    assert isinstance(cmd, CancelTurn)
    s.abort_pending(now=1)
    s.finish(connect.EndStreamError("canceled", "stop"), now=1)
    frames, ended = s.read(sub)
    assert ended
    messages = decode(frames)
    assert messages[-1].exec_server_control_message.abort.id == ident
    late = pb.AgentClientMessage()
    late.exec_client_message.id = ident
    late.exec_client_message.read_result.success.content = "late"
    assert s.receive(2, late, now=2) == []  # late result of an aborted exec: dropped quietly
    assert s.ignored_results == 0


def test_reconnect_replays_backlog_from_start_without_heartbeats() -> None:
    s = Session("r", created_at=0, config=SessionConfig(heartbeat_interval=1))
    first = s.subscribe(now=0)
    s.receive(0, run_request(), now=0)
    text = pb.AgentServerMessage(
        interaction_update=pb.InteractionUpdate(text_delta=pb.TextDeltaUpdate(text="a"))
    )
    s.emit(text, now=0)
    s.tick(5)  # silence → a live heartbeat
    seen, _ = s.read(first)
    assert len(decode(seen)) == 2
    s.unsubscribe(first, now=5)
    s.emit(text, now=6)
    second = s.subscribe(now=7)
    again, ended = s.read(second)
    assert not ended
    assert [m.interaction_update.WhichOneof("message") for m in decode(again)] == ["text_delta"] * 2


def test_large_frames_compressed_for_gzip_subscribers() -> None:
    s = Session("r", created_at=0)
    sub = s.subscribe(encoding="gzip", now=0)
    big = pb.AgentServerMessage(
        interaction_update=pb.InteractionUpdate(text_delta=pb.TextDeltaUpdate(text="x" * 10000))
    )
    small = pb.AgentServerMessage(
        interaction_update=pb.InteractionUpdate(text_delta=pb.TextDeltaUpdate(text="y"))
    )
    s.emit(big, now=0)
    s.emit(small, now=0)
    frames, _ = s.read(sub)
    assert frames[0][0] == connect.FLAG_COMPRESSED and len(frames[0]) < 1000
    assert frames[1][0] == 0
    decoded = connect.decode_envelopes(b"".join(frames), encoding="gzip")
    assert pb.AgentServerMessage.FromString(decoded[0].payload) == big


def test_grace_period_cancels_once_when_the_stream_is_gone() -> None:
    s = Session("r", created_at=0, config=SessionConfig(grace_period=10))
    sub = s.subscribe(now=0)
    s.receive(0, run_request(), now=0)
    s.unsubscribe(sub, now=1)
    assert s.tick(5) == []
    [cmd] = s.tick(11)
    assert isinstance(cmd, CancelTurn)
    assert s.tick(12) == []


def test_run_request_timeout_ends_with_not_found() -> None:
    s = Session("r", created_at=0, config=SessionConfig(run_request_timeout=3))
    sub = s.subscribe(now=0)
    s.tick(4)
    frames, ended = s.read(sub)
    assert ended
    end = connect.decode_envelopes(b"".join(frames))[-1]
    assert connect.parse_end_stream(end.payload).error.code == "not_found"


def test_seqno_gap_fails_a_running_turn() -> None:
    s = Session("r", created_at=0, config=SessionConfig(gap_timeout=30))
    s.receive(0, run_request(), now=0)
    s.receive(2, heartbeat(), now=1)
    assert s.tick(20) == []
    [cmd] = s.tick(32)
    assert isinstance(cmd, FailTurn) and cmd.code == "invalid_argument"


def test_finished_session_expires_after_linger() -> None:
    s = Session("r", created_at=0, config=SessionConfig(linger=30))
    s.receive(0, run_request(), now=0)
    s.finish(now=1)
    assert s.tick(10) == []
    assert isinstance(s.tick(31)[0], Expire)
