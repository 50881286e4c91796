"""The client requests one run waits on (exec, KV, interaction), sans-IO.

Their ids (exec and interaction ids share one counter, KV ids have their own: protocol.md §3),
what is still unanswered and since when (the exec watchdog), and what was answered in which
epoch: the replay rule (`replay.py`) reads that to never send an answered request to an attempt
that joined later. An answer to a request that is not pending is late (answered before, or
aborted) or unknown (never sent, or not ours); the run says which in the log.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass

from cursor_byok.core.outbox import PendingKey
from cursor_byok.core.outbox import PendingKind

# Shell execs keep their own time-out (and a person may be typing): no watchdog for them.
_UNWATCHED_EXECS = frozenset({"shell_args", "shell_stream_args", "background_shell_spawn_args"})


@dataclass(slots=True)
class Waiting:
    """One unanswered request."""

    what: str  # the exec/KV/interaction variant, for errors and logs
    since: float
    watched: bool  # subject to the exec watchdog


class Pending:
    """A run's outstanding client requests and the ids it has given out."""

    def __init__(self) -> None:
        self.waiting: dict[PendingKey, Waiting] = {}
        self.resolved: dict[PendingKey, int] = {}  # key → epoch of its answer
        self.epoch = 0  # bumped by every answer
        self._next_exec_id = 1
        self._next_kv_id = 1
        self._aborted_execs: set[int] = set()

    def __contains__(self, key: object) -> bool:
        return key in self.waiting

    def __len__(self) -> int:
        return len(self.waiting)

    def __iter__(self) -> Iterator[PendingKey]:
        return iter(self.waiting)

    def take_id(self, kind: PendingKind) -> int:
        """The next id of `kind` (exec and interaction ids come from one counter)."""
        if kind is PendingKind.KV:
            ident = self._next_kv_id
            self._next_kv_id += 1
        else:
            ident = self._next_exec_id
            self._next_exec_id += 1
        return ident

    def issued(self, key: PendingKey) -> bool:
        """Whether this id was ever given out (for protocol checks on `Run` streams)."""
        kind, ident = key
        counter = self._next_kv_id if kind is PendingKind.KV else self._next_exec_id
        return 0 < ident < counter

    def wait(self, key: PendingKey, what: str, now: float, *, watched: bool) -> bool:
        """`key` was sent and waits for its answer; whether the watchdog times it."""
        watched = watched and what not in _UNWATCHED_EXECS
        self.waiting[key] = Waiting(what, now, watched)
        return watched

    def resolve(self, key: PendingKey) -> bool:
        """The answer to `key` came: False when it was not pending (late or unknown)."""
        if self.waiting.pop(key, None) is None:
            return False
        self.epoch += 1
        self.resolved[key] = self.epoch
        return True

    def late(self, key: PendingKey) -> bool:
        """Whether an answer to `key` that is not pending repeats one, or answers an abort."""
        kind, ident = key
        return key in self.resolved or (kind is PendingKind.EXEC and ident in self._aborted_execs)

    def answered_before(self, key: PendingKey, epoch: int) -> bool:
        """Whether `key` was answered before `epoch` (an attempt bound then must not get it)."""
        answered = self.resolved.get(key)
        return answered is not None and answered < epoch

    def abort(self) -> list[PendingKey]:
        """Forget every pending request; their execs are aborted on the client, so their late
        answers are expected, not unknown."""
        keys = list(self.waiting)
        self._aborted_execs.update(i for k, i in keys if k is PendingKind.EXEC)
        self.waiting.clear()
        return keys

    def clear(self) -> None:
        self.waiting.clear()

    def describe(self, keys: Iterable[PendingKey], now: float) -> str:
        """`exec 3 (read_args, 12 s)` for each key still pending, for error messages."""
        parts = []
        for key in keys:
            waiting = self.waiting.get(key)
            if waiting is not None:
                parts.append(
                    f"{key[0].value} {key[1]} ({waiting.what}, {now - waiting.since:.0f} s)"
                )
        return ", ".join(parts) or "nothing"

    def watched_since(self) -> float | None:
        """When the oldest request the watchdog times was sent."""
        return min((w.since for w in self.waiting.values() if w.watched), default=None)

    def overdue(self, now: float, timeout: float) -> list[PendingKey]:
        """The watched requests unanswered for `timeout` (the first fails the run, which is
        then told nothing more: `RunState.FAILED`)."""
        return [k for k, w in self.waiting.items() if w.watched and now >= w.since + timeout]
