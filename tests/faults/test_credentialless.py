"""A client without an Authorization header. Issue 27 item 10 bound its runs to its connection;
issue 33 item 5 refuses it at once instead, on every transport (see the test's docstring)."""

from __future__ import annotations

import uuid

import httpx
import pytest
from cursor_client import CursorLikeClient
from cursor_client import CursorTurn

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def no_credential(monkeypatch):
    """The Cursor-like client, minus its Authorization header (an SDK script, a test tool)."""
    headers = CursorTurn.headers

    def without(self, content_type: str) -> dict[str, str]:
        sent = headers(self, content_type)
        sent.pop("authorization")
        return sent

    monkeypatch.setattr(CursorTurn, "headers", without)


@pytest.mark.parametrize("transport", ["run", "bidi", "poll"])
async def test_a_client_without_a_credential_is_refused_at_once(
    mitm, workspace, no_credential, transport
) -> None:
    """Issue 33 item 5 replaces issue 27 item 10's binding to the connection: that left a
    credential-less client's RunSSE + BidiAppend and RunPoll turns hanging (their appends came
    on other connections and got 403), and made every new connection a new owner. Now such a
    client is refused at once, on every transport, with a message that says why."""
    client = CursorLikeClient.through(mitm, workspace, transport=transport)
    try:
        try:
            result = await client.turn(
                client.run_request("read notes.txt", conversation_id=str(uuid.uuid4()))
            )
            error = result.end.error
            said = "" if error is None else f"{error.code}: {error.message}"
        except (AssertionError, httpx.HTTPStatusError) as exc:  # a non-200 answer
            said = str(exc)
    finally:
        await client.aclose()
    assert "unauthenticated" in said and "Authorization header" in said, said
    assert "Traceback" not in mitm.log()
