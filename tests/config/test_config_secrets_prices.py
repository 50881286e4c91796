"""Credential headers only by reference (like API keys); prices and usage settings validate."""

from __future__ import annotations

import pytest

from cursor_byok.config import ConfigError
from cursor_byok.config import SecretRef
from cursor_byok.config import parse_config
from cursor_byok.secrets import is_secret_header
from cursor_byok.store.usage import Prices


def config_with(headers=None, **model_extra) -> dict:
    provider = {"kind": "openai-chat", "base_url": "http://127.0.0.1:1/v1"}
    if headers is not None:
        provider["headers"] = headers
    return {
        "providers": {"p": provider, "spare": dict(provider, headers={})},
        "models": [{"name": "M", "provider": "p", "model": "up", **model_extra}],
    }


@pytest.mark.parametrize(
    "name",
    ["Authorization", "authorization", "X-API-Key", "api-key", "Proxy-Authorization",
     "x-goog-api-key", "Cookie", "X-Auth-Token", "OpenAI-Secret"],
)  # fmt: skip
def test_secret_header_written_in_the_config_is_refused(name: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config(config_with({name: "Bearer sk-live-1234"}))
    message = str(error.value)
    assert f"providers.p.headers.{name}" in message
    assert "looks like a credential" in message and 'env = "VAR"' in message
    assert "sk-live-1234" not in message  # the error never echoes the secret


def test_ordinary_headers_stay_plain() -> None:
    config = parse_config(config_with({"X-Org": "me", "HTTP-Referer": "https://x", "X-N": 3}))
    assert config.providers["p"].headers == {"X-Org": "me", "HTTP-Referer": "https://x", "X-N": "3"}
    assert not is_secret_header("X-Title")


def test_secret_header_from_env_and_file(tmp_path, monkeypatch) -> None:
    key_file = tmp_path / "token"
    key_file.write_text("file-token\n")
    monkeypatch.setenv("HDR_TEST_TOKEN", "env-token")
    config = parse_config(
        config_with(
            {
                "Authorization": {"env": "HDR_TEST_TOKEN", "prefix": "Bearer "},
                "x-api-key": {"file": str(key_file)},
            }
        )
    )
    provider = config.providers["p"]
    assert provider.headers["Authorization"] == SecretRef(env="HDR_TEST_TOKEN", prefix="Bearer ")
    headers = provider.settings().extra_headers
    assert headers == {"Authorization": "Bearer env-token", "x-api-key": "file-token"}
    assert "env-token" not in repr(provider.settings())
    monkeypatch.delenv("HDR_TEST_TOKEN")
    with pytest.raises(ConfigError, match="header Authorization: environment variable"):
        provider.settings()


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"env": "A", "file": "b"}, "exactly one of"),
        ({}, "exactly one of"),
        ({"env": ""}, "must be strings"),
        ({"env": "A", "what": 1}, "unknown key"),
        ({"env": "A", "prefix": 3}, "must be strings"),
    ],
)
def test_bad_header_references(value, problem) -> None:
    with pytest.raises(ConfigError, match=problem):
        parse_config(config_with({"Authorization": value}))


def test_a_non_string_header_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"headers\.X-Flag: must be a string"):
        parse_config(config_with({"X-Flag": True}))


def test_prices_and_cost() -> None:
    config = parse_config(
        config_with(prices={"input": 3, "output": 15, "cached_input": 0.3, "cache_write": 3.75})
    )
    prices = config.models[0].prices
    assert prices == Prices(input=3.0, output=15.0, cached_input=0.3, cache_write=3.75)
    cost = prices.cost(
        input_tokens=1_000_000, output_tokens=100_000, cache_read_tokens=2_000_000,
        cache_write_tokens=0,
    )  # fmt: skip
    assert cost == pytest.approx(3 + 1.5 + 0.6)
    assert (
        Prices(input=2, output=8).cost(input_tokens=0, output_tokens=0, cache_read_tokens=10**6)
        == 2
    )
    assert parse_config(config_with()).models[0].prices is None


@pytest.mark.parametrize(
    ("prices", "problem"),
    [
        ({"input": 1}, r"prices\.output: is required"),
        ({"input": 1, "output": -1}, "at least 0"),
        ({"input": 1, "output": 2, "bogus": 1}, "unknown key"),
        ("cheap", "must be a table"),
    ],
)
def test_bad_prices(prices, problem) -> None:
    with pytest.raises(ConfigError, match=problem):
        parse_config(config_with(prices=prices))


def test_usage_settings_and_used_providers() -> None:
    raw = config_with()
    raw["usage"] = {"retention_days": 30}
    config = parse_config(raw)
    assert config.usage.retention_days == 30
    assert config.used_providers() == ["p"] and config.unused_providers() == ["spare"]
    raw["usage"] = {"retention_days": 0}
    with pytest.raises(ConfigError, match="retention_days"):
        parse_config(raw)
