"""What a team gateway is told about each call (issue 36, item 5), and its budget errors."""

from __future__ import annotations

import json

from cursor_byok.providers.adapter import attribute
from cursor_byok.providers.provider_error import error_from_response

META = {"kind": "agent", "mode": "plan", "conversation": "conv-1"}


def test_openai_formats_get_metadata_tags_user_and_headers() -> None:
    headers: dict[str, str] = {}
    body: dict = {"model": "m"}
    attribute("openai-chat", META, headers, body)
    assert body["metadata"] == {
        "cursor_byok_kind": "agent",
        "cursor_byok_mode": "plan",
        "cursor_byok_conversation": "conv-1",
        "tags": ["cursor-byok:kind:agent", "cursor-byok:mode:plan"],
    }
    assert body["user"] == "conv-1"
    assert headers == {
        "x-cursor-byok-kind": "agent",
        "x-cursor-byok-mode": "plan",
        "x-cursor-byok-conversation": "conv-1",
    }


def test_anthropic_gets_its_one_metadata_field() -> None:
    headers: dict[str, str] = {}
    body: dict = {"model": "m"}
    attribute("anthropic", META, headers, body)
    assert body["metadata"] == {"user_id": "conv-1"}
    assert headers["x-cursor-byok-mode"] == "plan"


def test_a_gateway_budget_is_a_quota_error_not_a_rate_limit() -> None:
    crossed = {
        "error": {
            "message": "No deployments available - crossed budget: Exceeded budget for "
            "deployment model_name: team-budget",
            "type": "internal_server_error",
            "param": None,
            "code": "429",
        }
    }
    error = error_from_response(429, {}, json.dumps(crossed).encode(), provider="team", secrets=[])
    assert error.kind == "quota" and not error.retryable
    exceeded = {
        "error": {
            "message": "Budget has been exceeded! Current cost: 0.2, Max budget: 0.1",
            "type": "budget_exceeded",
            "param": None,
            "code": "422",
        }
    }
    error = error_from_response(422, {}, json.dumps(exceeded).encode(), provider="team", secrets=[])
    assert error.kind == "quota"
