"""The bench's modules (bench/*.py), imported by name for a test, with bench/ on the path only
while they import: the bench is scripts, not a package."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def bench_modules(*names: str) -> tuple[ModuleType, ...]:
    sys.path.insert(0, str(BENCH))
    try:
        return tuple(importlib.import_module(name) for name in names)
    finally:
        sys.path.remove(str(BENCH))
