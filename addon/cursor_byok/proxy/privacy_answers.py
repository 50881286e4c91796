"""How a BYOK conversation's content calls are answered here (`cursor/content_calls.py` names
each call's answer; `proxy/privacy.py` decides which calls are answered).

Every answer is one the client accepts: the call's own response message (an empty one is valid
for every protobuf message), an empty stream for a streaming call, or a Connect error that says
what to change. Attached media gets URLs on this proxy, and what is uploaded there is kept in the
media store (`store/media.py`) and served back from it.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote
from urllib.parse import unquote

from google.protobuf import empty_pb2
from mitmproxy import http
from mitmproxy.net.http import multipart

from cursor_byok.agent import titles
from cursor_byok.config import Config
from cursor_byok.config import ModelConfig
from cursor_byok.cursor.content_calls import ContentCall
from cursor_byok.errors import ByokError
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.providers import Provider
from cursor_byok.proxy import unary
from cursor_byok.proxy.activity_record import CENSUS_KEY
from cursor_byok.proxy.activity_record import CENSUS_PATH
from cursor_byok.store.census import MEDIA_PATHS
from cursor_byok.store.census import SERVED
from cursor_byok.store.files import MiB
from cursor_byok.store.media import MAX_MEDIA
from cursor_byok.store.media import MAX_TOTAL
from cursor_byok.store.media import MediaRefused
from cursor_byok.store.media import MediaStore
from cursor_byok.store.usage import TITLE
from cursor_byok.store.usage import TurnUsage
from cursor_byok.store.usage import record_row
from cursor_byok.wire import connect
from cursor_byok.wire import inflate

log = logging.getLogger(__name__)

MEDIA_PREFIX = "/cursor-byok/media/"
MEDIA_LIFETIME_MS = 3_600_000  # how long the media URLs we hand out are said to be valid
SHARE_REFUSED = (
    'cursor-byok: this conversation runs on your own model and privacy = "local" keeps it off '
    'Cursor\'s servers, so it cannot be shared there. Set privacy = "cursor" in the cursor-byok '
    "config to allow it."
)
_SLUG = re.compile(r"[^a-z0-9]+")


class Answers:
    """The answers; `titles` remembers the titles given (bounded), for branch names."""

    def __init__(
        self,
        provider_for: Callable[[Config, ModelConfig], Provider],
        data_dir: Callable[[], Path],
    ) -> None:
        self.provider_for = provider_for
        self.data_dir = data_dir
        self.title_timeout = 8.0  # seconds (cursor_byok_title_timeout_ms)
        self.titles: dict[str, str] = {}
        self._media: dict[Path, MediaStore] = {}
        self.media_total = MAX_TOTAL  # cursor_byok_media_max_mb
        self.min_free = 0  # cursor_byok_min_free_mb

    async def answer(
        self,
        flow: http.HTTPFlow,
        call: ContentCall,
        message,
        conversation: str,
        config: Config | None,
    ) -> str:
        """Answer the flow; returns how, when there is more to say than the call's name."""
        kind = call.answer
        if kind == "title":
            return await self.title(flow, message, conversation, config)
        if kind == "ingested":
            unary.answer(flow, aipb.IngestConversationResponse(success=True))
        elif kind == "branch":
            unary.answer(
                flow, aipb.WriteGitBranchNameResponse(branch_name=self.branch(conversation))
            )
        elif kind == "media":
            self.signed_urls(flow, message, conversation)
        elif kind == "stream":
            ctype = flow.request.headers.get("content-type", "application/connect+proto")
            unary.answer_bytes(flow, connect.encode_end_stream(), ctype.split(";")[0])
        elif kind == "refuse":
            unary.error(flow, "failed_precondition", SHARE_REFUSED)
        else:
            unary.answer(flow, empty_pb2.Empty())  # the empty message of any response type
        return ""

    # --- NameAgent --------------------------------------------------------------------------

    async def title(
        self, flow: http.HTTPFlow, message: pb.NameAgentRequest, conversation: str, config
    ) -> str:
        started = time.monotonic()
        title = await titles.make_title(
            config,
            message.user_message,
            lambda model: self.provider_for(config, model),
            self.title_timeout,
        )
        unary.answer(flow, pb.NameAgentResponse(name=title.name))
        if conversation:
            self.titles[conversation] = title.name
            while len(self.titles) > 1024:
                self.titles.pop(next(iter(self.titles)))
        how = (
            f"named by {title.model}"
            if title.model and not title.problem
            else "named from its first words"
        )
        if title.model:
            duration = time.monotonic() - started
            usage = title.usage
            record_row(
                self.data_dir(),
                TurnUsage(
                    started=time.time() - duration,
                    duration=duration,
                    conversation=conversation,
                    request="",
                    model=title.model,
                    input_tokens=usage.get("input_tokens", 0),
                    cache_read_tokens=usage.get("cache_read_tokens", 0),
                    cache_write_tokens=usage.get("cache_write_tokens", 0),
                    output_tokens=usage.get("output_tokens", 0),
                    reasoning_tokens=usage.get("reasoning_tokens", 0),
                    outcome=TITLE,
                    route="NameAgent",
                ),
            )
        return how

    def branch(self, conversation: str) -> str:
        """A git branch name from the chat's title (or its id)."""
        slug = _SLUG.sub("-", self.titles.get(conversation, "").lower()).strip("-")[:40]
        return f"byok/{slug or (conversation[:8] or uuid.uuid4().hex[:8])}"

    # --- attached media ---------------------------------------------------------------------

    def signed_urls(
        self, flow: http.HTTPFlow, message: pb.GetSignedUrlForAttachedMediaRequest, conversation
    ) -> None:
        """URLs on this proxy, where the client's upload is kept (`serve_media`)."""
        if message.content_length_bytes > MAX_MEDIA:
            unary.error(
                flow,
                "resource_exhausted",
                f"attached media of {message.content_length_bytes} bytes: cursor-byok keeps at "
                f"most {MAX_MEDIA} bytes a file",
            )
            return
        key = f"{conversation or 'media'}/{message.key or uuid.uuid4().hex}"
        store = self.media()
        address = store.address(store.owner(_credential(flow)), key)
        url = f"{_origin(flow)}{MEDIA_PREFIX}{quote(address, safe='/')}"
        now = int(time.time() * 1000)
        answer = pb.GetSignedUrlForAttachedMediaResponse(
            key=key,
            post_url=url,
            get_url=url,
            put_url=url,
            expires_at_unix_ms=now + MEDIA_LIFETIME_MS,
            refresh_after_unix_ms=now + MEDIA_LIFETIME_MS * 5 // 6,
        )
        unary.answer(flow, answer)

    def media(self) -> MediaStore:
        """The media store of the data dir in force (one per dir: it serialises uploads)."""
        root = self.data_dir() / "media"
        store = self._media.get(root)
        if store is None:
            store = self._media[root] = MediaStore(root)
            while len(self._media) > 4:  # tests and replays change the data dir
                self._media.pop(next(iter(self._media)))
        store.total, store.min_free = self.media_total, self.min_free
        return store

    async def serve_media(self, flow: http.HTTPFlow, path: str) -> None:
        """An upload to, or a read of, a media URL we handed out (its owner's only)."""
        store = self.media()
        address = unquote(path[len(MEDIA_PREFIX) :])
        request = flow.request
        flow.metadata[CENSUS_KEY] = SERVED
        flow.metadata[CENSUS_PATH] = f"{request.method} {MEDIA_PATHS}"  # one census key
        if request.method in ("GET", "HEAD"):
            found = await asyncio.to_thread(store.get, address)
            if found is None:
                flow.response = http.Response.make(404, b"no such media\n")
                return
            data, ctype = found
            body = b"" if request.method == "HEAD" else data
            flow.response = http.Response.make(200, body, {"content-type": ctype})
            return
        if request.method not in ("PUT", "POST"):
            flow.response = http.Response.make(405, b"", {"allow": "GET, HEAD, PUT, POST"})
            return
        try:
            data, ctype, dropped = await asyncio.to_thread(_keep_upload, store, address, request)
        except KeyError:
            flow.response = http.Response.make(404, b"no such media URL\n")
            return
        except _Refused as exc:
            flow.response = http.Response.make(exc.status, f"{exc}\n".encode())
            return
        etag = f'"{hashlib.sha256(data).hexdigest()[:32]}"'
        status = 204 if request.method == "POST" else 200
        flow.response = http.Response.make(status, b"", {"etag": etag})
        log.info(
            "attached media of conversation %s (%d bytes) kept here, not in Cursor's storage%s",
            address.split("/")[2] if address.count("/") >= 2 else "?",
            len(data),
            f" ({dropped} older upload(s) dropped to stay under cursor_byok_media_max_mb)"
            if dropped
            else "",
        )


class _Refused(ByokError):
    """An upload refused with an HTTP status (the media URLs are plain HTTP, not Connect)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _keep_upload(store: MediaStore, address: str, request: http.Request) -> tuple[bytes, str, int]:
    """Decode an upload with our bounded inflater (never mitmproxy's, which inflates a 2 MiB
    gzip body to gigabytes) and keep it: (data, content type, uploads dropped). Off the event
    loop: it may be 64 MiB."""
    raw = request.raw_content or b""
    if len(raw) > store.per_file:
        raise _Refused(413, "attached media over the bound")
    try:
        data = inflate.decompress_capped(
            raw, request.headers.get("content-encoding"), store.per_file
        )
    except inflate.TooLarge:
        raise _Refused(413, f"attached media over the {store.per_file // MiB} MiB bound") from None
    except inflate.InflateError as exc:
        raise _Refused(400, f"undecodable content-encoding: {exc}") from None
    ctype = request.headers.get("content-type", "")
    if request.method == "POST" and ctype.startswith("multipart/form-data"):
        try:
            form = dict(multipart.decode_multipart(ctype, data))
        except ValueError:
            raise _Refused(400, "unreadable multipart form") from None
        ctype = (form.get(b"Content-Type") or form.get(b"content-type") or b"").decode()
        data = form.get(b"file") or (list(form.values())[-1] if form else b"")
    try:
        dropped = store.put(address, data, ctype)
    except MediaRefused as exc:
        raise _Refused(507, f"cannot keep it: {exc}") from None
    except OSError as exc:
        raise _Refused(507, f"cannot keep it: {exc.strerror or exc}") from None
    return data, ctype, dropped


def _credential(flow: http.HTTPFlow) -> str:
    """Who asks, for the media's owner: the client's Authorization, else its address."""
    authorization = flow.request.headers.get("authorization")
    if authorization:
        return authorization
    peer = flow.client_conn.peername
    return f"peer:{peer[0] if peer else ''}"


def _origin(flow: http.HTTPFlow) -> str:
    """scheme://host[:port] as the client addressed this request (so the media URLs reach this
    proxy the way this call did, in every mode)."""
    scheme = "https" if flow.client_conn.tls_established else "http"
    host = flow.request.host_header or flow.request.pretty_host
    if ":" not in host.rsplit("]", 1)[-1] and flow.request.port not in (80, 443):
        host = f"{host}:{flow.request.port}"
    return f"{scheme}://{host}"
