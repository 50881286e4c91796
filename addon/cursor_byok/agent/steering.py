"""Steering: a message the user sends while the model is still answering (issue 25 item 4).

Cursor (client ≥ 3.14.27) sends it on the running run as `ConversationAction.
inject_context_action{injection_id, expected_run_id, user_context{user_message}}` and shows an
optimistic bubble; the server confirms with `InteractionUpdate.context_injection_state{
injection_id, state}` (protocol.md §11.3 and §15.4: the client's mapping): `queued` stops the
client's 15 s timer, `delivered{step, delivery_batch_id, delivered_at_ms}` completes the bubble;
`queued_for_next_turn`, `cancelled`, `rejected` (and no answer, or the turn ending first) make it
send the text again as a follow-up message. So:

- an injection for this run is confirmed `queued` at once and joins the conversation as a user
  message right before the next model call, confirmed `delivered` with that step; a turn whose
  model has finished answering makes one more call for it;
- one for another run (`expected_run_id`) is `rejected`; one that comes while the turn closes, or
  is still waiting when the turn ends, is `queued_for_next_turn` (the client re-sends it), so the
  text reaches the model exactly once either way.

Messages queued while no turn ran (a user-message action before a `resume_action` run request,
or on a run that had just ended) are not steering: they are the next turn's, in the same
`MessageQueue` (its `earlier`), given to the model once each (`loop.py`).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass

from cursor_byok.pb import agent_v1_pb2 as pb

log = logging.getLogger(__name__)

MAX_PENDING = 16  # injections waiting for the next model call; more are queued for next turn
MAX_EARLIER = 16  # messages queued for a conversation's next turn while none of it runs


@dataclass
class Injection:
    injection_id: str  # "" for a user-message action sent mid-run (nothing to confirm)
    message: pb.UserMessage


def _unconfirmed(**_variant) -> None:
    """No turn yet to confirm an injection to (`MessageQueue.bind` gives it one)."""


class MessageQueue:
    """Every user message for a turn other than its own: those that came before it started
    (`earlier`: queued while no turn ran, given to the model once each), and the injections
    sent while it runs (steering: waiting for the next model call, or closed for good).

    The proxy keeps one per conversation between its turns (`queue_next`) and hands it to the
    conversation's next turn, which binds it to its UI updates (`bind`)."""

    def __init__(self, earlier: Iterable[pb.UserMessage] = ()) -> None:
        self.earlier: list[pb.UserMessage] = list(earlier)
        self.update: Callable[..., None] = _unconfirmed  # the turn's `update(**variant)`
        self.finished: Callable[[], bool] = lambda: False  # whether the run's stream ended
        self.name = ""  # the turn's request id, for logs
        self.pending: list[Injection] = []
        self.delivered: list[Injection] = []
        self.closed = False  # the model part of the turn is over: too late to join it

    def bind(self, update: Callable[..., None], finished: Callable[[], bool], name: str) -> None:
        """The turn that takes these messages: injections are confirmed with its updates."""
        self.update, self.finished, self.name = update, finished, name

    def queue_next(self, message: pb.UserMessage) -> None:
        """A message for the next turn, sent while none ran (bounded: more are dropped)."""
        if len(self.earlier) < MAX_EARLIER:
            self.earlier.append(message)

    def before(self, current: pb.UserMessage | None = None) -> list[pb.UserMessage]:
        """The messages queued before the turn, each once: none that is the turn's own message
        (by id or text) or repeats an earlier one (a retry, or the same text queued twice)."""
        seen: set[str] = set()
        if current is not None:
            seen.update(key for key in (current.message_id, current.text) if key)
        out = []
        for message in self.earlier:
            keys = [key for key in (message.message_id, message.text) if key]
            if not keys or any(key in seen for key in keys):
                continue
            seen.update(keys)
            out.append(message)
        return out

    def offer(self, action: pb.InjectContextAction, run_id: str) -> None:
        """An inject_context_action on the running run (answered with its first state now)."""
        ident = action.injection_id
        if action.expected_run_id and run_id and action.expected_run_id != run_id:
            self._state(ident, rejected=f"run {action.expected_run_id} is not the one running")
            return
        if action.WhichOneof("payload") != "user_context":
            self._state(ident, rejected="only user messages can be injected here")
            return
        self.add(Injection(ident, action.user_context.user_message))

    def add(self, injection: Injection) -> None:
        if self.closed or len(self.pending) >= MAX_PENDING:
            self._state(injection.injection_id, later=True)
            log.info(
                "turn %s: steering %s queued for the next turn",
                self.name,
                injection.injection_id or "(message)",
            )
            return
        self.pending.append(injection)
        self._state(injection.injection_id, queued=True)
        log.info("turn %s: steering %s queued", self.name, injection.injection_id or "(message)")

    def take(self, step: int) -> list[Injection]:
        """The injections to put before this model call; each is confirmed delivered now."""
        taken, self.pending = self.pending, []
        batch = str(uuid.uuid4())
        for injection in taken:
            self._state(injection.injection_id, delivered=(step, batch))
        self.delivered += taken
        return taken

    def close(self) -> None:
        """The model part of the turn is over: what still waits goes to the next turn."""
        self.closed = True
        for injection in self.pending:
            self._state(injection.injection_id, later=True)
        self.pending = []

    def _state(
        self,
        ident: str,
        *,
        queued: bool = False,
        delivered: tuple[int, str] | None = None,
        later: bool = False,
        rejected: str | None = None,
    ) -> None:
        if not ident or self.finished():
            return
        state = pb.ContextInjectionState()
        if queued:
            state.queued.SetInParent()
        elif delivered is not None:
            step, batch = delivered
            state.delivered.step = step
            state.delivered.delivery_batch_id = batch
            state.delivered.delivered_at_ms = int(time.time() * 1000)
        elif later:
            state.queued_for_next_turn.SetInParent()
        else:
            state.rejected.reason = rejected or ""
        self.update(
            context_injection_state=pb.ContextInjectionStateUpdate(injection_id=ident, state=state)
        )
