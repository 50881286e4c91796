"""An addon that keeps a BYOK conversation off Cursor's servers (issue 26): private by default.

A BYOK turn is served here, but Cursor makes calls *around* it that carry the conversation: the
title (NameAgent), transcripts, metadata, prompt-quality uploads, attached media, summaries,
analytics with the prompt's hash and the model's name (`cursor/content_calls.py` lists them).
With `privacy = "local"` (the default) each such call about a BYOK conversation is answered
here (`privacy_answers.py`) and nothing of it is forwarded; analytics batches go on without the
events about BYOK conversations (the original bytes of the others). With `privacy = "cursor"`
they all go to Cursor as they came. Calls about Cursor-model conversations, and everything that
is not about a conversation, pass through byte for byte.

Whose a call is: the route of the conversation it names (by id, by a run's request id, by its
message text or a transcript quoting one, or by naming a BYOK model; `cursor/privacy.py`). A
call that comes before its conversation's first run waits for it (bounded by
`cursor_byok_route_wait_ms`, as run appends do). A conversation still unknown after the wait is
treated as private: a Cursor-model conversation then misses one title or metadata sync, while the
opposite guess would send a BYOK conversation to Cursor (docs/protocol.md §16).

The proof: every buffered call that leaves for Cursor is searched for the ids and prompt hashes
of BYOK conversations, whatever let it pass; what is found is counted per conversation in the
census (bytes sent to Cursor: must read 0), with the calls answered here and events dropped.
"""

from __future__ import annotations

import json
import logging
import time

from google.protobuf import empty_pb2
from mitmproxy import ctx
from mitmproxy import http

from cursor_byok.config import Config
from cursor_byok.config import ModelConfig
from cursor_byok.config.catalog import ID_PREFIX
from cursor_byok.config.catalog import METADATA_KEY as PICKER_KEY
from cursor_byok.config.catalog import find_model
from cursor_byok.config.catalog import model_id
from cursor_byok.cursor import analytics
from cursor_byok.cursor.content_calls import ANALYTICS
from cursor_byok.cursor.content_calls import CALLS
from cursor_byok.cursor.content_calls import AnalyticsCall
from cursor_byok.cursor.content_calls import ContentCall
from cursor_byok.cursor.privacy import MESSAGE_CHARS
from cursor_byok.cursor.privacy import MIN_QUOTE
from cursor_byok.providers import Provider
from cursor_byok.proxy import options
from cursor_byok.proxy import unary
from cursor_byok.proxy.activity_record import CENSUS_KEY
from cursor_byok.proxy.activity_record import STREAMER
from cursor_byok.proxy.hosts import cursor_host
from cursor_byok.proxy.privacy_answers import MEDIA_PREFIX
from cursor_byok.proxy.privacy_answers import Answers
from cursor_byok.proxy.routing import CURSOR
from cursor_byok.proxy.routing import LOCAL
from cursor_byok.proxy.routing import Routing
from cursor_byok.proxy.turns import Turns
from cursor_byok.store.census import RELAYED
from cursor_byok.store.census import SERVED
from cursor_byok.store.census import Census
from cursor_byok.store.files import MiB
from cursor_byok.wire import connect

log = logging.getLogger(__name__)
_OPTIONS = ("cursor_byok_title_timeout_ms", "cursor_byok_media_max_mb", "cursor_byok_min_free_mb")

OWNER_KEY = "cursor_byok_private_owner"  # flow metadata: the BYOK conversation a call is about
_MEASURED = "cursor_byok_private_measured"
RECENT_TEXT = 300.0  # seconds: a message-only call (NameAgent) is matched to runs this recent
SCAN_LIMIT = 8 * 1024 * 1024  # bytes of a leaving body decoded and searched


def privacy_of(config: Config | None) -> str:
    """The config's `privacy`; without a config every run is served here: "local"."""
    return config.privacy if config is not None else "local"


class Privacy:
    def __init__(self, routing: Routing, turns: Turns, census: Census) -> None:
        self.routing = routing
        self.turns = turns
        self.census = census
        self.answers = Answers(self._provider, lambda: options.data_dir(ctx.options))
        self._warned: set[str] = set()  # paths whose leak was logged

    def load(self, loader) -> None:
        options.declare(loader, "cursor_byok_hosts", "cursor_byok_data_dir", *_OPTIONS)

    def configure(self, updated: set[str]) -> None:
        opts = ctx.options
        mine = options.changed(opts, updated, *_OPTIONS)
        if "cursor_byok_title_timeout_ms" in mine:
            self.answers.title_timeout = opts.cursor_byok_title_timeout_ms / 1000
        if "cursor_byok_media_max_mb" in mine:
            self.answers.media_total = opts.cursor_byok_media_max_mb * MiB
        if "cursor_byok_min_free_mb" in mine:
            self.answers.min_free = opts.cursor_byok_min_free_mb * MiB

    def _provider(self, config: Config, model: ModelConfig) -> Provider:
        return self.turns.providers.get(config.providers[model.provider].settings())

    # --- requests ---------------------------------------------------------------------------

    async def request(self, flow: http.HTTPFlow) -> None:
        if flow.response or flow.error or not flow.live or not cursor_host(flow):
            return
        path = flow.request.path.split("?", 1)[0]
        if path.startswith(MEDIA_PREFIX):
            await self.answers.serve_media(flow, path)
            return
        call = CALLS.get(path)
        batch = ANALYTICS.get(path) if flow.request.method == "POST" else None
        if call is None and batch is None:
            return
        try:
            if call is not None:
                await self._content(flow, call)
            elif batch is not None:
                self._analytics(flow, batch)
        except Exception as exc:
            # An exception in a hook lets mitmproxy forward the flow: never for these calls.
            log.exception("%s: answered with an error here (a bug of cursor-byok)", path)
            if flow.response is None:
                unary.error(flow, "internal", f"cursor-byok could not handle {path}: {exc}")

    def _config(self) -> Config | None:
        config = self.turns.routing_config()
        self.census.privacy_mode = privacy_of(config)
        return config

    def _local(self, conversation: str) -> bool:
        return not self.routing.may_pass() or self.routing.conversation_route(conversation) == LOCAL

    async def _content(self, flow: http.HTTPFlow, call: ContentCall) -> None:
        config = self._config()
        mode = privacy_of(config)
        try:
            message = unary.parse(flow.request, call.request())
        except unary.BadRequest as exc:
            if mode == "local":
                # Not readable (a coding we cannot decode, bytes that are not its message, one
                # invalid UTF-8 byte): nobody can tell whose it is, and a content call is always
                # about a conversation, so it is refused, never forwarded unread.
                owners = self._leaving_owners(flow)
                unary.error(flow, exc.code, f"{call.name}: {exc}")
                self.census.private(next(iter(owners), ""), answered=1)
                log.info("%s: unreadable (%s): refused here, not sent to Cursor", call.name, exc)
            return
        conversation, private = await self._attribute(call, message, config, wait=mode == "local")
        if not private:
            return  # a Cursor-model conversation's: as it came
        if mode == "cursor":
            flow.metadata[OWNER_KEY] = conversation  # counted when it has gone (`response`)
            return
        how = await self.answers.answer(flow, call, message, conversation, config)
        self.census.private(conversation, answered=1)
        log.info(
            "%s: about BYOK conversation %s (%s): %s here%s, not sent to Cursor",
            call.name,
            conversation or "(not named)",
            call.what,
            "refused" if call.answer == "refuse" else "answered",
            f" ({how})" if how else "",
        )

    async def _attribute(
        self, call: ContentCall, message, config: Config | None, *, wait: bool
    ) -> tuple[str, bool]:
        """(the conversation a call is about, whether it is private), see the module doc."""
        ids = [i for i in call.conversations(message) if i]
        texts = [t for t in call.texts(message) if t.strip()]
        transcript = call.transcript(message)
        named = [m for m in call.models(message) if m]
        now = time.monotonic()
        # A message-only call (NameAgent) is about the newest run with that message: one routed
        # within the route wait is the call's own; an older one only if no newer one comes.
        fresh, recent = now - self.routing.routes.patience, now - RECENT_TEXT

        def lookup(since: float) -> tuple[str, bool] | None:
            for ident in ids:
                conversation = self.routing.known.owner(ident) or ident
                route = self.routing.conversation_route(conversation)
                if route is not None:
                    return conversation, route == LOCAL
            matches = [c for t in texts for c in self.routing.messages.matching(t, since)]
            if transcript:
                matches += self.routing.messages.within(transcript)
            routes = [(c, self.routing.conversation_route(c)) for c in matches]
            for conversation, route in routes:  # any BYOK one makes it private
                if route == LOCAL:
                    return conversation, True
            for conversation, route in routes:
                if route == CURSOR:
                    return conversation, False
            return None

        found = lookup(fresh)
        fallback = ids[0] if ids else ""
        if not self.routing.may_pass() or any(self._our_model(m, config) for m in named):
            return (found[0] if found else fallback), True
        if found is None and named:
            return fallback, False  # it names a model, and not one of ours: Cursor's
        if found is None and wait and (ids or texts or transcript):
            found = await self.routing.wait_for(lambda: lookup(fresh), self.routing.routes.patience)
        if found is None and texts:
            found = lookup(recent)
        if found is None:
            return fallback, True  # unknown after the wait: private (the module doc)
        return found

    @staticmethod
    def _our_model(name: str, config: Config | None) -> bool:
        """A model we serve, named as Cursor names it: our stable `byok-…` id (even one a
        config edit has since removed: Cursor's own ids never take that prefix), its display
        name or its upstream id."""
        name = name.strip()
        if name.startswith(ID_PREFIX):
            return True
        if config is None:
            return False
        if find_model(config, name) is not None:
            return True
        wanted = name.casefold()
        return any(wanted in (m.name.casefold(), m.model.casefold()) for m in config.models)

    # --- analytics --------------------------------------------------------------------------

    def _analytics(self, flow: http.HTTPFlow, call: AnalyticsCall) -> None:
        config = self._config()
        if privacy_of(config) == "cursor":
            return
        models = set()
        if config is not None:
            models = {n.casefold() for m in config.models for n in (m.name, m.model, model_id(m))}

        def private(value: str) -> str | None:
            owner = self.routing.known.owner(value)
            if owner is not None and self._local(owner):
                return owner
            # the prompt's text with no id (issue 33 item 8): a BYOK run's message in it
            for owner in self._quoted(value):
                return owner
            folded = value.strip().casefold()
            return "" if folded in models or folded.startswith(ID_PREFIX) else None

        request = flow.request
        fmt = unary.request_format(request)
        try:
            data = unary.message_bytes(request)
            if fmt == "json":
                document, counts = analytics.filter_json_events(json.loads(data or b"{}"), private)
                body = json.dumps(document, separators=(",", ":")).encode()
            else:
                counts = analytics.filter_events(data, call.strings, private)
                body = counts.body or b""
        except (unary.BadRequest, analytics.WireError, ValueError, RecursionError) as exc:
            # Unreadable (a coding we cannot decode, nesting deeper than a parser goes): it may
            # be about a BYOK conversation and nobody can tell, so it is dropped whole.
            owners = self._leaving_owners(flow) or {""}
            unary.answer(flow, empty_pb2.Empty())
            for owner in owners:
                self.census.private(owner, dropped=1)
            log.info("%s: unreadable (%s): dropped, not sent to Cursor", request.path, exc)
            return
        if not counts.dropped:
            return  # nothing private: the original bytes go on
        for owner, dropped in counts.owners.items():
            self.census.private(owner, dropped=dropped)
        name = request.path.split("?", 1)[0].rsplit("/", 1)[-1]
        log.info(
            "%s: %d of %d event(s) about BYOK conversations dropped%s",
            name,
            counts.dropped,
            counts.dropped + counts.kept,
            "; the rest went on" if counts.kept else "; answered here",
        )
        if not counts.kept:
            unary.answer(flow, empty_pb2.Empty())  # the empty message of any response type
            return
        if fmt == "connect+proto":
            body = connect.encode_frame(body)
        request.headers.pop("content-encoding", None)
        request.content = body

    # --- the proof: what leaves for Cursor --------------------------------------------------

    def response(self, flow: http.HTTPFlow) -> None:
        self._measure(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        self._measure(flow)

    def _measure(self, flow: http.HTTPFlow) -> None:
        """Count the bytes of a call that went to Cursor about a BYOK conversation."""
        if flow.metadata.get(_MEASURED):
            return
        flow.metadata[_MEASURED] = True
        if flow.metadata.get(CENSUS_KEY) in (SERVED, STREAMER, RELAYED):
            return  # answered here, or a stream whose route decides (not buffered)
        if flow.metadata.get(PICKER_KEY) in ("replace", "offline"):
            return  # a model list answered here
        owner = flow.metadata.get(OWNER_KEY)
        if owner is None and not cursor_host(flow):
            return
        raw = flow.request.raw_content
        if raw is None:
            return
        owners = self._leaving_owners(flow)
        if owner is not None:
            owners.add(owner)
        for conversation in owners:
            self.census.private(conversation, sent_bytes=len(raw), sent_calls=1)
        path = flow.request.path.split("?", 1)[0]
        if owners and owner is None and path not in self._warned and len(self._warned) < 256:
            self._warned.add(path)
            log.warning(
                "%s: a call cursor-byok does not answer named BYOK conversation %s and went to "
                "Cursor (%d bytes; counted by `cursor-byok doctor --watch`)",
                path,
                ", ".join(sorted(owners)),
                len(raw),
            )

    def _leaving_owners(self, flow: http.HTTPFlow) -> set[str]:
        """The BYOK conversations whose ids, prompt hashes or messages a request's body
        carries, decoded as the filters decode it (`_decoded`)."""
        data = _decoded(flow.request)
        owners = {o for o in self.routing.known.owners_in(data, SCAN_LIMIT) if self._local(o)}
        owners.update(self._quoted(data[:SCAN_LIMIT].decode("utf-8", "replace")))
        return owners

    def _quoted(self, text: str) -> list[str]:
        """BYOK conversations one of whose run messages `text` carries (quoted whole, or
        the message cut short), newest first."""
        if len(text) < MIN_QUOTE:
            return []
        found = self.routing.messages.within(text)
        if len(text) <= MESSAGE_CHARS:
            found += self.routing.messages.matching(text)
        return [c for c in dict.fromkeys(found) if self._local(c)]


def _decoded(request: http.Request) -> bytes:
    """A body as its bytes mean it: decompressed and, for streams, the frames' payloads
    (bounded; what cannot be decoded is searched as it is)."""
    ctype = request.headers.get("content-type", "")
    framed = "connect+" in ctype or "grpc" in ctype
    for enveloped in (True, False) if framed else (False,):
        try:  # frames that cannot be read are searched as the decompressed body
            return b"".join(unary.body_payloads(request, SCAN_LIMIT, enveloped=enveloped))
        except connect.ConnectError:
            continue
    return request.raw_content or b""
