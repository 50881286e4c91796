"""Config validation: good files load, bad ones say file, key and what is wrong."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cursor_byok.config import ConfigError
from cursor_byok.config import ConfigSource
from cursor_byok.config import load_config
from cursor_byok.config import parse_config

REPO = Path(__file__).resolve().parents[2]
GOOD = {
    "providers": {"p": {"kind": "openai-chat", "base_url": "http://127.0.0.1:1/v1"}},
    "models": [{"name": "M", "provider": "p", "model": "up"}],
}


def test_the_shipped_example_is_valid() -> None:
    config = load_config(REPO / "config.example.toml")
    assert config.default_model == "Claude Sonnet (BYOK)"
    assert {p.kind for p in config.providers.values()} == {
        "anthropic",
        "openai-responses",
        "openai-chat",
    }
    assert config.model("DeepSeek (BYOK)").provider == "deepseek"
    assert config.model("qwen3:8b").name == "Qwen local (BYOK)"  # upstream id works too
    assert config.model("nope") is None


def bad(mutate) -> str:
    raw = {
        "providers": {k: dict(v) for k, v in GOOD["providers"].items()},
        "models": [dict(m) for m in GOOD["models"]],
    }
    mutate(raw)
    with pytest.raises(ConfigError) as info:
        parse_config(raw, Path("/x/config.toml"))
    return str(info.value)


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda r: r["providers"]["p"].update(kind="gemini"), "providers.p.kind: must be one of"),
        (lambda r: r["providers"]["p"].update(base_url="ftp://x"), "providers.p.base_url"),
        (lambda r: r["providers"]["p"].update(api_key="sk-x"), "put the key in api_key_env"),
        (lambda r: r["providers"]["p"].update(colour="red"), "providers.p.colour: unknown key"),
        (lambda r: r["models"][0].update(provider="q"), "models[0].provider: 'q' is not"),
        (lambda r: r["models"][0].pop("model"), "models[0].model: is required"),
        (lambda r: r["models"][0].update(context_window=10), "models[0].context_window"),
        (lambda r: r["models"].append(dict(r["models"][0])), "duplicate model name(s): M"),
        (lambda r: r.update(default_model="X"), "default_model: 'X' is not one of"),
        (lambda r: r.update(models=[]), "models: define at least one"),
        (lambda r: r["providers"]["p"].update(read_timeout=-1), "read_timeout"),
        (lambda r: r.update(vision_model="V"), "vision_model: 'V' is not one of the models"),
        (lambda r: r.update(vision_model="M"), "vision_model: 'M' has supports_images = false"),
        (lambda r: r.update(privacy="off"), "privacy: 'off': must be one of 'local', 'cursor'"),
        (lambda r: r.update(title_model="T"), "title_model: 'T' is not one of the models: M"),
    ],
)
def test_bad_configs_name_the_key(mutate, expected) -> None:
    message = bad(mutate)
    assert message.startswith("/x/config.toml: ")
    assert expected in message


def test_privacy_is_local_unless_set_and_title_model_names_a_model() -> None:
    config = parse_config(GOOD)
    assert config.privacy == "local" and config.title_model is None
    config = parse_config({**GOOD, "privacy": "cursor", "title_model": "M"})
    assert config.privacy == "cursor" and config.title_model == "M"


def test_bad_toml_and_missing_file(tmp_path) -> None:
    broken = tmp_path / "c.toml"
    broken.write_text("[providers\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(broken)
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "missing.toml")


def test_keys_come_from_env_or_file_and_never_show_in_repr(tmp_path, monkeypatch) -> None:
    key_file = tmp_path / "k"
    key_file.write_text("sk-from-file\n")
    raw = {
        "providers": {
            "env": {"kind": "anthropic", "base_url": "https://a", "api_key_env": "TEST_KEY_1"},
            "file": {"kind": "openai-chat", "base_url": "https://b", "api_key_file": str(key_file)},
        },
        "models": [{"name": "M", "provider": "env", "model": "x"}],
    }
    config = parse_config(raw)
    monkeypatch.delenv("TEST_KEY_1", raising=False)
    with pytest.raises(ConfigError, match="TEST_KEY_1 is not set"):
        config.providers["env"].api_key()
    monkeypatch.setenv("TEST_KEY_1", "sk-from-env")
    settings = config.providers["env"].settings()
    assert settings.api_key == "sk-from-env"
    assert "sk-from-env" not in repr(settings)
    assert config.providers["file"].api_key() == "sk-from-file"


def test_source_reloads_on_change(tmp_path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        '[providers.p]\nkind = "anthropic"\nbase_url = "https://a"\n'
        '[[models]]\nname = "A"\nprovider = "p"\nmodel = "a"\n'
    )
    source = ConfigSource(path)
    first = source.get()
    assert source.get() is first  # unchanged file: same snapshot
    path.write_text(path.read_text().replace('name = "A"', 'name = "B"'))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert source.get().model_names() == ["B"]
    assert first.model_names() == ["A"]  # a running turn's snapshot is untouched
