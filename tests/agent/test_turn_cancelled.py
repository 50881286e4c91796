"""How a cancelled turn's stream ends: a cancel the client must not retry says so in its details."""

from __future__ import annotations

import pytest

from cursor_byok.agent.turn_endings import TurnCancelled
from cursor_byok.pb import aiserver_v1_pb2 as aipb


def _error(end) -> int | None:
    if not end.details:
        return None
    [detail] = end.details
    assert detail.type == "aiserver.v1.ErrorDetails"
    parsed = aipb.ErrorDetails.FromString(detail.value)
    assert parsed.is_expected  # not shown as a failure
    return parsed.error


@pytest.mark.parametrize(
    ("final", "error"),
    [
        ("superseded", aipb.ErrorDetails.ERROR_DEBOUNCED),
        ("user", aipb.ErrorDetails.ERROR_USER_ABORTED_REQUEST),
        (None, None),  # client gone, shutdown: a reconnecting client may try the run again
    ],
)
def test_a_final_cancel_names_why_in_its_details(final, error) -> None:
    end = TurnCancelled("why", final=final).end_stream()
    assert end.code == "canceled" and end.message == "why"
    assert _error(end) == error
