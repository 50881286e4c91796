"""Shared by the fault tests: the scale switch and a peak-RSS probe."""

from __future__ import annotations

import os
from pathlib import Path

LARGE = os.environ.get("FAULT_SCALE") == "large"  # `just fuzz`: the sizes the issue measured


def peak_rss_mib(pid: int) -> float:
    """VmHWM: the process's peak resident set, from /proc (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM")
