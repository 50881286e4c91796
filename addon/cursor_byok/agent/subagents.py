"""Child runs (subagents) served by this process, so one can be stopped by id.

A child run is an ordinary run whose request names `subagent_type_name`; the client gives it
its own conversation id, which is the agent id it reports to the parent (`subagent_result`)
and the id `cancel_subagent_action` names [inf]. The agent loop registers each running child
here; `cancel` interrupts it like a user cancel (its Task card in the parent then ends).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass

from cursor_byok.agent.turn import TurnCancelled
from cursor_byok.pb import agent_v1_pb2 as pb

log = logging.getLogger(__name__)

_running: dict[str, object] = {}  # child conversation id → its Turn
# What a child run shows on its parent's Task card (the rest stays in the child's own view).
RELAYED = frozenset({"text_delta", "tool_call_started", "tool_call_completed"})


@dataclass
class _Waiting:
    """A parent's Task call whose child run has not attached yet."""

    tool_call_id: str
    prompt: str
    relay: Callable[[pb.InteractionUpdate], None]
    child: object | None = None


_waiting: list[_Waiting] = []


@contextlib.contextmanager
def awaiting_child(
    tool_call_id: str, prompt: str, relay: Callable[[pb.InteractionUpdate], None]
) -> Iterator[None]:
    """While a Task call waits for its child, the child's progress goes to `relay`."""
    entry = _Waiting(tool_call_id, prompt.strip(), relay)
    _waiting.append(entry)
    try:
        yield
    finally:
        _waiting.remove(entry)
        if entry.child is not None:
            entry.child.mirror_to(None)  # type: ignore[attr-defined]


def attach(turn, parent_tool_call_id: str | None = None) -> bool:
    """Link a starting child run to the Task call waiting for it.

    By the parent's tool call id when the transport knows it (the child's BidiAppends carry
    `X-Parent-Agent-Tool-Call-Id`), else by the prompt: the child's first user message is the
    Task prompt. Ambiguous or unknown children are not linked (they still run normally).
    """
    free = [w for w in _waiting if w.child is None]
    if parent_tool_call_id:
        found = [w for w in free if w.tool_call_id == parent_tool_call_id]
    else:
        text = turn.instruction.user_message.text.strip()
        found = [w for w in free if w.prompt == text]
    if len(found) != 1:
        return False
    entry = found[0]
    entry.child = turn

    def mirror(update: pb.InteractionUpdate) -> None:
        if update.WhichOneof("message") in RELAYED:
            entry.relay(update)

    turn.mirror_to(mirror)
    return True


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
