"""A mitmproxy script for bench/bench_memory.py --rss-probe: when the RSS grows, and in what code.

Loaded into the proxy's mitmdump. SIGUSR1 starts a thread that reads /proc/self/statm every
millisecond and, each time the RSS passes its highest so far by another MiB, notes the RSS and
where the main thread is (the innermost frames of the addon and the line that called them);
SIGUSR2 stops it and writes that timeline to $BENCH_TRACE_OUT. tracemalloc sees only Python's
allocations; this sees the pages, freed heap and transport buffers too, so read the two
together. Costs no time on the main thread."""

import os
import signal
import sys
import threading
import time

_state: dict = {}
PAGE = os.sysconf("SC_PAGE_SIZE")
MAIN = threading.main_thread().ident


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE


def _where() -> str:
    frame = sys._current_frames().get(MAIN)
    ours = []
    while frame is not None and len(ours) < 5:
        name = frame.f_code.co_filename
        if "cursor_byok" in name or "mitmproxy" in name or "asyncio" in name:
            short = name.split("/addon/")[-1].split("site-packages/")[-1]
            ours.append(f"{short}:{frame.f_lineno} {frame.f_code.co_name}")
        frame = frame.f_back
    return " < ".join(ours) or "(outside Python)"


def _watch(stop: threading.Event) -> None:
    base = _rss()
    high = base
    start = time.monotonic()
    lines = _state["lines"]
    while not stop.wait(0.001):
        rss = _rss()
        if rss >= high + (1 << 20):
            high = rss
            lines.append(
                f"{(time.monotonic() - start) * 1000:8.1f} ms  +{(rss - base) / 2**20:6.1f} MiB"
                f"  {_where()}"
            )
    lines.append(
        f"highest: +{(high - base) / 2**20:.1f} MiB; at the end +{(_rss() - base) / 2**20:.1f}"
    )


def _start(*_) -> None:
    stop = threading.Event()
    _state.update(stop=stop, lines=[])
    threading.Thread(target=_watch, args=(stop,), daemon=True).start()


def _stop(*_) -> None:
    _state["stop"].set()
    time.sleep(0.01)
    with open(os.environ["BENCH_TRACE_OUT"], "w") as out:
        out.write("\n".join(_state["lines"]) + "\n")


signal.signal(signal.SIGUSR1, _start)
signal.signal(signal.SIGUSR2, _stop)
