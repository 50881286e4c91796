"""Every benchmark script answers `--help` with its usage and runs nothing (bench/README.md
promises it): a script that took `--help` for a count crashed, and one ran its whole measurement."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
SCRIPTS = sorted(
    p.name
    for p in BENCH.glob("*.py")
    if 'if __name__ == "__main__":' in p.read_text() and p.name != "streamlib.py"
)


def test_the_scripts_are_found() -> None:
    assert {"bench_streaming.py", "bench_cancel.py", "quick.py"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_prints_usage_and_runs_nothing(script: str) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=BENCH.parent,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.lstrip().startswith("usage:"), done.stdout[:500]
