"""Where a call may go (agent/chain.py): the model's keys, then its fallbacks; a key that cannot
be read is skipped, not the model; the model that served stays first."""

from __future__ import annotations

from typing import Any

import pytest

from cursor_byok.agent.chain import Chain
from cursor_byok.config import parse_config
from cursor_byok.providers.keys import KeyPools
from cursor_byok.providers.provider_error import ProviderError


def config(**provider: Any):
    return parse_config(
        {
            "providers": {
                "a": {"kind": "openai-chat", "base_url": "http://127.0.0.1:9/v1", **provider},
                "b": {"kind": "anthropic", "base_url": "http://127.0.0.1:9/v1"},
            },
            "models": [
                {"name": "Main", "provider": "a", "model": "main", "fallbacks": ["Backup"]},
                {"name": "Backup", "provider": "b", "model": "backup"},
            ],
        }
    )


def chain(c, pools=None, now=lambda: 0.0) -> Chain:
    main = c.model("Main")
    assert main is not None
    return Chain(c, main, lambda model, key: (model.name, key), pools, now)  # type: ignore[arg-type]


def test_the_pool_keys_come_first_then_the_fallbacks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("K1", "sk-one")
    monkeypatch.setenv("K2", "sk-two")
    c = config(api_key_env=["K1", "K2"])
    options = list(chain(c, KeyPools()).options())
    assert [o.provider for o in options] == [
        ("Main", "sk-one"),
        ("Main", "sk-two"),
        ("Backup", None),
    ]
    assert [o.pooled for o in options] == [True, False, False]
    assert options[0].key_label == "K1"


def test_an_unreadable_pool_key_is_skipped_not_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("K2", "sk-two")
    monkeypatch.delenv("K1", raising=False)
    c = config(api_key_env=["K1", "K2"])
    calls = chain(c, KeyPools())
    assert [o.provider for o in calls.options()] == [("Main", "sk-two"), ("Backup", None)]
    assert any("K1" in problem for problem in calls.problems)


def test_a_rate_limited_key_rests_and_a_refused_one_is_out(monkeypatch) -> None:
    monkeypatch.setenv("K1", "sk-one")
    monkeypatch.setenv("K2", "sk-two")
    c = config(api_key_env=["K1", "K2"])
    pools, clock = KeyPools(), [0.0]
    calls = chain(c, pools, lambda: clock[0])
    first = next(iter(calls.options()))
    limited = ProviderError("rate_limit", "slow down", status=429, retry_after=30)
    calls.failed(first, limited, "rate_limit")
    assert [o.key_label for o in calls.options()] == ["K2", ""]
    clock[0] = 30.0
    assert [o.key_label for o in calls.options()][:2] in (["K1", "K2"], ["K2", "K1"])
    refused = ProviderError("auth", "bad key", status=401)
    calls.failed(first, refused, "auth")
    assert [o.key_label for o in calls.options()] == ["K2", ""]


def test_the_model_that_served_stays_first() -> None:
    c = config()
    calls = chain(c)
    backup = list(calls.options())[1]
    calls.served(backup)
    assert [o.model.name for o in calls.options()] == ["Backup", "Main"]
