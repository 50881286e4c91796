"""What `cursor-byok run` checks before it starts mitmproxy, so a setup problem is one line that
names our flag instead of a Python traceback or a Rust backtrace from deep inside mitmproxy.

Errors (the run stops, exit 2): the listen port or mitmweb's UI port is taken, the data dir or
mitmproxy's confdir cannot be written, `--local` without root on Linux. Warnings (the proxy
starts anyway, since some turns can still work): no config file, a config that does not load,
a provider key whose environment variable is not set. `service install` shares the key check:
a service never sees the shell's variables, so it says where the key must go instead.
"""

from __future__ import annotations

import os
import socket
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cursor_byok.config import Config
from cursor_byok.config import ConfigError
from cursor_byok.config import load_config
from cursor_byok.config.safety import warnings

WEB_PORT = 8081  # mitmweb's own default for its UI


@dataclass(frozen=True)
class MissingKey:
    """A provider whose key comes from an environment variable that is not set."""

    provider: str
    env: str
    models: tuple[str, ...]

    def line(self) -> str:
        return (
            f"{self.env} is not set, so turns on {', '.join(self.models)} (provider "
            f"{self.provider!r}) will end with an error in Cursor"
        )


def port_problem(host: str, port: int, flag: str = "--port") -> str | None:
    """Why `host:port` cannot be listened on, or None (port 0: the system picks, always free)."""
    if port == 0:
        return None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        if sys.platform != "win32":  # as mitmproxy binds: a port in TIME_WAIT is free
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            reason = exc.strerror or str(exc)
            return (
                f"cannot listen on {host}:{port} ({reason}): another program (or a running "
                f"cursor-byok: `cursor-byok doctor` says) has it; pick another with {flag}"
            )
    return None


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def pick_web_port(proxy_port: int, asked: int | None, host: str = "127.0.0.1") -> int:
    """mitmweb's UI port: the one asked for, else its default 8081 when that is free and not
    the proxy's own, else any free port (`run --web --port 8081` must not collide)."""
    if asked is not None:
        return asked
    if proxy_port != WEB_PORT and port_problem(host, WEB_PORT) is None:
        return WEB_PORT
    return free_port(host)


def dir_problem(path: Path, flag: str) -> str | None:
    """Why files cannot be written in `path` (created private when missing), or None."""
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".cursor-byok-check-"):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return f"{path} is not writable ({reason}): give another directory with {flag}"
    return None


def local_problem(platform: str = sys.platform, euid: int | None = None) -> str | None:
    """Local capture on Linux loads an eBPF redirector, which needs root."""
    if not platform.startswith("linux"):
        return None
    euid = os.geteuid() if euid is None else euid
    if euid == 0:
        return None
    return (
        "--local needs root on Linux (mitmproxy's redirector loads an eBPF program): run "
        "`sudo cursor-byok run --local`, or use the regular proxy (`cursor-byok run`)"
    )


def missing_keys(config: Config, environ: dict[str, str] | None = None) -> list[MissingKey]:
    """Providers in use whose `api_key_env` is not set in `environ`."""
    environ = dict(os.environ) if environ is None else environ
    out = []
    for name in config.used_providers():
        env = config.providers[name].api_key_env
        if env and not environ.get(env, "").strip():
            models = tuple(m.name for m in config.models if m.provider == name)
            out.append(MissingKey(name, env, models))
    return out


def config_warnings(path: Path, agent: str = "provider") -> list[str]:
    """What the proxy would only show in Cursor, turn after turn: said once, at start."""
    if agent == "scripted":
        return []
    if not path.exists():
        return [
            f"no config at {path}: create one with `cursor-byok init --provider NAME` "
            "(anthropic, openai, openrouter, ollama, ...), or give yours with --config PATH; "
            "until then every Agent turn ends with this error in Cursor"
        ]
    try:
        config = load_config(path)
    except ConfigError as exc:
        return [f"the config does not load, so Agent turns end with this error: {exc}"]
    missing = missing_keys(config)
    lines = [
        f"{key.line()}: export {key.env}=... in this shell before `cursor-byok run`, or use "
        "api_key_file in the config"
        for key in missing
    ]
    # and what makes the config unsafe (config/safety.py): a key file others may read, a key
    # sent unencrypted to another machine, a header's variable that is not set
    said = {key.env for key in missing}
    lines += [
        finding.text
        for finding in warnings(config)
        if finding.kind != "env" or not any(f" {env} is not set" in finding.text for env in said)
    ]
    return lines


def env_file(home: Path) -> Path:
    """The file the Linux user unit reads its environment from (`EnvironmentFile=`)."""
    return home / ".config" / "cursor-byok" / "env"


def _env_file_names(path: Path) -> set[str]:
    try:
        text = path.read_text()
    except OSError:
        return set()
    names = set()
    for line in text.splitlines():
        name, sep, value = line.strip().partition("=")
        if sep and value.strip() and not name.startswith("#"):
            names.add(name.strip().removeprefix("export ").strip())
    return names


def service_warnings(platform: str, home: Path, config_path: Path) -> list[str]:
    """Keys a service will not find: it never sees the shell's variables (an exported key
    works for `cursor-byok run` in that shell, not for the service)."""
    if not config_path.exists():
        return [
            f"no config at {config_path}: create one with `cursor-byok init --provider NAME` "
            "(or give yours to the service: `service install -- --config PATH`)"
        ]
    try:
        config = load_config(config_path)
    except ConfigError as exc:
        return [f"the config does not load: {exc}"]
    if platform == "linux":
        path = env_file(home)
        known = _env_file_names(path)
        return [
            f"{key.env} (provider {key.provider!r}) is not in {path}: the service does not "
            f"see your shell's variables, so put the line {key.env}=... there (chmod 600) "
            "and install again, or use api_key_file in the config"
            for key in missing_keys(config, {name: "set" for name in known})
        ]
    manager = "a LaunchAgent" if platform == "macos" else "a logon task"
    return [
        f"{key.env} (provider {key.provider!r}): {manager} has no shell environment, so the "
        f'service will not see it; use api_key_file = "..." in the config instead'
        for key in missing_keys(config, {})
    ]
