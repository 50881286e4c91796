"""A provider's network keys: `proxy` (credentials only by reference, `proxy_auth`), the opt-in
`proxy_from_env`, and `ca_file`; each problem named with file, key and what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes.certs import ca_and_server

from cursor_byok.config import ConfigError
from cursor_byok.config import load_config
from cursor_byok.config import parse_config


def config_with(**provider_extra) -> dict:
    provider = {"kind": "openai-chat", "base_url": "https://api.example.test/v1", **provider_extra}
    return {
        "providers": {"p": provider},
        "models": [{"name": "M", "provider": "p", "model": "up"}],
    }


def test_defaults_read_no_proxy_and_no_extra_ca() -> None:
    settings = parse_config(config_with()).providers["p"].settings()
    assert settings.proxy is None and settings.proxy_auth == ""
    assert settings.proxy_from_env is False and settings.ca_file is None


def test_proxy_with_credentials_from_env_and_file(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CORP_PROXY_AUTH", "alice:s3cret-pw")
    config = parse_config(
        config_with(proxy="http://proxy.corp:3128", proxy_auth={"env": "CORP_PROXY_AUTH"})
    )
    settings = config.providers["p"].settings()
    assert settings.proxy == "http://proxy.corp:3128"
    assert settings.proxy_auth == "alice:s3cret-pw"
    assert "s3cret-pw" in settings.secrets()  # scrubbed from every message and log
    assert "s3cret-pw" not in repr(settings) and "s3cret-pw" not in repr(config)
    (tmp_path / "proxy.auth").write_text("bob:pw2\n")
    from_file = parse_config(
        config_with(
            proxy="http://proxy.corp:3128", proxy_auth={"file": str(tmp_path / "proxy.auth")}
        )
    )
    assert from_file.providers["p"].settings().proxy_auth == "bob:pw2"
    monkeypatch.delenv("CORP_PROXY_AUTH")
    with pytest.raises(ConfigError, match="proxy_auth: environment variable CORP_PROXY_AUTH"):
        config.providers["p"].settings()


def test_proxy_from_env_is_opt_in() -> None:
    settings = parse_config(config_with(proxy_from_env=True)).providers["p"].settings()
    assert settings.proxy_from_env is True and settings.proxy is None


@pytest.mark.parametrize(
    ("extra", "key", "problem"),
    [
        ({"proxy": "socks5://p:1080"}, "proxy", "http:// or https:// URL"),
        ({"proxy": "proxy.corp:3128"}, "proxy", "http:// or https:// URL"),
        ({"proxy": "http://u:pw@proxy.corp:3128"}, "proxy", "credentials in it; use proxy_auth"),
        ({"proxy": "http://proxy.corp:99999"}, "proxy", "bad port"),
        ({"proxy": "http://proxy.corp:3128/x"}, "proxy", "only scheme://host:port"),
        ({"proxy": 3128}, "proxy", "must be a string"),
        ({"proxy_from_env": "yes"}, "proxy_from_env", "true or false"),
        ({"proxy": "http://p:1", "proxy_from_env": True}, "proxy_from_env", "not both"),
        ({"proxy_auth": {"env": "X"}}, "proxy_auth", "needs a proxy"),
        ({"proxy": "http://p:1", "proxy_auth": "u:pw"}, "proxy_auth", "may not be written"),
        ({"proxy": "http://p:1", "proxy_auth": {"env": "X", "file": "y"}}, "proxy_auth", "one of"),
        ({"proxy": "http://p:1", "proxy_auth": {"prefix": "", "env": "X"}}, "proxy_auth.prefix",
         "unknown key"),
        ({"ca_file": 1}, "ca_file", "must be a string"),
        ({"ca_file": "/nonexistent/ca.pem"}, "ca_file", "/nonexistent/ca.pem: no such file"),
    ],
)  # fmt: skip
def test_bad_network_keys_name_file_key_and_problem(tmp_path, extra, key, problem) -> None:
    path = tmp_path / "config.toml"
    with pytest.raises(ConfigError) as error:
        parse_config(config_with(**extra), path)
    message = str(error.value)
    assert message.startswith(f"{path}: providers.p.{key}: "), message
    assert problem in message
    assert "pw@" not in message and "u:pw" not in message  # never echoes a credential


def test_ca_file_must_be_a_pem_bundle(tmp_path) -> None:
    bad = tmp_path / "ca.pem"
    bad.write_text("not a certificate\n")
    with pytest.raises(ConfigError, match=r"providers\.p\.ca_file: .*not a PEM file"):
        parse_config(config_with(ca_file=str(bad)))
    ca, _, _ = ca_and_server("127.0.0.1")
    bad.write_bytes(ca)
    settings = parse_config(config_with(ca_file=str(bad))).providers["p"].settings()
    assert settings.ca_file == str(bad)


def test_ca_file_in_a_toml_file_with_a_home_path(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    ca, _, _ = ca_and_server("127.0.0.1")
    (tmp_path / "company-ca.pem").write_bytes(ca)
    path = tmp_path / "config.toml"
    path.write_text(
        """
[providers.p]
kind = "anthropic"
base_url = "https://llm.corp.test"
ca_file = "~/company-ca.pem"
proxy = "http://proxy.corp.test:8080"

[[models]]
name = "M"
provider = "p"
model = "up"
"""
    )
    settings = load_config(path).providers["p"].settings()
    assert settings.ca_file == str(Path(tmp_path / "company-ca.pem"))
    assert settings.proxy == "http://proxy.corp.test:8080"
