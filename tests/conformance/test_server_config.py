"""Cursor's server config asks for HTTP/2 (`http2_config` FORCE_ALL_ENABLED) while the SDK
reaches the proxy in cleartext (`http://` base URL): the proxy must not let that steer the SDK to
an HTTP/2 stream it cannot serve; the turn runs on RunSSE + BidiAppend."""

from __future__ import annotations

import pytest
from fakes.cursor_account import CursorAccount
from harness import MODEL

pytestmark = pytest.mark.timeout(180)
FORCE_ALL_ENABLED = 2  # aiserver.v1.Http2Config


@pytest.fixture(scope="module")
def account() -> CursorAccount:
    return CursorAccount(http2_config=FORCE_ALL_ENABLED)


@pytest.fixture(params=["runsse"])
def transport(request) -> str:
    return request.param


def test_http2_forced_by_cursor_is_not_forced_on_a_cleartext_client(stack, sdk, workspace):
    fp = stack.provider
    fp.script.text("Served over RunSSE.")
    agent = sdk.agent(MODEL, cwd=workspace)
    turn = sdk.send(agent, "Hello?", timeout=90)
    assert turn.status == "finished", turn.result
    assert turn.text == "Served over RunSSE."
    log = stack.proxy.log()
    assert "GetServerConfig: Cursor asked for HTTP/2" in log
    assert "RunSSE " in log
