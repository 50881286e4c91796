"""What the run journal (store/run_journal.py, issue 37 item 4) costs per streamed delta.

    uv run python bench/bench_run_journal.py [--deltas 200000] [--dir DIR]

Two figures, each the median of 5 rounds, in ns per delta (wall and process CPU):
- `journal.text`: one length-prefixed record, one `os.write` on the O_APPEND descriptor (the
  file in DIR, default a temporary directory: put it on the data dir's file system);
- `Turn.text`: the whole per-delta path of a turn's text (steps, usage, the update message,
  emit to a stub run) with the journal and without it, so the journal's share shows.
The proxy's whole CPU per delta is 100–450 µs (bench/README.md, bench_streaming.py): the
journal's ~1 µs is below what that end-to-end bench can resolve (its steps are 50 µs at one
turn, ±10% at twenty).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from cursor_byok.agent import continuation
from cursor_byok.agent.turn import Turn
from cursor_byok.cursor.checkpoint import Transcript
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.store.blobs import BlobStore
from cursor_byok.store.run_journal import RunJournal
from cursor_byok.store.run_journal import RunStart


class _Live:
    request_id = "bench"

    def __init__(self) -> None:
        self.turn = None

    def emit(self, message: pb.AgentServerMessage) -> None:
        pass


def _rounds(make: Callable[[int], Callable[[str], None]], deltas: int) -> tuple[float, float]:
    walls, cpus = [], []
    for round_ in range(5):
        call = make(round_)
        wall, cpu = time.perf_counter_ns(), time.process_time_ns()
        for _ in range(deltas):
            call("abcd")  # a provider delta is a few characters
        walls.append((time.perf_counter_ns() - wall) / deltas)
        cpus.append((time.process_time_ns() - cpu) / deltas)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=200_000)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = Path(tmp)

        def journal(round_: int) -> Callable[[str], None]:
            made = RunJournal.open(root, RunStart(f"j{round_}", "c", "a"))
            assert made is not None
            return made.text

        def turn(journaled: bool) -> Callable[[int], Callable[[str], None]]:
            def make(round_: int) -> Callable[[str], None]:
                run = pb.AgentRunRequest(conversation_id="c", run_id=f"t{journaled}{round_}")
                run.action.user_message_action.user_message.text = "q"
                state = Transcript(pb.ConversationStateStructure(), [], "bench")
                made = Turn(_Live(), run, BlobStore(root / "blobs"), state, set())  # type: ignore[arg-type]
                if journaled:
                    made.carry = continuation.start(run, root, made.ui, "bench")
                return made.text

            return make

        rows = [
            ("journal.text", _rounds(journal, args.deltas)),
            ("Turn.text, no journal", _rounds(turn(False), args.deltas)),
            ("Turn.text, journaled", _rounds(turn(True), args.deltas)),
        ]
    for label, (wall, cpu) in rows:
        print(f"{label:24} {wall:7.0f} ns wall {cpu:7.0f} ns CPU per delta")


if __name__ == "__main__":
    main()
