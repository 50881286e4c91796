"""bench/loop_steps.py's probe (streaming rounds 13 and 14): a step of the event loop is timed by
the CPU it took without the garbage collector's runs inside it, and by the clock, named by the
coroutine it resumed; the collector is counted apart; readings subtract. Otherwise the next
round's figures blame whatever allocated when the collector ran, as py-spy and cProfile did, and
a step that held the loop while it waited (a file made on a busy disk, the GIL) shows nowhere."""

from __future__ import annotations

import asyncio
import asyncio.events
import gc
import time

from bench_modules import bench_modules


def _modules():
    return bench_modules("loop_probe_script", "loop_steps")


def _spin(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


async def _long_step() -> None:
    _spin(0.003)  # one step of at least 3 ms of CPU
    await asyncio.sleep(0)


async def _blocking_step() -> None:
    time.sleep(0.004)  # one step that holds the loop 4 ms without computing
    await asyncio.sleep(0)


def _collect() -> None:
    gc.collect()


async def _main() -> None:
    await asyncio.get_running_loop().create_task(_long_step())
    await asyncio.get_running_loop().create_task(_blocking_step())
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.call_soon(_collect)
    loop.call_soon(done.set)
    await done.wait()


def test_a_step_is_its_coroutines_cpu_without_the_collector() -> None:
    probe_script, _ = _modules()
    original = asyncio.events.Handle._run
    heap = [[[] for _ in range(8)] for _ in range(40_000)]  # what a full collection walks
    probe = probe_script.LoopProbe()
    probe.install()
    try:
        asyncio.run(_main())
    finally:
        probe.uninstall()
        del heap  # alive until here, so the full collection had it to walk
    assert asyncio.events.Handle._run is original
    summary = probe.summary()
    steps = summary["steps"]
    count, spent, longest, _ = steps["task _long_step"]
    assert count >= 1 and longest >= 0.0025 and spent >= 0.0025
    # the blocked step computed little and waited its 4 ms: the clock has it, the CPU not
    _, spent, _, wall = steps["task _blocking_step"]
    assert wall >= 0.0035 and spent < 0.002
    assert summary["long"][summary["long_ms"].index(2)] >= 1  # counted among the ≥ 2 ms
    runs, collected, _ = summary["gc"][2]
    assert runs >= 1 and collected > 0
    # `_collect` did little besides the full collection, which is the collector's, not its
    assert steps["_collect"][1] < collected / 2


def test_two_readings_subtract_and_report_per_turn() -> None:
    _, loop_steps = _modules()
    before = {
        "seq": 1,
        "steps": {"task warm": [3, 0.010, 0.004, 0.012]},
        "long_ms": [1, 2, 5, 10],
        "long": [1, 1, 0, 0],
        "gc": [[2, 0.001, 0.0005], [0, 0.0, 0.0], [0, 0.0, 0.0]],
        "cpu": 1.0,
        "runnable": 0.5,
    }
    after = {
        "seq": 5,
        "steps": {
            "task warm": [3, 0.010, 0.004, 0.012],
            "task turn": [20, 0.040, 0.003, 0.050],  # waited 10 ms in all
            "open_file": [10, 0.001, 0.0002, 0.021],  # waited 20 ms: more than it computed
            "_Writer._tick": [9, 0.002, 0.001, 0.002],
        },
        "long_ms": [1, 2, 5, 10],
        "long": [11, 3, 0, 0],
        "gc": [[12, 0.006, 0.0009], [1, 0.002, 0.002], [0, 0.0, 0.0]],
        "cpu": 1.1,
        "runnable": 0.512,  # 12 ms waiting for a CPU
    }
    figures = loop_steps.difference(before, after)
    assert set(figures["steps"]) == {"task turn", "open_file", "_Writer._tick"}  # not "warm"
    assert figures["long"] == [10, 2, 0, 0]
    assert figures["gc"][0][:2] == [10, 0.005]
    text = loop_steps.report("R15", 10, 1, 0.1, figures, top=5)
    # the probe's own 0.2 ms a turn is left out of the CPU (10.0 → 9.8) and of the steps
    assert "R15: 10 turns of 1 delta(s); the proxy's CPU 9.80 ms a turn" in text
    assert "own writes, 0.20 ms a turn, left out" in text and "_Writer._tick" not in text
    assert "4.000   2.00    3.0 ms   1.000  task turn" in text
    # 30 ms waited in steps, 12 of them for a CPU: the loop's thread slept 18 (3.0, 1.2, 1.8)
    assert "while a step waited 3.00 ms a turn" in text and "for a CPU 1.20" in text
    assert "slept (the GIL, the disk) about 1.80" in text
    waited = text[text.index("waited more than they computed") :]
    assert "open_file" in waited and "task turn" not in waited
    assert "≥1 ms 1.00, ≥2 ms 0.20" in text
    assert "(7.1 % of the proxy's CPU)" in text


def test_the_run_queue_time_is_schedstats_second_field(tmp_path, monkeypatch) -> None:
    """How long the loop's thread waited for a CPU: the second of schedstat's three figures
    (ns on the CPU, ns waiting on a run queue, timeslices); 0.0 where there is no such file."""
    probe_script, _ = _modules()
    stat = tmp_path / "schedstat"
    stat.write_text("123456789 4500000000 77\n")
    monkeypatch.setattr(probe_script, "Path", lambda _: stat)
    assert probe_script.runnable_seconds() == 4.5
    assert probe_script.LoopProbe().summary()["runnable"] == 4.5
    stat.unlink()
    assert probe_script.runnable_seconds() == 0.0
