"""Issue 33 item 6: one client cannot starve another. A bystander's one-line turn time, alone and
while another credential runs 16 streaming turns at once, through a real mitmdump.

Three processes besides the proxy, so none of them is the bottleneck it measures: the feeder
(`streamlib.FeederProcess`, the fake model: one delta per stream every `--interval` seconds),
the heavy client (16 RunSSE + BidiAppend turns of `--deltas` deltas each, again and again, with
the credential "Bearer heavy"; `streamlib.addon_turn`) and this one, the bystander (one-delta
turns with "Bearer bystander", one after another). The figure is the bystander's whole-turn time.

    uv run python bench/bench_fairness.py [--heavy 16] [--deltas 4000] [--interval 0.0005]

Before/after: copy this file into the other checkout's bench/ (with its streamlib.py) and run it
there with this checkout's interpreter (the proxy loads the addon of the tree the script is in).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "e2e"), str(ROOT / "tests"), str(ROOT / "bench")]

import streamlib  # noqa: E402
from mitm import start_mitmdump  # noqa: E402
from provider_config import KEY_ENV  # noqa: E402
from provider_config import write_config  # noqa: E402


async def turns(port: int, ca_file: Path, workspace: Path, count: int, deltas: int) -> list:
    """`count` turns one after another; (seconds, ok, error) each."""
    tls = streamlib.client_tls(ca_file)
    out = []
    for _ in range(count):
        stats = streamlib.TurnStats()
        start = time.perf_counter()
        await streamlib.addon_turn(port, tls=tls, deltas=deltas, stats=stats, workspace=workspace)
        out.append((time.perf_counter() - start, stats.ok, stats.error))
    return out


async def heavy(port: int, ca_file: Path, workspace: Path, streams: int, deltas: int) -> None:
    """The heavy client (its own process): `streams` turns at once, each started again when it
    ends, until stdin closes."""
    streamlib.AUTHORIZATION = "Bearer heavy"
    tls = streamlib.client_tls(ca_file)
    done = [0, 0]

    async def one() -> None:
        while True:
            stats = streamlib.TurnStats()
            try:
                await streamlib.addon_turn(
                    port, tls=tls, deltas=deltas, stats=stats, workspace=workspace
                )
            except Exception:
                stats.ok = False
            done[0 if stats.ok else 1] += 1
            if not stats.ok:
                await asyncio.sleep(0.05)

    workers = [asyncio.ensure_future(one()) for _ in range(streams)]
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    print("heavy started", flush=True)
    await reader.read()
    for worker in workers:
        worker.cancel()
    print(f"heavy turns: {done[0]} completed, {done[1]} refused or failed", flush=True)


async def main(args: argparse.Namespace) -> None:
    feeder = streamlib.FeederProcess(deltas=args.deltas, interval=args.interval)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        workspace = tmp_path / "ws"
        workspace.mkdir()
        extra = [f"--set={name}" for name in args.set]
        proxy = start_mitmdump(
            tmp_path / "proxy",
            *extra,
            agent="provider",
            config=write_config(tmp_path, feeder, "openai-chat"),
            env={KEY_ENV: "sk-bench-not-a-key"},
        )
        streamlib.AUTHORIZATION = "Bearer bystander"
        try:
            alone = await turns(proxy.port, proxy.ca_file, workspace, args.turns, 1)
            child = subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "heavy",
                    "--port",
                    str(proxy.port),
                    "--ca",
                    str(proxy.ca_file),
                    "--workspace",
                    str(workspace),
                    "--heavy",
                    str(args.heavy),
                    "--deltas",
                    str(args.deltas),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert child.stdout is not None and child.stdin is not None
            child.stdout.readline()
            await asyncio.sleep(args.warmup)
            loaded = await turns(proxy.port, proxy.ca_file, workspace, args.turns, 1)
            child.stdin.close()
            summary = child.stdout.read().strip()
            child.wait(timeout=30)
        finally:
            proxy.stop()
            feeder.stop()
    times = [t for t, _, _ in loaded]
    failed = [e for _, ok, e in alone + loaded if not ok]
    print(f"tree: {ROOT}")
    print(
        f"bystander alone: median {statistics.median(t for t, _, _ in alone):.2f} s; "
        f"with {args.heavy} heavy turns ({args.deltas} deltas, one per {args.interval * 1000:g} "
        f"ms): median {statistics.median(times):.2f} s, max {max(times):.2f} s; "
        f"bystander failures: {failed or 'none'}; {summary}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", default="bench", choices=["bench", "heavy"])
    parser.add_argument("--heavy", type=int, default=16)
    parser.add_argument("--deltas", type=int, default=4000)
    parser.add_argument("--interval", type=float, default=0.0005)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument(
        "--set", action="append", default=[], help="a proxy option, NAME=VALUE (repeatable)"
    )
    parser.add_argument("--port", type=int)
    parser.add_argument("--ca", type=Path)
    parser.add_argument("--workspace", type=Path)
    options = parser.parse_args()
    if options.mode == "heavy":
        asyncio.run(
            heavy(options.port, options.ca, options.workspace, options.heavy, options.deltas)
        )
    else:
        asyncio.run(main(options))
