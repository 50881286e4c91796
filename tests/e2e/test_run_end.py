"""`Run` ends the way Cursor expects (issue 25 item 8): what the client sees after the end-stream
envelope. Cursor keeps its upload half open for the whole turn; the server ends its response
(END_STREAM, right after the end-stream envelope) and then releases the stream with
RST_STREAM(NO_ERROR) (RFC 9113 §8.1), so the client stops uploading and nothing is read after
the end. A real mitmdump, our own HTTP/2 client (tests/e2e/h2_client.py)."""

from __future__ import annotations

import h2.errors
import h2.exceptions
import pytest
from cursor_client import CursorLikeClient

from cursor_byok.wire import connect

pytestmark = pytest.mark.timeout(90)


async def test_after_the_end_stream_envelope_the_stream_is_released(mitm, workspace) -> None:
    client = CursorLikeClient.through(mitm, workspace, transport="run", await_run_reset=True)
    try:
        one = await client.turn(client.run_request("read notes.txt", conversation_id="end-1"))
        connection = await client.h2()
        # the released stream takes no more upload: the client's h2 state says it is closed
        released = max(connection.streams)
        with pytest.raises(h2.exceptions.StreamClosedError):
            connection.conn.send_data(released, connect.encode_frame(b"\x3a\x00"))
        # and the connection is fine: the next turn runs on it
        two = await client.turn(client.run_request("README.md", conversation_id="end-2"))
    finally:
        await client.aclose()
    for result in (one, two):
        assert result.end.ok, result.end.error
        assert result.end_stream_gap is not None and result.end_stream_gap < 0.5
        assert result.run_reset == h2.errors.ErrorCodes.NO_ERROR  # released, not failed
    assert "alpha" in one.text and "Demo project" in two.text
    log = mitm.log()
    assert "client went away" not in log  # mitmproxy saw the request end, not an error
    assert "Traceback" not in log
