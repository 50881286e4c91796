"""A mitmproxy script for bench/loop_steps.py: what each step of the proxy's event loop costs,
and what the cyclic garbage collector costs, in the proxy under test.

Streaming round 13 (bench/README.md) found that a turn's edges are a few long steps of the loop
(the turn's set-up, the hooks of its request, mitmproxy's open of the loopback hop) and that
py-spy and cProfile put the collector's time on whatever allocated when it ran. This script
times every callback the loop runs (`asyncio.Handle._run`) by the main thread's CPU time and by
the clock, takes out what the collector spent inside it (`gc.callbacks`), and names it by the
coroutine a task step resumes or by the callback's own name. The clock's excess over the CPU is
what the step waited with the loop held: a blocking system call (a file made or removed on a
busy disk), the GIL held by another thread, or the thread preempted on a loaded machine (the
figures say how long the thread waited for a CPU, from Linux's schedstat). The collector is
counted per generation, with its longest pause.

It writes `$BENCH_LOOP_PROBE_DIR/<pid>.json` about every 0.2 s (from the loop, whose thread
alone changes the figures) with a `seq` that grows with each write, and once more at shutdown.
Figures only grow, so a reader takes two readings and subtracts them.
"""

from __future__ import annotations

import asyncio
import asyncio.events
import gc
import json
import os
import time
from pathlib import Path
from typing import Any

WRITE_EVERY = 0.2  # seconds between two writes of the figures
LONG_MS = (1, 2, 5, 10)  # steps at least this long are counted apart


def step_name(handle: asyncio.Handle) -> str:
    """A task step by the coroutine it resumes, any other callback by its own name."""
    callback = handle._callback  # type: ignore[attr-defined]
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        coro = owner.get_coro()
        return "task " + str(getattr(coro, "__qualname__", type(coro).__name__))
    return str(getattr(callback, "__qualname__", type(callback).__name__))


class LoopProbe:
    """Times the loop's callbacks (the collector excluded) and the collector, per generation."""

    def __init__(self) -> None:
        # name -> [count, CPU seconds, longest (CPU), wall-clock seconds]
        self.steps: dict[str, list[float]] = {}
        self.long = [0] * len(LONG_MS)  # steps at least LONG_MS[i] ms
        self.gc: list[list[float]] = [[0, 0.0, 0.0] for _ in range(3)]  # count, seconds, longest
        self._gc_total = 0.0  # seconds of collection so far, on this thread's clock
        self._gc_start = 0.0
        self._original: Any = None

    def install(self) -> None:
        if self._original is not None:
            return
        original = self._original = asyncio.events.Handle._run
        probe = self

        def _run(handle: asyncio.Handle) -> None:
            t0, wall0, gc0 = time.thread_time(), time.perf_counter(), probe._gc_total
            try:
                original(handle)
            finally:
                collected = probe._gc_total - gc0
                spent = time.thread_time() - t0 - collected
                wall = time.perf_counter() - wall0 - collected
                probe._count(step_name(handle), spent, wall)

        asyncio.events.Handle._run = _run  # type: ignore[method-assign, assignment]
        gc.callbacks.append(self._on_gc)

    def uninstall(self) -> None:
        if self._original is None:
            return
        asyncio.events.Handle._run = self._original  # type: ignore[method-assign]
        self._original = None
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)

    def _count(self, name: str, spent: float, wall: float) -> None:
        entry = self.steps.get(name)
        if entry is None:
            entry = self.steps[name] = [0, 0.0, 0.0, 0.0]
        entry[0] += 1
        entry[1] += spent
        if spent > entry[2]:
            entry[2] = spent
        entry[3] += wall
        ms = spent * 1000
        for i, bound in enumerate(LONG_MS):
            if ms >= bound:
                self.long[i] += 1

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        now = time.thread_time()
        if phase == "start":
            self._gc_start = now
            return
        spent = now - self._gc_start
        self._gc_total += spent
        entry = self.gc[info["generation"]]
        entry[0] += 1
        entry[1] += spent
        if spent > entry[2]:
            entry[2] = spent

    def summary(self) -> dict[str, Any]:
        """The figures so far (called on the loop's thread, whose scheduler figures it reads)."""
        return {
            "steps": {name: list(entry) for name, entry in self.steps.items()},
            "long_ms": list(LONG_MS),
            "long": list(self.long),
            "gc": [list(entry) for entry in self.gc],
            "cpu": time.process_time(),
            "runnable": runnable_seconds(),
        }


def runnable_seconds() -> float:
    """How long this thread has waited for a CPU while it could run (Linux's schedstat: time
    on a run queue), 0.0 where that is not known. Of a step's wait, this much was the machine
    busy with other work; the rest the thread slept: on a lock (the GIL) or the disk."""
    try:
        return int(Path("/proc/thread-self/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


class _Writer:
    """The mitmproxy side: installs the probe when loaded, writes its figures while running."""

    def __init__(self) -> None:
        self.probe = LoopProbe()
        self.seq = 0
        folder = os.environ.get("BENCH_LOOP_PROBE_DIR")
        self.path = Path(folder) / f"{os.getpid()}.json" if folder else None

    def load(self, loader: object) -> None:
        self.probe.install()  # when mitmproxy loads the script, not when a test imports it

    def running(self) -> None:
        if self.path is not None:
            asyncio.get_running_loop().call_later(WRITE_EVERY, self._tick)

    def _tick(self) -> None:
        self.write()
        asyncio.get_running_loop().call_later(WRITE_EVERY, self._tick)

    def done(self) -> None:
        self.write()
        self.probe.uninstall()

    def write(self) -> None:
        if self.path is None:
            return
        self.seq += 1
        temp = self.path.with_suffix(".tmp")
        temp.write_text(json.dumps({"seq": self.seq, **self.probe.summary()}))
        temp.replace(self.path)


addons = [_Writer()]
