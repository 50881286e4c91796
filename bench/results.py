"""The benchmarks' ratios in one JSON file, so the next regression shows (issue 38 item 3).

Each bench that takes `--json PATH` merges its figures into PATH under a section of its own
(`streaming`, `memory`), with the date and the load average of the run, so `bench/compare.py`
can print them beside the last ones recorded in bench/README.md. Default path:
bench/results/latest.json (git-ignored).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

DEFAULT = Path(__file__).resolve().parent / "results" / "latest.json"


def load(path: Path) -> dict[str, Any]:
    """The file's sections, or none when it is missing or unreadable."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def record(path: Path, section: str, figures: dict[str, Any]) -> None:
    """Merge one bench's figures into `path` under `section` (the other sections stay)."""
    data = load(path)
    load_avg = os.getloadavg()
    data[section] = {
        "when": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "load": [round(x, 2) for x in load_avg],
        "cores": os.cpu_count(),
        "figures": figures,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    tmp.replace(path)
    print(f"figures written to {path} (section {section!r})")
