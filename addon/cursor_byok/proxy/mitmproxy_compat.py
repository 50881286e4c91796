"""Everything cursor-byok assumes about mitmproxy's internals, in one place (mitmproxy.md).

Each assumption is pinned by a test that reads mitmproxy's real behaviour
(`tests/proxy/test_mitmproxy_compat.py`), so an upgrade that changes one fails there first and
touches this file only:

- `CONNECTIONS_PER_ADDRESS`: mitmproxy opens at most this many upstream connections per
  address for one client connection (`ConnectionHandler.max_conns`); every served stream is one
  loopback connection, hence the loopback server's several ports.
- `CONNECTION_LOGGER` and the lines it logs about an upstream hop, which the console filter
  drops for the loopback hop.
- `give_end_stream_trailers`: mitmproxy withholds an HTTP/2 response's END_STREAM while the
  client's upload is open, unless the response has trailers (mitmproxy.md §3.3).
- `LargeBodies`: building a Request or Response runs mitmproxy's type check of its data class,
  which raises and catches a TypeError for every optional field; the caught exception, its
  traceback and the frames form a cycle whose frames hold every caller's locals (`f_back`), so
  each body stays alive until a full collection, which CPython rarely runs by itself.
- `forget_traceback`: the same cycle, made while an exception is being handled (an error
  answer for a refused request), keeps the frames that exception's traceback holds: the body,
  parsed several times over, unless those frames are cleared first.
- `frame_for_http1_upstream`: mitmproxy forwards an HTTP/2 request to an HTTP/1.1 server with the
  request's own headers; one whose body came without content-length (every unary call of
  Cursor's SDK over HTTP/2) gets no framing at all, so the server reads an empty body and takes
  the body's bytes for the next request.
- `freeze_startup_heap`: what mitmproxy and we import at start-up is ~100,000 long-lived
  objects every full collection would walk.
- `redirect_termlog`: mitmdump's console log handler (`TermLogHandler`, on the root logger)
  prints each line to the `file` it took at start (the real stdout), so redirecting
  `sys.stdout` does not move it; the live status points that attribute elsewhere while it runs.
"""

from __future__ import annotations

import gc
import io
import logging
import traceback
from collections.abc import Callable
from typing import IO
from typing import Any

CONNECTIONS_PER_ADDRESS = 5
CONNECTION_LOGGER = "mitmproxy.proxy.server"  # ConnectionHandler logs through this one


def hop_connect_lines(host: str) -> tuple[str, str]:
    """The starts of mitmproxy's INFO lines when it connects to / disconnects from `host`
    (followed by `:<port>`)."""
    return (f"server connect {host}:", f"server disconnect {host}:")


def hop_streaming_lines(host: str) -> tuple[str, str]:
    """mitmproxy's INFO lines when it streams a request to / a response from `host`."""
    return (f"Streaming request to {host}.", f"Streaming response from {host}.")


END_STREAM_TRAILER = (b"x-cursor-byok", b"end")


def give_end_stream_trailers(flow: Any) -> None:
    """Let an HTTP/2 response we serve end (END_STREAM) although the client's upload is still
    open: mitmproxy sends END_STREAM then only with trailers."""
    from mitmproxy import http

    response = flow.response
    if response is not None and flow.request.is_http2 and not response.trailers:
        response.trailers = http.Headers([END_STREAM_TRAILER])


def frame_for_http1_upstream(flow: Any) -> bool:
    """Give a buffered HTTP/2 (or 3) request body the content-length an HTTP/1.1 upstream needs
    to read it (harmless to an HTTP/2 upstream, which checks it against the body). Returns
    whether the header was added."""
    request = flow.request
    if flow.response is not None or request.stream or not (request.is_http2 or request.is_http3):
        return False
    body = request.raw_content
    headers = request.headers
    if not body or "content-length" in headers or "transfer-encoding" in headers:
        return False
    headers["content-length"] = str(len(body))
    return True


def forget_traceback(exc: BaseException | None) -> None:
    """Drop what a refused request's traceback holds (its body, parsed several times over),
    before `http.Response.make` runs for it."""
    while exc is not None:
        if exc.__traceback__ is not None:
            traceback.clear_frames(exc.__traceback__)
            exc.__traceback__ = None
        exc = exc.__context__


class LargeBodies:
    """A full collection once every `every` bytes of bodies of at least `large` bytes.

    A flood of 1 MiB uploads grew the proxy by 200 MiB before; a full collection costs tens of
    milliseconds, so one per 16 MiB of large bodies keeps a flood bounded while a normal turn,
    with one or two large uploads, rarely pays it."""

    def __init__(self, large: int = 256 * 1024, every: int = 16 * 1024 * 1024) -> None:
        self.large = large
        self.every = every
        self._bytes = 0

    def seen(self, size: int) -> bool:
        """Count one body; True when a full collection is due now (then the count restarts)."""
        if size < self.large:
            return False
        self._bytes += size
        if self._bytes >= self.every:
            self._bytes = 0
            return True
        return False


_frozen = False  # once per process: a reloaded script must not freeze what lives by then


def freeze_startup_heap() -> bool:
    """Move what lives now to the permanent generation, once per process (full collections
    then skip it: ~57 -> ~20 ms each). Returns whether this call froze it."""
    global _frozen
    if _frozen:
        return False
    _frozen = True
    gc.freeze()
    return True


def redirect_termlog(file: IO[str] | io.TextIOBase) -> Callable[[], None]:
    """Point mitmdump's console log lines at `file` (rich's proxy, which prints above the live
    status instead of through it); returns what undoes it."""
    from mitmproxy.addons.termlog import TermLogHandler

    moved = [h for h in logging.getLogger().handlers if isinstance(h, TermLogHandler)]
    before = [h.file for h in moved]
    for handler in moved:
        handler.file = file  # type: ignore[assignment]  # a text file, as print() needs

    def undo() -> None:
        for handler, original in zip(moved, before, strict=True):
            handler.file = original

    return undo
