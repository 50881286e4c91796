"""An addon for the process-wide patches of mitmproxy, with an exit (mitmproxy.md §10).

Each patch answers a bug of mitmproxy 12 that a Cursor `Run` stream meets (`mitmproxy_compat.py`
says what each does and why): an ended response's stream that waits for the client's upload
(`install_stream_release`), a client's stream past the concurrency limit that ends the whole
connection (`refuse_streams_over_the_limit`), a closed connection's socket left open
(`close_sockets_when_told`), every closed upstream connection kept while its client connection
lives (`forget_closed_upstreams`); and seven for CPU: hook events without a coroutine and a
context manager per addon (`hook_dispatch.dispatch_hooks_directly`), the type checks of every
request and response at a set lookup a field (`message_checks.check_messages_quickly`), option
reads without deep copies of values that cannot change and context forks without a server
made to be thrown away (`needless_copies`), and header lookups without an exception for a
missing header (`header_reads.read_headers_quickly`), host and authority checks answered once
per host (`authority_parses.parse_authorities_once`), the chunks of an HTTP/1 body that one read
holds handed on as one event (`body_chunks.join_body_chunks`); and one for Python 3.12.1's asyncio,
whose callback logs a traceback for every connection open when the proxy stops
(`cancelled_streams.quiet_cancelled_streams`).
They change mitmproxy's classes, so they are installed while this addon is loaded and removed
when it is done: a script reload puts back what mitmproxy had before installing them again, and
when mitmproxy fixes a bug its patch goes from the list below.
"""

from __future__ import annotations

import logging

from mitmproxy import ctx

from cursor_byok.proxy.authority_parses import parse_authorities_once
from cursor_byok.proxy.body_chunks import join_body_chunks
from cursor_byok.proxy.cancelled_streams import quiet_cancelled_streams
from cursor_byok.proxy.header_reads import read_headers_quickly
from cursor_byok.proxy.hook_dispatch import dispatch_hooks_directly
from cursor_byok.proxy.hook_dispatch import plan_from_now_on
from cursor_byok.proxy.message_checks import check_messages_quickly
from cursor_byok.proxy.mitmproxy_compat import Undo
from cursor_byok.proxy.mitmproxy_compat import close_sockets_when_told
from cursor_byok.proxy.mitmproxy_compat import forget_closed_upstreams
from cursor_byok.proxy.mitmproxy_compat import install_stream_release
from cursor_byok.proxy.mitmproxy_compat import refuse_streams_over_the_limit
from cursor_byok.proxy.needless_copies import fork_contexts_quickly
from cursor_byok.proxy.needless_copies import read_options_quickly

log = logging.getLogger(__name__)

PATCHES = (
    install_stream_release,  # a `Run` we end releases its stream
    refuse_streams_over_the_limit,  # a client's 101st stream: refused alone
    close_sockets_when_told,  # the loopback hop of a stream the client reset is closed
    forget_closed_upstreams,  # a closed loopback hop is not kept for the client's life
    dispatch_hooks_directly,  # hook events without a coroutine per addon (CPU, issue 38)
    check_messages_quickly,  # a request's and a response's field types at a set lookup (CPU)
    read_options_quickly,  # an option's str, int, bool or None without a deep copy (CPU)
    fork_contexts_quickly,  # a layer's context without a server made to be thrown away (CPU)
    read_headers_quickly,  # a header looked up without an exception or a call per field (CPU)
    parse_authorities_once,  # a host's authority and validity checked once, not per request (CPU)
    join_body_chunks,  # an HTTP/1 body's chunks in one read: one event, one DATA frame (CPU)
    quiet_cancelled_streams,  # no traceback per open connection when the proxy stops (3.12.1)
)


class MitmproxyPatches:
    def __init__(self) -> None:
        self._undo: list[Undo] = []

    def load(self, loader) -> None:
        for install in PATCHES:
            undo = install()
            if undo is None:  # another instance (an embedder's second proxy) installed it
                log.debug("mitmproxy patch %s: installed already", install.__name__)
            else:
                self._undo.append(undo)

    def running(self) -> None:
        """Every addon is loaded and configured: the hook dispatch may keep its plans."""
        if self._undo:
            plan_from_now_on(ctx.master.addons)

    def done(self) -> None:
        while self._undo:
            self._undo.pop()()
