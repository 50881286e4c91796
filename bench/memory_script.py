"""A mitmproxy script for bench/bench_memory.py --tracemalloc: who holds the bytes at the peak.

Loaded into the proxy's mitmdump. SIGUSR1 starts tracemalloc (the turn before it is not
traced) and a thread that takes a snapshot every $BENCH_TRACE_EVERY seconds (0.05), keeping the
one with the most traced memory; SIGUSR2 stops it and writes to $BENCH_TRACE_OUT the peak
snapshot's top lines by size against the first snapshot, grouped by the allocating line
(a few frames of traceback each). tracemalloc slows the proxy down several times: read it for
where, not for how much CPU."""

import os
import signal
import threading
import tracemalloc

_state: dict = {}


def _watch(stop: threading.Event) -> None:
    every = float(os.environ.get("BENCH_TRACE_EVERY", "0.05"))
    while not stop.wait(every):
        current, _ = tracemalloc.get_traced_memory()
        if current > _state.get("peak_size", 0):
            _state["peak_size"] = current
            _state["peak"] = tracemalloc.take_snapshot()


def _start(*_) -> None:
    tracemalloc.start(int(os.environ.get("BENCH_TRACE_FRAMES", "4")))
    _state["base"] = tracemalloc.take_snapshot()
    stop = threading.Event()
    _state["stop"] = stop
    threading.Thread(target=_watch, args=(stop,), daemon=True).start()


def _stop(*_) -> None:
    _state["stop"].set()
    end = tracemalloc.take_snapshot()
    peak = _state.get("peak", end)
    lines = [f"peak traced: {_state.get('peak_size', 0) / 2**20:.1f} MiB over the start"]
    for title, snap in (("at the peak", peak), ("at the end", end)):
        lines.append(f"\n{title}, top allocations by size (against the start):")
        for stat in snap.compare_to(_state["base"], "traceback")[:12]:
            lines.append(f"{stat.size_diff / 2**20:+8.2f} MiB {stat.count_diff:+7d} blocks")
            lines.extend(f"      {line}" for line in stat.traceback.format(limit=4))
    tracemalloc.stop()
    with open(os.environ["BENCH_TRACE_OUT"], "w") as out:
        out.write("\n".join(lines) + "\n")


signal.signal(signal.SIGUSR1, _start)
signal.signal(signal.SIGUSR2, _stop)
