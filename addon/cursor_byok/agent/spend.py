"""Spending caps in a turn: refused before its first model call when a cap is already reached,
stopped after the step that reaches one (config/spend.py computes what was spent)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from cursor_byok.agent.error_details import CUSTOM_MESSAGE
from cursor_byok.agent.turn import Turn
from cursor_byok.agent.turn import TurnError
from cursor_byok.config import Config
from cursor_byok.config.spend import CapStatus
from cursor_byok.config.spend import cap_statuses
from cursor_byok.store.usage import store_for
from cursor_byok.store.usage import turn_cost

TITLE = "Spending cap reached"


def cap_error(status: CapStatus, pending: float = 0.0) -> TurnError:
    """The error Cursor shows: `resource_exhausted`, naming the cap, the spend and the reset."""
    text = status.describe(pending)
    return TurnError(
        "resource_exhausted",
        "cursor-byok: " + text[0].upper() + text[1:],
        title=f"{TITLE} ({status.name})",
        error=CUSTOM_MESSAGE,
    )


@dataclass
class Budget:
    """The caps as the turn found them; the turn's own cost is added as it grows."""

    config: Config
    statuses: list[CapStatus]

    def spent_in_turn(self, turn: Turn) -> float:
        prices = self.config.prices_of(turn.status.model) if turn.status.model else None
        return turn_cost(prices, vars(turn.usage)) or 0.0

    def check(self, turn: Turn) -> None:
        """After a step: raise the cap's error when the turn has reached one."""
        pending = self.spent_in_turn(turn)
        for status in self.statuses:
            if status.reached(pending):
                raise cap_error(status, pending)


async def turn_budget(turn: Turn, config: Config) -> Budget | None:
    """The turn's budget (None without caps); raises the cap's error when one is reached
    already, before any model call."""
    if not config.limits.caps():
        return None
    store = store_for(turn.blobs.store.root.parent)  # the usage database beside the blobs
    conversation = turn.run_request.conversation_id or None
    statuses = await asyncio.to_thread(cap_statuses, config, store, conversation)
    for status in statuses:
        if status.reached():
            raise cap_error(status)
    return Budget(config, statuses)
