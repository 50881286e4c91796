"""A client connection cancelled at shutdown ends quietly (Python 3.12.1's asyncio).

`asyncio.start_server` runs mitmproxy's `ServerInstance.handle_stream` as a task per client
connection, and in Python 3.12.1 the task's done-callback (`StreamReaderProtocol.connection_made`)
calls `task.exception()` without asking whether the task was cancelled: for a cancelled task that
raises `CancelledError` inside the callback, and asyncio logs "Exception in callback ..." with a
traceback. mitmproxy cancels every open connection's task when it shuts down, so a proxy stopped
with a client still connected printed one traceback per connection (seen in the test suite as a
Traceback in the proxy's log, now and then). Later Pythons check `task.cancelled()` first.

`quiet_cancelled_streams` wraps `ConnectionHandler.handle_client`, which `handle_stream` awaits
last, so that a cancellation ends it normally: the task is then done without an exception and the
callback has nothing to report. (Not `handle_stream` itself: `start_server` holds the method it
was given when the server started, while `handle_client` is looked up for every connection.)
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from mitmproxy.proxy.server import ConnectionHandler

from cursor_byok.proxy.mitmproxy_compat import Undo
from cursor_byok.proxy.mitmproxy_compat import _replace

_MARK = "_cursor_byok_quiet_cancel"


def quiet_cancelled_streams() -> Undo | None:
    """Install the wrapper (None: installed already)."""
    original = ConnectionHandler.handle_client
    if getattr(original, _MARK, False):
        return None

    async def handle_client(self: Any) -> None:
        # the proxy stops: the connection's task ends as done, not cancelled
        with contextlib.suppress(asyncio.CancelledError):
            await original(self)

    setattr(handle_client, _MARK, True)
    handle_client.__wrapped__ = original  # type: ignore[attr-defined]
    return _replace(ConnectionHandler, "handle_client", handle_client)
