"""An addon for the unary calls Cursor makes around an Agent run (issue 25 items 3, 5, 6).

- `AgentService/UploadConversationBlobs`: @-mentioned files, images, documents and PR diffs
  Cursor uploads before a run request that then names them by id. Every blob is verified (id =
  SHA-256 of its value) and kept in our blob store, so a BYOK turn resolves them without a KV GET;
  for a BYOK conversation the call is answered here; a Cursor-model conversation's upload goes
  to Cursor only (nothing of it is stored here), and an upload the disk has no room for (less
  than `cursor_byok_min_free_mb` left after it) is refused before anything is written.
  An upload that comes before its conversation's first run waits for it (bounded, as run appends
  do); still unknown after the wait it is private: answered here (issue 26, `privacy.py`). With
  `privacy = "cursor"` every upload goes on to Cursor (and one of a conversation not known to be
  Cursor's is kept here too).
- `AgentService/GetPromptContextUsage` (the context ring): for a BYOK conversation answered from
  our own token accounting, so the ring shows what the provider sees.
- `NetworkService/IsConnected`: probed by Cursor during slow requests; an error makes it abort
  in-flight work, so while Cursor's API cannot be reached it is answered here.
- `AgentService/NotifyConversationClone` (Fork Chat, retried when it fails) and
  `AgentService/WarmUp`: answered here for BYOK conversations (nothing to warm), and offline.

"BYOK conversation": one whose latest run was served here (`Routing.note_conversation`), or
every run is (`route_other_models = "error"`, the scripted agent). Everything else passes through
as it came; while Cursor's API is unreachable (`reachability.py`) each of these is answered here
so a BYOK run never fails on a call it does not need. Answers use the shared helper `unary.py`.
"""

from __future__ import annotations

import asyncio
import logging

from google.protobuf import empty_pb2
from mitmproxy import ctx
from mitmproxy import http

from cursor_byok.cursor.context_meter import usage_tree
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.proxy import options
from cursor_byok.proxy import unary
from cursor_byok.proxy.hosts import cursor_host
from cursor_byok.proxy.reachability import Reachability
from cursor_byok.proxy.routing import CURSOR
from cursor_byok.proxy.routing import LOCAL
from cursor_byok.proxy.routing import Routing
from cursor_byok.proxy.run_registry import RunRegistry
from cursor_byok.proxy.turns import ContextMeter
from cursor_byok.proxy.turns import Turns
from cursor_byok.proxy.turns import meter_of
from cursor_byok.store.census import Census
from cursor_byok.store.files import MiB
from cursor_byok.store.files import low_space
from cursor_byok.wire.blob_ids import BLOB_ID_SIZE
from cursor_byok.wire.blob_ids import blob_id

log = logging.getLogger(__name__)

IS_CONNECTED = "/aiserver.v1.NetworkService/IsConnected"
AGENT_SERVICE = "/agent.v1.AgentService/"
UPLOAD_BLOBS = "UploadConversationBlobs"
PROMPT_USAGE = "GetPromptContextUsage"
WARM_UP = "WarmUp"
NOTIFY_CLONE = "NotifyConversationClone"
METHODS = (UPLOAD_BLOBS, PROMPT_USAGE, WARM_UP, NOTIFY_CLONE)
MAX_UPLOAD_BLOBS = 4096  # blobs in one upload call (the body is bounded by unary.MAX_REQUEST)
MAX_HELD_UPLOADS = 64 * 1024 * 1024  # bytes of uploads held at once waiting for their route


class AgentCalls:
    def __init__(
        self,
        routing: Routing,
        turns: Turns,
        registry: RunRegistry,
        reach: Reachability,
        census: Census | None = None,
    ) -> None:
        self.routing = routing
        self.turns = turns
        self.registry = registry
        self.reach = reach
        self.census = census
        self._offline_said: set[tuple[str, int]] = set()
        self._held = 0  # bytes of uploads waiting for their conversation's route

    def load(self, loader) -> None:
        options.declare(loader, "cursor_byok_hosts", "cursor_byok_min_free_mb")

    def _method(self, flow: http.HTTPFlow) -> str | None:
        request = flow.request
        if request.method not in ("POST", "GET"):
            return None
        if not cursor_host(flow):
            return None
        path = request.path.split("?", 1)[0]
        if path == IS_CONNECTED:
            return "IsConnected"
        if path.startswith(AGENT_SERVICE) and path[len(AGENT_SERVICE) :] in METHODS:
            return path[len(AGENT_SERVICE) :]
        return None

    async def request(self, flow: http.HTTPFlow) -> None:
        if flow.response or flow.error or not flow.live:
            return
        method = self._method(flow)
        if method is None:
            return
        if method == "IsConnected":
            await self._is_connected(flow)
        elif method == UPLOAD_BLOBS:
            await self._upload_blobs(flow)
        elif method == PROMPT_USAGE:
            await self._prompt_usage(flow)
        elif method == NOTIFY_CLONE:
            await self._notify_clone(flow)
        else:
            await self._warm_up(flow)

    # --- routes -----------------------------------------------------------------------------

    def _ours(self, conversation_id: str) -> bool:
        """Whether a conversation is served here (see the module doc)."""
        if not self.routing.may_pass():
            return True
        return self.routing.conversation_route(conversation_id) == LOCAL

    async def _offline(self, flow: http.HTTPFlow, what: str) -> bool:
        if not await self.reach.unreachable(flow):
            return False
        key = (flow.request.host, flow.request.port)
        if key not in self._offline_said:  # once per host until it answers again
            self._offline_said.add(key)
            log.warning(
                "%s: Cursor's API %s:%d cannot be reached; answered here while it is offline",
                what,
                *key,
            )
        return True

    # --- the calls --------------------------------------------------------------------------

    async def _is_connected(self, flow: http.HTTPFlow) -> None:
        if await self._offline(flow, "NetworkService/IsConnected"):
            unary.answer(flow, empty_pb2.Empty())
        else:
            self._offline_said.discard((flow.request.host, flow.request.port))

    async def _warm_up(self, flow: http.HTTPFlow) -> None:
        """WarmUp carries no model (an empty request in the schema): answered here when the
        run it precedes will be ours as far as we can tell (every run is, or the latest run
        was: the picker's model is ours) [inf], or Cursor is offline."""
        ours = self.routing.last_route == LOCAL or not self.routing.may_pass()
        if ours or await self._offline(flow, "AgentService/WarmUp"):
            unary.answer(flow, pb.WarmUpResponse())

    async def _notify_clone(self, flow: http.HTTPFlow) -> None:
        try:
            request = unary.parse(flow.request, pb.NotifyConversationCloneRequest())
        except unary.BadRequest:
            return  # not ours to judge: Cursor's, as it came
        ours = self._ours(request.source_conversation_id) or self._ours(request.conversation_id)
        if ours:
            # The fork continues a BYOK conversation: its runs are ours too.
            self.routing.note_conversation(request.conversation_id, LOCAL)
            log.info(
                "NotifyConversationClone: %s forked from %s, answered here",
                request.conversation_id,
                request.source_conversation_id,
            )
            unary.answer(flow, pb.NotifyConversationCloneResponse())
        elif await self._offline(flow, "AgentService/NotifyConversationClone"):
            unary.answer(flow, pb.NotifyConversationCloneResponse())

    async def _upload_blobs(self, flow: http.HTTPFlow) -> None:
        try:
            request = unary.parse(flow.request, pb.UploadConversationBlobsRequest())
        except unary.BadRequest as exc:
            config = self.turns.routing_config()
            if config is not None and config.privacy == "cursor":
                log.warning("UploadConversationBlobs: %s; passed on as it came", exc)
                return
            # Whose it is cannot be read: never forwarded (privacy = "local").
            unary.error(flow, exc.code, f"UploadConversationBlobs: {exc}")
            return
        conversation = request.conversation_id
        ours = await self._private_upload(flow, conversation)
        if len(request.blobs) > MAX_UPLOAD_BLOBS:
            if ours:
                unary.error(
                    flow,
                    "resource_exhausted",
                    f"{len(request.blobs)} blobs in one upload; cursor-byok keeps at most "
                    f"{MAX_UPLOAD_BLOBS} per call",
                )
            return
        # Kept only for a conversation served here: a Cursor-model one's uploads are Cursor's.
        if not ours and self.routing.conversation_route(conversation) == CURSOR:
            return
        problem, bad = await self._store_upload(request, len(flow.request.raw_content or b""))
        if problem is not None:
            log.warning("UploadConversationBlobs: %s", problem)
            if ours:
                unary.error(flow, "resource_exhausted", problem)
            return
        if not ours and not await self._offline(flow, "AgentService/UploadConversationBlobs"):
            return  # privacy = "cursor" (or not known yet): Cursor gets it as well
        if ours and self.census is not None:
            self.census.private(conversation, answered=1)
        if bad:
            unary.error(
                flow,
                "invalid_argument",
                f"blob {bad[0]} of the upload: its id is not the SHA-256 of its value "
                f"({len(bad)} such; the others were kept)",
            )
            return
        unary.answer(flow, pb.UploadConversationBlobsResponse())

    async def _store_upload(
        self, request: pb.UploadConversationBlobsRequest, size: int
    ) -> tuple[str | None, list[int]]:
        """Keep an upload's blobs (hashing and writing up to 64 MiB: never on the event loop),
        after checking the data dir has room for it; (the problem that stopped it, or None;
        the indexes of blobs whose id is not their hash)."""
        store = self.turns.blobs
        if store is None:
            return None, []
        minimum = ctx.options.cursor_byok_min_free_mb + size / MiB
        full = await asyncio.to_thread(low_space, store.root.parent, minimum, "this upload")
        if full is not None:
            return full, []
        try:
            kept, bad = await asyncio.to_thread(self._keep, request)
        except OSError as exc:
            return f"cursor-byok could not keep the upload in its data dir: {exc}", []
        log.info(
            "UploadConversationBlobs: conversation %s, chunk %d/%d: %d blob(s) kept%s",
            request.conversation_id,
            request.chunk_index + 1,
            max(request.total_chunks, 1),
            kept,
            f", {len(bad)} refused (id is not the SHA-256 of the value)" if bad else "",
        )
        self.turns.tidy()
        return None, bad

    async def _private_upload(self, flow: http.HTTPFlow, conversation: str) -> bool:
        """Whether an upload stays here: its conversation is BYOK, or not known even after
        waiting for its first run (bounded: in time, and in bytes held at once); with
        `privacy = "cursor"` no upload does."""
        config = self.turns.routing_config()
        if config is not None and config.privacy == "cursor":
            return False
        if not self.routing.may_pass():
            return True
        route = self.routing.conversation_route(conversation)
        size = len(flow.request.raw_content or b"")
        if route is None and conversation and self._held + size <= MAX_HELD_UPLOADS:
            self._held += size
            try:
                route = await self.routing.wait_for(
                    lambda: self.routing.conversation_route(conversation),
                    self.routing.routes.patience,
                )
            finally:
                self._held -= size
        return route != CURSOR

    def _keep(self, request: pb.UploadConversationBlobsRequest) -> tuple[int, list[int]]:
        """Store every blob whose id is its SHA-256; (how many were kept, indexes refused)."""
        store = self.turns.blobs
        kept, bad = 0, []
        for index, entry in enumerate(request.blobs):
            if len(entry.id) != BLOB_ID_SIZE or blob_id(entry.value) != entry.id:
                bad.append(index)
                continue
            if store is not None:
                store.put_all({entry.id: entry.value})
                kept += 1
        return kept, bad

    async def _prompt_usage(self, flow: http.HTTPFlow) -> None:
        try:
            request = unary.parse(flow.request, pb.GetPromptContextUsageRequest())
        except unary.BadRequest:
            return
        conversation = request.conversation_id
        store = self.turns.blobs
        roots = list(request.root_prompt_messages_json)
        present = [ident for ident in roots if store is not None and ident in store]
        known = self.routing.conversation_route(conversation)
        ours = self._ours(conversation) or (
            known is None and bool(roots) and len(present) == len(roots)
        )
        if not ours and not await self._offline(flow, "AgentService/GetPromptContextUsage"):
            return
        meter = self._meter(conversation)
        if meter is None:  # nothing measured here yet: the roots' sizes, 4 bytes a token
            size = sum(len(store.get(ident) or b"") for ident in present) if store else 0
            meter = ContextMeter(size // 4, 0, {"conversation": size})
        answer = pb.GetPromptContextUsageResponse(unavailable_blob_count=len(roots) - len(present))
        answer.tree.CopyFrom(usage_tree(meter.used_tokens, meter.category_bytes, meter.max_tokens))
        unary.answer(flow, answer)

    def _meter(self, conversation_id: str) -> ContextMeter | None:
        """The meter of a conversation's running turn, else of its latest one."""
        for live in self.registry.running_for(conversation_id):
            if live.turn is not None:
                return meter_of(live.turn)
        return self.turns.meters.get(conversation_id)
