"""An h11 server connection in the middle of a chunked response, as the loopback has one when
it writes a run's frames (`loopback.server._write_chunk`)."""

from __future__ import annotations

import h11


def chunked_response() -> h11.Connection:
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(b"POST / HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n")
    conn.next_event()
    conn.send(h11.Response(status_code=200, headers=[("transfer-encoding", "chunked")]))
    return conn
