"""Print a bench run's ratios beside the last ones recorded in bench/README.md (issue 38 item 3).

    uv run python bench/compare.py [--json bench/results/latest.json] [--readme bench/README.md]

The README keeps the last recorded figures in one table under the heading "Last recorded by
`just bench-quick`" (rows `| figure | value | when, load |`); the JSON file is what the benches
wrote with `--json` (bench/results.py). A figure whose ratio moved by 30% or more is marked, so a
step shows in the submission that caused it. Never fails: a missing file or figure is a line
saying so (the machines are noisy; this is an alarm, not a gate).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from results import DEFAULT
from results import load

HERE = Path(__file__).resolve().parent
HEADING = "Last recorded by `just bench-quick`"
ROW = re.compile(
    r"^\|\s*(?P<name>[^|]+?)\s*\|\s*(?P<value>[-+]?[0-9][0-9.]*)\s*\|(?P<note>[^|]*)\|"
)
STEP = 0.30  # a move this large (either way) is marked

# The figures bench-quick prints: (JSON section, key in it, field) → the name in the README.
FIGURES = [
    ("streaming", "A15 x20", "cpu_ratio", "RunSSE+BidiAppend, 20 streams, CPU ×B"),
    ("streaming", "P15 x20", "cpu_ratio", "RunPoll, 20 streams, CPU ×B"),
    ("streaming", "R15 x20", "cpu_ratio", "Run, 20 streams, CPU ×B"),
    ("streaming", "A15 x20", "cpu_ratio_t", "RunSSE+BidiAppend, 20 streams, CPU ×BA"),
    ("streaming", "P15 x20", "cpu_ratio_t", "RunPoll, 20 streams, CPU ×BP"),
    ("streaming", "R15 x20", "cpu_ratio_t", "Run, 20 streams, CPU ×BR"),
    ("streaming", "A15 x20", "p99_ms", "RunSSE+BidiAppend, 20 streams, p99 ms"),
    ("streaming", "B x20", "p99_ms", "plain mitmproxy, 20 streams, p99 ms"),
    ("memory", "tiny", "mb_per_mb", "memory, 20-character deltas, MB per MB"),
    ("memory", "kb", "mb_per_mb", "memory, 1 KiB deltas, MB per MB"),
    ("memory", "endless", "mb_per_mb", "memory, stopped stream, MB per MB"),
]


def recorded(readme: Path) -> dict[str, tuple[float, str]]:
    """The README's last recorded figures: name → (value, when and load)."""
    try:
        lines = readme.read_text().splitlines()
    except OSError:
        return {}
    out: dict[str, tuple[float, str]] = {}
    inside = False
    for line in lines:
        if line.startswith("#"):
            inside = HEADING in line
            continue
        match = ROW.match(line) if inside else None
        if match:
            out[match["name"]] = (float(match["value"]), match["note"].strip())
    return out


def current(results: dict[str, Any]) -> dict[str, float]:
    """This run's figures by README name (those the run measured)."""
    out = {}
    for section, key, field, name in FIGURES:
        value = results.get(section, {}).get("figures", {}).get(key, {}).get(field)
        if isinstance(value, int | float) and value == value:
            out[name] = float(value)
    return out


def report(results: dict[str, Any], last: dict[str, tuple[float, str]]) -> list[str]:
    """One line per figure: now, last recorded, and a mark when it moved by STEP or more."""
    now = current(results)
    lines = []
    for section in ("streaming", "memory"):
        info = results.get(section)
        if info:
            load = " ".join(f"{x:g}" for x in info.get("load", []))
            lines.append(f"{section}: measured {info.get('when', '?')}, load average {load}")
    width = max(len(name) for *_, name in FIGURES)
    for *_, name in FIGURES:
        value = now.get(name)
        before = last.get(name)
        shown = "—" if value is None else f"{value:.2f}"
        if before is None:
            lines.append(f"  {name:<{width}}  now {shown:>7}   (nothing recorded)")
            continue
        mark = ""
        if value is not None and before[0] and abs(value / before[0] - 1) >= STEP:
            mark = f"   ← {value / before[0] - 1:+.0%}"
        lines.append(
            f"  {name:<{width}}  now {shown:>7}   recorded {before[0]:>7.2f} ({before[1]}){mark}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, default=DEFAULT)
    parser.add_argument("--readme", type=Path, default=HERE / "README.md")
    args = parser.parse_args()
    results = load(args.json)
    if not results:
        print(f"bench compare: no figures in {args.json}")
        return
    try:
        lines = report(results, recorded(args.readme))
    except Exception as exc:  # an alarm never fails the build
        lines = [f"bench compare: {type(exc).__name__}: {exc}"]
    for line in lines:
        print(line)


if __name__ == "__main__":
    main()
