"""bench_streaming.py's time to a turn's first delta (streaming round 14): from the batch's start
(its turns start together) to each turn's first delta, as a user waits for an answer to begin;
turns that never got one are left out."""

from __future__ import annotations

import pytest
from bench_modules import bench_modules


def test_first_delta_percentiles_count_from_the_batch_start(
    capsys: pytest.CaptureFixture[str],
) -> None:
    (bench_streaming,) = bench_modules("bench_streaming")
    start = 1_000_000_000
    stats = [
        bench_streaming.TurnStats(first_delta_ns=start + ms * 1_000_000) for ms in range(1, 11)
    ]
    stats.append(bench_streaming.TurnStats())  # no delta came: not counted as 0 ms
    batch = bench_streaming.Batch("R15", 11, stats, 1.0, None, 0.0, 0.0, None, start)
    assert (batch.first_delta_ms(0.5), batch.first_delta_ms(0.9)) == (6.0, 10.0)
    assert batch.first_delta_ms(1.0) == 10.0
    bench_streaming._report_first_deltas([(11, "R15", [batch, batch])])
    assert "     11 R15       6.0     10.0     10.0" in capsys.readouterr().out
