"""A frame the edge can make again (a blob SET of a blob on disk, a staged checkpoint around
one): the backlog lets go of its bytes once its request was answered (a SET) or once a stream
took it (no request), replays stay byte-identical, and a frame that can no longer be made ends
the stream rather than send other bytes."""

from __future__ import annotations

from fakes.core_runs import run_request
from fakes.core_runs import send
from fakes.core_runs import started
from fakes.core_runs import subscribe
from fakes.core_runs import text

from cursor_byok.core.attempts import Registry
from cursor_byok.core.outbox import Outbox
from cursor_byok.core.outbox import PendingKind
from cursor_byok.core.outbox import set_blob_frame
from cursor_byok.core.runs import RunConfig
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire import connect

BLOB = bytes(range(256)) * 64  # 16 KiB: over the compression threshold


def kv_ack(ident: int) -> pb.AgentClientMessage:
    msg = pb.AgentClientMessage()
    msg.kv_client_message.id = ident
    msg.kv_client_message.set_blob_result.SetInParent()
    return msg


class Source:
    """An edge's stored frame: the blob SET made again, counting the loads."""

    def __init__(self, kv_id: int, blob_id: bytes, data: bytes | None) -> None:
        self.kv_id, self.blob_id, self.data = kv_id, blob_id, data
        self.loads = 0

    def load(self) -> bytes | None:
        self.loads += 1
        return None if self.data is None else set_blob_frame(self.kv_id, self.blob_id, self.data)


def _turn(data: bytes | None = BLOB, encoding: str | None = None):
    """A run that sent a delta, a blob SET (its frame made again by `Source`), more deltas."""
    core = Registry(RunConfig(coalesce_window=0))
    run = started(core, "a")
    sub = subscribe(core, "a", now=0, encoding=encoding)
    run.emit(text("before"), now=0)
    sources: list[Source] = []

    def stored(kv_id: int) -> Source:
        sources.append(Source(kv_id, b"\x01" * 32, data))
        return sources[-1]

    kv_id = run.open_set_blob(b"\x01" * 32, BLOB, now=0, stored=stored)
    [entry] = [e for e in run.entries if e.key == (PendingKind.KV, kv_id)]
    assert entry.frame == set_blob_frame(kv_id, b"\x01" * 32, BLOB)  # until a stream takes it
    first, _ = core.read(sub, now=0)
    assert entry.frame is not None  # taken, not answered: a new attempt would replay it
    send(core, "a", kv_ack(kv_id), now=1, seqno=1)
    assert entry.frame is None and entry.compressed is None and entry.delta is None
    run.emit(text("after"), now=1)
    first += core.read(sub, now=1)[0]
    [source] = sources
    return core, run, source, first


def test_a_set_let_go_of_replays_byte_identical() -> None:
    for encoding in (None, "gzip"):
        core, run, source, first = _turn(encoding=encoding)
        assert source.loads == 0  # the live stream took the bytes it was made with
        again = subscribe(core, "a", now=2, encoding=encoding)  # the same attempt, reopened
        assert core.read(again, now=2)[0] == first
        assert source.loads == 1
        assert run.outbox.final() == len(run.entries)  # an entry let go of is final, not open


def test_an_attempt_that_joins_later_skips_the_answered_set_without_making_it() -> None:
    core, _run, source, _ = _turn()
    send(core, "b", run_request("a"), now=2)
    joined = subscribe(core, "b", now=2)
    frames, _ = core.read(joined, now=2)
    assert source.loads == 0
    assert not any(BLOB in frame for frame in frames)


def test_a_frame_that_can_no_longer_be_made_ends_the_stream_there() -> None:
    core, _run, _source, first = _turn(data=None)
    again = subscribe(core, "a", now=2)
    frames, ended = core.read(again, now=2)
    assert ended and frames[:-1] == first[:1]  # the delta before it, as before, then the end
    end = connect.parse_end_stream(connect.decode_envelopes(frames[-1])[-1].payload)
    assert end.error is not None and end.error.code == "internal"


def test_a_frame_without_a_source_keeps_its_bytes() -> None:
    outbox = Outbox()
    outbox.append(b"\x00\x00\x00\x00\x01x", key=(PendingKind.KV, 1))
    [entry] = outbox.entries
    entry.let_go()
    assert entry.frame == b"\x00\x00\x00\x00\x01x" and outbox.size == 6


def test_a_frame_without_a_request_is_let_go_once_a_stream_took_it() -> None:
    core = Registry(RunConfig(coalesce_window=0))
    run = started(core, "a")
    sub = subscribe(core, "a", now=0, encoding="gzip")
    frame = set_blob_frame(0, b"\x02" * 32, BLOB)  # any envelope: a staged checkpoint's here
    source = Source(0, b"\x02" * 32, BLOB)
    run.emit_frame(frame, now=0, stored=source)
    [entry] = run.entries
    assert entry.frame is frame
    first, _ = core.read(sub, now=0)
    assert entry.frame is None and source.loads == 0
    send(core, "b", run_request("a"), now=1)  # a new attempt replays it: made again
    again = subscribe(core, "b", now=1, encoding="gzip")
    assert core.read(again, now=1)[0][: len(first)] == first and source.loads == 1


def test_a_long_set_on_disk_never_holds_its_frame() -> None:
    """A SET given the blob's size instead of its bytes (a long blob, on disk) is queued
    without a frame: the stream that takes it has the edge make it, and the backlog counts
    its size against the bound all the same."""
    core = Registry(RunConfig(coalesce_window=0))
    run = started(core, "a")
    sub = subscribe(core, "a", now=0)
    sources: list[Source] = []

    def stored(kv_id: int) -> Source:
        sources.append(Source(kv_id, b"\x01" * 32, BLOB))
        return sources[-1]

    size_before = run.outbox.size
    kv_id = run.open_set_blob(b"\x01" * 32, len(BLOB), now=0, stored=stored)
    [entry] = [e for e in run.entries if e.key == (PendingKind.KV, kv_id)]
    frame = set_blob_frame(kv_id, b"\x01" * 32, BLOB)
    assert entry.frame is None and run.outbox.size - size_before == len(frame)
    [source] = sources
    assert source.loads == 0  # nothing made until a stream takes it
    frames, _ = core.read(sub, now=0)
    assert frames[-1] == frame and source.loads == 1
    assert entry.frame is None  # and the backlog still holds no bytes of it
