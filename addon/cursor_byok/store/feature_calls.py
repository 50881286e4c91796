"""The editor features' calls of this proxy's life, per kind and model, for the live status:
how many, how many running, their tokens, and how long the last one took (to its first text
and to its end). In memory only: the usage database keeps every call (`store/usage.py`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field

TOKEN_FIELDS = (
    "input_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "output_tokens",
    "reasoning_tokens",
)


@dataclass
class FeatureRow:
    """One feature kind on one model: its calls so far."""

    kind: str  # a usage kind: cmd_k, terminal, terminal_autocomplete, commit_message, tab
    model: str
    calls: int = 0  # ended
    running: int = 0
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKEN_FIELDS, 0))
    last_duration: float | None = None  # seconds, the last ended call
    last_first_text: float | None = None  # seconds to its first text (None: it wrote none)
    last_problem: str = ""
    last_at: float = 0.0  # monotonic: when it last changed (the newest rows are shown first)


class FeatureCalls:
    """The rows, fed by each call as it starts and ends (the event loop's thread only)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._rows: dict[tuple[str, str], FeatureRow] = {}
        self._clock = clock

    def _row(self, kind: str, model: str) -> FeatureRow:
        row = self._rows.get((kind, model))
        if row is None:
            row = self._rows[(kind, model)] = FeatureRow(kind, model)
        row.last_at = self._clock()
        return row

    def started(self, kind: str, model: str) -> None:
        self._row(kind, model).running += 1

    def ended(
        self,
        kind: str,
        model: str,
        *,
        usage: dict[str, int],
        duration: float,
        first_text: float | None,
        problem: str = "",
        was_running: bool = True,
    ) -> None:
        row = self._row(kind, model)
        if was_running:
            row.running = max(0, row.running - 1)
        row.calls += 1
        for name in TOKEN_FIELDS:
            row.tokens[name] += usage.get(name, 0)
        row.last_duration = duration
        row.last_first_text = first_text
        row.last_problem = problem

    def rows(self) -> list[FeatureRow]:
        """The rows, the most recently active first."""
        return sorted(self._rows.values(), key=lambda row: row.last_at, reverse=True)
