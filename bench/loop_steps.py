"""What each step of a proxy's event loop costs a turn, and what its garbage collector costs.

    uv run python bench/loop_steps.py [--configs R15,BR] [--turns 20] [--deltas 1]
                                      [--rounds 10] [--top 12] [--base-tree PATH]

Streaming round 13 (bench/README.md): a turn's first and last deltas arrive late because a few
long steps of the proxy's loop (the turn's set-up, its request's hooks, mitmproxy's open of the
loopback hop) queue up when many turns start or end together, and profilers put the garbage
collector's time on whatever allocated when it ran. This runs bench_streaming.py's proxies and
clients (any of its configurations, `--configs`) with bench/loop_probe_script.py loaded in
every proxy. It runs `--rounds` batches of `--turns` turns at once per configuration, rotating
the order, and prints, per turn:

- the proxy's CPU (utime + stime) and how much of it the loop's callbacks took;
- the callbacks that took the most CPU, by the coroutine a task step resumes or by name, with
  the longest single step and what they waited with the loop held (the clock's excess over the
  CPU: a blocking system call, the GIL held by a worker thread, or the thread preempted on a
  loaded machine), and how much of the loop's waiting was for a CPU;
- the steps that waited the most, when any waited more than it computed;
- how many steps took 1, 2, 5 and 10 ms or more;
- the collector per generation: its runs, its CPU and its longest pause.

The warm-up turns (TLS certificates, imports) are left out: the figures are the difference of
two readings of the probe. `--deltas 1` gives what a turn costs once; the default configurations
are the addon's `Run` and plain mitmproxy carrying the same turn (BR). `--base-tree PATH` runs
each addon configuration X from PATH's addon too, as `X~` (bench_streaming.py's option: a
change's tree against the one before it, in the same rounds). Not part of `just bench`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_streaming
from bench_streaming import ALL_CONFIGS
from bench_streaming import Batch
from bench_streaming import Bench

PROBE = Path(__file__).resolve().parent / "loop_probe_script.py"
PROBE_STEP = "_Writer._tick"  # the probe's own writes: left out of the figures
READ_TIMEOUT = 30.0  # seconds for a proxy to write a fresh reading


def read_probe(path: Path, after: int = 0, timeout: float = READ_TIMEOUT) -> dict[str, Any]:
    """The probe's figures once it wrote a reading newer than `after` (its `seq`)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            reading = json.loads(path.read_text())
            if reading["seq"] > after:
                return reading
        except (OSError, ValueError, KeyError):
            pass  # not written yet
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path}: no reading after #{after} within {timeout:.0f} s")
        time.sleep(0.05)


def difference(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What happened between two readings (the longest step and pause are the later reading's,
    over the proxy's whole life: a maximum does not subtract)."""
    steps = {}
    for name, (count, spent, longest, wall) in after["steps"].items():
        count0, spent0, _, wall0 = before["steps"].get(name, (0, 0.0, 0.0, 0.0))
        if count > count0:
            steps[name] = [count - count0, spent - spent0, longest, wall - wall0]
    return {
        "steps": steps,
        "runnable": after.get("runnable", 0.0) - before.get("runnable", 0.0),
        "long_ms": after["long_ms"],
        "long": [a - b for a, b in zip(after["long"], before["long"], strict=True)],
        "gc": [
            [a[0] - b[0], a[1] - b[1], a[2]] for a, b in zip(after["gc"], before["gc"], strict=True)
        ],
    }


def report(
    config: str, turns: int, deltas: int, cpu: float, figures: dict[str, Any], top: int
) -> str:
    """The per-turn figures of one configuration, as text (the probe's own writes left out)."""
    per = 1000 / max(turns, 1)  # seconds in all → ms a turn
    steps = dict(figures["steps"])
    probe = steps.pop(PROBE_STEP, (0, 0.0, 0.0, 0.0))[1]
    cpu -= probe
    loop = sum(spent for _, spent, _, _ in steps.values())
    waited = sum(max(0.0, wall - spent) for _, spent, _, wall in steps.values())
    gc_cpu = sum(spent for _, spent, _ in figures["gc"])
    long = ", ".join(
        f"≥{bound} ms {count / max(turns, 1):.2f}"
        for bound, count in zip(figures["long_ms"], figures["long"], strict=True)
    )
    lines = [
        f"{config}: {turns} turns of {deltas} delta(s); the proxy's CPU {cpu * per:.2f} ms a "
        f"turn, the loop's callbacks {loop * per:.2f} (the collector excluded; the probe's "
        f"own writes, {probe * per:.2f} ms a turn, left out of both)",
        f"  waits: the loop held while a step waited {waited * per:.2f} ms a turn; the loop's "
        f"thread waited for a CPU {figures['runnable'] * per:.2f} (in a step or not), so it "
        f"slept (the GIL, the disk) about {max(0.0, waited - figures['runnable']) * per:.2f}",
        f"  steps a turn: {long}",
        "  collector: "
        + "; ".join(
            f"gen{gen} {count / max(turns, 1):.2f} runs a turn, {spent * per:.2f} ms, longest "
            f"{longest * 1000:.1f} ms"
            for gen, (count, spent, longest) in enumerate(figures["gc"])
        )
        + (f" ({100 * gc_cpu / cpu:.1f} % of the proxy's CPU)" if cpu > 0 else ""),
        f"  {'ms a turn':>9} {'calls':>6} {'longest':>8} {'waited':>7}  step",
    ]

    def row(name: str, count: float, spent: float, longest: float, wall: float) -> str:
        return (
            f"  {spent * per:9.3f} {count / max(turns, 1):6.2f} {longest * 1000:6.1f} ms "
            f"{max(0.0, wall - spent) * per:7.3f}  {name}"
        )

    ranked = sorted(steps.items(), key=lambda item: -item[1][1])[:top]
    lines += [row(name, *entry) for name, entry in ranked]
    waiting = sorted(steps.items(), key=lambda item: item[1][1] - item[1][3])
    waiting = [(name, entry) for name, entry in waiting if entry[3] > 2 * entry[1]][:top]
    if waiting:
        lines.append("  the steps that waited more than they computed:")
        lines += [row(name, *entry) for name, entry in waiting]
    return "\n".join(lines)


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        probes = tmp / "probes"
        probes.mkdir()
        bench_streaming.EXTRA_ARGS[:] = ["-s", str(PROBE)]
        bench_streaming.PROXY_ENV.update(
            BENCH_LOOP_PROBE_DIR=str(probes),
            PYTHONDONTWRITEBYTECODE="",
            PYTHONPYCACHEPREFIX=str(tmp / "pyc"),
        )
        bench = Bench(args, tmp)
        try:
            await bench.start()
            configs = [c for c in args.configs if c in bench.proxies]
            paths = {c: probes / f"{bench.proxies[c].process.pid}.json" for c in configs}
            before = {c: read_probe(paths[c]) for c in configs}
            batches: dict[str, list[Batch]] = {c: [] for c in configs}
            for round_no in range(args.rounds):
                order = configs[round_no % len(configs) :] + configs[: round_no % len(configs)]
                for config in order:
                    batch = await bench.batch(config, args.turns)
                    batches[config].append(batch)
                    failed = [s.error for s in batch.stats if not s.ok]
                    if failed:
                        print(f"round {round_no + 1} {config}: {len(failed)} failed: {failed[0]}")
                print(f"round {round_no + 1}/{args.rounds} done", flush=True)
            for config in configs:
                after = read_probe(paths[config], before[config]["seq"])
                turns = sum(sum(s.ok for s in b.stats) for b in batches[config])
                cpu = after["cpu"] - before[config]["cpu"]
                figures = difference(before[config], after)
                print()
                print(report(config, turns, args.deltas, cpu, figures, args.top))
        finally:
            bench.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", default="R15,BR", help="bench_streaming.py's, comma-separated")
    parser.add_argument("--turns", type=int, default=20, help="turns at once in a batch")
    parser.add_argument("--deltas", type=int, default=1, help="deltas a turn")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--interval", type=float, default=0.005, help="seconds between deltas")
    parser.add_argument("--top", type=int, default=12, help="steps listed per configuration")
    parser.add_argument("--timeout", type=float, default=120.0, help="per batch, seconds")
    bench_streaming.add_base_tree_option(parser)
    args = parser.parse_args()
    args.configs = [c for c in args.configs.split(",") if c]
    unknown = [c for c in args.configs if c not in ALL_CONFIGS or c == "C"]  # C has no proxy
    if unknown:
        parser.error(f"configs {unknown}: each one of {','.join(ALL_CONFIGS)} but C (a proxy)")
    bench_streaming.add_base_configs(parser, args)
    args.heartbeat = 0.0
    try:
        asyncio.run(run(args))
    except TimeoutError as exc:  # a proxy never wrote its reading: its probe did not load
        sys.exit(f"loop_steps: {exc}")


if __name__ == "__main__":
    main()
