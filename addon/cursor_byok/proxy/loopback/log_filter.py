"""Keep mitmproxy's console lines about the hop to our loopback streamer out of the log.

Every Agent stream served here goes through mitmproxy to the in-process streamer on 127.0.0.1,
and mitmproxy logs that hop like any upstream: "server connect 127.0.0.1:<port>", "Streaming
request to 127.0.0.1.", "Streaming response from 127.0.0.1.", "server disconnect 127.0.0.1:<port>"
(4 INFO records per `Run`, 3 per RunSSE). They tell a user nothing (the addon logs each run and
each turn), and each record costs the proxy ~90 µs: mitmproxy prints it and hands it to all its
addons as an `add_log` event. This filter, on mitmproxy's connection logger, drops them unless
the console shows debug records.

Sans-IO: the addon says which ports the streamer listens on, and which client connections have a
stream on the loopback right now (the "Streaming" lines name only the host).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Hashable
from collections.abc import Iterable

from cursor_byok.proxy.mitmproxy_compat import hop_connect_lines
from cursor_byok.proxy.mitmproxy_compat import hop_streaming_lines

LOOPBACK = "127.0.0.1"
_CONNECTS = hop_connect_lines(LOOPBACK)
_STREAMING = hop_streaming_lines(LOOPBACK)


class LoopbackLogFilter(logging.Filter):
    def __init__(self) -> None:
        super().__init__()
        self.ports: frozenset[int] = frozenset()
        self.quiet = True  # False while the console shows debug records
        self._clients: Counter[Hashable] = Counter()  # peername -> streams on the loopback

    def set_ports(self, ports: Iterable[int]) -> None:
        self.ports = frozenset(ports)

    def opened(self, client: Hashable) -> None:
        """A flow of this client connection (its peername) now goes to the loopback."""
        self._clients[client] += 1

    def closed(self, client: Hashable) -> None:
        if self._clients[client] <= 1:
            self._clients.pop(client, None)
        else:
            self._clients[client] -= 1

    def forget(self, client: Hashable) -> None:
        self._clients.pop(client, None)

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.quiet or record.levelno != logging.INFO or record.args:
            return True
        message = record.msg
        if not isinstance(message, str):
            return True
        if message.startswith(_CONNECTS):
            port = message.rpartition(":")[2]
            return not (port.isdigit() and int(port) in self.ports)
        if message in _STREAMING:
            return getattr(record, "client", None) not in self._clients
        return True
