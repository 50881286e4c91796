"""A stowed frame (a blob SET the client acknowledged, made again by the edge for a replay): the
backlog keeps no bytes of it, replays stay byte-identical, and a frame that can no longer be
made ends the stream rather than send other bytes."""

from __future__ import annotations

from cursor_byok.core.attempts import Registry
from cursor_byok.core.attempts import Subscriber
from cursor_byok.core.outbox import Outbox
from cursor_byok.core.outbox import PendingKind
from cursor_byok.core.outbox import set_blob_frame
from cursor_byok.core.runs import Note
from cursor_byok.core.runs import Run
from cursor_byok.core.runs import RunConfig
from cursor_byok.core.runs import StartTurn
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire import connect

BLOB = bytes(range(256)) * 64  # 16 KiB: over the compression threshold
OWNER = b"owner"


def send(core: Registry, request_id: str, seqno: int, message: pb.AgentClientMessage, now: float):
    raw = message.SerializeToString()
    commands = core.receive(request_id, seqno, message, raw=raw, owner=OWNER, now=now)
    return [c for c in commands if not isinstance(c, Note)]


def run_request(run_id: str) -> pb.AgentClientMessage:
    msg = pb.AgentClientMessage()
    msg.run_request.action.user_message_action.user_message.text = "hi"
    msg.run_request.run_id = run_id
    msg.run_request.conversation_id = "c"
    return msg


def started(core: Registry, request_id: str) -> Run:
    [cmd] = send(core, request_id, 0, run_request(request_id), 0)
    assert isinstance(cmd, StartTurn)
    return cmd.run


def subscribe(core: Registry, request_id: str, now: float, **kw) -> Subscriber:
    sub, _ = core.subscribe(request_id, owner=OWNER, now=now, **kw)
    return sub


def kv_ack(ident: int) -> pb.AgentClientMessage:
    msg = pb.AgentClientMessage()
    msg.kv_client_message.id = ident
    msg.kv_client_message.set_blob_result.SetInParent()
    return msg


def text(t: str) -> pb.AgentServerMessage:
    update = pb.InteractionUpdate(text_delta=pb.TextDeltaUpdate(text=t))
    return pb.AgentServerMessage(interaction_update=update)


class Source:
    """An edge's stored frame: the blob SET made again, counting the loads."""

    def __init__(self, kv_id: int, blob_id: bytes, data: bytes | None) -> None:
        self.kv_id, self.blob_id, self.data = kv_id, blob_id, data
        self.loads = 0

    def load(self) -> bytes | None:
        self.loads += 1
        return None if self.data is None else set_blob_frame(self.kv_id, self.blob_id, self.data)


def _turn(encoding: str | None = None):
    """A run that sent a delta, a blob SET the client acknowledged, then more deltas."""
    core = Registry(RunConfig(coalesce_window=0))
    run = started(core, "a")
    sub = subscribe(core, "a", now=0, encoding=encoding)
    run.emit(text("before"), now=0)
    kv_id = run.open_set_blob(b"\x01" * 32, BLOB, now=0)
    first, _ = core.read(sub, now=0)
    send(core, "a", 1, kv_ack(kv_id), now=1)
    run.emit(text("after"), now=1)
    first += core.read(sub, now=1)[0]
    return core, run, kv_id, first


def test_a_stowed_blob_set_replays_byte_identical_and_keeps_no_bytes() -> None:
    for encoding in (None, "gzip"):
        core, run, kv_id, first = _turn(encoding)
        source = Source(kv_id, b"\x01" * 32, BLOB)
        assert run.stow((PendingKind.KV, kv_id), source)
        [entry] = [e for e in run.entries if e.key == (PendingKind.KV, kv_id)]
        assert entry.frame is None and entry.compressed is None and entry.delta is None
        again = subscribe(core, "a", now=2, encoding=encoding)  # the same attempt, reopened
        assert core.read(again, now=2)[0] == first
        assert source.loads == 1
        assert run.outbox.final() == len(run.entries)  # a stowed entry is final, not open


def test_an_attempt_that_joins_later_skips_the_answered_set_without_loading_it() -> None:
    core, run, kv_id, _ = _turn()
    source = Source(kv_id, b"\x01" * 32, BLOB)
    run.stow((PendingKind.KV, kv_id), source)
    send(core, "b", 0, run_request("a"), now=2)
    joined = subscribe(core, "b", now=2)
    frames, _ = core.read(joined, now=2)
    assert source.loads == 0
    assert not any(BLOB in frame for frame in frames)


def test_a_frame_that_can_no_longer_be_made_ends_the_stream_there() -> None:
    core, run, kv_id, first = _turn()
    run.stow((PendingKind.KV, kv_id), Source(kv_id, b"\x01" * 32, None))
    again = subscribe(core, "a", now=2)
    frames, ended = core.read(again, now=2)
    assert ended
    assert frames[:-1] == first[: len(frames) - 1]  # what came before it, as before
    end = connect.parse_end_stream(connect.decode_envelopes(frames[-1])[-1].payload)
    assert end.error is not None and end.error.code == "internal"


def test_stow_needs_a_final_entry_with_that_key_once() -> None:
    outbox = Outbox()
    outbox.append(b"\x00\x00\x00\x00\x01x", key=(PendingKind.KV, 1))
    source = Source(1, b"", b"")
    assert not outbox.stow((PendingKind.KV, 2), source)
    assert outbox.stow((PendingKind.KV, 1), source)
    assert not outbox.stow((PendingKind.KV, 1), source)  # stowed already
    assert outbox.size == 6  # still counted: the backlog a replay sends
