"""bench/loop_steps.py end to end, small: its probe loads into a real mitmdump beside the addon,
writes readings while the proxy runs, and the runner prints each configuration's steps per turn
(the addon's turn task among them) from the difference of two readings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_loop_steps_reports_the_addons_turn_steps_per_turn() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "loop_steps.py"),
            "--configs",
            "R15",
            "--rounds",
            "1",
            "--turns",
            "2",
            "--deltas",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=300,  # a deadline: a loaded 2-core machine starts mitmdump in seconds
        cwd=ROOT,
        env=dict(os.environ, CURSOR_BYOK_TEST_ZYGOTE="0"),
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    out = done.stdout
    assert "R15: 2 turns of 2 delta(s); the proxy's CPU" in out, out[-3000:]
    steps = out[out.index("R15: 2 turns") :]
    assert "task LiveRun._run" in steps  # the addon's turn, seen by the probe in its proxy
    assert "collector: gen0" in steps
    assert "waits: the loop held while a step waited" in steps  # the clock beside the CPU
