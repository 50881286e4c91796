"""The bench alarm (issue 38 item 3): bench/compare.py reads the figures a bench run wrote and
the last recorded ones in bench/README.md, and marks a step; it never fails."""

from __future__ import annotations

from bench_modules import BENCH
from bench_modules import bench_modules


def _modules():
    return bench_modules("results", "compare")


def test_a_run_is_printed_beside_the_readme_and_a_step_is_marked(tmp_path):
    results, compare = _modules()
    path = tmp_path / "latest.json"
    results.record(
        path, "streaming", {"A15 x20": {"cpu_ratio": 2.6}, "R15 x20": {"cpu_ratio": 1.3}}
    )
    results.record(path, "memory", {"kb": {"mb_per_mb": 2.5}})
    readme = tmp_path / "README.md"
    readme.write_text(
        "# x\n\n## Last recorded by `just bench-quick`\n\n| figure | value | when, load |\n"
        "|---|---|---|\n"
        "| RunSSE+BidiAppend, 20 streams, CPU ×B | 1.9 | then, load 1 |\n"
        "| Run, 20 streams, CPU ×B | 1.25 | then, load 1 |\n\n## Other\n\n"
        "| memory, 1 KiB deltas, MB per MB | 99 | not in the section |\n"
    )
    last = compare.recorded(readme)
    assert set(last) == {"RunSSE+BidiAppend, 20 streams, CPU ×B", "Run, 20 streams, CPU ×B"}
    lines = compare.report(results.load(path), last)
    text = "\n".join(lines)
    assert "streaming: measured" in text and "memory: measured" in text
    bidi = next(line for line in lines if "RunSSE+BidiAppend, 20 streams, CPU" in line)
    assert "2.60" in bidi and "1.90" in bidi and "← +37%" in bidi
    run = next(line for line in lines if line.strip().startswith("Run, 20"))
    assert "←" not in run  # +4%: not a step
    kb = next(line for line in lines if "1 KiB" in line)
    assert "2.50" in kb and "nothing recorded" in kb


def test_the_sections_of_other_benches_stay_and_a_broken_file_reads_as_empty(tmp_path):
    results, _ = _modules()
    path = tmp_path / "latest.json"
    results.record(path, "memory", {"kb": {"mb_per_mb": 2.5}})
    results.record(path, "streaming", {"A15 x20": {"cpu_ratio": 2.0}})
    assert set(results.load(path)) == {"memory", "streaming"}
    path.write_text("{not json")
    assert results.load(path) == {}


def test_the_readme_has_every_figure_bench_quick_prints():
    _, compare = _modules()
    last = compare.recorded(BENCH / "README.md")
    assert {name for *_, name in compare.FIGURES} <= set(last)


def test_bench_memory_records_the_median_run_and_the_range():
    """With `--repeats`, each case's JSON figures are its median run's, the range beside them:
    a small case's growth is a few MiB and moves by one from run to run (bench-quick runs 3)."""
    from types import SimpleNamespace

    (bench_memory,) = bench_modules("bench_memory")

    def run(name: str, per_mib: float, end: str = "ok") -> dict:
        return {
            "case": SimpleNamespace(name=name),
            "turn": SimpleNamespace(end=end),
            "text_mib": 1.2,
            "growth": per_mib * 1.2,
            "per_mib": per_mib,
            "before": 100.0,
            "after": 101.0,
        }

    figures = bench_memory.figures(
        [run("tiny", 5.0), run("tiny", 1.0), run("tiny", 3.0), run("kb", 2.0, "cancelled")]
    )
    assert figures["tiny"]["mb_per_mb"] == 3.0 and figures["tiny"]["runs"] == 3
    assert figures["tiny"]["mb_per_mb_range"] == [1.0, 5.0] and figures["tiny"]["ok"]
    assert figures["kb"]["mb_per_mb"] == 2.0 and not figures["kb"]["ok"]
