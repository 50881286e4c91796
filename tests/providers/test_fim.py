"""The FIM provider kinds against the fake FIM server on 127.0.0.1 (tests/fakes/fake_fim.py)."""

from __future__ import annotations

import contextlib

import pytest
from fakes.fake_fim import FakeFim

from cursor_byok.config.load import parse_config
from cursor_byok.config.settings import ConfigError
from cursor_byok.providers import Finish
from cursor_byok.providers import ModelRequest
from cursor_byok.providers import ProviderError
from cursor_byok.providers import ProviderSettings
from cursor_byok.providers import TextDelta
from cursor_byok.providers import Usage
from cursor_byok.providers import make_provider


def fim_request() -> ModelRequest:
    return ModelRequest(
        model="codestral-latest",
        system="",
        messages=[],
        params={"prompt": "def add(a, b):\n    ", "suffix": "\n", "stop": ["\n\n\n"]},
        max_output_tokens=64,
    )


async def collect(kind: str, fim: FakeFim) -> list:
    provider = make_provider(ProviderSettings(kind=kind, base_url=fim.base_url, api_key="k"))
    try:
        async with contextlib.aclosing(provider.stream(fim_request())) as events:
            return [event async for event in events]
    finally:
        await provider.aclose()


@pytest.mark.parametrize(
    ("kind", "path"),
    [("openai-fim", "/v1/completions"), ("mistral-fim", "/v1/fim/completions")],
)
async def test_fim_kinds_stream_the_middle(kind, path):
    async with FakeFim(answer="return a + b") as fim:
        events = await collect(kind, fim)
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "return a + b"
    assert isinstance(events[-1], Finish)
    assert any(isinstance(e, Usage) and e.output_tokens for e in events)
    assert fim.paths == [path]
    body = fim.requests[0]
    assert body["prompt"] == "def add(a, b):\n    "
    assert body["suffix"] == "\n"
    assert body["stop"] == ["\n\n\n"]
    assert body["max_tokens"] == 64
    assert body["stream"] is True
    assert "messages" not in body


async def test_fim_provider_error_is_a_provider_error():
    async with FakeFim(answer="x", fail=503) as fim:
        with pytest.raises(ProviderError) as caught:
            await collect("openai-fim", fim)
    assert caught.value.status == 503


def config(extra: str = "", default: str = "Chat") -> dict:
    import tomllib

    return tomllib.loads(
        f"""
default_model = "{default}"
[providers.local]
kind = "openai-fim"
base_url = "http://127.0.0.1:11434/v1"
[providers.chat]
kind = "openai-chat"
base_url = "http://127.0.0.1:1/v1"
[[models]]
name = "Local FIM"
provider = "local"
model = "qwen2.5-coder:1.5b-base"
[[models]]
name = "Chat"
provider = "chat"
model = "gpt-x"
{extra}
"""
    )


def test_a_fim_model_may_serve_tab():
    parsed = parse_config(config('[features]\ntab = "Local FIM"'))
    assert parsed.features.model_for("tab") == "Local FIM"


@pytest.mark.parametrize(
    ("extra", "default", "key"),
    [
        ("", "Local FIM", "default_model"),
        ('[features]\ncmd_k = "Local FIM"', "Chat", "features.cmd_k"),
        ('[routes]\nplan = "Local FIM"', "Chat", "routes.plan"),
        ('fallbacks = ["Local FIM"]', "Chat", r"models\[1\].fallbacks"),
    ],
)
def test_a_fim_model_serves_nothing_but_tab(extra, default, key):
    with pytest.raises(ConfigError, match=key + ".*fill-in-the-middle"):
        parse_config(config(extra, default))


def test_a_fim_model_may_fall_back_to_a_chat_model_for_tab():
    text = config('[features]\ntab = "Local FIM"')
    text["models"][0]["fallbacks"] = ["Chat"]  # Tab's chain: a chat model does Tab too
    assert parse_config(text).model("Local FIM").fallbacks == ("Chat",)


@pytest.mark.parametrize("tab", ["ollama-fim", "codestral"])
def test_init_tab_presets_put_tab_on_a_fim_model(tab):
    import tomllib

    from cursor_byok.config.presets import TAB_PRESETS
    from cursor_byok.config.presets import render_config
    from cursor_byok.config.presets import render_tab

    parsed = parse_config(tomllib.loads(render_config("ollama") + render_tab(tab)))
    name = parsed.features.model_for("tab")
    assert name is not None and name != parsed.default_model
    model = parsed.model(name)
    assert model is not None and parsed.providers[model.provider].kind == TAB_PRESETS[tab].kind


def test_doctor_says_plainly_where_tab_goes():
    from cursor_byok.cli.doctor import OK
    from cursor_byok.cli.doctor import WARN
    from cursor_byok.cli.doctor import check_tab

    cursor = check_tab(parse_config(config()))
    assert cursor.status == WARN and "still goes to Cursor" in cursor.detail
    ours = check_tab(parse_config(config('[features]\ntab = "Local FIM"')))
    assert ours.status == OK and "Local FIM" in ours.detail and "fill-in-the-middle" in ours.detail
