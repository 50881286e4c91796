"""A turn's blob I/O with its client: blobs read by id, written to the data dir, SET on the
client and acknowledged (the ack barrier), as `Turn` needs them for its checkpoints.

Kept apart from `Turn`: this is the part that talks to the channel (KV GETs and SETs, the
client's liveness) and to the disk; the turn decides what to store and when.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any
from typing import Protocol

from cursor_byok.agent.turn_endings import TurnError
from cursor_byok.agent.turn_endings import disk_full_error
from cursor_byok.conversation.history_format import HistoryMessage
from cursor_byok.core.outbox import StoredFrame
from cursor_byok.cursor.checkpoint import Blob
from cursor_byok.cursor.checkpoint import message_data
from cursor_byok.cursor.checkpoint import staged_splice
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.store.blobs import BlobFrame
from cursor_byok.store.blobs import BlobStore
from cursor_byok.wire.blob_ids import BlobMismatch
from cursor_byok.wire.blob_ids import verify
from cursor_byok.wire.blob_pieces import BlobPieces

ACK_TIMEOUT = 300.0  # longest wait for blob acknowledgements while the client is alive
CLIENT_SILENCE = 30.0  # the client counts as gone after this long without any message


class BlobChannel(Protocol):
    """What blob I/O needs of the run (`turn.RunChannel` has it all)."""

    def clock(self) -> float: ...

    @property
    def client_last_seen(self) -> float: ...

    async def kv(self, message: pb.KvServerMessage) -> pb.KvClientMessage: ...

    def open_set_blob(
        self, blob_id: bytes, data: bytes | BlobPieces, *, stored: BlobStore | None = None
    ) -> tuple[Any, Awaitable[Any]]: ...

    def describe_pending(self, keys: Sequence[Any]) -> str: ...

    def emit_frame(
        self, frame: bytes | None, *, stored: StoredFrame | None = None, size: int = 0
    ) -> None: ...


class ClientBlobs:
    """The blobs of one turn: ours (`store`), the client's (`held`) and those both hold."""

    def __init__(
        self,
        live: BlobChannel,
        store: BlobStore,
        held: set[bytes],
        pre_fetched: Sequence[pb.PreFetchedBlob] = (),
        *,
        ack_timeout: float = ACK_TIMEOUT,
        on_unresolved: Callable[[str, str], None] | None = None,
    ) -> None:
        self.live = live
        self.store = store
        self.held = held  # ids the client is known to hold
        self.pre_fetched = pre_fetched  # the run request's blobs, sent with it
        # ids of this turn's blobs on disk and acknowledged by the client: checkpoints name
        # them without making their bytes again (`Transcript.checkpoint(have=...)`)
        self.settled: set[bytes] = set()
        self.ack_timeout = ack_timeout
        # the census: (kind, id) of an id nothing could resolve (a blob nobody has)
        self.on_unresolved = on_unresolved
        # A blob write to the data dir failed (a full disk): the turn keeps going to the next
        # checkpoint Cursor gets (it stores the blobs too), then ends with this error.
        self.disk_error: TurnError | None = None

    async def get(self, ident: bytes) -> bytes:
        """A blob by id: our store, the run request's pre-fetched blobs, else a KV GET."""
        data = self.store.get(ident)
        if data is not None:
            return data
        for pre in self.pre_fetched:
            if pre.id == ident:
                return await self._accept(ident, pre.value)
        reply = await self.live.kv(pb.KvServerMessage(get_blob_args=pb.GetBlobArgs(blob_id=ident)))
        result = reply.get_blob_result
        if not result.HasField("blob_data"):
            why = f" ({result.error.message})" if result.error.message else ""
            if self.on_unresolved is not None:
                self.on_unresolved("blob id", ident.hex())
            raise TurnError("not_found", f"the client has no blob {ident.hex()}{why}")
        return await self._accept(ident, result.blob_data)

    async def _accept(self, ident: bytes, data: bytes) -> bytes:
        try:
            verify(ident, data)
        except BlobMismatch as exc:
            raise TurnError("invalid_argument", f"protocol error: {exc}") from None
        await self._write(self.store.put, data)
        self.held.add(ident)
        return data

    async def _write(self, write: Callable[[Any], object], blobs: Any) -> bool:
        """Write blobs to the data dir in a worker thread; a failure (a full disk) is kept for
        the end of the turn: the blobs still go to Cursor, which keeps its copy of them."""
        try:
            await asyncio.to_thread(write, blobs)
            return True
        except OSError as exc:
            if self.disk_error is None:
                self.disk_error = disk_full_error(self.store.root.parent, exc)
            return False

    async def put(self, blobs: dict[bytes, Blob]) -> None:
        """Write `blobs` to the data dir, SET every one the client lacks and wait for all
        acknowledgements (the ack barrier). Empties `blobs`. A long blob (`BlobPieces`) is
        made from its file from then on: its SET frame too, when a stream takes it."""
        if not blobs:
            return  # most checkpoints after the first of a close add none: no thread hop
        missing = {i: d for i, d in blobs.items() if i not in self.held}
        # on disk before the checkpoint that refers to them goes out; off the event loop
        on_disk = await self._write(self.store.put_all, blobs)
        if on_disk:
            self.settled.update(i for i in blobs if i not in missing)
            for ident, data in blobs.items():
                if isinstance(data, BlobPieces):  # the steps holding it let go of its text
                    data.rebase(self.store.reader(ident))
        blobs.clear()  # from here on each blob is held once: by `missing`, then by its frame
        if not missing:
            return

        async def set_one(key, answer, ident: bytes) -> None:
            reply = await answer
            if reply.set_blob_result.HasField("error"):
                message = reply.set_blob_result.error.message
                raise TurnError("internal", f"the client could not store a blob: {message}")
            self.held.add(ident)
            if on_disk:
                self.settled.add(ident)
            waiting.discard(key)

        waiting = set()
        tasks = []
        store = self.store if on_disk else None
        for ident in list(missing):  # in order: the KV ids and frames are the recorded ones
            data = missing.pop(ident)
            # on disk: once acknowledged the run reads it from there for a replay
            key, answer = self.live.open_set_blob(ident, data, stored=store)
            del data
            waiting.add(key)
            tasks.append(asyncio.ensure_future(set_one(key, answer, ident)))
        await self._ack_barrier(tasks, waiting)

    async def publish_staged(
        self, state: pb.ConversationStateStructure, pending: HistoryMessage
    ) -> None:
        """Send the staged checkpoint, `pending` inline (`cursor.checkpoint.staged_frame`).

        Its JSON is the message's blob, which the next checkpoint stores: written to the data
        dir first, so the run's backlog lets go of the frame once a stream took it and makes
        it again from there for a replay (`BlobFrame`). A failed write only keeps the frame."""
        head, tail = staged_splice(state, pending)
        ident, data = message_data(pending)
        on_disk = await self._write(self.store.put_all, {ident: data})
        stored = BlobFrame(head, ident, tail, self.store) if on_disk else None
        if stored is not None and isinstance(data, BlobPieces):  # made when a stream takes it
            self.live.emit_frame(None, stored=stored, size=len(head) + data.size + len(tail))
            return
        if isinstance(data, BlobPieces):
            data = data.join()
        frame = b"".join((head, data, tail))
        del data
        self.live.emit_frame(frame, stored=stored)

    async def _ack_barrier(self, tasks: Sequence[asyncio.Future], waiting: set) -> None:
        """Wait for every acknowledgement while the client shows it is alive (any message,
        heartbeats included), up to `ack_timeout`; the error names what is missing."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.ack_timeout
        try:
            while True:
                now = loop.time()
                silent_for = self.live.clock() - self.live.client_last_seen
                if silent_for >= CLIENT_SILENCE or now >= deadline:
                    missing = self.live.describe_pending(sorted(waiting, key=str))
                    why = (
                        f"the client sent nothing for {silent_for:.0f} s"
                        if silent_for >= CLIENT_SILENCE
                        else f"still missing after {self.ack_timeout:.0f} s"
                    )
                    raise TurnError(
                        "deadline_exceeded",
                        f"the client did not acknowledge stored blobs ({why}): {missing}",
                    )
                wait = min(deadline - now, CLIENT_SILENCE - silent_for)
                done, _ = await asyncio.wait(tasks, timeout=wait)
                for task in done:
                    task.result()  # raise the first failure
                if len(done) == len(tasks):
                    return
                tasks = [t for t in tasks if not t.done()]
        finally:
            for task in tasks:
                task.cancel()
