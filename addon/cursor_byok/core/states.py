"""The lifecycles of the run core, each in one table (h11's `_state.py` is the model).

Three things live and die in the core: an **attempt** (one request id: a RunSSE + BidiAppend pair
or one `Run` stream), a **run** (one agent execution, `run_id`) and a run outbox's **hold** (the
deltas kept back for coalescing). Each table maps (state, event) to the next state; an event the
table does not list for the current state raises `IllegalEvent`. Client input never reaches a
table unchecked: the core decides what a message means first (a repeated run request is ignored,
not an illegal BIND), so `IllegalEvent` is always a bug in the code that drives the core.

    Attempt  NEW ─bind→ BOUND ─end→ ENDED ─forget→ FORGOTTEN
             NEW ─end→ REFUSED ─forget→ FORGOTTEN        (NEW and BOUND may be forgotten too)
    Run      DETACHED ⇄ ATTACHED   (a stream opens / the last stream goes)
             either ─finish→ FINISHED ─drop→ DROPPED
    Hold     OPEN ─hold→ HELD ─release (the window is over) | flush (another frame)→ OPEN
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

from cursor_byok.errors import ByokError


class IllegalEvent(ByokError):
    """An event the state does not allow (a bug in the caller, never client input)."""


def step[S: enum.Enum, E: enum.Enum](
    table: Mapping[tuple[S, E], S], state: S, event: E, what: str
) -> S:
    """The state `event` leads to from `state`; raises `IllegalEvent` if the table has none."""
    target = table.get((state, event))
    if target is None:
        raise IllegalEvent(f"{what}: {event.value} while {state.value}")
    return target


# --- attempts -----------------------------------------------------------------------------------


class AttemptState(enum.Enum):
    NEW = "new"  # waiting for its run request (which names the run it carries)
    BOUND = "bound"  # carries a run: its streams read the run's frames
    ENDED = "ended"  # carried a run, then ended on its own: its streams end with its error
    REFUSED = "refused"  # ended before it carried a run: later messages are refused
    FORGOTTEN = "forgotten"  # gone from the registry (idle, evicted, or its run was dropped)


class AttemptEvent(enum.Enum):
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


class RunState(enum.Enum):
    ATTACHED = "attached"  # running, and at least one response stream reads it
    DETACHED = "detached"  # running with no stream: cancelled once the grace period is over
    FINISHED = "finished"  # the end-stream frame is in the outbox; kept for late reconnects
    DROPPED = "dropped"  # lingered long enough; gone from the registry

    @property
    def running(self) -> bool:
        return self is RunState.ATTACHED or self is RunState.DETACHED


class RunEvent(enum.Enum):
    EMIT = "emit"  # a server frame is queued
    REQUEST = "request"  # an exec/KV/interaction request is sent
    ANSWER = "answer"  # a client message arrives
    ABORT = "abort"  # pending requests are aborted
    FINISH = "finish"  # the end-stream frame is queued
    BIND = "bind"  # another attempt joins
    STREAM_OPENED = "stream opened"  # a response stream starts reading it
    STREAMS_GONE = "streams gone"  # its last response stream went away
    DROP = "drop"  # the registry lets go of it


_R, _RE = RunState, RunEvent
RUN_TRANSITIONS: dict[tuple[RunState, RunEvent], RunState] = {}
for _running in (_R.ATTACHED, _R.DETACHED):
    RUN_TRANSITIONS.update(
        {
            (_running, _RE.EMIT): _running,
            (_running, _RE.REQUEST): _running,
            (_running, _RE.ANSWER): _running,
            (_running, _RE.ABORT): _running,
            (_running, _RE.BIND): _running,
            (_running, _RE.FINISH): _R.FINISHED,
            (_running, _RE.STREAM_OPENED): _R.ATTACHED,
            (_running, _RE.STREAMS_GONE): _R.DETACHED,
        }
    )
# A finished run still hears late answers (dropped), takes attempts and streams that replay it,
# and is aborted again by a turn that closes late. A dropped run is only still reachable from
# the streams that were reading it when it was dropped.
for _done in (_R.FINISHED, _R.DROPPED):
    RUN_TRANSITIONS.update(
        {
            (_done, _RE.ANSWER): _done,
            (_done, _RE.ABORT): _done,
            (_done, _RE.STREAM_OPENED): _done,
            (_done, _RE.STREAMS_GONE): _done,
        }
    )
RUN_TRANSITIONS[(_R.FINISHED, _RE.BIND)] = _R.FINISHED
RUN_TRANSITIONS[(_R.FINISHED, _RE.DROP)] = _R.DROPPED


# --- the coalescing hold of a run's outbox -----------------------------------------------------


class HoldState(enum.Enum):
    OPEN = "open"  # every entry is readable
    HELD = "held"  # entries from `held_from` on wait for the end of the coalescing window


class HoldEvent(enum.Enum):
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
