"""Throughput of the sans-IO core: Connect envelope encode/decode and the append_seqno inbox.

Run: `just bench` (or `uv run python bench/bench_codec.py`). Prints MB/s and messages/s; these
are figures to compare across changes, not assertions.
"""

from __future__ import annotations

import random
import time

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.protocol import connect
from cursor_byok.protocol.inbox import Inbox


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
    timed("inbox: 100k shuffled appends", inbox_shuffled, 100_000, "appends")


if __name__ == "__main__":
    main()
