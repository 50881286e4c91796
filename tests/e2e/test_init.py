"""`cursor-byok init`: for each preset the written config validates and the doctor accepts it
against a (fake) provider speaking that preset's wire format."""

from __future__ import annotations

import asyncio
import stat

import pytest
from fakes.fake_provider import FakeProvider

from cursor_byok.cli.main import main
from cursor_byok.config import load_config
from cursor_byok.config.presets import PRESETS
from cursor_byok.config.presets import render_config

pytestmark = pytest.mark.timeout(60)
KEY = "sk-init-test"


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_renders_a_valid_config(tmp_path, preset) -> None:
    path = tmp_path / "config.toml"
    path.write_text(render_config(preset))
    config = load_config(path)
    assert config.used_providers() == [preset] and len(config.models) == 1
    assert config.providers[preset].kind == PRESETS[preset].kind
    assert config.models[0].model == PRESETS[preset].model
    assert config.model(None) is config.models[0]  # the default model is the one model


@pytest.mark.parametrize("preset", list(PRESETS))
async def test_init_then_doctor_against_a_fake_provider(tmp_path, preset, monkeypatch, capsys):
    keyed = PRESETS[preset].key_env is not None
    monkeypatch.setenv("INIT_TEST_KEY", KEY)
    config = tmp_path / "cfg" / "config.toml"
    async with FakeProvider(api_key=KEY if keyed else None) as fp:
        fp.script.text("pong")
        base = (
            fp.base_url.removesuffix("/v1") if PRESETS[preset].kind == "anthropic" else fp.base_url
        )
        argv = ["init", "--provider", preset, "--config", str(config), "--base-url", base]
        argv += ["--confdir", str(tmp_path / "mitm"), "--model", "fake-up-1"]
        if keyed:
            argv += ["--key-env", "INIT_TEST_KEY"]
        code = await asyncio.to_thread(main, argv)
        assert len(fp.requests) == 1
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    assert f"provider {preset} (fake-up-1)" in out.out
    assert "answered a one-word request" in out.out
    assert "✘" not in out.out
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert load_config(config).models[0].name == "fake-up-1 (BYOK)"


def test_init_refuses_to_overwrite_without_force(tmp_path, capsys) -> None:
    config = tmp_path / "config.toml"
    config.write_text("# mine\n")
    argv = ["init", "--provider", "ollama", "--config", str(config), "--no-doctor"]
    assert main(argv) == 2
    assert "already exists (use --force" in capsys.readouterr().err
    assert config.read_text() == "# mine\n"
    assert main([*argv, "--force"]) == 0
    assert load_config(config).providers["ollama"].base_url == "http://127.0.0.1:11434/v1"


def test_init_with_a_key_file_and_a_missing_key_says_what_to_do(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = tmp_path / "a.toml"
    assert main(["init", "--provider", "openai", "--config", str(config), "--no-doctor"]) == 0
    assert "export OPENAI_API_KEY=" in capsys.readouterr().err
    key = tmp_path / "key"
    argv = ["init", "--provider", "deepseek", "--config", str(tmp_path / "b.toml")]
    assert main([*argv, "--key-file", str(key), "--no-doctor"]) == 0
    assert f"put your API key into {key}" in capsys.readouterr().err
    provider = load_config(tmp_path / "b.toml").providers["deepseek"]
    assert provider.api_key_file == key and provider.api_key_env is None
    assert provider.reasoning_passback == "reasoning_content"


def test_init_rejects_a_bad_base_url_and_unknown_preset(tmp_path, capsys) -> None:
    config = tmp_path / "c.toml"
    assert main(["init", "--provider", "ollama", "--config", str(config), "--base-url", "x"]) == 2
    assert "base_url" in capsys.readouterr().err
    assert not config.exists()  # nothing invalid is written
    assert main(["init", "--provider", "nope", "--config", str(config)]) == 2
