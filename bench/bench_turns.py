"""Turns through a real mitmdump: latency to the first frame, whole-turn time, proxy memory.

Run: `just bench` (or `uv run python bench/bench_turns.py [TURNS]`). Uses the scripted agent
(no provider) and the Cursor-like test client on 127.0.0.1 only.
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
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from cursor_client import CursorLikeClient  # noqa: E402
from mitm import start_mitmdump  # noqa: E402


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def main(turns: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        workspace = tmp_path / "ws"
        workspace.mkdir()
        (workspace / "notes.txt").write_text("alpha\nbeta\n" * 50)
        proxy = start_mitmdump(tmp_path)
        client = CursorLikeClient.through(proxy, workspace, heartbeat_interval=5)
        first_frame, whole = [], []
        try:
            rss_start = rss_mib(proxy.process.pid)
            state = None
            conversation = str(uuid.uuid4())
            for _ in range(turns):
                message = client.run_request("notes.txt", conversation_id=conversation, state=state)
                seen: list[float] = []

                def during(run, seen=seen) -> None:
                    run.on_message = lambda _m: (
                        seen.append(time.perf_counter()) if not seen else None
                    )

                start = time.perf_counter()
                result = await client.turn(message, during=during)
                whole.append(time.perf_counter() - start)
                first_frame.append(seen[0] - start)
                state = result.checkpoints[-1]
            rss_end = rss_mib(proxy.process.pid)
        finally:
            await client.aclose()
            proxy.stop()
    ms = lambda xs: f"median {statistics.median(xs) * 1000:.1f} ms, max {max(xs) * 1000:.1f} ms"  # noqa: E731
    print(f"turns                       {turns} (one conversation, history grows)")
    print(f"first frame after RunSSE    {ms(first_frame)}")
    print(f"whole turn (exec + KV + checkpoints)  {ms(whole)}")
    print(f"mitmdump RSS                {rss_start:.0f} MiB → {rss_end:.0f} MiB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("n", nargs="?", type=int, default=30, help="scripted turns (default 30)")
    asyncio.run(main(parser.parse_args().n))
