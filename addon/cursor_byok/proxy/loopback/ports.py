"""Which loopback port a stream goes to, so no client connection waits for a free one.

mitmproxy opens at most `CONNECTIONS_PER_ADDRESS` upstream connections per address for one client
connection (a semaphore per (host, port) in its connection handler) and holds each for the whole
life of the upstream connection. Every Agent stream we serve is one loopback HTTP/1.1 connection,
and Cursor multiplexes all its Agent runs on one HTTP/2 connection: with a single loopback port,
its sixth concurrent run would wait until one of the first five ended. So the streamer listens on
several ports and each stream goes to the port this client connection uses least.
Sans-IO: the addon reports streams taken and given back, and client connections gone.
"""

from __future__ import annotations

from collections import Counter

from cursor_byok.proxy.mitmproxy_compat import CLIENT_MAX_CONCURRENT_STREAMS
from cursor_byok.proxy.mitmproxy_compat import CONNECTIONS_PER_ADDRESS

# Enough loopback ports for every stream mitmproxy lets one client connection open at once
# (20 x 5 = 100): none of them waits, unseen, for a loopback connection.
LISTENERS = -(-CLIENT_MAX_CONCURRENT_STREAMS // CONNECTIONS_PER_ADDRESS)


class PortPicker:
    """Counts open loopback streams per client connection and port."""

    def __init__(self, ports: list[int]) -> None:
        if not ports:
            raise ValueError("no loopback ports")
        self.ports = list(ports)
        self._open: dict[str, Counter[int]] = {}
        self.total = 0  # streams open on every client connection together

    def take(self, client: str) -> int:
        """The port for a new stream of `client`: the one it uses least (the first on a tie,
        so a client with few streams keeps to one port)."""
        open_ = self._open.setdefault(client, Counter())
        port = min(self.ports, key=open_.__getitem__)
        open_[port] += 1
        self.total += 1
        return port

    def give(self, client: str, port: int) -> None:
        """A stream of `client` on `port` has ended."""
        open_ = self._open.get(client)
        if open_ is None or open_[port] <= 0:
            return
        open_[port] -= 1
        self.total -= 1
        if open_[port] == 0:
            del open_[port]
        if not open_:
            del self._open[client]

    def forget(self, client: str) -> None:
        """The client connection closed: its streams are gone with it."""
        self.total -= sum(self._open.pop(client, Counter()).values())

    def open_streams(self, client: str) -> int:
        return sum(self._open.get(client, Counter()).values())

    def saturated(self, client: str) -> bool:
        """Whether a new stream of `client` would have to wait for mitmproxy."""
        open_ = self._open.get(client)
        return open_ is not None and all(open_[p] >= CONNECTIONS_PER_ADDRESS for p in self.ports)
