"""A streaming JSON POST with our timeouts, bounds and errors, on aiohttp.

Why a wrapper: the rest of the provider layer deals in bytes and `ProviderError`s, so it can be
tested without HTTP (`Transport` is the seam: tests pass a scripted one) and the client library
stays in this module and `outbound.py`. Why aiohttp: it is the measured better fit for an asyncio
process reading many small events (bench/bench_provider_stream.py: as little CPU per delta as
our own HTTP/1.1 client had, less than half of httpx's) and its parser is llhttp's.

What the provider stream gets from it, and what we add:

- one `aiohttp.ClientSession` per provider settings (`AiohttpTransport`), made in the running
  loop at the first call and kept (connections are reused between the calls of a turn) until
  `aclose` at shutdown;
- timeouts: `connect_timeout` for the TCP connect, a proxy's CONNECT and the TLS handshake;
  `read_timeout` for the response head and every read of the body (`sock_read`); the budget to
  the first event is the model loop's (`first_token_timeout` in `retries.stream_with_retries`);
- no retries here: aiohttp never re-sends a POST, so a kept-alive connection the provider closed
  as we sent becomes one `network` error, which the loop's `max_retries` policy retries after
  its back-off and counts, like any other;
- no redirects (`allow_redirects=False`: a 3xx is the provider's answer, an error);
- the body is decompressed by our bounded decoder (`inflate.py`, 64 KiB a step), never by
  aiohttp, so a compression bomb meets the SSE parser's limits before memory grows;
- a configured `proxy` (HTTP CONNECT for https), its credentials (`proxy_auth`), and
  `proxy_from_env` (aiohttp's `trust_env`: HTTPS_PROXY / NO_PROXY) only when asked;
- TLS: system store + certifi + the provider's `ca_file` (`outbound.tls_context`); a failure is
  one line that names the host and the check that failed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from contextlib import asynccontextmanager
from typing import Any
from typing import Protocol
from urllib.parse import urlsplit

import aiohttp

from cursor_byok import outbound
from cursor_byok.wire import inflate

from .provider_error import ProviderError

log = logging.getLogger(__name__)

MAX_ERROR_BODY = 64 * 1024
STREAM_STEP = 64 * 1024  # largest piece the SSE parser gets at once (read, or decompressed)
# What we send unless the adapter or the user's headers say otherwise. `identity`: a compressing
# server buffers a stream to compress it, and a compressed answer is a bomb in waiting; a
# provider that compresses anyway is decoded all the same.
DEFAULT_HEADERS = {
    "content-type": "application/json",
    "accept": "text/event-stream",
    "accept-encoding": "identity",
    "user-agent": outbound.USER_AGENT,
}


# Framing is the client's to write: a configured header of these names is dropped, never sent.
_OWN_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})


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


class Transport(Protocol):
    """Sends one POST; the response (head read) lives for the block. Tests script their own."""

    def post(
        self, url: str, headers: dict[str, str], content: bytes
    ) -> AbstractAsyncContextManager[HttpResponse]: ...

    async def aclose(self) -> None: ...


class HttpClient:
    """POSTs JSON to one provider and streams the response."""

    def __init__(
        self,
        *,
        provider: str,
        connect_timeout: float,
        read_timeout: float,
        proxy: str | None = None,
        proxy_auth: str = "",
        proxy_from_env: bool = False,
        ca_file: str | None = None,
        transport: Transport | None = None,
    ) -> None:
        self._transport: Transport = transport or AiohttpTransport(
            provider=provider,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            proxy=proxy,
            proxy_auth=proxy_auth,
            proxy_from_env=proxy_from_env,
            ca_file=ca_file,
        )

    @asynccontextmanager
    async def post_stream(
        self, url: str, headers: dict[str, str], body: dict[str, Any]
    ) -> AsyncIterator[HttpResponse]:
        """POST `body` as JSON; the response is closed when the block exits, including on
        cancellation or when the consumer stops early (that is how a stream is cancelled)."""
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        request_headers = dict(DEFAULT_HEADERS)
        for name, value in headers.items():
            if name.lower() not in _OWN_HEADERS:
                request_headers[name.lower()] = value
        async with self._transport.post(url, request_headers, content) as response:
            yield response

    async def aclose(self) -> None:
        await self._transport.aclose()


class AiohttpTransport:
    """One aiohttp session for one provider's settings: its pool, proxy, TLS and timeouts."""

    def __init__(
        self,
        *,
        provider: str,
        connect_timeout: float,
        read_timeout: float,
        proxy: str | None = None,
        proxy_auth: str = "",
        proxy_from_env: bool = False,
        ca_file: str | None = None,
    ) -> None:
        self.provider = provider
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.proxy = proxy or None
        self._proxy_headers: dict[str, str] | None = None
        if proxy_auth:
            login, _, password = proxy_auth.partition(":")
            value = aiohttp.encode_basic_auth(login, password)
            self._proxy_headers = {"proxy-authorization": value}
        self.proxy_from_env = proxy_from_env
        self.ca_file = ca_file
        self._session: aiohttp.ClientSession | None = None
        self._closed = False

    def _open(self) -> aiohttp.ClientSession:
        if self._closed:
            raise ProviderError("other", "the provider client is closed", retryable=False)
        try:
            self._session = outbound.new_session(
                connect_timeout=self.connect_timeout,
                read_timeout=self.read_timeout,
                ca_file=self.ca_file,
                trust_env=self.proxy_from_env,
            )
        except outbound.CaFileError as exc:
            raise ProviderError(
                "other", str(exc), provider=self.provider, retryable=False
            ) from None
        return self._session

    @asynccontextmanager
    async def post(
        self, url: str, headers: dict[str, str], content: bytes
    ) -> AsyncIterator[HttpResponse]:
        _check_headers(headers)
        session = self._session or self._open()
        try:
            response = await session.post(
                url,
                data=content,
                headers=headers,
                allow_redirects=False,
                proxy=self.proxy,
                proxy_headers=self._proxy_headers,
            )
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise self.error(exc, url) from exc
        except ValueError as exc:  # aiohttp's own checks of a URL or header (never the value)
            raise ProviderError(
                "other", f"cannot send the request: {exc}", provider=self.provider, retryable=False
            ) from exc
        wrapped = AiohttpResponse(response, self, url)
        try:
            yield wrapped
        finally:
            # Back to the pool when the body has ended (aiohttp checks), else closed: leaving a
            # stream early is how it is cancelled.
            response.release()

    def error(self, exc: BaseException, url: str) -> ProviderError:
        """A ProviderError for a transport failure; timeouts and connection failures retry."""
        return transport_error(
            exc,
            self.provider,
            host=_authority(url),
            connect_timeout=self.connect_timeout,
            read_timeout=self.read_timeout,
            proxy=self.proxy,
        )

    async def aclose(self) -> None:
        self._closed = True
        session, self._session = self._session, None
        if session is not None:
            await session.close()


class AiohttpResponse:
    """`HttpResponse` over an aiohttp response whose head has been read."""

    __slots__ = ("_response", "_transport", "_url", "headers", "status")

    def __init__(self, response: aiohttp.ClientResponse, transport: AiohttpTransport, url: str):
        self._response = response
        self._transport = transport
        self._url = url
        self.status = response.status
        headers: dict[str, str] = {}
        for name, value in response.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        self.headers = headers

    async def iter_bytes(self) -> AsyncGenerator[bytes]:
        """The body as it arrives, decompressed in bounded steps; errors as ProviderError."""
        provider = self._transport.provider
        try:
            coding = inflate.normalise(self.headers.get("content-encoding"))
        except inflate.InflateError as exc:
            raise _undecodable(exc, provider) from None
        inflater = inflate.Inflater(coding, step=STREAM_STEP) if coding else None
        content = self._response.content
        try:
            # at most a step at a time, compressed or not: a burst of tiny deltas read whole
            # is thousands of parsed events alive at once (1.5 MiB for 256 KiB read)
            while chunk := await content.read(STREAM_STEP):
                if inflater is None:
                    yield chunk
                    continue
                for piece in inflater.feed(chunk):
                    yield piece
            if inflater is not None:
                for piece in inflater.finish():
                    yield piece
        except inflate.InflateError as exc:
            raise _undecodable(exc, provider) from None
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise self._transport.error(exc, self._url) from exc

    async def read_capped(self, limit: int = MAX_ERROR_BODY) -> bytes:
        """Up to `limit` bytes of the body (error bodies are small; never trust that)."""
        parts: list[bytes] = []
        size = 0
        try:
            async for chunk in self.iter_bytes():
                parts.append(chunk)
                size += len(chunk)
                if size >= limit:
                    break
        except ProviderError as exc:
            log.debug("reading error body failed: %s", exc.kind)
        return b"".join(parts)[:limit]


def transport_error(
    exc: BaseException,
    provider: str,
    *,
    host: str = "",
    connect_timeout: float | None = None,
    read_timeout: float | None = None,
    proxy: str | None = None,
) -> ProviderError:
    """Map an aiohttp (or socket) exception to a ProviderError of the existing kinds."""
    detail = outbound.describe(exc)
    where = host or "the provider"
    if isinstance(exc, aiohttp.ClientSSLError):
        hint = ""
        if isinstance(exc, aiohttp.ClientConnectorCertificateError) and (
            getattr(exc.certificate_error, "verify_code", None) in _UNKNOWN_ISSUER
        ):
            hint = " (a company or self-signed CA? set ca_file for this provider)"
        # A certificate or handshake failure does not go away by itself: shown, not retried.
        return ProviderError(
            "network", detail + hint, provider=provider, retryable=False, reason="tls"
        )
    if isinstance(exc, aiohttp.ClientProxyConnectionError):
        return ProviderError("network", f"ConnectError: {detail}", provider=provider)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return ProviderError("network", f"ConnectError: {detail}", provider=provider)
    if isinstance(exc, aiohttp.ClientHttpProxyError):
        return ProviderError(
            "network",
            f"{detail} (proxy {_safe_proxy(proxy)}; for {where})",
            provider=provider,
            status=exc.status,
            retryable=exc.status >= 500,
        )
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        seconds = f" in {connect_timeout:g} s" if connect_timeout is not None else ""
        return ProviderError(
            "timeout", f"connect timeout: no connection to {where}{seconds}", provider=provider
        )
    if isinstance(exc, TimeoutError):  # aiohttp's SocketTimeoutError is one
        seconds = f"nothing for {read_timeout:g} s" if read_timeout is not None else detail
        return ProviderError(
            "timeout", f"read (no data from the provider) timeout: {seconds}", provider=provider
        )
    if isinstance(exc, aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError):
        return ProviderError(
            "network", f"connection closed by the provider: {detail}", provider=provider
        )
    if isinstance(exc, aiohttp.InvalidURL | aiohttp.NonHttpUrlClientError):
        return ProviderError(
            "other", f"bad provider URL: {_first(exc)}", provider=provider, retryable=False
        )
    if isinstance(exc, aiohttp.ClientResponseError):  # a response llhttp could not parse
        return ProviderError("network", f"{where}: {detail}", provider=provider)
    return ProviderError("network", detail, provider=provider)


# OpenSSL's verify codes for a chain that ends in a CA we do not trust (X509_V_ERR_*): unable to
# get issuer certificate (2), self-signed leaf (18) or in chain (19), unable to get local issuer
# (20), unable to verify the first certificate (21).
_UNKNOWN_ISSUER = frozenset({2, 18, 19, 20, 21})


def _undecodable(exc: inflate.InflateError, provider: str) -> ProviderError:
    return ProviderError(
        "protocol", f"undecodable response body: {exc}", provider=provider, retryable=False
    )


def _check_headers(headers: dict[str, str]) -> None:
    """A header value with CR or LF would split the request: refused, naming the header and
    never its value (it may be a key)."""
    for name, value in headers.items():
        if "\r" in value or "\n" in value or "\r" in name or "\n" in name or ":" in name:
            raise ProviderError("other", f"invalid HTTP header {name!r}", retryable=False)


def _authority(url: str) -> str:
    try:
        parts = urlsplit(url)
        return parts.netloc.rpartition("@")[2] or url
    except ValueError:
        return "the provider"


def _safe_proxy(proxy: str | None) -> str:
    """The proxy's address without credentials."""
    if not proxy:
        return "from the environment"
    return _authority(proxy)


def _first(exc: BaseException) -> str:
    return (str(exc) or type(exc).__name__).splitlines()[0]


__all__ = [
    "MAX_ERROR_BODY",
    "AiohttpTransport",
    "HttpClient",
    "HttpResponse",
    "Transport",
    "transport_error",
]
