"""The data dir does not only grow: the blob store is kept under `cursor_byok_blobs_max_mb`.

Blobs are a cache of what a conversation's checkpoints and uploads hold (the client keeps every
checkpoint blob too, and gives it back by KV GET when a turn asks), so the least recently used
go first. What a running turn still needs never goes: the blobs its checkpoint and its user
message name, everything stored since the oldest running turn began, and the blobs a run's
backlog let go of to read them again for a replay (`BlobStore.pin`, until the run is dropped).
The store is measured again after every `limit / LOOK_EVERY` bytes written (and once at
start), in a worker thread.
"""

from __future__ import annotations

import asyncio
import logging
import time

from cursor_byok.agent.context import attachment_ids
from cursor_byok.cursor.actions import resolve as resolve_action
from cursor_byok.cursor.checkpoint import referenced_blobs
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.store.blobs import BlobStore
from cursor_byok.store.files import MiB

log = logging.getLogger(__name__)

LOOK_EVERY = 64  # look at the store's size again after a 64th of its cap was written


class Housekeeping:
    def __init__(self) -> None:
        self.limit = 4096 * MiB  # cursor_byok_blobs_max_mb
        self._running: dict[str, tuple[float, pb.AgentRunRequest]] = {}
        self._task: asyncio.Task | None = None
        self._looked = False

    def started(self, request_id: str, run_request: pb.AgentRunRequest) -> None:
        self._running[request_id] = (time.time(), run_request)

    def ended(self, request_id: str) -> None:
        self._running.pop(request_id, None)

    def protected(self) -> tuple[set[bytes], float]:
        """The blobs running turns name, and when the oldest of them began."""
        ids: set[bytes] = set()
        oldest = float("inf")
        for began, run_request in list(self._running.values()):
            oldest = min(oldest, began)
            ids |= referenced_blobs(run_request.conversation_state)
            try:
                ids.update(attachment_ids(resolve_action(run_request).user_message))
            except Exception:  # an action we cannot read names no attachment we can keep
                continue
        return ids, oldest

    def tidy(self, store: BlobStore | None) -> None:
        """Prune soon (in a worker thread) when enough was written since the last look."""
        if store is None or (self._task is not None and not self._task.done()):
            return
        if self._looked and store.written < self.limit // LOOK_EVERY:
            return
        self._looked = True
        self._task = asyncio.get_running_loop().create_task(self._prune(store))

    async def _prune(self, store: BlobStore) -> None:
        protected, oldest = self.protected()
        protected |= store.pinned()  # what lingering runs will read again for a replay
        try:
            deleted, freed, left = await asyncio.to_thread(
                store.prune, self.limit, protected, oldest
            )
        except OSError as exc:
            log.warning("could not prune the blob store %s: %s", store.root, exc)
            return
        if deleted:
            log.info(
                "blob store %s: %d least recently used blob(s) (%.1f MiB) deleted to stay under "
                "cursor_byok_blobs_max_mb=%d; %.1f MiB kept",
                store.root,
                deleted,
                freed / MiB,
                self.limit // MiB,
                left / MiB,
            )
        elif left > self.limit:
            log.warning(
                "blob store %s: %.1f MiB, over cursor_byok_blobs_max_mb=%d, all of it in use by "
                "running turns",
                store.root,
                left / MiB,
                self.limit // MiB,
            )
