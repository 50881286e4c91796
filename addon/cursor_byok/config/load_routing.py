"""Reading the routing and spend parts of a config: key pools, fallbacks, `[routes]`, `[limits]`.

Kept apart from `load.py` (which calls these) so each part stays one screen: the same rule holds,
every problem is a `ConfigError` naming the key and what is wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cursor_byok.config.settings import ROUTE_KEYS
from cursor_byok.config.settings import KeyRef
from cursor_byok.config.settings import Limits
from cursor_byok.config.settings import ModelConfig

_LIMIT_KEYS = ("daily_usd", "monthly_usd", "conversation_usd")


def key_sources(
    table: dict, prefix: str, fail
) -> tuple[str | None, str | None, tuple[KeyRef, ...]]:
    """(api_key_env, api_key_file, pool): a list in either key is a pool of keys used in turn;
    the first is also the provider's single key (what older code and `doctor` read)."""
    key_env, key_file = table.get("api_key_env"), table.get("api_key_file")
    if key_env is not None and key_file is not None:
        raise fail(prefix + "api_key_env", "set api_key_env or api_key_file, not both")
    for key, value in (("api_key_env", key_env), ("api_key_file", key_file)):
        if value is not None and not isinstance(value, str | list):
            raise fail(prefix + key, "must be a string, or a list of them (a key pool)")
        if not isinstance(value, list):
            continue
        if not value or not all(isinstance(v, str) and v for v in value):
            raise fail(prefix + key, "must be a non-empty list of non-empty strings")
        if len(set(value)) != len(value):
            raise fail(prefix + key, "names the same key twice")
        if key == "api_key_env":
            return value[0], None, tuple(KeyRef(env=v) for v in value)
        return None, value[0], tuple(KeyRef(file=Path(v)) for v in value)
    return key_env, key_file, ()


def fallbacks(table: dict, prefix: str, fail) -> tuple[str, ...]:
    value = table.get("fallbacks", [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise fail(prefix + "fallbacks", "must be a list of configured model names")
    return tuple(value)


def check_fallbacks(models: list[ModelConfig], fail) -> None:
    names = [m.name for m in models]
    for i, model in enumerate(models):
        for other in model.fallbacks:
            if other not in names:
                raise fail(
                    f"models[{i}].fallbacks",
                    f"{other!r} is not one of the models: {', '.join(names)}",
                )
            if other == model.name:
                raise fail(f"models[{i}].fallbacks", f"{other!r} is the model itself")


def routes(table: Any, models: list[ModelConfig], fail) -> dict[str, str]:
    """`[routes]`: a mode or task → a configured model (vision: one that takes images)."""
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise fail("routes", "must be a table of mode or task = model name")
    by_name = {m.name: m for m in models}
    out = {}
    for key, name in table.items():
        if key not in ROUTE_KEYS:
            raise fail(f"routes.{key}", f"unknown key (allowed: {', '.join(ROUTE_KEYS)})")
        if name not in by_name:
            raise fail(f"routes.{key}", f"{name!r} is not one of the models: {', '.join(by_name)}")
        if key == "vision" and not by_name[name].supports_images:
            raise fail("routes.vision", f"{name!r} has supports_images = false")
        out[key] = name
    return out


def limits(table: Any, models: list[ModelConfig], fail) -> Limits:
    """`[limits]`: caps in the prices' currency; they need prices to count against."""
    if table is None:
        return Limits()
    if not isinstance(table, dict):
        raise fail("limits", "must be a table { daily_usd = ..., monthly_usd = ... }")
    for key, value in table.items():
        if key not in _LIMIT_KEYS:
            raise fail(f"limits.{key}", f"unknown key (allowed: {', '.join(_LIMIT_KEYS)})")
        if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
            raise fail(f"limits.{key}", "must be a positive amount")
    if table and not any(m.prices for m in models):
        raise fail(
            "limits",
            "caps count cost, which needs prices: add prices = { input = ..., output = ... } "
            "(per million tokens) to the models",
        )
    return Limits(**{k: float(v) for k, v in table.items()})
