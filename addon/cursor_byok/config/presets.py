"""`cursor-byok init`: a minimal working config for one provider, from a named preset.

A preset is one of the three provider kinds with the base URL, key variable and a sensible first
model of a well-known service filled in. The file written is small on purpose (one provider, one
model): `doctor` then checks exactly what the user has, and more can be added by hand later (see
config.example.toml).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from cursor_byok.errors import ByokError
from cursor_byok.store.files import write_private


@dataclass(frozen=True)
class Preset:
    kind: str
    base_url: str
    key_env: str | None  # None: a local server that needs no key
    model: str
    context_window: int
    display: str  # the service's name, for the model's picker name
    extra: str = ""  # more provider lines (TOML)
    model_extra: str = ""  # more model lines (TOML)


PRESETS: dict[str, Preset] = {
    "anthropic": Preset(
        "anthropic",
        "https://api.anthropic.com",
        "ANTHROPIC_API_KEY",
        "claude-sonnet-4-5",
        200_000,
        "Claude",
        model_extra="max_output_tokens = 16000\nsupports_images = true\n",
    ),
    "openai": Preset(
        "openai-responses",
        "https://api.openai.com/v1",
        "OPENAI_API_KEY",
        "gpt-5",
        272_000,
        "OpenAI",
        model_extra="supports_images = true\n",
    ),
    "openrouter": Preset(
        "openai-chat",
        "https://openrouter.ai/api/v1",
        "OPENROUTER_API_KEY",
        "anthropic/claude-sonnet-4.5",
        200_000,
        "OpenRouter",
        extra='reasoning_passback = "reasoning_details"\n',
    ),
    "deepseek": Preset(
        "openai-chat",
        "https://api.deepseek.com/v1",
        "DEEPSEEK_API_KEY",
        "deepseek-chat",
        128_000,
        "DeepSeek",
        extra='reasoning_passback = "reasoning_content"  # DeepSeek wants it back after tools\n',
    ),
    "gemini": Preset(
        "openai-chat",
        "https://generativelanguage.googleapis.com/v1beta/openai",
        "GEMINI_API_KEY",
        "gemini-2.5-pro",
        1_000_000,
        "Gemini",
    ),
    "groq": Preset(
        "openai-chat",
        "https://api.groq.com/openai/v1",
        "GROQ_API_KEY",
        "openai/gpt-oss-120b",
        131_072,
        "Groq",
    ),
    "mistral": Preset(
        "openai-chat",
        "https://api.mistral.ai/v1",
        "MISTRAL_API_KEY",
        "devstral-medium-latest",
        128_000,
        "Mistral",
    ),
    "gateway": Preset(
        "openai-chat",
        "http://127.0.0.1:4000/v1",  # your team's gateway: --base-url https://llm.example/v1
        "LITELLM_API_KEY",  # your own key of the gateway (a LiteLLM virtual key)
        "team-model",  # a model_name of the gateway's model_list: --model NAME
        128_000,
        "Team gateway (LiteLLM proxy)",
        extra="send_metadata = true  # conversation, mode and kind of each call, for its logs\n",
    ),
    "ollama": Preset(
        "openai-chat",
        "http://127.0.0.1:11434/v1",
        None,
        "qwen3:8b",
        32_768,
        "Ollama",
        extra="read_timeout = 600  # local models can be slow between chunks\n",
    ),
    "lmstudio": Preset(
        "openai-chat", "http://127.0.0.1:1234/v1", None, "qwen3-8b", 32_768, "LM Studio"
    ),
    "vllm": Preset(
        "openai-chat", "http://127.0.0.1:8000/v1", None, "Qwen/Qwen3-8B", 32_768, "vLLM"
    ),
}


# `init --tab PRESET`: a second provider and model that answer Tab ([features] tab), next to the
# Agent's. Both are fill-in-the-middle endpoints (providers/fim.py); small, fast models.
TAB_PRESETS: dict[str, Preset] = {
    "ollama-fim": Preset(
        "openai-fim",
        "http://127.0.0.1:11434/v1",
        None,
        "qwen2.5-coder:1.5b-base",
        32_768,
        "Ollama (FIM)",
        extra="read_timeout = 30\n",
    ),
    "codestral": Preset(
        "mistral-fim",
        "https://codestral.mistral.ai/v1",
        "CODESTRAL_API_KEY",
        "codestral-latest",
        256_000,
        "Codestral",
    ),
}


def render_tab(preset_name: str) -> str:
    """The TOML lines that put Tab on a TAB_PRESETS model (appended to a config)."""
    try:
        preset = TAB_PRESETS[preset_name]
    except KeyError:
        raise InitError(
            f"unknown Tab preset {preset_name!r} (one of: {', '.join(TAB_PRESETS)})"
        ) from None
    name = f"{preset.model} (Tab)"
    key = (
        f"api_key_env = {_q(preset.key_env)}\n"
        if preset.key_env
        else "# a local server needs no key\n"
    )
    return (
        f'\n# Tab on your own model: {preset.display}, fill-in-the-middle (README: "Tab")\n'
        f"[providers.tab]\n"
        f"kind = {_q(preset.kind)}\n"
        f"base_url = {_q(preset.base_url)}\n"
        f"{key}{preset.extra}"
        "max_retries = 0  # a late suggestion is a useless one\n"
        "\n"
        "[[models]]\n"
        f"name = {_q(name)}\n"
        'provider = "tab"\n'
        f"model = {_q(preset.model)}\n"
        f"context_window = {preset.context_window}\n"
        "\n"
        "[features]\n"
        f"tab = {_q(name)}\n"
    )


class InitError(ByokError):
    """Why no config was written, phrased for the user."""


def _q(value: str) -> str:
    """A TOML basic string (JSON's escaping is valid TOML for these)."""
    return json.dumps(value)


def render_config(
    preset_name: str,
    *,
    model: str | None = None,
    name: str | None = None,
    key_env: str | None = None,
    key_file: str | None = None,
    base_url: str | None = None,
    context_window: int | None = None,
) -> str:
    """The TOML text of a one-provider, one-model config."""
    try:
        preset = PRESETS[preset_name]
    except KeyError:
        raise InitError(
            f"unknown provider preset {preset_name!r} (one of: {', '.join(PRESETS)})"
        ) from None
    if key_env and key_file:
        raise InitError("give --key-env or --key-file, not both")
    upstream = model or preset.model
    shown = name or f"{upstream} (BYOK)"
    if key_file:
        key_line = f"api_key_file = {_q(key_file)}\n"
    elif key_env or preset.key_env:
        key_line = f"api_key_env = {_q(key_env or preset.key_env or '')}\n"
    else:
        key_line = '# api_key_env = "MY_KEY"  # a local server usually needs no key\n'
    window = context_window or preset.context_window
    return (
        f"# cursor-byok configuration, written by `cursor-byok init --provider {preset_name}`.\n"
        "# More providers, models and options: config.example.toml in the cursor-byok repository.\n"
        "# API keys never go in this file: api_key_env names a variable, api_key_file a file.\n"
        "\n"
        f"default_model = {_q(shown)}\n"
        "\n"
        f"# {preset.display}\n"
        f"[providers.{preset_name}]\n"
        f"kind = {_q(preset.kind)}\n"
        f"base_url = {_q(base_url or preset.base_url)}\n"
        f"{key_line}"
        f"{preset.extra}"
        "\n"
        "[[models]]\n"
        f"name = {_q(shown)}          # what Cursor's model picker shows\n"
        f"provider = {_q(preset_name)}\n"
        f"model = {_q(upstream)}\n"
        f"context_window = {window}\n"
        f"{preset.model_extra}"
        "# Prices per million tokens (from your provider's price list) make `cursor-byok usage`\n"
        "# show costs:\n"
        "# prices = { input = 3.0, cached_input = 0.3, output = 15.0 }\n"
    )


def write_config(path: Path, text: str, *, force: bool = False) -> None:
    """Write the config (0600) unless one exists and `force` is not given."""
    if path.exists() and not force:
        raise InitError(f"{path} already exists (use --force to overwrite it)")
    try:
        write_private(path, text.encode())
    except OSError as exc:
        raise InitError(f"cannot write {path}: {exc.strerror or exc}") from None


def key_hint(preset_name: str, key_env: str | None, key_file: str | None) -> str | None:
    """What to do about the key, when it is not there yet."""
    preset = PRESETS[preset_name]
    if key_file:
        if not Path(key_file).expanduser().exists():
            return f"put your API key into {key_file} (chmod 600)"
        return None
    env = key_env or preset.key_env
    if env and not os.environ.get(env):
        return f"export {env}=... (your API key) before `cursor-byok run`"
    return None
