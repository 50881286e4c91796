"""The user's configuration: providers, models, defaults — one TOML file, validated precisely.

API keys never live in the file itself: a provider names an environment variable (`api_key_env`)
or a key file (`api_key_file`). Errors say which file, which key and what is wrong, so a typo is a
one-line fix instead of a traceback.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from cursor_byok.providers.base import PROVIDER_KINDS
from cursor_byok.providers.base import ProviderSettings

DEFAULT_CONTEXT_WINDOW = 128_000
_PROVIDER_KEYS = {
    "kind",
    "base_url",
    "api_key_env",
    "api_key_file",
    "headers",
    "connect_timeout",
    "read_timeout",
    "max_retries",
    "proxy",
    "extra_body",
    "reasoning_passback",
    "first_token_timeout",
}
_MODEL_KEYS = {
    "name",
    "provider",
    "model",
    "context_window",
    "max_output_tokens",
    "supports_images",
    "supports_thinking",
    "thinking",
    "params",
    "first_token_timeout",
    "compaction_model",
    "compact_at",
}
_TOP_KEYS = {"providers", "models", "default_model", "max_steps"}


class ConfigError(ValueError):
    """A configuration problem, phrased for the user: file, key, what is wrong."""


def default_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "cursor-byok" / "config.toml"


@dataclass(frozen=True)
class ProviderConfig:
    name: str
    kind: str
    base_url: str
    api_key_env: str | None = None
    api_key_file: Path | None = None
    headers: dict[str, str] = field(default_factory=dict)
    connect_timeout: float = 10.0
    read_timeout: float = 300.0
    max_retries: int = 2
    proxy: str | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)
    reasoning_passback: str | None = None
    # seconds from a model call until its first event, over all retries (None = no bound)
    first_token_timeout: float | None = 120.0

    def api_key(self) -> str:
        """Read the key now (so a rotated key file or env var is picked up); never logged."""
        if self.api_key_env:
            value = os.environ.get(self.api_key_env, "")
            if not value:
                raise ConfigError(
                    f"provider {self.name!r}: environment variable {self.api_key_env} is not set"
                )
            return value.strip()
        if self.api_key_file:
            try:
                return self.api_key_file.expanduser().read_text().strip()
            except OSError as exc:
                raise ConfigError(
                    f"provider {self.name!r}: cannot read api_key_file {self.api_key_file}: "
                    f"{exc.strerror}"
                ) from None
        return ""  # local servers (Ollama, vLLM) often need none

    def settings(self) -> ProviderSettings:
        return ProviderSettings(
            kind=self.kind,
            base_url=self.base_url,
            api_key=self.api_key(),
            extra_headers=dict(self.headers),
            connect_timeout=self.connect_timeout,
            read_timeout=self.read_timeout,
            max_retries=self.max_retries,
            name=self.name,
            proxy=self.proxy,
            extra_body=dict(self.extra_body),
            chat_reasoning_passback=self.reasoning_passback,
        )


@dataclass(frozen=True)
class ModelConfig:
    name: str  # what Cursor shows and sends back as the model id
    provider: str
    model: str  # the upstream model id
    context_window: int = DEFAULT_CONTEXT_WINDOW
    max_output_tokens: int | None = None
    supports_images: bool = False
    supports_thinking: bool = False
    thinking: bool = False  # ask the provider for reasoning
    params: dict[str, Any] = field(default_factory=dict)
    first_token_timeout: float | None = None  # overrides the provider's budget
    compaction_model: str | None = None  # another configured model that writes summaries
    compact_at: float = 0.8  # share of the context window that triggers compaction


@dataclass(frozen=True)
class Config:
    providers: dict[str, ProviderConfig]
    models: list[ModelConfig]
    default_model: str | None = None
    max_steps: int = 50
    path: Path | None = None

    def model(self, requested: str | None) -> ModelConfig | None:
        """The configured model for a name Cursor sent (display name or upstream id)."""
        if not requested:
            requested = self.default_model
        for model in self.models:
            if requested in (model.name, model.model):
                return model
        return None

    def model_names(self) -> list[str]:
        return [m.name for m in self.models]


def load_config(path: Path) -> Config:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file (see config.example.toml)") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    return parse_config(raw, path)


def parse_config(raw: dict[str, Any], path: Path | None = None) -> Config:
    where = str(path) if path else "config"

    def fail(key: str, problem: str) -> ConfigError:
        return ConfigError(f"{where}: {key}: {problem}")

    _unknown(raw, _TOP_KEYS, "", fail)
    providers_raw = raw.get("providers", {})
    if not isinstance(providers_raw, dict) or not providers_raw:
        raise fail("providers", "define at least one [providers.NAME] table")
    providers = {name: _provider(name, table, fail) for name, table in providers_raw.items()}
    models_raw = raw.get("models", [])
    if not isinstance(models_raw, list) or not models_raw:
        raise fail("models", "define at least one [[models]] entry")
    models = [_model(i, table, providers, fail) for i, table in enumerate(models_raw)]
    names = [m.name for m in models]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise fail("models", f"duplicate model name(s): {', '.join(duplicates)}")
    for i, model in enumerate(models):
        if model.compaction_model is not None and model.compaction_model not in names:
            raise fail(
                f"models[{i}].compaction_model",
                f"{model.compaction_model!r} is not one of the models: {', '.join(names)}",
            )
    default = raw.get("default_model")
    if default is not None and default not in names:
        raise fail("default_model", f"{default!r} is not one of the models: {', '.join(names)}")
    max_steps = raw.get("max_steps", 50)
    if not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1:
        raise fail("max_steps", "must be a positive integer")
    return Config(providers, models, default or names[0], max_steps, path)


def _unknown(table: dict, allowed: set[str], prefix: str, fail) -> None:
    for key in table:
        if key not in allowed:
            raise fail(f"{prefix}{key}", f"unknown key (allowed: {', '.join(sorted(allowed))})")


def _provider(name: str, table: Any, fail) -> ProviderConfig:
    prefix = f"providers.{name}."
    if not isinstance(table, dict):
        raise fail(f"providers.{name}", "must be a table")
    if "api_key" in table:
        raise fail(prefix + "api_key", "put the key in api_key_env or api_key_file")
    _unknown(table, _PROVIDER_KEYS, prefix, fail)
    kind = table.get("kind")
    if kind not in PROVIDER_KINDS:
        raise fail(prefix + "kind", f"must be one of {', '.join(PROVIDER_KINDS)} (got {kind!r})")
    base_url = table.get("base_url")
    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
        raise fail(prefix + "base_url", "must be an http:// or https:// URL")
    key_env, key_file = table.get("api_key_env"), table.get("api_key_file")
    if key_env is not None and key_file is not None:
        raise fail(prefix + "api_key_env", "set api_key_env or api_key_file, not both")
    for key in ("api_key_env", "api_key_file", "proxy", "reasoning_passback"):
        if table.get(key) is not None and not isinstance(table[key], str):
            raise fail(prefix + key, "must be a string")
    if table.get("reasoning_passback") not in (
        None,
        "reasoning_content",
        "reasoning",
        "reasoning_details",
    ):
        raise fail(
            prefix + "reasoning_passback",
            "must be reasoning_content, reasoning or reasoning_details",
        )
    for key in ("connect_timeout", "read_timeout", "first_token_timeout"):
        value = table.get(key, 1)
        if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
            raise fail(prefix + key, "must be a positive number of seconds")
    retries = table.get("max_retries", 2)
    if not isinstance(retries, int) or isinstance(retries, bool) or not 0 <= retries <= 10:
        raise fail(prefix + "max_retries", "must be an integer from 0 to 10")
    for key in ("headers", "extra_body"):
        if not isinstance(table.get(key, {}), dict):
            raise fail(prefix + key, "must be a table")
    return ProviderConfig(
        name=name,
        kind=kind,
        base_url=base_url.rstrip("/"),
        api_key_env=key_env,
        api_key_file=Path(key_file) if key_file else None,
        headers={str(k): str(v) for k, v in table.get("headers", {}).items()},
        connect_timeout=float(table.get("connect_timeout", 10.0)),
        read_timeout=float(table.get("read_timeout", 300.0)),
        max_retries=retries,
        proxy=table.get("proxy"),
        extra_body=dict(table.get("extra_body", {})),
        reasoning_passback=table.get("reasoning_passback"),
        first_token_timeout=float(table.get("first_token_timeout", 120.0)),
    )


def _model(index: int, table: Any, providers: dict[str, ProviderConfig], fail) -> ModelConfig:
    prefix = f"models[{index}]."
    if not isinstance(table, dict):
        raise fail(f"models[{index}]", "must be a table")
    _unknown(table, _MODEL_KEYS, prefix, fail)
    for key in ("name", "provider", "model"):
        if not isinstance(table.get(key), str) or not table[key].strip():
            raise fail(prefix + key, "is required and must be a non-empty string")
    if table["provider"] not in providers:
        raise fail(
            prefix + "provider",
            f"{table['provider']!r} is not a configured provider ({', '.join(providers)})",
        )
    window = table.get("context_window", DEFAULT_CONTEXT_WINDOW)
    if not isinstance(window, int) or isinstance(window, bool) or window < 1024:
        raise fail(prefix + "context_window", "must be an integer of at least 1024 tokens")
    max_out = table.get("max_output_tokens")
    if max_out is not None and (not isinstance(max_out, int) or max_out < 1):
        raise fail(prefix + "max_output_tokens", "must be a positive integer")
    for key in ("supports_images", "supports_thinking", "thinking"):
        if not isinstance(table.get(key, False), bool):
            raise fail(prefix + key, "must be true or false")
    if not isinstance(table.get("params", {}), dict):
        raise fail(prefix + "params", "must be a table")
    ttft = table.get("first_token_timeout")
    if ttft is not None and (
        not isinstance(ttft, int | float) or isinstance(ttft, bool) or ttft <= 0
    ):
        raise fail(prefix + "first_token_timeout", "must be a positive number of seconds")
    compact_at = table.get("compact_at", 0.8)
    if (
        not isinstance(compact_at, int | float)
        or isinstance(compact_at, bool)
        or not 0.1 <= compact_at <= 0.98
    ):
        raise fail(prefix + "compact_at", "must be a share of the window from 0.1 to 0.98")
    compaction_model = table.get("compaction_model")
    if compaction_model is not None and not isinstance(compaction_model, str):
        raise fail(prefix + "compaction_model", "must be the name of a configured model")
    return ModelConfig(
        name=table["name"],
        provider=table["provider"],
        model=table["model"],
        context_window=window,
        max_output_tokens=max_out,
        supports_images=table.get("supports_images", False),
        supports_thinking=table.get("supports_thinking", False) or table.get("thinking", False),
        thinking=table.get("thinking", False),
        params=dict(table.get("params", {})),
        first_token_timeout=float(ttft) if ttft is not None else None,
        compaction_model=compaction_model,
        compact_at=float(compact_at),
    )


class ConfigSource:
    """The config file, reloaded when it changes (checked on each use, by mtime).

    Callers take a `Config` snapshot and keep it for the work at hand, so a reload never
    disturbs a running turn. A broken edit raises `ConfigError` until it is fixed.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path).expanduser()
        self._cached: tuple[int, Config] | None = None

    def get(self) -> Config:
        try:
            stamp = self.path.stat().st_mtime_ns
        except OSError:
            raise ConfigError(
                f"{self.path}: no such file. Create it from config.example.toml in the "
                "cursor-byok repository, or point cursor_byok_config at yours"
            ) from None
        if self._cached is None or self._cached[0] != stamp:
            self._cached = (stamp, load_config(self.path))
        return self._cached[1]
