"""Prompt-cache stability: how much of each request repeats the previous request's prefix.

Runs the 40-turn long-session scenario (tests/e2e/long_session.py: tool calls every turn,
questions about early facts, automatic compaction under a 16k-token window, then /summarize)
through a real mitmdump against the fake provider, which measures for every request the longest
byte-identical prefix shared with the previous request of the same conversation, over the
serialised tools + system + messages in cache order (cache-control markers removed).

Figures (bytes summed over the calls of each group):
- reuse = shared prefix / previous request: the part of what was sent last time that a prefix
  cache can serve again (100 % = nothing before the new messages changed);
- hit share = shared prefix / this request: the part of this prompt a cache can serve.
Groups: step 2+ inside a turn; the first call of each new turn; the first call after a
compaction (the prefix is rewritten once, by design), shown apart. The compaction calls
themselves are excluded.

Run: `just bench` or `uv run python bench/bench_prompt_cache.py [openai-chat anthropic ...]`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "tests"))

from cursor_client import CursorLikeClient  # noqa: E402
from fakes.fake_provider import FakeProvider  # noqa: E402
from long_session import KEY_ENV  # noqa: E402
from long_session import MODEL  # noqa: E402
from long_session import WINDOW  # noqa: E402
from long_session import Responder  # noqa: E402
from long_session import is_summary_request  # noqa: E402
from long_session import make_workspace  # noqa: E402
from long_session import script  # noqa: E402
from long_session import summarize_request  # noqa: E402
from long_session import word  # noqa: E402
from long_session import write_config  # noqa: E402
from mitm import start_mitmdump  # noqa: E402

TURNS = 40


class Group:
    def __init__(self, name: str) -> None:
        self.name = name
        self.calls = 0
        self.prefix = self.previous = self.prompt = 0

    def add(self, record) -> None:
        self.calls += 1
        self.prefix += record.prefix.prefix_bytes
        self.previous += record.prefix.previous_bytes
        self.prompt += record.prefix.prompt_bytes

    def line(self) -> str:
        if not self.calls:
            return f"  {self.name:<34} (none)"
        reuse = 100 * self.prefix / max(1, self.previous)
        hit = 100 * self.prefix / max(1, self.prompt)
        return (
            f"  {self.name:<34} {self.calls:>4} calls  reuse {reuse:6.2f} %  hit share {hit:6.2f} %"
        )


async def run(kind: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        workspace = make_workspace(tmp_path / "ws")
        async with FakeProvider(usage_from_prompt=True, context_window=WINDOW) as fp:
            fp.responder = Responder(workspace)
            proxy = start_mitmdump(
                tmp_path / "proxy",
                agent="provider",
                config=write_config(tmp_path, fp, kind),
                env={KEY_ENV: "sk-" + "bench-not-a-real-key"},  # split: not a key for scanners
            )
            client = CursorLikeClient.through(proxy, workspace)
            conversation = str(uuid.uuid4())
            state = None
            turns: list[list] = []
            correct = asked = compacted_turns = 0
            try:
                for text in script(TURNS):
                    before = len(fp.requests)
                    message = client.run_request(
                        text,
                        conversation_id=conversation,
                        model=MODEL,
                        workspace=workspace,
                        state=state,
                    )
                    result = await client.turn(message)
                    if not result.end.ok:
                        raise SystemExit(f"turn failed: {result.end.error}")
                    state = result.checkpoints[-1]
                    turns.append(fp.requests[before:])
                    if result.updates("summary_started"):
                        compacted_turns += 1
                    if text.startswith("Question"):
                        asked += 1
                        n = int(text.rsplit(" ", 1)[1].rstrip("?"))
                        correct += result.text == f"The code for item {n} is {word(n)}."
                before = len(fp.requests)
                result = await client.turn(
                    summarize_request(client, conversation, state, workspace)
                )
                summarize_ok = result.end.ok and bool(result.updates("summary"))
                last_used = state.token_details.used_tokens
            finally:
                await client.aclose()
                proxy.stop()
            requests = list(fp.requests)

    inside, across, after = (
        Group("step 2+ inside a turn"),
        Group("first call of a new turn"),
        Group("first call after a compaction"),
    )
    reset = False
    for index, calls in enumerate(turns):
        step = 0
        for record in calls:
            if is_summary_request(record):
                reset = True
                continue
            if reset:
                after.add(record)
                reset = False
            elif step == 0:
                if index > 0:
                    across.add(record)
            else:
                inside.add(record)
            step += 1
    model_calls = [r for r in requests if not is_summary_request(r)]
    cached = sum(r.step.usage[2] for r in model_calls if r.step)
    billed = sum(r.step.usage[0] for r in model_calls if r.step)
    print(f"\nprompt-cache stability — {kind}, {TURNS} turns + /summarize, window {WINDOW} tokens")
    print(
        f"  model calls {len(model_calls)}, compaction calls "
        f"{len(requests) - len(model_calls)} ({compacted_turns} automatic), overflow errors "
        f"{sum(r.overflowed for r in requests)}, peak prompt "
        f"{max(r.prefix.prompt_bytes for r in model_calls) // 4} tokens"
    )
    print(inside.line())
    print(across.line())
    print(after.line())
    share = 100 * cached / billed
    print(f"  cached share of input tokens (as the fake provider bills): {share:.1f} %")
    if kind == "anthropic":
        print("  (anthropic has no cache key: the fake keys it by the first user message, which")
        print("   compaction replaces, so the first call after a compaction counts as new)")
    print(
        f"  facts asked after compaction answered: {correct}/{asked}; /summarize ok: "
        f"{summarize_ok}; meter at end: {last_used}/{WINDOW}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "kinds",
        nargs="*",
        default=["openai-chat", "anthropic", "openai-responses"],
        help="provider wire formats to measure (default: all three)",
    )
    kinds = parser.parse_args().kinds
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    for kind in kinds:
        asyncio.run(run(kind))


if __name__ == "__main__":
    main()
