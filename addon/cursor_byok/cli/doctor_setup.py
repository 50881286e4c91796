"""The doctor's checks of the install and the config: Python, mitmproxy, the config file, each
model answering a one-word request, the keys' safety, spending caps, Tab. Each check is one
`Check` line with its fix (`cli/doctor.py` runs them in order and prints them).
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path

from cursor_byok.config import Config
from cursor_byok.config import ConfigError
from cursor_byok.config import ModelConfig
from cursor_byok.config import load_config
from cursor_byok.config.features import describe as describe_features

OK, WARN, FAIL = "ok", "warn", "fail"


@dataclass(frozen=True)
class Check:
    status: str
    title: str
    detail: str = ""
    fix: str = ""


def check_python() -> Check:
    # This module cannot even be imported below 3.12 (the package needs it), so report only.
    return Check(OK, "Python " + ".".join(map(str, sys.version_info[:3])))


def check_mitmproxy() -> Check:
    try:
        from mitmproxy.version import VERSION
    except ImportError:
        return Check(FAIL, "mitmproxy not installed", fix="uv sync")
    if VERSION.split(".")[0] == "12":
        return Check(OK, f"mitmproxy {VERSION}")
    return Check(WARN, f"mitmproxy {VERSION}", "tested with 12.x", fix="uv sync (uses the lock)")


def check_config(path: Path) -> tuple[Check, Config | None]:
    try:
        config = load_config(path)
    except ConfigError as exc:
        fix = (
            f"cursor-byok init --provider NAME (anthropic, openai, openrouter, ...) writes {path}; "
            "or give yours with --config PATH"
            if not path.exists()
            else f"fix {path} (see config.example.toml)"
        )
        return Check(FAIL, "config", str(exc), fix=fix), None
    names = ", ".join(config.model_names())
    other = (
        "Cursor's backend"
        if config.route_other_models == "cursor"
        else 'refused with an error (route_other_models = "error")'
    )
    detail = f"models: {names}; runs on other models (Cursor's own): {other}"
    detail += f"; editor features: {describe_features(config.features)}"
    return Check(OK, f"config {path}", detail), config


def check_tab(config: Config) -> Check:
    """Where Tab goes: said plainly when it is still Cursor's (every keystroke's file)."""
    name = config.features.model_for("tab")
    if name is None:
        return Check(
            WARN,
            "Tab",
            'still goes to Cursor ([features] tab = "cursor"): the open file and your recent '
            "edits reach Cursor's servers on nearly every keystroke",
            fix="name a fast model in [features] tab, e.g. a local FIM model on Ollama or "
            'Codestral (cursor-byok init has presets; docs/providers.md "FIM")',
        )
    model = config.model(name)
    kind = config.providers[model.provider].kind if model is not None else "?"
    how = "fill-in-the-middle" if kind.endswith("-fim") else "a chat model, FIM prompt"
    return Check(OK, "Tab", f"on your model {name} ({kind}: {how}); nothing of it to Cursor")


def check_unused_providers(config: Config) -> list[Check]:
    """Providers no model routes to are not checked (their keys may well be missing)."""
    unused = config.unused_providers()
    if not unused:
        return []
    return [
        Check(
            OK,
            f"providers not checked: {', '.join(unused)}",
            "no model uses them (remove them, or add a [[models]] entry that does)",
        )
    ]


def check_spend(config: Config, data_dir: Path) -> list[Check]:
    """Each `[limits]` cap against what was spent: a warning from 80 % (config/spend.py)."""
    from cursor_byok.config.spend import WARN_SHARE
    from cursor_byok.config.spend import cap_statuses
    from cursor_byok.store.usage import UsageStore

    if not config.limits.caps() or not data_dir.is_dir():
        return []
    try:
        store = UsageStore(data_dir)
    except (OSError, ValueError, sqlite3.Error) as exc:
        return [Check(WARN, "spending caps", f"cannot read the usage database: {exc}")]
    try:
        statuses = cap_statuses(config, store, None)
    finally:
        store.close()
    checks = []
    for status in statuses:
        resets = f", resets {status.resets:%Y-%m-%d %H:%M}" if status.resets else ""
        detail = f"${status.spent:,.2f} of ${status.amount:,.2f} ({status.share:.0%}){resets}"
        if status.share >= WARN_SHARE:
            fix = "turns are refused at 100 %: raise the cap in [limits] or wait for the reset"
            checks.append(Check(WARN, f"spending cap {status.name}", detail, fix))
        else:
            checks.append(Check(OK, f"spending cap {status.name}", detail))
    return checks


def check_safety(config: Config, *, pinged: bool) -> list[Check]:
    """What makes this config unsafe or sure to fail (config/safety.py), each a warning with its
    fix (the doctor before a first run warns, it does not fail): a key variable not set (every
    turn would fail; the provider check says it when it pings), a key file others may read, a
    key sent over plain http:// to another machine."""
    from cursor_byok.config.safety import warnings

    findings = warnings(config)
    if not findings:
        plain = [
            name
            for name in config.used_providers()
            if config.providers[name].base_url.lower().startswith("http://")
        ]
        transit = (
            "encrypted in transit"
            if not plain
            else f"sent in plain http to this machine only ({', '.join(plain)})"
        )
        return [Check(OK, f"provider keys: set, in private files, {transit}")]
    checks = []
    for finding in findings:
        if finding.kind == "env" and pinged:
            continue  # the one-word request says so, with the same words
        title, _, fix = finding.text.partition("; ")
        checks.append(Check(WARN, title, fix=fix))
    return checks


async def _ping_model(config: Config, model: ModelConfig, timeout: float) -> Check:
    from cursor_byok.providers import ModelRequest
    from cursor_byok.providers import make_provider
    from cursor_byok.providers.provider_error import ProviderError

    provider_name = model.provider
    title = f"provider {provider_name} ({model.model}) for the model {model.name}"
    profile = config.providers[provider_name]
    # The same client the proxy uses (make_provider): the same proxy, CA file and timeouts.
    route = (
        f" through the proxy {profile.proxy}"
        if profile.proxy
        else " through the environment's proxy settings"
        if profile.proxy_from_env
        else ""
    )
    try:
        provider = make_provider(profile.settings())
    except (ConfigError, ValueError) as exc:
        return Check(FAIL, title, str(exc), fix="set the key named in the config")
    request = ModelRequest(
        model=model.model,
        system="Reply with one word.",
        messages=[{"role": "user", "content": "ping"}],
        max_output_tokens=16,
    )
    try:
        async with asyncio.timeout(timeout):
            async for _event in provider.stream(request):
                pass
    except ProviderError as exc:
        fix = {
            "auth": "check the API key (api_key_env / api_key_file)",
            "network": "check base_url and your network"
            + (", proxy and proxy_auth" if route else " (a proxy? set proxy)"),
            "invalid_request": "check the model id and params",
        }.get(exc.kind, "see the provider's message")
        if exc.reason == "tls":
            fix = "a company CA? set ca_file to its PEM file; else check base_url"
        return Check(FAIL, title, f"{exc.kind}: {exc.message}{route}", fix=fix)
    except TimeoutError:
        return Check(FAIL, title, f"no answer in {timeout:.0f}s", fix="check base_url")
    finally:
        await provider.aclose()
    return Check(OK, title, f"answered a one-word request{route}")


def check_providers(config: Config, timeout: float = 30.0) -> list[Check]:
    """Ask every configured model for one word, all at once (a wrong model id on a provider
    whose other model answers is found here, not at a turn)."""

    async def all_checks() -> list[Check]:
        pings = (_ping_model(config, model, timeout) for model in config.models)
        return list(await asyncio.gather(*pings))

    return asyncio.run(all_checks())
