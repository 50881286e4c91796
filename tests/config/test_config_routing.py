"""The routing and spend parts of a config (issue 36): fallbacks, key pools, [routes], [limits]."""

from __future__ import annotations

from typing import Any

import pytest

from cursor_byok.config import ConfigError
from cursor_byok.config import parse_config


def raw(**top: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "providers": {
            "a": {"kind": "openai-chat", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "K"},
            "b": {"kind": "anthropic", "base_url": "http://127.0.0.1:9/v1"},
        },
        "models": [
            {"name": "Big", "provider": "a", "model": "big", "fallbacks": ["Small"]},
            {"name": "Small", "provider": "b", "model": "small", "supports_images": True},
        ],
    }
    config.update(top)
    return config


def test_fallbacks_name_configured_models() -> None:
    assert parse_config(raw()).models[0].fallbacks == ("Small",)
    bad = raw()
    bad["models"][0]["fallbacks"] = ["Nope"]
    with pytest.raises(ConfigError, match=r"models\[0\]\.fallbacks: 'Nope' is not one of"):
        parse_config(bad)
    bad["models"][0]["fallbacks"] = ["Big"]
    with pytest.raises(ConfigError, match="the model itself"):
        parse_config(bad)


def test_a_list_of_key_variables_is_a_pool() -> None:
    config = raw()
    config["providers"]["a"]["api_key_env"] = ["KEY_ONE", "KEY_TWO"]
    provider = parse_config(config).providers["a"]
    assert [ref.env for ref in provider.key_pool] == ["KEY_ONE", "KEY_TWO"]
    assert provider.api_key_env == "KEY_ONE"  # the single key older code reads
    config["providers"]["a"]["api_key_env"] = ["KEY_ONE", "KEY_ONE"]
    with pytest.raises(ConfigError, match="the same key twice"):
        parse_config(config)
    config["providers"]["a"]["api_key_env"] = []
    with pytest.raises(ConfigError, match="non-empty list"):
        parse_config(config)
    config["providers"]["a"]["api_key_env"] = 3
    with pytest.raises(ConfigError, match="a list of them"):
        parse_config(config)


def test_routes_map_modes_and_tasks_to_models() -> None:
    config = parse_config(raw(routes={"plan": "Big", "ask": "Small", "vision": "Small"}))
    assert config.routes == {"plan": "Big", "ask": "Small", "vision": "Small"}
    with pytest.raises(ConfigError, match=r"routes\.cmd_k: unknown key"):
        parse_config(raw(routes={"cmd_k": "Big"}))
    with pytest.raises(ConfigError, match=r"routes\.ask: 'Huge' is not one of"):
        parse_config(raw(routes={"ask": "Huge"}))
    with pytest.raises(ConfigError, match="supports_images = false"):
        parse_config(raw(routes={"vision": "Big"}))


def test_limits_need_prices_and_positive_amounts() -> None:
    with pytest.raises(ConfigError, match="needs prices"):
        parse_config(raw(limits={"daily_usd": 5}))
    priced = raw(limits={"daily_usd": 5, "conversation_usd": 0.5})
    priced["models"][0]["prices"] = {"input": 1, "output": 2}
    limits = parse_config(priced).limits
    assert limits.caps() == [("conversation_usd", 0.5), ("daily_usd", 5.0)]
    priced["limits"] = {"daily_usd": 0}
    with pytest.raises(ConfigError, match="positive amount"):
        parse_config(priced)
    priced["limits"] = {"weekly_usd": 1}
    with pytest.raises(ConfigError, match="unknown key"):
        parse_config(priced)
