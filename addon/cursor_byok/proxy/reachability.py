"""Whether Cursor's API can be reached right now: the offline fallback of every call we can
answer locally (the model lists, `NetworkService/IsConnected`, the calls around a BYOK run).

A connection that fails inside mitmproxy can only end in its 502 (no hook may answer after it),
so before such a call goes to a Cursor host with no open connection the host is probed (one TCP
connect; calls that come together share it). A failed probe, or a failed connection mitmproxy
reports, marks the host offline for `OFFLINE_RETRY_SECONDS`; a connection that opens marks it
reachable again at once. Behind an upstream proxy the probe would test the wrong hop, so there is
none. The addon that owns the server-connection hooks (the model picker) feeds it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable
from collections.abc import Callable

from mitmproxy import ctx
from mitmproxy import http

from cursor_byok.config.catalog import OFFLINE_RETRY_SECONDS

PROBE_TIMEOUT = 3.0  # seconds a probe connection may take before the host counts as unreachable

Probe = Callable[[str, int], Awaitable[bool]]
Address = tuple[str, int]


async def tcp_probe(host: str, port: int) -> bool:
    """Whether a TCP connection to host:port opens within `PROBE_TIMEOUT` (closed at once)."""
    try:
        async with asyncio.timeout(PROBE_TIMEOUT):
            _, writer = await asyncio.open_connection(host, port)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


class Reachability:
    """Offline hosts, open connections per host, and the probes in flight."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, probe: Probe = tcp_probe
    ) -> None:
        self._clock = clock
        self._probe = probe
        self._offline: dict[Address, float] = {}
        self._probes: dict[Address, asyncio.Future[bool]] = {}  # in flight, shared
        self._live: dict[Address, int] = {}  # open server connections per host, port

    def clear(self) -> None:
        self._offline.clear()

    def offline(self, address: Address) -> bool:
        until = self._offline.get(address)
        return until is not None and self._clock() < until

    async def unreachable(self, flow: http.HTTPFlow) -> bool:
        """Whether the host this flow goes to cannot be reached now (probed if need be)."""
        key = (flow.request.host, flow.request.port)
        if self.offline(key):
            return True
        if self._live.get(key):
            return False  # a connection is open, and mitmproxy may reuse it
        if any(str(m).startswith("upstream:") for m in ctx.options.mode):
            return False
        probe = self._probes.get(key)
        if probe is None:  # calls that come together (Cursor sends a few) share one probe
            probe = self._probes[key] = asyncio.ensure_future(self._probe(*key))
            probe.add_done_callback(lambda _: self._probes.pop(key, None))
        if await asyncio.shield(probe):
            return False
        self.mark_offline(key)
        return True

    def mark_offline(self, address: Address) -> bool:
        """Count the host offline for a while; True when it was not already."""
        new = address not in self._offline
        self._offline[address] = self._clock() + OFFLINE_RETRY_SECONDS
        return new

    def connected(self, address: Address) -> bool:
        """A connection opened; True when the host was offline until now."""
        self._live[address] = self._live.get(address, 0) + 1
        return self._offline.pop(address, None) is not None

    def disconnected(self, address: Address) -> None:
        left = self._live.get(address, 0) - 1
        if left > 0:
            self._live[address] = left
        else:
            self._live.pop(address, None)
