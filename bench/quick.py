"""`just bench-quick`: the streaming and memory ratios in under two minutes, beside the last ones
recorded in bench/README.md (issue 38 item 3). CI runs it after the tests.

    uv run python bench/quick.py [--json bench/results/latest.json] [--budget 150]

Runs bench_streaming.py at 20 streams (RunSSE + BidiAppend, RunPoll, Run and plain mitmproxy in
the same run, so each CPU figure is a ratio to plain mitmproxy's: B, one HTTP/1.1 stream, and on
each transport's own, BR, BA and BP), then bench_memory.py's three
cases (1 KiB deltas and the stopped stream at a smaller size), each the median of three runs,
each writing its figures to the JSON file, then bench/compare.py. An
alarm, not a gate: it always exits 0; a bench that fails or overruns its share of the budget is
a line saying so.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from results import DEFAULT

HERE = Path(__file__).resolve().parent

STREAMING = [
    "bench_streaming.py",
    "--levels",
    "20",
    "--repeats",
    "2",
    "--deltas",
    "200",
    "--configs",
    "A15,P15,R15,B,BR,BA,BP",
    "--timeout",
    "30",
]
MEMORY = [
    "bench_memory.py",
    "--tiny-mib",
    "1.2",
    "--kb-mib",
    "3",
    "--endless-mib",
    "3",
    "--endless-seconds",
    "6",
    "--repeats",
    "3",
]


def step(argv: list[str], json_path: Path, budget: float) -> None:
    """Run one bench script with the JSON path; a failure or an overrun is a note."""
    command = [sys.executable, str(HERE / argv[0]), *argv[1:], "--json", str(json_path)]
    started = time.monotonic()
    # A session of its own, so an overrun ends the bench's proxies and feeder with it.
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        out, err = process.communicate(timeout=budget)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        print(f"note: {argv[0]} did not finish within {budget:.0f} s; its figures are missing")
        return
    finally:  # stopped from outside (CI's timeout, ^C): the bench's proxies go too
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    print(f"{argv[0]}: {time.monotonic() - started:.0f} s")
    for line in out.strip().splitlines()[-12:]:
        print(f"  {line}")
    if process.returncode:
        print(f"note: {argv[0]} exited {process.returncode}: {err.strip()[-400:]}")


def _stopped(signum: int, _frame) -> None:
    raise SystemExit(f"note: bench-quick stopped by signal {signum}")


def main() -> None:
    signal.signal(signal.SIGTERM, _stopped)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, default=DEFAULT)
    parser.add_argument("--budget", type=float, default=150.0, help="seconds for both benches")
    args = parser.parse_args()
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"bench-quick: {os.cpu_count()} cores, load average {load} at the start")
    args.json.unlink(missing_ok=True)  # figures from this run only
    started = time.monotonic()
    try:
        step(STREAMING, args.json, args.budget * 0.55)
        step(MEMORY, args.json, max(10.0, args.budget - (time.monotonic() - started)))
        subprocess.run([sys.executable, str(HERE / "compare.py"), "--json", str(args.json)])
    except Exception as exc:  # an alarm never fails the build
        print(f"note: bench-quick stopped: {type(exc).__name__}: {exc}")


if __name__ == "__main__":
    main()
