"""Child runs (subagents) served by this process, so one can be stopped by id.

A child run is an ordinary run whose request names `subagent_type_name`; the client gives it
its own conversation id, which is the agent id it reports to the parent (`subagent_result`)
and the id `cancel_subagent_action` names [inf]. The agent loop registers each running child
here; `cancel` interrupts it like a user cancel (its Task card in the parent then ends).
"""

from __future__ import annotations

import logging

from cursor_byok.sessions import TurnCancelled

log = logging.getLogger(__name__)

_running: dict[str, object] = {}  # child conversation id → its Turn


def register(turn) -> None:
    ident = turn.run_request.conversation_id
    if ident:
        _running[ident] = turn


def unregister(turn) -> None:
    ident = turn.run_request.conversation_id
    if _running.get(ident) is turn:
        del _running[ident]


def running() -> list[str]:
    return list(_running)


def cancel(subagent_id: str, reason: str = "subagent stopped by the user") -> bool:
    """Stop the running child run `subagent_id`; False if none runs here.

    Hook for mid-run `cancel_subagent_action` on the parent's stream as well.
    """
    turn = _running.get(subagent_id)
    if turn is None:
        return False
    log.info("stopping subagent %s", subagent_id)
    turn.live.interrupt(TurnCancelled(reason))  # type: ignore[attr-defined]
    return True
