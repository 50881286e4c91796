"""Throughput of the sans-IO core: Connect envelope encode/decode, the append_seqno inbox, a run's
outbox coalescing deltas; and the memory a merged delta costs.

Run: `just bench` (or `uv run python bench/bench_codec.py`). Prints MB/s and messages/s; these
are figures to compare across changes, not assertions. The memory figures are peak RSS growth
(Linux ru_maxrss) per MB of delta text merged into one frame: through the outbox (strings, one
message per frame), and the old way (`held.text += new.text` on a protobuf message, which keeps
every intermediate string in upb's arena), measured last since it grows the process most.
"""

from __future__ import annotations

import argparse
import random
import resource
import time

from cursor_byok.core.inbox import Inbox
from cursor_byok.core.outbox import Outbox
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire import connect


def text_delta(text: str) -> pb.AgentServerMessage:
    return pb.AgentServerMessage(
        interaction_update=pb.InteractionUpdate(text_delta=pb.TextDeltaUpdate(text=text))
    )


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def merge_growth(label: str, merge, count: int, size: int) -> None:
    """Peak RSS growth of merging `count` deltas of `size` characters into one frame."""
    deltas = [text_delta("x" * size) for _ in range(count)]
    before = peak_mib()
    merge(deltas)
    grown = peak_mib() - before
    mb = count * size / 1e6
    print(f"{label:<44} {grown / mb:>10,.1f} MiB/MB    (+{grown:.0f} MiB for {mb:.1f} MB)")


def merge_outbox(deltas: list[pb.AgentServerMessage]) -> None:
    outbox = Outbox()
    outbox.last_release = 0.0  # within the window: every delta joins the held one
    for message in deltas:
        outbox.add(message, now=0.001, window=1.0)
    outbox.close(outbox.entries[-1])


def merge_in_place(deltas: list[pb.AgentServerMessage]) -> None:
    held = pb.AgentServerMessage()
    held.CopyFrom(deltas[0])
    for message in deltas[1:]:
        held.interaction_update.text_delta.text += message.interaction_update.text_delta.text
    held.SerializeToString()


def timed(label: str, work, units: float, unit: str) -> None:
    start = time.perf_counter()
    work()
    elapsed = time.perf_counter() - start
    print(f"{label:<44} {units / elapsed:>12,.0f} {unit}/s  ({elapsed * 1000:.0f} ms)")


def main() -> None:
    delta = pb.AgentServerMessage(
        interaction_update=pb.InteractionUpdate(text_delta=pb.TextDeltaUpdate(text="token "))
    ).SerializeToString()
    blob = random.Random(1).randbytes(64 * 1024)
    n = 200_000
    stream = b"".join(connect.encode_frame(delta) for _ in range(n))

    def encode_small() -> None:
        for _ in range(n):
            connect.encode_frame(delta)

    def decode_split() -> None:
        decoder = connect.EnvelopeDecoder()
        for i in range(0, len(stream), 1400):  # TCP-segment-sized chunks
            decoder.feed(stream[i : i + 1400])

    def gzip_large() -> None:
        for _ in range(200):
            connect.encode_frame(blob, encoding="gzip")

    gz = connect.encode_frame(blob, encoding="gzip")

    def gunzip_large() -> None:
        decoder = connect.EnvelopeDecoder(encoding="gzip")
        for _ in range(200):
            decoder.feed(gz)

    def inbox_shuffled() -> None:
        order = list(range(100_000))
        random.Random(2).shuffle(order)
        inbox: Inbox[int] = Inbox(max_buffered=200_000)
        for seqno in order:
            inbox.push(seqno, seqno)

    timed("encode text_delta frames", encode_small, n, "frames")
    timed("decode text_delta frames (1400 B chunks)", decode_split, n, "frames")
    timed("gzip 64 KiB frames", gzip_large, 200 * 64 / 1024, "MiB")
    timed("gunzip 64 KiB frames", gunzip_large, 200 * 64 / 1024, "MiB")

    def outbox_deltas() -> None:
        outbox = Outbox()
        now = 0.0
        for _ in range(n):
            now += 0.001  # a delta every millisecond: ~15 join each frame
            outbox.add(token, now=now, window=0.015)
            if outbox.hold.value == "open" and outbox.entries[-1].frame is None:
                outbox.close(outbox.entries[-1])  # a stream takes what is readable

    token = text_delta("token ")
    timed("inbox: 100k shuffled appends", inbox_shuffled, 100_000, "appends")
    timed("outbox: coalesced text deltas (1 ms apart)", outbox_deltas, n, "deltas")
    # Smallest first: the figure is the growth of the peak, which a bigger run would have raised.
    merge_growth("memory: 1,000 1 KB deltas, one frame (outbox)", merge_outbox, 1_000, 1024)
    merge_growth("memory: 10,000 1 KB deltas, one frame (outbox)", merge_outbox, 10_000, 1024)
    merge_growth("memory: 1,000 1 KB deltas, one frame (+=, old)", merge_in_place, 1_000, 1024)


if __name__ == "__main__":
    argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0]).parse_args()
    main()
