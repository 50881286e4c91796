"""What makes a configuration unsafe to run with, found before the first turn is.

The config says where the user's key goes (`base_url`), so whoever can edit the file can have
the key sent to a server of their own: a config file other users may write is refused
(`refuse_shared`, on every load and reload), and so is one another user owns. Three more things
do not stop the proxy but are worth a line at `cursor-byok run` and in `cursor-byok doctor`
(`warnings`), each with its fix:
a key file other users may read, a key sent over plain `http://` to another machine, and a key
environment variable that is not set (every turn on that provider would fail, and before this
only the first turn said so).
"""

from __future__ import annotations

import ipaddress
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from cursor_byok.config.settings import Config
from cursor_byok.config.settings import ConfigError
from cursor_byok.config.settings import ProviderConfig
from cursor_byok.config.settings import SecretRef
from cursor_byok.secrets import is_secret_header

_LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost", "ip6-loopback"})


def refuse_shared(path: Path, status: os.stat_result, uid: int | None = None) -> None:
    """Refuse a config file that users other than its owner may write (POSIX modes), or that
    another user owns (its owner can rewrite it whatever its mode; root excepted, as ssh does).
    `status` is of the file read, so a symlink is judged by the file it names. `uid` is the
    user the proxy runs as (default: this process's)."""
    if os.name != "posix":
        return
    me = os.getuid() if uid is None else uid
    if status.st_uid not in (me, 0):
        raise ConfigError(
            f"{path}: owned by another user (uid {status.st_uid}, you are {me}), who could "
            f"point base_url at their server and receive your key; not loaded: use a config "
            f"of your own (cursor-byok init), or chown {me} {path}"
        )
    if not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return
    who = "anyone" if status.st_mode & stat.S_IWOTH else "its group"
    raise ConfigError(
        f"{path}: writable by {who} (mode {_mode(status)}), so another user could point "
        f"base_url at their server and receive your key; not loaded: run chmod 600 {path}"
    )


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing to say about a config: `kind` is "env" (a variable is not set: turns will
    fail), "file" (a key file others may read) or "plaintext" (a key sent over http://)."""

    kind: str
    text: str

    def __str__(self) -> str:
        return self.text


def warnings(config: Config, environ: Mapping[str, str] | None = None) -> list[Finding]:
    """One finding each, with its fix, for the providers a model uses (the others never run)."""
    env = os.environ if environ is None else environ
    lines: list[Finding] = []
    for name in config.used_providers():
        provider = config.providers[name]
        lines += _missing_env(provider, env)
        lines += _readable_files(provider)
        lines += _plaintext(provider)
    return lines


def _missing_env(provider: ProviderConfig, env: Mapping[str, str]) -> list[Finding]:
    names = [provider.api_key_env] if provider.api_key_env else []
    names += [ref.env for ref in provider.key_pool if ref.env]  # a key pool's every key
    names += [ref.env for ref in _refs(provider) if ref.env]
    return [
        Finding(
            "env",
            f"provider {provider.name!r}: environment variable {var} is not set, so every turn "
            f"on it fails; export {var}=... before starting the proxy (a service reads "
            "~/.config/cursor-byok/env), or use api_key_file",
        )
        for var in dict.fromkeys(names)
        if not env.get(var, "").strip()
    ]


def _readable_files(provider: ProviderConfig) -> list[Finding]:
    files = [provider.api_key_file] if provider.api_key_file else []
    files += [ref.file for ref in provider.key_pool if ref.file]
    files += [ref.file for ref in _refs(provider) if ref.file]
    lines = []
    for file in dict.fromkeys(files):
        path = Path(file).expanduser()
        try:
            status = path.stat()
        except OSError:
            continue  # a missing file is the turn's error, with the reason
        if os.name == "posix" and status.st_mode & (stat.S_IRGRP | stat.S_IROTH):
            lines.append(
                Finding(
                    "file",
                    f"provider {provider.name!r}: the key file {path} is readable by other "
                    f"users (mode {_mode(status)}); run chmod 600 {path}",
                )
            )
    return lines


def _plaintext(provider: ProviderConfig) -> list[Finding]:
    parts = urlsplit(provider.base_url)
    if parts.scheme != "http" or _loopback(parts.hostname or ""):
        return []
    sends_key = bool(provider.api_key_env or provider.api_key_file) or any(
        is_secret_header(name) for name in provider.headers
    )
    if not sends_key:
        return []
    return [
        Finding(
            "plaintext",
            f"provider {provider.name!r}: base_url {provider.base_url} sends the key "
            f"unencrypted to {parts.hostname}; use https:// (plain http:// only to this machine)",
        )
    ]


def _refs(provider: ProviderConfig) -> list[SecretRef]:
    refs = [v for v in provider.headers.values() if isinstance(v, SecretRef)]
    if provider.proxy_auth is not None:
        refs.append(provider.proxy_auth)
    return refs


def _loopback(host: str) -> bool:
    """A host name that is this machine: `localhost` and its kin, or a loopback IP address
    (`127.0.0.1.evil.example` is a name anyone can register, not loopback)."""
    host = host.strip("[]").lower().rstrip(".")
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _mode(status: os.stat_result) -> str:
    return f"{stat.S_IMODE(status.st_mode):04o}"


__all__ = ["Finding", "refuse_shared", "warnings"]
