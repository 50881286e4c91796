"""Which Connect code a provider failure ends the turn with (issue 28 item 9): only what may
pass by itself is `unavailable`; a key, a permission, a limit or a model id is said as such."""

from __future__ import annotations

import pytest

from cursor_byok.agent.error_details import provider_turn_error
from cursor_byok.providers.provider_error import error_from_response


@pytest.mark.parametrize(
    ("status", "body", "code"),
    [
        (401, b'{"error": {"message": "bad key", "type": "invalid_api_key"}}', "unauthenticated"),
        (
            403,
            b'{"type": "error", "error": {"type": "permission_error", "message": "no"}}',
            "permission_denied",
        ),
        (
            429,
            b'{"error": {"message": "slow down", "type": "rate_limit_exceeded"}}',
            "resource_exhausted",
        ),
        (
            429,
            b'{"error": {"message": "exceeded your current quota", "type": "x"}}',
            "resource_exhausted",
        ),
        (404, b'{"error": {"message": "no such model", "code": "model_not_found"}}', "not_found"),
        (400, b'{"error": {"message": "model_not_found", "code": "model_not_found"}}', "not_found"),
        (400, b'{"error": {"message": "bad tool schema"}}', "invalid_argument"),
        (500, b'{"error": {"message": "oops"}}', "unavailable"),
        (
            529,
            b'{"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}',
            "unavailable",
        ),
    ],
)
def test_connect_code_per_failure(status: int, body: bytes, code: str) -> None:
    error = error_from_response(status, {}, body, provider="p", secrets=[])
    turn_error = provider_turn_error(error)
    assert turn_error.code == code
    end = turn_error.end_stream()
    assert end.code == code and error.message in end.message
