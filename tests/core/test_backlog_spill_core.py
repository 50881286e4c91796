"""What of a run's backlog the edge may move to disk (issue 38 item 2), sans-IO: the outbox counts
the final bytes memory holds (`resident`), offers the oldest final entries that hold bytes of
their own (`spillable`), lets go of them once they are written (`spilled`), and a replay reads
them back byte-identical; `Run.spill_due` batches it (down to half the bound, the next batch
once as many bytes came again)."""

from __future__ import annotations

from fakes.core_runs import run_request
from fakes.core_runs import send
from fakes.core_runs import started
from fakes.core_runs import subscribe
from fakes.core_runs import text

from cursor_byok.core.attempts import Registry
from cursor_byok.core.outbox import Entry
from cursor_byok.core.outbox import Outbox
from cursor_byok.core.outbox import PendingKind
from cursor_byok.core.runs import RunConfig
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire import connect

KiB = 1024


class Kept:
    """An edge's StoredFrame that makes the frame again from somewhere else (a blob)."""

    def __init__(self, data: bytes = b"") -> None:
        self.data = data

    def load(self) -> bytes | None:
        return self.data


class Disk:
    """An edge's spill file in memory: what was written, read back by index, loads counted."""

    def __init__(self) -> None:
        self.frames: list[bytes | None] = []
        self.loads = 0

    def put(self, entry: Entry, outbox: Outbox) -> None:
        assert entry.frame is not None
        self.frames.append(bytes(entry.frame))
        outbox.spilled(entry, _Stored(self, len(self.frames) - 1))


class _Stored:
    def __init__(self, disk: Disk, index: int) -> None:
        self.disk, self.index = disk, index

    def load(self) -> bytes | None:
        self.disk.loads += 1
        return self.disk.frames[self.index]


def thinking(t: str) -> pb.AgentServerMessage:
    update = pb.InteractionUpdate(thinking_delta=pb.ThinkingDeltaUpdate(text=t))
    return pb.AgentServerMessage(interaction_update=update)


def frame(size: int, fill: bytes = b"x") -> bytes:
    return connect.encode_frame_raw(0, fill * size)


def test_resident_counts_final_bytes_in_memory_only() -> None:
    outbox = Outbox()
    outbox.add(text("a" * 100), now=0, window=0)  # final at once
    assert outbox.resident == outbox.size > 100
    before = outbox.resident
    outbox.add(text("b" * 100), now=1, window=1)  # the open tail: not final, not counted
    outbox.add(text("c" * 100), now=1.5, window=1)
    assert outbox.resident == before and outbox.backlog() > before
    outbox.append(frame(50))  # closes the tail: both final now
    assert outbox.resident == outbox.size > before + 250


def test_spillable_offers_the_oldest_final_entries_down_to_keep() -> None:
    outbox = Outbox()
    for fill in b"abcdef":
        outbox.append(frame(KiB, bytes([fill])))
    each = len(outbox.entries[0].frame or b"")
    offered = outbox.spillable(keep=3 * each)
    assert offered == outbox.entries[:3]  # oldest first, just enough
    assert outbox.spillable(keep=6 * each) == []  # within the bound: nothing
    assert outbox.spillable(keep=0) == outbox.entries  # all of them


def test_spillable_passes_over_what_is_not_its_to_move() -> None:
    outbox = Outbox()
    outbox.append(frame(KiB))  # 0: plain
    outbox.append(frame(KiB), stored=Kept())  # 1: lets go by itself
    outbox.append(frame(KiB), key=(PendingKind.EXEC, 1))  # 2: a pending request: may go
    outbox.add(text("sent" * 100), now=0, window=1)  # 3: out at once (first of a burst)
    outbox.add(thinking("held" * 100), now=0.5, window=1)  # 4: held; closes 3 (another kind)
    entries = outbox.entries
    assert outbox.readable() == 4 and entries[3].delta is None
    offered = outbox.spillable(keep=0)
    assert offered == [entries[0], entries[2], entries[3]]  # not the held one
    outbox.append(frame(10), end=True)  # releases and closes 4; the end
    offered = outbox.spillable(keep=0)
    assert entries[4] in offered and entries[5] not in offered  # never the end-stream entry


def test_the_open_tail_is_never_offered() -> None:
    outbox = Outbox()
    outbox.append(frame(KiB))
    outbox.add(text("open" * 100), now=0, window=1)  # readable (first of a burst), still open
    assert outbox.readable() == 2 and outbox.entries[1].delta is not None
    assert outbox.spillable(keep=0) == [outbox.entries[0]]


def test_spilled_entries_leave_memory_and_replay_byte_identical() -> None:
    for encoding in (None, "gzip"):
        core = Registry(RunConfig(coalesce_window=0))
        run = started(core, "a")
        sub = subscribe(core, "a", now=0, encoding=encoding)
        for i in range(5):
            run.emit(text(f"{i}" * 8 * KiB), now=0)  # over the compression threshold
        first, _ = core.read(sub, now=0)
        outbox, disk = run.outbox, Disk()
        for entry in outbox.spillable(keep=0):
            disk.put(entry, outbox)
        assert outbox.resident == 0 and len(disk.frames) == 5
        assert all(e.frame is None and e.compressed is None for e in outbox.entries)
        run.emit(text("after"), now=1)
        first += core.read(sub, now=1)[0]
        assert disk.loads == 0  # the live stream had them already
        again = subscribe(core, "a", now=2, encoding=encoding)  # the same attempt, reopened
        assert core.read(again, now=2)[0] == first
        assert disk.loads == 5
        send(core, "b", run_request("a"), now=3)  # a new attempt replays them too
        joined = subscribe(core, "b", now=3, encoding=encoding)
        assert core.read(joined, now=3)[0] == first


def test_a_spilled_frame_that_cannot_be_read_ends_the_stream_there() -> None:
    core = Registry(RunConfig(coalesce_window=0))
    run = started(core, "a")
    run.emit(text("one"), now=0)
    run.emit(text("two"), now=0)
    outbox, disk = run.outbox, Disk()
    [first, second] = outbox.spillable(keep=0)
    disk.put(first, outbox)
    disk.put(second, outbox)
    disk.frames[1] = None  # the file lost it
    sub = subscribe(core, "a", now=1)
    frames, ended = core.read(sub, now=1)
    assert ended and frames[0] == disk.frames[0]
    end = connect.parse_end_stream(connect.decode_envelopes(frames[-1])[-1].payload)
    assert end.error is not None and end.error.code == "internal"


def test_letting_go_of_a_stored_frame_leaves_the_count() -> None:
    core = Registry(RunConfig(coalesce_window=0))
    run = started(core, "a")
    sub = subscribe(core, "a", now=0)
    staged = frame(4 * KiB)
    run.emit_frame(staged, now=0, stored=Kept())
    assert run.outbox.resident == len(staged)
    core.read(sub, now=0)  # a stream took it: let go (it is made again)
    assert run.outbox.resident == 0 and run.outbox.size == len(staged)
    ident = run.open_kv(pb.KvServerMessage(get_blob_args=pb.GetBlobArgs(blob_id=b"i")), now=0)
    resident = run.outbox.resident
    run.outbox.entries[-1].stored = Kept()
    run.outbox.answered((PendingKind.KV, ident))
    assert run.outbox.resident == 0 < resident


def test_spill_due_batches_down_to_half_the_bound() -> None:
    config = RunConfig(coalesce_window=0, backlog_memory=8 * KiB)
    core = Registry(config)
    run = started(core, "a")
    outbox = run.outbox
    assert run.spill_due() == []
    while outbox.resident <= 8 * KiB:
        run.emit(text("z" * 1000), now=0)
        assert outbox.resident > 8 * KiB or run.spill_due() == []
    batch = run.spill_due()
    assert batch == outbox.entries[: len(batch)]
    disk = Disk()
    for entry in batch:
        disk.put(entry, outbox)
    assert outbox.resident <= 4 * KiB
    assert run.spill_due() == []  # nothing more until as many bytes came again
    emitted = 0
    while not run.spill_due():
        run.emit(text("y" * 1000), now=0)
        emitted += 1
        assert emitted < 10, "the next batch never came"
    assert emitted >= 4  # about half the bound again, not one frame


def test_spill_due_stops_for_good_once_the_edge_keeps_them() -> None:
    run = started(Registry(RunConfig(coalesce_window=0, backlog_memory=4 * KiB)), "a")
    run.keep_in_memory()
    for _ in range(10):
        run.emit(text("z" * 1000), now=0)
    assert run.outbox.resident > 4 * KiB and run.spill_due() == []
    never = started(Registry(RunConfig(coalesce_window=0, backlog_memory=0)), "b")
    for _ in range(10):
        never.emit(text("z" * 1000), now=0)
    assert never.spill_due() == [] and never.spill_at == float("inf")


def test_a_frame_spilled_mid_run_is_what_a_lagging_stream_reads() -> None:
    """Entries no stream took yet (the client is away) may go too: the reader loads them."""
    core = Registry(RunConfig(coalesce_window=0))
    run = started(core, "a")
    for i in range(3):
        run.emit(text(f"{i}" * KiB), now=0)
    made = [bytes(e.frame or b"") for e in run.entries]
    outbox, disk = run.outbox, Disk()
    for entry in outbox.spillable(keep=0):
        disk.put(entry, outbox)
    sub = subscribe(core, "a", now=1)
    frames, _ = core.read(sub, now=1)
    assert frames == made and disk.loads == 3


def test_a_frame_appended_without_bytes_is_never_in_memory_nor_offered() -> None:
    outbox = Outbox()
    outbox.append(None, stored=Kept(frame(64 * KiB)), size=64 * KiB + 5)  # a long blob's SET
    outbox.append(frame(KiB))
    assert outbox.size == 64 * KiB + 5 + KiB + 5 and outbox.resident == KiB + 5
    assert outbox.spillable(keep=0) == [outbox.entries[1]]
