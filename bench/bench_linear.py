"""Issue 33 item 7: provider streams made of very many tiny fragments, in-process.

Times the OpenAI-Chat adapter's decoder (`ChatStreamState`) over N OpenRouter-style
`reasoning_details` fragments, and over N blank content deltas before the answer (the
`<think>` splitter's undecided start), for N = 10k and 100k. Linear work means the 100k run
takes about 10x the 10k run; the quadratic merge it replaced took 39.7 s for 100k here (58 s in
the issue's full turn).

    uv run python bench/bench_linear.py [--sizes 10000,100000]
"""

from __future__ import annotations

import argparse
import json
import time

from cursor_byok.providers.openai_chat import ChatStreamState
from cursor_byok.providers.sse import SseEvent


def _details(n: int) -> list[SseEvent]:
    piece = {"type": "reasoning.text", "index": 0, "text": "abcdefghijklmnopq "}
    delta = {"choices": [{"index": 0, "delta": {"reasoning_details": [piece]}}]}
    return [SseEvent(json.dumps(delta))] * n


def _blanks(n: int) -> list[SseEvent]:
    return [SseEvent(json.dumps({"choices": [{"index": 0, "delta": {"content": "\n"}}]}))] * n


def _run(events: list[SseEvent]) -> float:
    state = ChatStreamState(provider="bench", model="m")
    start = time.perf_counter()
    for event in events:
        state.on_event(event)
    state.on_event(SseEvent("[DONE]"))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    sizes = [int(s) for s in parser.parse_args().sizes.split(",")]
    for name, make in (("reasoning_details", _details), ("blank deltas", _blanks)):
        for n in sizes:
            print(f"{name:18} {n:>8} fragments: {_run(make(n)):7.3f} s")


if __name__ == "__main__":
    main()
