"""mitmproxy's console lines about the hop to the loopback streamer are dropped (unless the
console shows debug records); its lines about every other connection stay."""

from __future__ import annotations

import logging

from cursor_byok.proxy.loopback.log_filter import LoopbackLogFilter
from cursor_byok.proxy.mitmproxy_compat import CONNECTION_LOGGER as LOGGER

CLIENT = ("127.0.0.1", 50000)
OTHER_CLIENT = ("127.0.0.1", 50001)


def record(message: str, client=CLIENT, level: int = logging.INFO) -> logging.LogRecord:
    rec = logging.LogRecord(LOGGER, level, __file__, 1, message, None, None)
    rec.client = client
    return rec


def test_loopback_hop_lines_are_dropped_and_others_kept() -> None:
    hop = LoopbackLogFilter()
    hop.set_ports([40000, 40001])
    hop.opened(CLIENT)
    assert not hop.filter(record("server connect 127.0.0.1:40001"))
    assert not hop.filter(record("server disconnect 127.0.0.1:40000"))
    assert not hop.filter(record("Streaming request to 127.0.0.1."))
    assert not hop.filter(record("Streaming response from 127.0.0.1."))
    # Anything else: another port on loopback, another host, another client, other lines.
    assert hop.filter(record("server connect 127.0.0.1:8080"))
    assert hop.filter(record("server connect api2.cursor.sh:443"))
    assert hop.filter(record("Streaming response from 127.0.0.1.", client=OTHER_CLIENT))
    assert hop.filter(record("Streaming response from example.com."))
    assert hop.filter(record("client connect"))
    assert hop.filter(record("server connect 127.0.0.1:40001", level=logging.WARNING))


def test_streaming_lines_are_dropped_only_while_the_client_has_a_loopback_stream() -> None:
    hop = LoopbackLogFilter()
    hop.set_ports([40000])
    line = "Streaming response from 127.0.0.1."
    hop.opened(CLIENT)
    hop.opened(CLIENT)
    hop.closed(CLIENT)
    assert not hop.filter(record(line))  # one stream still open
    hop.closed(CLIENT)
    assert hop.filter(record(line))
    hop.opened(CLIENT)
    hop.forget(CLIENT)  # the client connection closed
    assert hop.filter(record(line))


def test_debug_console_shows_them() -> None:
    hop = LoopbackLogFilter()
    hop.set_ports([40000])
    hop.quiet = False
    assert hop.filter(record("server connect 127.0.0.1:40000"))
