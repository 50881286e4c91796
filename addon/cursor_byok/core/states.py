"""The lifecycles of the run core, each in one table (h11's `_state.py` is the model).

Three things live and die in the core: an **attempt** (one request id: a RunSSE + BidiAppend pair
or one `Run` stream), a **run** (one agent execution, `run_id`) and a run outbox's **hold** (the
deltas kept back for coalescing). Each table maps (state, event) to the next state; an event the
table does not list for the current state raises `IllegalEvent`. Client input never reaches a
table unchecked: the core decides what a message means first (a repeated run request is ignored,
not an illegal BIND), so `IllegalEvent` is always a bug in the code that drives the core.

    Attempt  NEW ─bind→ BOUND ─end→ ENDED ─forget→ FORGOTTEN
             NEW ─end→ REFUSED ─forget→ FORGOTTEN        (NEW and BOUND may be forgotten too)
    Run      RUNNING ─overflow→ OVER_BACKLOG ─fail (the next tick)→ FAILED
             RUNNING ─cancel→ CANCELLED ─overflow→ OVER_BACKLOG,  ─fail→ FAILED
             RUNNING | OVER_BACKLOG | CANCELLED | FAILED ─finish→ FINISHED ─drop→ DROPPED
    Hold     OPEN ─hold→ HELD ─release (the window is over) | flush (another frame)→ OPEN

A run's end (its end-stream frame) is the turn's to write, so between the core deciding a turn
must stop and the turn stopping there are states of their own: over its output bound (failed at
the next tick), cancelled (still held to its limits), failed (told nothing more). Deadlines are
inputs (`Run.deadlines`, `Run.tick(now)`); what to do comes out as commands, never a log line.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

from cursor_byok.errors import ByokError


class IllegalEvent(ByokError):
    """An event the state does not allow (a bug in the caller, never client input)."""


class IdentityEnum(enum.Enum):
    """The base of the core's states and events: hashed by identity (each member is one
    object, and equality is identity), not by `Enum.__hash__`, a Python call on its name.
    The tables look up a (state, event) pair for every frame a run queues."""

    __hash__ = object.__hash__


def step[S: enum.Enum, E: enum.Enum](
    table: Mapping[tuple[S, E], S], state: S, event: E, what: str
) -> S:
    """The state `event` leads to from `state`; raises `IllegalEvent` if the table has none."""
    target = table.get((state, event))
    if target is None:
        raise IllegalEvent(f"{what}: {event.value} while {state.value}")
    return target


# --- attempts -----------------------------------------------------------------------------------


class AttemptState(IdentityEnum):
    NEW = "new"  # waiting for its run request (which names the run it carries)
    BOUND = "bound"  # carries a run: its streams read the run's frames
    ENDED = "ended"  # carried a run, then ended on its own: its streams end with its error
    REFUSED = "refused"  # ended before it carried a run: later messages are refused
    FORGOTTEN = "forgotten"  # gone from the registry (idle, evicted, or its run was dropped)


class AttemptEvent(IdentityEnum):
    OPEN = "open"  # the request id is used (a message, a stream, the edge opening it)
    BIND = "bind"  # its run request names a run (started or joined)
    END = "end"  # its streams must end (no run request in time, a protocol error, ...)
    FORGET = "forget"  # the registry lets go of it


_A, _AE = AttemptState, AttemptEvent
ATTEMPT_TRANSITIONS: dict[tuple[AttemptState, AttemptEvent], AttemptState] = {
    (_A.NEW, _AE.OPEN): _A.NEW,
    (_A.NEW, _AE.BIND): _A.BOUND,
    (_A.NEW, _AE.END): _A.REFUSED,
    (_A.NEW, _AE.FORGET): _A.FORGOTTEN,
    (_A.BOUND, _AE.OPEN): _A.BOUND,
    (_A.BOUND, _AE.END): _A.ENDED,
    (_A.BOUND, _AE.FORGET): _A.FORGOTTEN,
    # An ended attempt keeps its first error; a second end changes nothing.
    (_A.ENDED, _AE.OPEN): _A.ENDED,
    (_A.ENDED, _AE.END): _A.ENDED,
    (_A.ENDED, _AE.FORGET): _A.FORGOTTEN,
    (_A.REFUSED, _AE.OPEN): _A.REFUSED,
    (_A.REFUSED, _AE.END): _A.REFUSED,
    (_A.REFUSED, _AE.FORGET): _A.FORGOTTEN,
}


# --- runs ---------------------------------------------------------------------------------------


class RunState(IdentityEnum):
    RUNNING = "running"  # its turn runs (read by a stream or not: `Run.streams`)
    OVER_BACKLOG = "over backlog"  # its output passed max_backlog_bytes: the next tick fails it
    # Told to stop by a cancel (the user, a newer run, no stream past the grace period, room for
    # other requests) and not ended yet: it may still publish a checkpoint, so its time, output
    # and request limits still apply, and another cancel still reaches it.
    CANCELLED = "cancelled"
    # Told to stop by a failure (a limit, an unanswered request, a protocol error) and not ended
    # yet: a failed turn ends at once when it hears of it, so nothing more is said to it.
    FAILED = "failed"
    FINISHED = "finished"  # the end-stream frame is in the outbox; kept for late reconnects
    DROPPED = "dropped"  # lingered long enough; gone from the registry

    @property
    def running(self) -> bool:
        """Whether its end-stream frame is still to come (frames may still be queued)."""
        return self in _RUNNING


class RunEvent(IdentityEnum):
    EMIT = "emit"  # a server frame is queued
    REQUEST = "request"  # an exec/KV/interaction request is sent
    ANSWER = "answer"  # a client message arrives
    ABORT = "abort"  # pending requests are aborted
    BIND = "bind"  # another attempt joins
    OVERFLOW = "overflow"  # its output passed max_backlog_bytes
    CANCEL = "cancel"  # its turn is told to stop (`CancelTurn`)
    FAIL = "fail"  # its turn is failed (`FailTurn`)
    FINISH = "finish"  # the end-stream frame is queued
    DROP = "drop"  # the registry lets go of it


_R, _RE = RunState, RunEvent
_RUNNING = frozenset({_R.RUNNING, _R.OVER_BACKLOG, _R.CANCELLED, _R.FAILED})
RUN_TRANSITIONS: dict[tuple[RunState, RunEvent], RunState] = {}
for _running in _RUNNING:
    RUN_TRANSITIONS.update(
        {
            (_running, _RE.EMIT): _running,
            (_running, _RE.REQUEST): _running,
            (_running, _RE.ANSWER): _running,
            (_running, _RE.ABORT): _running,
            (_running, _RE.BIND): _running,
            (_running, _RE.FAIL): _R.FAILED,
            (_running, _RE.FINISH): _R.FINISHED,
        }
    )
RUN_TRANSITIONS.update(
    {
        (_R.RUNNING, _RE.OVERFLOW): _R.OVER_BACKLOG,
        (_R.CANCELLED, _RE.OVERFLOW): _R.OVER_BACKLOG,
        (_R.OVER_BACKLOG, _RE.OVERFLOW): _R.OVER_BACKLOG,  # every frame past the bound says so
        (_R.FAILED, _RE.OVERFLOW): _R.FAILED,  # failed already: once is enough
        (_R.RUNNING, _RE.CANCEL): _R.CANCELLED,
        (_R.CANCELLED, _RE.CANCEL): _R.CANCELLED,
        (_R.OVER_BACKLOG, _RE.CANCEL): _R.OVER_BACKLOG,  # the failure still comes
        (_R.FAILED, _RE.CANCEL): _R.FAILED,  # the failure stops it: the cancel is not sent
    }
)
# A finished run still hears late answers (dropped) and takes attempts that replay it; a turn
# aborts what it waits on before it ends, never after. A dropped run is only still reachable
# from the attempts whose streams were reading it when it was dropped.
RUN_TRANSITIONS.update(
    {
        (_R.FINISHED, _RE.ANSWER): _R.FINISHED,
        (_R.FINISHED, _RE.BIND): _R.FINISHED,
        (_R.FINISHED, _RE.DROP): _R.DROPPED,
        (_R.DROPPED, _RE.ANSWER): _R.DROPPED,
    }
)


# --- the coalescing hold of a run's outbox -----------------------------------------------------


class HoldState(IdentityEnum):
    OPEN = "open"  # every entry is readable
    HELD = "held"  # entries from `held_from` on wait for the end of the coalescing window


class HoldEvent(IdentityEnum):
    HOLD = "hold"  # a delta comes within the window of the last release: keep it back
    RELEASE = "release"  # the window is over: what is held becomes readable
    FLUSH = "flush"  # another frame (or the end) takes what is held out with it


_H, _HE = HoldState, HoldEvent
HOLD_TRANSITIONS: dict[tuple[HoldState, HoldEvent], HoldState] = {
    (_H.OPEN, _HE.HOLD): _H.HELD,
    (_H.OPEN, _HE.FLUSH): _H.OPEN,
    (_H.HELD, _HE.RELEASE): _H.OPEN,
    (_H.HELD, _HE.FLUSH): _H.OPEN,
}
