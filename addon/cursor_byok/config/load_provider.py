"""Reading one `[providers.NAME]` table: kind, URL, key sources, timeouts, the proxy and the
headers (credentials only as references). Kept apart from `load.py`, which calls `provider`, so
each part stays one screen; every problem is a `ConfigError` naming the key.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cursor_byok.config import load_routing
from cursor_byok.config.settings import ProviderConfig
from cursor_byok.config.settings import SecretRef
from cursor_byok.config.validate import Fail
from cursor_byok.config.validate import is_int
from cursor_byok.config.validate import is_positive
from cursor_byok.config.validate import unknown
from cursor_byok.providers import PROVIDER_KINDS
from cursor_byok.secrets import is_secret_header

PROVIDER_KEYS = {
    "kind",
    "base_url",
    "api_key_env",
    "api_key_file",
    "headers",
    "connect_timeout",
    "read_timeout",
    "max_retries",
    "proxy",
    "proxy_auth",
    "proxy_from_env",
    "ca_file",
    "extra_body",
    "reasoning_passback",
    "first_token_timeout",
    "idle_timeout",
    "send_metadata",
}
_HEADER_REF_KEYS = {"env", "file", "prefix"}
_PASSBACKS = (None, "reasoning_content", "reasoning", "reasoning_details")
_TIMEOUTS = ("connect_timeout", "read_timeout", "first_token_timeout", "idle_timeout")


def provider(name: str, table: Any, fail: Fail) -> ProviderConfig:
    """`[providers.NAME]` as a `ProviderConfig`; the first problem found raises."""
    prefix = f"providers.{name}."
    if not isinstance(table, dict):
        raise fail(f"providers.{name}", "must be a table")
    if "api_key" in table:
        raise fail(prefix + "api_key", "put the key in api_key_env or api_key_file")
    unknown(table, PROVIDER_KEYS, prefix, fail)
    kind = table.get("kind")
    if kind not in PROVIDER_KINDS:
        raise fail(prefix + "kind", f"must be one of {', '.join(PROVIDER_KINDS)} (got {kind!r})")
    base_url = table.get("base_url")
    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
        raise fail(prefix + "base_url", "must be an http:// or https:// URL")
    key_env, key_file, pool = load_routing.key_sources(table, prefix, fail)
    if not isinstance(table.get("send_metadata", False), bool):
        raise fail(prefix + "send_metadata", "must be true or false")
    for key in ("proxy", "reasoning_passback", "ca_file"):
        if table.get(key) is not None and not isinstance(table[key], str):
            raise fail(prefix + key, "must be a string")
    proxy, proxy_auth = _proxy(table, prefix, fail)
    ca_file = _ca_file(table.get("ca_file"), prefix + "ca_file", fail)
    _check_settings(table, prefix, fail)
    return ProviderConfig(
        name=name,
        kind=kind,
        base_url=base_url.rstrip("/"),
        api_key_env=key_env,
        api_key_file=Path(key_file) if key_file else None,
        headers=_headers(table.get("headers", {}), prefix + "headers.", fail),
        connect_timeout=float(table.get("connect_timeout", 10.0)),
        read_timeout=float(table.get("read_timeout", 300.0)),
        max_retries=table.get("max_retries", 2),
        proxy=proxy,
        proxy_auth=proxy_auth,
        proxy_from_env=table.get("proxy_from_env", False),
        ca_file=ca_file,
        extra_body=dict(table.get("extra_body", {})),
        reasoning_passback=table.get("reasoning_passback"),
        first_token_timeout=float(table.get("first_token_timeout", 120.0)),
        idle_timeout=float(table.get("idle_timeout", 600.0)),
        key_pool=pool,
        send_metadata=table.get("send_metadata", False),
    )


def _check_settings(table: dict, prefix: str, fail: Fail) -> None:
    """The passback field's name, the timeouts, the retries and the two free-form tables."""
    if table.get("reasoning_passback") not in _PASSBACKS:
        raise fail(
            prefix + "reasoning_passback",
            "must be reasoning_content, reasoning or reasoning_details",
        )
    for key in _TIMEOUTS:
        if not is_positive(table.get(key, 1)):
            raise fail(prefix + key, "must be a positive number of seconds")
    retries = table.get("max_retries", 2)
    if not is_int(retries) or not 0 <= retries <= 10:
        raise fail(prefix + "max_retries", "must be an integer from 0 to 10")
    for key in ("headers", "extra_body"):
        if not isinstance(table.get(key, {}), dict):
            raise fail(prefix + key, "must be a table")


def _proxy(table: dict, prefix: str, fail: Fail) -> tuple[str | None, SecretRef | None]:
    """`proxy` (an http:// or https:// URL without credentials), its `proxy_auth` reference,
    or `proxy_from_env`; not the environment and an explicit proxy at once."""
    proxy = table.get("proxy")
    if not isinstance(table.get("proxy_from_env", False), bool):
        raise fail(prefix + "proxy_from_env", "must be true or false")
    if proxy is not None:
        parts = urlsplit(proxy)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise fail(prefix + "proxy", "must be an http:// or https:// URL (http://host:port)")
        if parts.username or parts.password:
            raise fail(
                prefix + "proxy",
                'has credentials in it; use proxy_auth = { env = "VAR" } or '
                '{ file = "PATH" } (the value "user:password"), like api_key_env / api_key_file',
            )
        try:
            parts.port  # noqa: B018 - raises for a bad port
        except ValueError:
            raise fail(prefix + "proxy", "has a bad port") from None
        if parts.path not in ("", "/") or parts.query:
            raise fail(prefix + "proxy", "must be only scheme://host:port")
        if table.get("proxy_from_env"):
            raise fail(prefix + "proxy_from_env", "set proxy or proxy_from_env, not both")
    auth = table.get("proxy_auth")
    if auth is None:
        return proxy, None
    key = prefix + "proxy_auth"
    if proxy is None and not table.get("proxy_from_env"):
        raise fail(key, "needs a proxy (set proxy, or proxy_from_env)")
    if not isinstance(auth, dict):
        raise fail(
            key,
            'credentials may not be written in the config; use { env = "VAR" } or '
            '{ file = "PATH" } whose value is "user:password"',
        )
    unknown(auth, {"env", "file"}, key + ".", fail)
    env, file = auth.get("env"), auth.get("file")
    if (env is None) == (file is None):
        raise fail(key, 'give exactly one of env = "VAR" or file = "PATH"')
    source = env if env is not None else file
    if not isinstance(source, str) or not source:
        raise fail(key, "env and file must be non-empty strings")
    return proxy, SecretRef(env=env, file=Path(file) if file else None)


def _ca_file(value: str | None, key: str, fail: Fail) -> Path | None:
    """A readable PEM bundle (checked now, so a typo is a config error, not a failed turn)."""
    if value is None:
        return None
    path = Path(value).expanduser()
    try:
        ssl.create_default_context(cafile=str(path))
    except ssl.SSLError as exc:  # an OSError too: first
        raise fail(key, f"{value}: not a PEM file of CA certificates ({exc.reason})") from None
    except FileNotFoundError:
        raise fail(key, f"{value}: no such file") from None
    except OSError as exc:
        raise fail(key, f"{value}: cannot read: {exc.strerror}") from None
    return Path(value)


def _headers(table: dict, prefix: str, fail: Fail) -> dict[str, str | SecretRef]:
    """Plain values for ordinary headers; credentials only as { env = ... } or { file = ... }."""
    headers: dict[str, str | SecretRef] = {}
    for name, value in table.items():
        key = prefix + str(name)
        if isinstance(value, dict):
            unknown(value, _HEADER_REF_KEYS, key + ".", fail)
            env, file, pre = value.get("env"), value.get("file"), value.get("prefix", "")
            if (env is None) == (file is None):
                raise fail(key, 'give exactly one of env = "VAR" or file = "PATH"')
            source = env if env is not None else file
            if not isinstance(source, str) or not source or not isinstance(pre, str):
                raise fail(key, "env, file and prefix must be strings")
            headers[str(name)] = SecretRef(env=env, file=Path(file) if file else None, prefix=pre)
        elif is_secret_header(str(name)):
            raise fail(
                key,
                "looks like a credential, so it may not be written in the config; use "
                '{ env = "VAR" } or { file = "PATH" } (optionally with prefix = "Bearer "), '
                "like api_key_env / api_key_file",
            )
        elif isinstance(value, str | int | float) and not isinstance(value, bool):
            headers[str(name)] = str(value)
        else:
            raise fail(key, "must be a string, or a table { env = ... } / { file = ... }")
    return headers
