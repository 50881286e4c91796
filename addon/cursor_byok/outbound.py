"""What every HTTP request that leaves the proxy shares: aiohttp sessions, TLS trust, bounds.

One client library (aiohttp) for the provider streams, the web search and image tools and the
replay tools, set up the same way everywhere:

- TLS trusts the system store plus certifi's bundle (some Python builds, python.org's on macOS,
  come with an empty system store), plus a `ca_file` of the user's (a company CA), and offers
  only HTTP/1.1 in ALPN (aiohttp speaks no HTTP/2);
- the environment's proxy settings are not read unless asked (`trust_env`): the mitmproxy
  process's own `HTTPS_PROXY` may point back into mitmproxy;
- bodies are never decompressed by aiohttp (`auto_decompress=False`) but by our bounded decoder
  (`inflate.py`), and read whole only up to a cap (`read_body`);
- no cookies are kept (`DummyCookieJar`) and no redirect is followed by the callers
  (`allow_redirects=False`).

`describe(exc)` turns aiohttp's and the socket layer's exceptions into one line that names the
host and what failed (a TLS failure says which check failed), never a traceback.
"""

from __future__ import annotations

import os
import re
import socket
import ssl
from collections.abc import Iterable
from pathlib import Path

import aiohttp
import certifi

from cursor_byok.errors import ByokError
from cursor_byok.wire import inflate

USER_AGENT = "cursor-byok"
KEEPALIVE_SECONDS = 15.0  # an idle kept-alive connection older than this is closed, not reused
MAX_HEADER_LINE = 32 * 1024


class CaFileError(ByokError):
    """A `ca_file` that cannot be read or is not a PEM bundle."""


class BodyTooLarge(ByokError):
    """`read_body`: the answer is larger than the caller's cap."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the answer is larger than {limit} bytes")
        self.limit = limit


# What the callers (tools, replay) catch and read, named here so that aiohttp stays behind this
# module and providers/http.py (an import-linter contract).
ClientError = aiohttp.ClientError
Response = aiohttp.ClientResponse

_contexts: dict[tuple[str, int] | None, ssl.SSLContext] = {}


def tls_context(ca_file: str | None = None) -> ssl.SSLContext:
    """The verifying client context: system store + certifi (+ `ca_file`), once per process
    and CA file version (loading certifi's bundle costs milliseconds, not to pay per request)."""
    key: tuple[str, int] | None = None
    path: Path | None = None
    if ca_file:
        path = Path(ca_file).expanduser()
        try:
            key = (str(path), path.stat().st_mtime_ns)
        except OSError as exc:
            raise CaFileError(f"ca_file {ca_file}: {exc.strerror}") from None
    context = _contexts.get(key)
    if context is None:
        context = ssl.create_default_context()
        context.load_verify_locations(cafile=certifi.where())
        if path is not None:
            try:
                context.load_verify_locations(cafile=str(path))
            except ssl.SSLError as exc:  # an OSError too: first
                raise CaFileError(
                    f"ca_file {ca_file}: not a PEM CA bundle ({_ssl_text(exc)})"
                ) from None
            except OSError as exc:
                raise CaFileError(f"ca_file {ca_file}: {exc.strerror}") from None
        context.set_alpn_protocols(["http/1.1"])
        _contexts[key] = context
    return context


def new_session(
    *,
    connect_timeout: float,
    read_timeout: float | None,
    total_timeout: float | None = None,
    ca_file: str | None = None,
    trust_env: bool = False,
) -> aiohttp.ClientSession:
    """A session as described above. Call it inside the running loop that will use it.

    `read_timeout` bounds the wait for the response head and for every read of the body
    (aiohttp's `sock_read`); `connect_timeout` the TCP connect, a proxy's CONNECT and the TLS
    handshake; `total_timeout` the whole exchange (None: unbounded, as a stream must be)."""
    connector = aiohttp.TCPConnector(
        ssl=tls_context(ca_file),
        limit=0,  # as many connections as there are concurrent calls (turns bound them)
        keepalive_timeout=KEEPALIVE_SECONDS,
    )
    return aiohttp.ClientSession(
        connector=connector,
        timeout=aiohttp.ClientTimeout(
            total=total_timeout,
            connect=connect_timeout,
            sock_connect=connect_timeout,
            sock_read=read_timeout,
        ),
        auto_decompress=False,
        trust_env=trust_env,
        cookie_jar=aiohttp.DummyCookieJar(),
        headers={"user-agent": USER_AGENT},
        # One header line may be 32 KiB (aiohttp's default, 8 KiB, is below what some gateways
        # send in a Content-Security-Policy or Set-Cookie), at most 128 of them: a head stays
        # bounded either way.
        max_line_size=MAX_HEADER_LINE,
        max_field_size=MAX_HEADER_LINE,
    )


async def read_body(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """The whole body, decoded by the bounded decoder; `BodyTooLarge` past `limit` bytes (of
    what arrives or what it decodes to), `inflate.InflateError` for a bad coding."""
    coding = inflate.normalise(response.headers.get("content-encoding"))
    inflater = inflate.Inflater(coding) if coding else None
    out = bytearray()
    while chunk := await response.content.readany():
        _append(out, (chunk,) if inflater is None else inflater.feed(chunk), limit)
    if inflater is not None:
        _append(out, inflater.finish(), limit)
    return bytes(out)


def _append(out: bytearray, pieces: Iterable[bytes], limit: int) -> None:
    for piece in pieces:
        out += piece
        if len(out) > limit:
            out.clear()  # free it now: a traceback may keep this frame alive
            raise BodyTooLarge(limit)


def describe(exc: BaseException) -> str:
    """One line for a failed request: which host, and what failed."""
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return f"TLS to {_where(exc)} failed: {_ssl_text(exc.certificate_error)}"
    if isinstance(exc, aiohttp.ClientConnectorSSLError):
        return f"TLS to {_where(exc)} failed: {_ssl_text(exc.os_error)}"
    if isinstance(exc, aiohttp.ClientProxyConnectionError):
        return f"cannot connect to the proxy {_where(exc)}: {_os_text(exc.os_error)}"
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return f"cannot resolve {exc.host}: {_os_text(exc.os_error)}"
    if isinstance(exc, aiohttp.ClientConnectorError):
        return f"cannot connect to {_where(exc)}: {_os_text(exc.os_error)}"
    if isinstance(exc, aiohttp.ClientHttpProxyError):
        return f"the proxy refused the tunnel: HTTP {exc.status} {exc.message}".rstrip()
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return "connect timeout"
    if isinstance(exc, aiohttp.SocketTimeoutError):
        return "read timeout"
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the server closed the connection without an answer"
    if isinstance(exc, aiohttp.ClientPayloadError):
        inner = exc.__cause__  # llhttp's verdict on the body's framing
        reason = _one_line(str(getattr(inner, "message", "") or inner or ""))
        return "the answer was cut off" + (f" ({reason})" if reason else "")
    if isinstance(exc, aiohttp.ClientResponseError):
        return f"not a valid HTTP answer: {_one_line(str(exc.message))}"
    if isinstance(exc, ByokError):  # ours (a body too large, a bad coding, a config problem)
        return str(exc)
    return f"{type(exc).__name__}: {_first_line(exc)}"


def _where(exc: aiohttp.ClientConnectorError) -> str:
    host = exc.host
    shown = f"[{host}]" if ":" in host else host
    return f"{shown}:{exc.port}" if exc.port else shown


_SSL_TAIL = re.compile(r"\s*\(_ssl\.c:\d+\)$")


def _ssl_text(exc: BaseException) -> str:
    """ "certificate verify failed: self-signed certificate", without OpenSSL's file:line."""
    if isinstance(exc, ssl.SSLCertVerificationError) and exc.verify_message:
        return f"certificate verify failed: {exc.verify_message.rstrip('.')}"
    if isinstance(exc, ssl.CertificateError) and not isinstance(exc, ssl.SSLError):
        return f"certificate verify failed: {exc}"
    if isinstance(exc, ssl.SSLError):
        reason = (exc.reason or "").replace("_", " ").lower()
        text = _SSL_TAIL.sub("", exc.strerror or str(exc))
        text = re.sub(r"^\[[^\]]*\]\s*", "", text)  # "[SSL: WRONG_VERSION_NUMBER] ..."
        return text or reason or type(exc).__name__
    return _first_line(exc)


def _os_text(exc: OSError) -> str:
    if exc.errno and exc.errno > 0 and not isinstance(exc, socket.gaierror):
        return os.strerror(exc.errno)  # "Connection refused", not the call that failed
    return exc.strerror or _first_line(exc)


def _one_line(text: str) -> str:
    """llhttp's multi-line verdicts ("Bad status line:\n  Invalid status code:\n\n  b'…'\n
    ^") as one line, without the caret."""
    parts = [line.strip() for line in text.splitlines()]
    return " ".join(p for p in parts if p and set(p) != {"^"})


def _first_line(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0] if text.strip() else type(exc).__name__


__all__ = [
    "KEEPALIVE_SECONDS",
    "USER_AGENT",
    "BodyTooLarge",
    "CaFileError",
    "describe",
    "new_session",
    "read_body",
    "tls_context",
]
