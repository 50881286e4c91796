"""Where the addon's mitmdump spends its time while streaming: cProfile inside mitmdump.

    uv run python bench/profile_addon.py [--turns 20] [--deltas 200] [--coalesce-ms 15]
                                         [--transport bidi|run|poll] [--out /tmp/addon.prof]
                                         [--top 25]

Starts the feeder (bench/streamlib.py) and a mitmdump with the addon plus
bench/profiler_script.py (tests/e2e/mitm.py options), warms up with one turn, then profiles
mitmdump's main thread (SIGUSR1 … SIGUSR2) while --turns concurrent Agent turns stream through
it (`--transport bidi`: RunSSE + BidiAppend over HTTP/1.1, the fallback; `run`: one HTTP/2
`Run` stream per turn, Cursor's default), and prints the own time per area (asyncio, mitmproxy,
cursor_byok, h11, h2, ssl, C builtins, …) and the top functions. cProfile slows Python code
down, so read shares, not absolute times; `--timer cpu` (the default) charges the main thread's
CPU time, so a loaded machine does not move the figures much. Not part of `just bench`.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import pstats
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mitm import start_mitmdump
from provider_config import KEY_ENV
from provider_config import write_config
from streamlib import MANY_TURNS
from streamlib import FeederProcess
from streamlib import TurnStats
from streamlib import addon_turn
from streamlib import client_tls
from streamlib import client_tls_h2
from streamlib import poll_turn
from streamlib import run_turn

AREAS = [
    ("asyncio", ("/asyncio/",)),
    ("mitmproxy", ("/mitmproxy/",)),
    ("cursor_byok", ("/cursor_byok/",)),
    ("h11", ("/h11/",)),
    ("h2/hpack", ("/h2/", "/hpack/")),
    ("httpx/httpcore/anyio", ("/httpx/", "/httpcore/", "/anyio/")),
    ("ssl (Python)", ("/ssl.py",)),
    ("protobuf (Python)", ("/google/protobuf/",)),
    ("logging", ("/logging/",)),
]


C_AREAS = [
    ("ssl (C)", ("_ssl", "SSLObject", "SSLSocket")),
    ("protobuf (C)", ("_upb", "google._upb", "Message", "protobuf")),
    ("epoll wait", ("epoll", "select")),
    ("socket I/O (C)", ("socket", "send", "recv")),
    ("compression (C)", ("zlib", "zstd")),
]


def area(filename: str, function: str) -> str:
    """Which part of the stack a profiled function belongs to."""
    needles = C_AREAS if filename == "~" else AREAS
    haystack = function if filename == "~" else filename
    for name, words in needles:
        if any(w in haystack for w in words):
            return name
    return "C builtins (other)" if filename == "~" else "other Python"


def summarize(path: Path, top: int) -> None:
    stats = pstats.Stats(str(path))
    total = stats.total_tt  # type: ignore[attr-defined]
    by_area: collections.Counter = collections.Counter()
    for (filename, _, function), (_, _, tt, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        by_area[area(filename, function)] += tt
    print(f"own time by area (total {total:.2f} s under cProfile):")
    for name, tt in by_area.most_common(14):
        print(f"  {tt / total * 100:5.1f}%  {name}")
    print()
    stats.sort_stats("tottime").print_stats(top)


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        workspace = tmp / "ws"
        workspace.mkdir()
        feeder = FeederProcess(args.deltas, args.interval)
        proxy = start_mitmdump(
            tmp,
            "--set",
            f"cursor_byok_coalesce_ms={args.coalesce_ms}",
            "--set",
            "flow_detail=0",  # as `cursor-byok run` and bench_streaming.py: no line per flow
            *MANY_TURNS,
            "-s",
            str(Path(__file__).resolve().parent / "profiler_script.py"),
            agent="provider",
            config=write_config(tmp, feeder, "openai-chat"),
            env={
                KEY_ENV: "sk-bench-not-a-key",
                "BENCH_PROFILE_OUT": str(args.out),
                "BENCH_PROFILE_TIMER": args.timer,
            },
        )
        if args.transport == "run":
            tls, turn = client_tls_h2(proxy.ca_file), run_turn
        elif args.transport == "poll":
            tls, turn = client_tls(proxy.ca_file), poll_turn
        else:
            tls, turn = client_tls(proxy.ca_file), addon_turn
        try:
            await turn(
                proxy.port, tls=tls, deltas=1, stats=TurnStats(), workspace=workspace
            )  # warm-up
            stats = [TurnStats() for _ in range(args.turns)]
            args.out.unlink(missing_ok=True)
            proxy.process.send_signal(signal.SIGUSR1)
            t0 = time.monotonic()
            await asyncio.gather(
                *(
                    turn(proxy.port, tls=tls, deltas=args.deltas, stats=s, workspace=workspace)
                    for s in stats
                )
            )
            wall = time.monotonic() - t0
            proxy.process.send_signal(signal.SIGUSR2)
            deadline = time.monotonic() + 30
            while not args.out.exists() and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            await asyncio.sleep(0.5)  # let dump_stats finish writing
            errors = sorted({s.error for s in stats if s.error})
            for error in errors[:3]:
                print(f"error: {error[:200]}")
            print(
                f"{sum(s.ok for s in stats)}/{args.turns} turns of {args.deltas} deltas ok in "
                f"{wall:.1f} s (under cProfile), coalesce_ms={args.coalesce_ms}, "
                f"transport {args.transport}"
            )
        finally:
            proxy.stop()
            feeder.stop()
    summarize(args.out, args.top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--deltas", type=int, default=200)
    parser.add_argument("--interval", type=float, default=0.005)
    parser.add_argument("--coalesce-ms", type=int, default=15)
    parser.add_argument(
        "--transport",
        choices=("bidi", "run", "poll"),
        default="bidi",
        help="bidi: RunSSE + BidiAppend (HTTP/1.1); run: one HTTP/2 Run stream per turn; "
        "poll: RunPoll + BidiAppend (Cursor's HTTP/1.0 mode)",
    )
    parser.add_argument(
        "--timer",
        choices=("cpu", "wall"),
        default="cpu",
        help="cpu: the main thread's CPU time (robust to a loaded machine); wall: the clock",
    )
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "addon.prof")
    parser.add_argument("--top", type=int, default=25)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
