"""Issue 33 item 6: one client cannot starve another. A bystander's one-line turn time, alone and
while another credential runs 16 streaming turns at once, through a real mitmdump.

The fake provider (tests/fakes) answers the heavy client's turns with `--chars` characters in
4-character deltas written back to back (a fast model), again and again; the bystander's turns
with one line. The figure is the bystander's whole-turn time (median and max over `--turns`).

    uv run python bench/bench_fairness.py [--heavy 16] [--chars 40000] [--turns 5]

Before/after: copy this file into the other checkout's bench/ and run it there with this
checkout's interpreter (the proxy loads the addon of the tree the script is in).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "e2e"), str(ROOT / "tests")]

from cursor_client import CursorLikeClient  # noqa: E402
from fakes.fake_provider import FakeProvider  # noqa: E402
from fakes.script import Step  # noqa: E402
from mitm import start_mitmdump  # noqa: E402
from provider_config import KEY_ENV  # noqa: E402
from provider_config import MODEL  # noqa: E402
from provider_config import write_config  # noqa: E402

HEAVY = "HEAVY-TURN"


async def bystander_turns(proxy, workspace: Path, turns: int) -> list[float]:
    client = CursorLikeClient.through(
        proxy, workspace, extra_headers={"authorization": "Bearer bystander"}
    )
    took = []
    try:
        for _ in range(turns):
            start = time.perf_counter()
            result = await client.turn(
                client.run_request("say hi", conversation_id=str(uuid.uuid4()), model=MODEL)
            )
            took.append(time.perf_counter() - start)
            assert result.end.ok, result.end
    finally:
        await client.aclose()
    return took


async def heavy_client(proxy, workspace: Path, stop: asyncio.Event, counts: list[int]) -> None:
    client = CursorLikeClient.through(
        proxy, workspace, extra_headers={"authorization": "Bearer heavy"}
    )
    try:
        while not stop.is_set():
            try:
                await client.turn(
                    client.run_request(HEAVY, conversation_id=str(uuid.uuid4()), model=MODEL)
                )
                counts[0] += 1
            except AssertionError:
                counts[1] += 1  # refused (a bound): try again
                await asyncio.sleep(0.05)
    finally:
        await client.aclose()


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        workspace = tmp_path / "ws"
        workspace.mkdir()
        async with FakeProvider(check_on_exit=False) as fp:
            big = "word " * (args.chars // 5)

            def answer(request) -> Step:
                text = str(request.json["messages"])
                if HEAVY in text:
                    return Step("reply", text=big, delay=0)
                return Step("reply", text="hi there", delay=0)

            fp.responder = answer
            config = write_config(tmp_path, fp, "openai-chat")
            env = {KEY_ENV: "sk-test"}
            proxy = start_mitmdump(tmp_path / "proxy", agent="provider", config=config, env=env)
            try:
                alone = await bystander_turns(proxy, workspace, args.turns)
                stop = asyncio.Event()
                counts = [0, 0]
                heavy = [
                    asyncio.ensure_future(heavy_client(proxy, workspace, stop, counts))
                    for _ in range(args.heavy)
                ]
                await asyncio.sleep(2.0)  # let the heavy turns get going
                loaded = await bystander_turns(proxy, workspace, args.turns)
                stop.set()
                await asyncio.gather(*heavy, return_exceptions=True)
            finally:
                proxy.stop()
    print(f"tree: {ROOT}")
    print(
        f"bystander alone: median {statistics.median(alone):.2f} s, max {max(alone):.2f} s; "
        f"with {args.heavy} heavy turns ({args.chars} chars each): median "
        f"{statistics.median(loaded):.2f} s, max {max(loaded):.2f} s "
        f"(heavy turns finished {counts[0]}, refused {counts[1]})"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heavy", type=int, default=16)
    parser.add_argument("--chars", type=int, default=40_000)
    parser.add_argument("--turns", type=int, default=5)
    asyncio.run(main(parser.parse_args()))
