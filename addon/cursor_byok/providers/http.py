"""A streaming JSON POST with our timeouts and errors; the only module that imports httpx.

Why a wrapper: the rest of the provider layer deals in bytes and `ProviderError`s, so it can
be tested without HTTP and the client library can be swapped (httpx2 is API-compatible).
`trust_env=False` because the mitmproxy process's proxy environment may point back into
mitmproxy itself; an upstream proxy must be configured explicitly.
"""

from __future__ import annotations

import json
import logging
import os
import ssl
from collections.abc import AsyncGenerator
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from typing import Protocol

import httpx

from .base import ProviderError
from .h1 import MAX_ERROR_BODY
from .h1 import H1Pool

log = logging.getLogger(__name__)
# httpx logs every request at INFO ("HTTP Request: POST …"): one line per model call in the
# proxy's console, which already has its own line per turn. httpcore logs a dozen DEBUG records
# per call (connect, send headers, receive body, …): mitmproxy sets the root logger to DEBUG and
# hands every record to all its addons, whatever the console shows, so each costs proxy CPU on
# every turn. Their warnings still show.
logging.getLogger("httpx").setLevel(logging.WARNING)
logging.getLogger("httpcore").setLevel(logging.WARNING)


class HttpResponse(Protocol):
    """A streaming response: status, lower-cased headers, body as byte chunks."""

    status: int
    headers: dict[str, str]

    def iter_bytes(self) -> AsyncGenerator[bytes]:
        """Raw body chunks as they arrive (decompressed), transport errors classified."""
        ...

    async def read_capped(self, limit: int = MAX_ERROR_BODY) -> bytes:
        """Up to `limit` bytes of the body (error bodies are small; never trust that)."""
        ...


class HttpxResponse:
    """`HttpResponse` over httpx (a proxy, a test transport, or the native path turned off)."""

    def __init__(self, response: httpx.Response, provider: str) -> None:
        self._response = response
        self._provider = provider
        self.status = response.status_code
        self.headers: dict[str, str] = {k.lower(): v for k, v in response.headers.items()}

    async def iter_bytes(self) -> AsyncGenerator[bytes]:
        """Raw body chunks as they arrive (decompressed), transport errors classified."""
        try:
            async for chunk in self._response.aiter_bytes():
                yield chunk
        except httpx.HTTPError as exc:
            raise transport_error(exc, self._provider) from exc

    async def read_capped(self, limit: int = MAX_ERROR_BODY) -> bytes:
        """Up to `limit` bytes of the body (error bodies are small; never trust that)."""
        parts: list[bytes] = []
        size = 0
        try:
            async for chunk in self._response.aiter_bytes():
                parts.append(chunk)
                size += len(chunk)
                if size >= limit:
                    break
        except httpx.HTTPError as exc:
            log.debug("reading error body failed: %s", type(exc).__name__)
        return b"".join(parts)[:limit]


def transport_error(exc: Exception, provider: str) -> ProviderError:
    """Map an httpx exception to a ProviderError (timeouts and connection failures retry)."""
    name = type(exc).__name__
    detail = str(exc) or name
    if isinstance(exc, httpx.TimeoutException):
        what = "connect" if isinstance(exc, httpx.ConnectTimeout) else "read"
        if isinstance(exc, httpx.ReadTimeout):
            what = "read (no data from the provider)"
        return ProviderError("timeout", f"{what} timeout: {detail}", provider=provider)
    if isinstance(exc, httpx.RemoteProtocolError):
        return ProviderError(
            "network", f"connection closed by the provider: {detail}", provider=provider
        )
    if isinstance(exc, httpx.TransportError) and not isinstance(exc, httpx.UnsupportedProtocol):
        return ProviderError("network", f"{name}: {detail}", provider=provider)
    if isinstance(exc, httpx.DecodingError):
        return ProviderError(
            "protocol", f"undecodable response body: {detail}", provider=provider, retryable=False
        )
    return ProviderError("other", f"{name}: {detail}", provider=provider, retryable=False)


_default_tls: ssl.SSLContext | None = None


def default_tls_context() -> ssl.SSLContext:
    """httpx's verification (certifi's CAs; not the environment's), built once per process."""
    global _default_tls
    if _default_tls is None:
        context = httpx.create_ssl_context(trust_env=False)
        context.set_alpn_protocols(["http/1.1"])
        _default_tls = context
    return _default_tls


class HttpClient:
    """One connection pool per provider; POSTs JSON and streams the response.

    Direct connections go through our HTTP/1.1 client (`h1.py`, less CPU per streamed event);
    a proxy, a test transport or `CURSOR_BYOK_NATIVE_IO=0` keep httpx."""

    def __init__(
        self,
        *,
        provider: str,
        connect_timeout: float,
        read_timeout: float,
        proxy: str | None = None,
        transport: object | None = None,
        native_io: bool = True,
        tls_context: ssl.SSLContext | None = None,
    ) -> None:
        self._provider = provider
        self._client: httpx.AsyncClient | None = None
        self._h1: H1Pool | None = None
        if transport is not None and not isinstance(transport, httpx.AsyncBaseTransport):
            raise TypeError("transport must be an httpx.AsyncBaseTransport")
        native_io = native_io and os.environ.get("CURSOR_BYOK_NATIVE_IO", "1") != "0"
        self.native_io = native_io and transport is None and not proxy
        if self.native_io:
            self._h1 = H1Pool(
                provider=provider,
                connect_timeout=connect_timeout,
                read_timeout=read_timeout,
                tls_context=(lambda: tls_context) if tls_context else default_tls_context,
            )
            return
        timeout = httpx.Timeout(
            connect=connect_timeout, read=read_timeout, write=read_timeout, pool=connect_timeout
        )
        kwargs: dict[str, Any] = {"timeout": timeout, "trust_env": False, "follow_redirects": False}
        if tls_context is not None:
            kwargs["verify"] = tls_context
        if transport is not None:
            kwargs["transport"] = transport
        elif proxy:
            kwargs["proxy"] = proxy
        self._client = httpx.AsyncClient(**kwargs)

    @asynccontextmanager
    async def post_stream(
        self, url: str, headers: dict[str, str], body: dict[str, Any]
    ) -> AsyncIterator[HttpResponse]:
        """POST `body` as JSON; the response is closed when the block exits, including on
        cancellation or when the consumer stops early (that is how a stream is cancelled)."""
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        request_headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            **headers,
        }
        if self._h1 is not None:
            native = await self._h1.post(url, request_headers, content)
            try:
                yield native
            finally:
                native.close()
            return
        assert self._client is not None
        request = self._client.build_request("POST", url, headers=request_headers, content=content)
        try:
            response = await self._client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise transport_error(exc, self._provider) from exc
        try:
            yield HttpxResponse(response, self._provider)
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        if self._h1 is not None:
            await self._h1.aclose()
        if self._client is not None:
            await self._client.aclose()
