"""Spending caps: what was spent against each `[limits]` cap, and whether a call may start.

Spend is priced from the usage database's rows of every kind (Agent turns, chat titles, and the
rows other features write: compaction runs inside turns, Cmd-K, Tab, ...) with the current
config's `prices`, like `cursor-byok usage`. Days and months are local time. `over_cap()` is the
one check a feature calls before a model call; the agent ends a turn with `agent/spend.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from datetime import timedelta
from pathlib import Path

from cursor_byok.config.settings import Config
from cursor_byok.store.usage import UsageStore
from cursor_byok.store.usage import store_for
from cursor_byok.store.usage import turn_cost

WARN_SHARE = 0.8  # `doctor` warns from here


@dataclass(frozen=True)
class CapStatus:
    """One cap and what was spent against it (`resets`: None for a conversation's cap)."""

    name: str  # the [limits] key: daily_usd, monthly_usd, conversation_usd
    amount: float
    spent: float
    resets: datetime | None
    unpriced: int = 0  # rows of models without prices (not counted)

    @property
    def share(self) -> float:
        return self.spent / self.amount if self.amount else 0.0

    def reached(self, pending: float = 0.0) -> bool:
        return self.spent + pending >= self.amount

    def describe(self, pending: float = 0.0) -> str:
        """What the user reads: the cap, the amount spent, when it resets."""
        spent = self.spent + pending
        scope = {
            "daily_usd": "today",
            "monthly_usd": "this month",
            "conversation_usd": "in this conversation",
        }[self.name]
        when = (
            f"it resets {self.resets:%Y-%m-%d %H:%M} (local time)"
            if self.resets is not None
            else "it does not reset: start a new chat"
        )
        return (
            f"the spending cap [limits] {self.name} = ${self.amount:,.2f} is reached: "
            f"${spent:,.2f} spent {scope}; {when}, or raise the cap in the cursor-byok config"
        )


def windows(now: datetime) -> dict[str, tuple[datetime, datetime | None]]:
    """Each cap's (start, reset) around `now` (local, aware)."""
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    month = day.replace(day=1)
    next_month = (month + timedelta(days=32)).replace(day=1)
    return {
        "daily_usd": (day, day + timedelta(days=1)),
        "monthly_usd": (month, next_month),
        "conversation_usd": (datetime.fromtimestamp(0).astimezone(), None),
    }


def cap_statuses(
    config: Config, store: UsageStore, conversation: str | None, now: datetime | None = None
) -> list[CapStatus]:
    """Every cap of `config.limits` with its spend (the conversation cap only with an id)."""
    now = now or datetime.now().astimezone()
    spans = windows(now)
    out = []
    for name, amount in config.limits.caps():
        if name == "conversation_usd" and not conversation:
            continue
        start, resets = spans[name]
        rows = store.sums_by_model(
            start.timestamp(), conversation if name == "conversation_usd" else None
        )
        spent, unpriced = 0.0, 0
        for row in rows:
            cost = turn_cost(config.prices_of(row["model"]), row)
            if cost is None:
                unpriced += row["turns"]
            else:
                spent += cost
        out.append(CapStatus(name, amount, spent, resets, unpriced))
    return out


def over_cap(
    config: Config, data_dir: Path, conversation: str | None, now: datetime | None = None
) -> CapStatus | None:
    """The first cap already reached, or None: call before a model call, and refuse the call
    with `CapStatus.describe()` when it is not None. Reads the database: off the event loop."""
    if not config.limits.caps():
        return None
    statuses = cap_statuses(config, store_for(data_dir), conversation, now)
    return next((status for status in statuses if status.reached()), None)
