"""Spreading served streams over loopback ports, so mitmproxy's five connections per upstream
address and client connection never make an Agent stream wait."""

from __future__ import annotations

from cursor_byok.proxy.loopback.ports import PortPicker
from cursor_byok.proxy.mitmproxy_compat import CONNECTIONS_PER_ADDRESS as PER_ADDRESS


def test_few_streams_keep_to_the_first_port() -> None:
    ports = PortPicker([1000, 1001, 1002])
    first = ports.take("c")
    ports.give("c", first)
    assert ports.take("c") == first == 1000


def test_streams_spread_so_no_port_has_more_than_mitmproxy_allows() -> None:
    ports = PortPicker([1000, 1001, 1002])
    taken = [ports.take("c") for _ in range(3 * PER_ADDRESS)]
    assert {p: taken.count(p) for p in set(taken)} == {p: PER_ADDRESS for p in ports.ports}
    assert ports.saturated("c") and not ports.saturated("other")
    ports.give("c", 1001)
    assert not ports.saturated("c") and ports.take("c") == 1001


def test_clients_are_counted_apart_and_forgotten() -> None:
    ports = PortPicker([1000, 1001])
    for _ in range(PER_ADDRESS):
        ports.take("a")
    assert ports.take("b") == 1000  # another client connection: its own five per port
    assert ports.open_streams("a") == PER_ADDRESS
    ports.forget("a")
    assert ports.open_streams("a") == 0
    ports.give("a", 1000)  # a late end of a forgotten stream is harmless
    assert ports.open_streams("a") == 0
