"""Reading the config file: TOML in, a validated `Config` out, and the file reloaded on change.

Every problem is a `ConfigError` naming the file, the key and what is wrong, so a typo is a
one-line fix instead of a traceback. A file other users may write is never loaded, nor reloaded
(`safety.refuse_shared`): it says where the key goes.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from cursor_byok.config import load_routing
from cursor_byok.config.features import FEATURE_KEYS
from cursor_byok.config.features import Features
from cursor_byok.config.features import parse_features
from cursor_byok.config.load_provider import provider
from cursor_byok.config.safety import refuse_shared
from cursor_byok.config.settings import DEFAULT_CONTEXT_WINDOW
from cursor_byok.config.settings import NATIVE_SEARCH_KINDS
from cursor_byok.config.settings import PRIVACY
from cursor_byok.config.settings import ROUTE_OTHER_MODELS
from cursor_byok.config.settings import Config
from cursor_byok.config.settings import ConfigError
from cursor_byok.config.settings import ImageGenerationConfig
from cursor_byok.config.settings import ModelConfig
from cursor_byok.config.settings import ProviderConfig
from cursor_byok.config.settings import UsageSettings
from cursor_byok.config.settings import WebSearchConfig
from cursor_byok.config.validate import Fail
from cursor_byok.config.validate import is_int
from cursor_byok.config.validate import is_number
from cursor_byok.config.validate import is_positive
from cursor_byok.config.validate import model_name
from cursor_byok.config.validate import one_of
from cursor_byok.config.validate import unknown
from cursor_byok.providers.fim import FIM_KINDS
from cursor_byok.store.usage import Prices

_MODEL_KEYS = {
    "name",
    "provider",
    "model",
    "context_window",
    "max_output_tokens",
    "supports_images",
    "supports_thinking",
    "web_search",
    "thinking",
    "params",
    "prices",
    "first_token_timeout",
    "compaction_model",
    "compact_at",
    "fallbacks",
}
_TOP_KEYS = {
    "providers",
    "models",
    "default_model",
    "max_steps",
    "usage",
    "subagent_model",
    "vision_model",
    "web_search",
    "image_generation",
    "route_other_models",
    "privacy",
    "title_model",
    "features",
    "routes",
    "limits",
}
# What happens to a run on a model cursor-byok does not serve (one of Cursor's own).
_IMAGE_KEYS = {"base_url", "model", "api_key_env", "size", "timeout", "headers"}
_WEB_SEARCH_KEYS = {"url", "api_key_env", "api_key_header", "headers", "max_results", "timeout"}
_PRICE_KEYS = {"input", "cached_input", "cache_write", "output"}
_USAGE_KEYS = {"retention_days"}


def load_config(path: Path) -> Config:
    try:
        with path.open("rb") as file:  # the mode checked is the mode of the bytes read
            refuse_shared(path, os.fstat(file.fileno()))
            raw = tomllib.loads(file.read().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text: {exc.reason}") from None
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file (see config.example.toml)") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    return parse_config(raw, path)


def parse_config(raw: dict[str, Any], path: Path | None = None) -> Config:
    """A config file's table as a `Config`; the first problem found raises `ConfigError`."""
    where = str(path) if path else "config"

    def fail(key: str, problem: str) -> ConfigError:
        return ConfigError(f"{where}: {key}: {problem}")

    unknown(raw, _TOP_KEYS, "", fail)
    providers_raw = raw.get("providers", {})
    if not isinstance(providers_raw, dict) or not providers_raw:
        raise fail("providers", "define at least one [providers.NAME] table")
    providers = {name: provider(name, table, fail) for name, table in providers_raw.items()}
    models = _models(raw.get("models", []), providers, fail)
    names = [m.name for m in models]
    default = model_name(raw.get("default_model"), "default_model", names, fail) or names[0]
    max_steps = raw.get("max_steps", 50)
    if not is_int(max_steps) or max_steps < 1:
        raise fail("max_steps", "must be a positive integer")
    usage = _usage(raw.get("usage", {}), fail)
    subagent_model = model_name(raw.get("subagent_model"), "subagent_model", names, fail)
    vision_model = _vision_model(raw.get("vision_model"), models, fail)
    route_other = one_of(
        raw.get("route_other_models", "cursor"), "route_other_models", ROUTE_OTHER_MODELS, fail
    )
    privacy = one_of(raw.get("privacy", "local"), "privacy", PRIVACY, fail)
    title_model = model_name(raw.get("title_model"), "title_model", names, fail)
    features = parse_features(
        raw.get("features"), model_names=names, default_model=default, privacy=privacy, fail=fail
    )
    load_routing.check_fallbacks(models, fail)
    _fim_models_only_for_tab(models, providers, default, features, raw, fail)
    return Config(
        providers,
        models,
        default,
        max_steps,
        path,
        usage,
        subagent_model,
        _web_search(raw.get("web_search"), fail),
        _image_generation(raw.get("image_generation"), fail),
        route_other,
        vision_model,
        privacy,
        title_model,
        features,
        routes=load_routing.routes(raw.get("routes"), models, fail),
        limits=load_routing.limits(raw.get("limits"), models, fail),
    )


def _models(table: Any, providers: dict[str, ProviderConfig], fail: Fail) -> list[ModelConfig]:
    """`[[models]]`: at least one, names unique, each compaction model one of them."""
    if not isinstance(table, list) or not table:
        raise fail("models", "define at least one [[models]] entry")
    models = [_model(i, entry, providers, fail) for i, entry in enumerate(table)]
    names = [m.name for m in models]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise fail("models", f"duplicate model name(s): {', '.join(duplicates)}")
    for i, model in enumerate(models):
        model_name(model.compaction_model, f"models[{i}].compaction_model", names, fail)
    return models


def _vision_model(name: Any, models: list[ModelConfig], fail: Fail) -> str | None:
    """`vision_model`: a configured model that takes images."""
    if name is None:
        return None
    vision = next((m for m in models if m.name == name), None)
    if vision is None:
        names = ", ".join(m.name for m in models)
        raise fail("vision_model", f"{name!r} is not one of the models: {names}")
    if not vision.supports_images:
        raise fail(
            "vision_model", f"{name!r} has supports_images = false: it cannot describe images"
        )
    return str(name)


def _usage(table: Any, fail: Fail) -> UsageSettings:
    if not isinstance(table, dict):
        raise fail("usage", "must be a table")
    unknown(table, _USAGE_KEYS, "usage.", fail)
    days = table.get("retention_days")
    if days is not None and (not isinstance(days, int) or isinstance(days, bool) or days < 1):
        raise fail("usage.retention_days", "must be a positive number of days")
    return UsageSettings(retention_days=days)


def _prices(table: Any, key: str, fail: Fail) -> Prices | None:
    if table is None:
        return None
    if not isinstance(table, dict):
        raise fail(key, "must be a table { input = ..., output = ... } (per million tokens)")
    unknown(table, _PRICE_KEYS, key + ".", fail)
    for name in ("input", "output"):
        if name not in table:
            raise fail(f"{key}.{name}", "is required (price per million tokens)")
    for name, value in table.items():
        if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
            raise fail(f"{key}.{name}", "must be a number of at least 0 (per million tokens)")
    return Prices(
        input=float(table["input"]),
        output=float(table["output"]),
        cached_input=None if "cached_input" not in table else float(table["cached_input"]),
        cache_write=None if "cache_write" not in table else float(table["cache_write"]),
    )


def _image_generation(table: Any, fail: Fail) -> ImageGenerationConfig | None:
    if table is None:
        return None
    if not isinstance(table, dict):
        raise fail("image_generation", "must be a table")
    unknown(table, _IMAGE_KEYS, "image_generation.", fail)
    base_url = table.get("base_url")
    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
        raise fail("image_generation.base_url", "must be an http:// or https:// URL")
    model = table.get("model")
    if not isinstance(model, str) or not model.strip():
        raise fail("image_generation.model", "is required and must be a non-empty string")
    for key in ("api_key_env", "size"):
        if table.get(key) is not None and not isinstance(table[key], str):
            raise fail(f"image_generation.{key}", "must be a string")
    timeout = table.get("timeout", 120.0)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        raise fail("image_generation.timeout", "must be a positive number of seconds")
    if not isinstance(table.get("headers", {}), dict):
        raise fail("image_generation.headers", "must be a table")
    return ImageGenerationConfig(
        base_url=base_url.rstrip("/"),
        model=model,
        api_key_env=table.get("api_key_env"),
        size=table.get("size") or "1024x1024",
        timeout=float(timeout),
        headers={str(k): str(v) for k, v in table.get("headers", {}).items()},
    )


def _web_search(table: Any, fail: Fail) -> WebSearchConfig | None:
    if table is None:
        return None
    if not isinstance(table, dict):
        raise fail("web_search", "must be a table")
    unknown(table, _WEB_SEARCH_KEYS, "web_search.", fail)
    url = table.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise fail("web_search.url", "must be an http:// or https:// URL")
    if "{query}" not in url:
        raise fail("web_search.url", "must contain {query} where the search terms go")
    for key in ("api_key_env", "api_key_header"):
        if table.get(key) is not None and not isinstance(table[key], str):
            raise fail(f"web_search.{key}", "must be a string")
    if not isinstance(table.get("headers", {}), dict):
        raise fail("web_search.headers", "must be a table")
    results = table.get("max_results", 8)
    if not isinstance(results, int) or isinstance(results, bool) or not 1 <= results <= 50:
        raise fail("web_search.max_results", "must be an integer from 1 to 50")
    timeout = table.get("timeout", 20.0)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        raise fail("web_search.timeout", "must be a positive number of seconds")
    return WebSearchConfig(
        url=url,
        api_key_env=table.get("api_key_env"),
        api_key_header=table.get("api_key_header") or "Authorization",
        headers={str(k): str(v) for k, v in table.get("headers", {}).items()},
        max_results=results,
        timeout=float(timeout),
    )


def _fim_models_only_for_tab(
    models: list[ModelConfig],
    providers: dict[str, ProviderConfig],
    default: str,
    features: Features,
    raw: dict[str, Any],
    fail: Fail,
) -> None:
    """A model on a fill-in-the-middle endpoint (openai-fim, mistral-fim) completes code at a
    cursor: it can serve `[features] tab` and nothing that needs a conversation."""
    fim = {m.name for m in models if providers[m.provider].kind in FIM_KINDS}
    if not fim:
        return
    roles = {
        "default_model": default,
        "subagent_model": raw.get("subagent_model"),
        "title_model": raw.get("title_model"),
        "vision_model": raw.get("vision_model"),
        **{f"features.{k}": getattr(features, k) for k in FEATURE_KEYS if k != "tab"},
    }
    roles.update(
        {f"models[{i}].compaction_model": m.compaction_model for i, m in enumerate(models)}
    )
    routes = raw.get("routes")
    if isinstance(routes, dict):  # a mode or task's model holds a conversation
        roles.update({f"routes.{k}": v for k, v in routes.items() if isinstance(v, str)})
    pairs = list(roles.items())
    for i, model in enumerate(models):  # a chat model's stand-in must hold its conversation
        if model.name not in fim:
            pairs += [(f"models[{i}].fallbacks", other) for other in model.fallbacks]
    for key, name in pairs:
        if name in fim:
            raise fail(
                key,
                f"{name!r} is on a fill-in-the-middle provider (Tab only); "
                "name a chat model here and the FIM model in [features] tab",
            )


def _model(index: int, table: Any, providers: dict[str, ProviderConfig], fail: Fail) -> ModelConfig:
    """One `[[models]]` entry as a `ModelConfig`."""
    prefix = f"models[{index}]."
    if not isinstance(table, dict):
        raise fail(f"models[{index}]", "must be a table")
    unknown(table, _MODEL_KEYS, prefix, fail)
    for key in ("name", "provider", "model"):
        if not isinstance(table.get(key), str) or not table[key].strip():
            raise fail(prefix + key, "is required and must be a non-empty string")
    if table["provider"] not in providers:
        raise fail(
            prefix + "provider",
            f"{table['provider']!r} is not a configured provider ({', '.join(providers)})",
        )
    _check_model(table, prefix, providers[table["provider"]], fail)
    ttft = table.get("first_token_timeout")
    return ModelConfig(
        name=table["name"],
        provider=table["provider"],
        model=table["model"],
        context_window=table.get("context_window", DEFAULT_CONTEXT_WINDOW),
        max_output_tokens=table.get("max_output_tokens"),
        supports_images=table.get("supports_images", False),
        supports_thinking=table.get("supports_thinking", False) or table.get("thinking", False),
        thinking=table.get("thinking", False),
        params=dict(table.get("params", {})),
        prices=_prices(table.get("prices"), prefix + "prices", fail),
        web_search=table.get("web_search", False),
        first_token_timeout=float(ttft) if ttft is not None else None,
        compaction_model=table.get("compaction_model"),
        compact_at=float(table.get("compact_at", 0.8)),
        fallbacks=load_routing.fallbacks(table, prefix, fail),
    )


def _check_model(table: dict, prefix: str, provider: ProviderConfig, fail: Fail) -> None:
    """The window, the output cap, the switches, the params, the timeout and compaction."""
    window = table.get("context_window", DEFAULT_CONTEXT_WINDOW)
    if not is_int(window) or window < 1024:
        raise fail(prefix + "context_window", "must be an integer of at least 1024 tokens")
    max_out = table.get("max_output_tokens")
    if max_out is not None and (not isinstance(max_out, int) or max_out < 1):
        raise fail(prefix + "max_output_tokens", "must be a positive integer")
    for key in ("supports_images", "supports_thinking", "thinking", "web_search"):
        if not isinstance(table.get(key, False), bool):
            raise fail(prefix + key, "must be true or false")
    if table.get("web_search") and provider.kind not in NATIVE_SEARCH_KINDS:
        raise fail(
            prefix + "web_search",
            "the provider's own web search needs kind anthropic or openai-responses; "
            "configure a [web_search] endpoint instead",
        )
    if not isinstance(table.get("params", {}), dict):
        raise fail(prefix + "params", "must be a table")
    ttft = table.get("first_token_timeout")
    if ttft is not None and not is_positive(ttft):
        raise fail(prefix + "first_token_timeout", "must be a positive number of seconds")
    compact_at = table.get("compact_at", 0.8)
    if not is_number(compact_at) or not 0.1 <= compact_at <= 0.98:
        raise fail(prefix + "compact_at", "must be a share of the window from 0.1 to 0.98")
    compaction_model = table.get("compaction_model")
    if compaction_model is not None and not isinstance(compaction_model, str):
        raise fail(prefix + "compaction_model", "must be the name of a configured model")


class ConfigSource:
    """The config file, reloaded when it changes (checked on each use, by mtime).

    Callers take a `Config` snapshot and keep it for the work at hand, so a reload never
    disturbs a running turn. A broken edit raises `ConfigError` until it is fixed.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path).expanduser()
        self._cached: tuple[tuple[int, int], Config] | None = None

    def get(self) -> Config:
        try:
            status = self.path.stat()
        except OSError:
            raise ConfigError(
                f"{self.path}: no such file. Create it with `cursor-byok init --provider NAME`, "
                "or give yours with `cursor-byok run --config PATH` (--set cursor_byok_config="
                "PATH for mitmdump)"
            ) from None
        # A chmod changes no mtime: the mode is part of the stamp, so a file that turns
        # writable by others is refused at the next use, not served from the cache.
        stamp = (status.st_mtime_ns, status.st_mode)
        if self._cached is None or self._cached[0] != stamp:
            self._cached = (stamp, load_config(self.path))
        return self._cached[1]
