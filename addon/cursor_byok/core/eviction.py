"""Who gives up a live request id when the registry is at one of its bounds. Sans-IO.

The registry keeps at most `max_owner_attempts` live request ids per owner (the keyed hash of a
client's credential, or of its connection when it sends none) and `max_attempts` in all. One
client must not lock everyone out by filling them (issue 27: `Run` streams reset right after
their first exec request, 1,024 in 15 s, left runs waiting for their grace period, and every
Agent request of everyone was refused meanwhile). So a bound makes room before it refuses:

1. a **spent** attempt first (no stream reads it, and it ended or its run no longer runs), the
   one idle longest: dropping it loses nothing;
2. then one whose run still runs but has no stream (**detached**: waiting out its grace for a
   client that reset it, or for a first stream that never came), oldest first, of the owner
   holding the most request ids: that run is cancelled once no attempt carries it (it was
   abandoned; its owner started newer ones);
3. then one still **waiting** for its run request, idle longest (a request on its way from the
   edge to the core waits a few milliseconds; one that is junk, up to the run-request time-out);
4. never an attempt a stream is reading: when only those are left, the new request is refused.

At an owner's own bound only that owner's attempts are candidates, so a new run of a client
replaces its own abandoned ones and never another client's. At the global bound with every
attempt being read, the biggest holder gives one up to a smaller client (`displace`), and a
client that is itself the biggest is refused.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any
from typing import Protocol

UNREAD_GRACE = 10.0  # seconds a run may wait for its first stream before it counts as left


class _Run(Protocol):
    @property
    def running(self) -> bool: ...

    streams: int
    was_read: bool
    detached_since: float
    created_at: float


class _OwnedRun(Protocol):
    @property
    def owner(self) -> bytes: ...

    @property
    def conversation_id(self) -> str: ...

    @property
    def running(self) -> bool: ...

    @property
    def streams(self) -> int: ...

    @property
    def run_request(self) -> Any: ...

    @property
    def was_read(self) -> bool: ...


class _Attempt(Protocol):
    owner: bytes
    client: str
    last_active: float

    @property
    def ended(self) -> bool: ...

    @property
    def run(self) -> _Run | None: ...

    @property
    def subscribers(self) -> dict: ...


def spent(attempt: _Attempt) -> bool:
    """Nobody reads it and nothing runs for it any more: dropping it loses nothing live."""
    run = attempt.run
    if attempt.subscribers:
        return False
    return attempt.ended if run is None else not run.running


def detached(attempt: _Attempt, now: float) -> bool:
    """Its run still runs but no stream reads it: streams did and its client left it, or none
    ever came for `UNREAD_GRACE` (a stream comes within milliseconds of its run request)."""
    run = attempt.run
    if attempt.subscribers or run is None or not run.running or run.streams:
        return False
    return run.was_read or now - run.created_at > UNREAD_GRACE


def waiting(attempt: _Attempt) -> bool:
    """No run request and no stream yet (on its way in, or junk). One whose run request came
    is never taken for this: its run would be lost while its stream is on its way."""
    return not attempt.subscribers and attempt.run is None and not attempt.ended


def victim[A: _Attempt](
    attempts: Iterable[A],
    owners: Counter[bytes],
    *,
    now: float,
    owner: bytes | None = None,
    clients: Counter[str] | None = None,
    floor: int = 0,
    requester: bytes | None = None,
) -> A | None:
    """The attempt to drop to make room (only `owner`'s, if given), or None: refuse instead.
    Among arriving ones, the biggest holder's go first (by credential or by connection,
    `clients`), and only of a holder with at least `floor` requests (the requester's size
    plus one) or the `requester`'s own, so a flood cannot push out a smaller client's request
    on its way in."""
    held = clients if clients is not None else Counter[str]()

    def size(a: A) -> int:
        return max(owners[a.owner], held[a.client] if a.client else 0)

    candidates = [a for a in attempts if owner is None or a.owner == owner]
    done = [a for a in candidates if spent(a)]
    if done:
        return min(done, key=lambda a: a.last_active)
    abandoned = [a for a in candidates if detached(a, now)]
    if abandoned:
        return min(abandoned, key=lambda a: (-owners[a.owner], _detached_since(a)))
    arriving = [a for a in candidates if waiting(a) and (size(a) >= floor or a.owner == requester)]
    if arriving:
        return min(arriving, key=lambda a: (-size(a), a.last_active))
    return None


def displace[A: _Attempt](
    attempts: Iterable[A],
    owners: Counter[bytes],
    clients: Counter[str],
    owner: bytes,
    client: str,
) -> A | None:
    """At the global bound with every attempt being read: the one the biggest holder gives up
    for a smaller client, or None when the requester is itself (one of) the biggest: refuse it.

    Holders are counted two ways, by credential (`owners`) and by client connection
    (`clients`), so neither many made-up credentials on a few connections nor many connections
    with one credential lock anyone out (issue 33: 1,045 `Run` streams over 11 connections, or
    2,000 polls for made-up ids, filled the 1,024 and refused everyone). The biggest holder's
    attempt idle longest goes; one already ending is not taken again."""
    top_owner, by_owner = owners.most_common(1)[0] if owners else (b"", 0)
    top_client, by_client = clients.most_common(1)[0] if clients else ("", 0)
    mine = max(owners[owner], clients[client] if client else 0)
    if mine >= max(by_owner, by_client):
        return None
    if by_client > by_owner:
        candidates = [a for a in attempts if a.client == top_client and not a.ended]
    else:
        candidates = [a for a in attempts if a.owner == top_owner and not a.ended]
    return min(candidates, key=lambda a: a.last_active, default=None)


def running_turns(runs: Iterable[_OwnedRun], owner: bytes, conversation: str) -> int:
    """Turns `owner` has running, besides one of `conversation` (a new message there supersedes
    it). One credential running 16 streaming turns slowed another client's one-line turn from
    0.07 s to 22-26 s (issue 33 item 6): a client's running turns are bounded."""
    return sum(
        1
        for run in runs
        if run.owner == owner
        and run.running
        and not run.run_request.subagent_type_name  # a subagent is its parent turn's work
        and (run.streams or not run.was_read)  # one its client reset is not counted: it
        and not (conversation and run.conversation_id == conversation)  # goes (`victim`)
    )


def busy(turns: int) -> str:
    """What a client past its running turns is told."""
    return (
        f"this client has {turns} turns running at once, its most "
        "(cursor_byok_max_turns_per_client); wait for one to end, or stop one"
    )


def _detached_since(attempt: _Attempt) -> float:
    run = attempt.run
    assert run is not None
    return run.detached_since


__all__ = [
    "UNREAD_GRACE",
    "busy",
    "detached",
    "displace",
    "running_turns",
    "spent",
    "victim",
    "waiting",
]
