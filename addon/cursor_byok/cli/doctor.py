"""`cursor-byok doctor`: check a setup step by step, each check one ✔/✘ line with the fix.

Most support questions are one of: wrong Python or mitmproxy, a config typo, a provider key that
does not work, the CA not trusted, the port taken, or Cursor not sending its Agent calls through
the proxy. Each has a check here. The last one reads the activity file the
running proxy keeps in its data directory (`cursor_byok.store.activity`), so it works from a second
terminal; with `--watch N` it waits for an Agent call made after the doctor started.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sqlite3
import ssl
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cursor_byok.config import Config
from cursor_byok.config import ConfigError
from cursor_byok.config import ModelConfig
from cursor_byok.config import load_config
from cursor_byok.config.features import describe as describe_features
from cursor_byok.store.activity import ACTIVITY_FILE
from cursor_byok.store.activity import read_activity
from cursor_byok.store.census import census_lines
from cursor_byok.store.census import leaked
from cursor_byok.store.census import since

OK, WARN, FAIL = "ok", "warn", "fail"
__all__ = ["ACTIVITY_FILE", "Check", "run_doctor"]  # ACTIVITY_FILE: old import path, kept
WATCH_POLL = 0.2
CENSUS_SETTLE = 3.0  # seconds the census must stay still before the doctor reports it


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


def _der_certs(pem_text: str) -> set[bytes]:
    from cursor_byok.cli.trust import der_certs

    return der_certs(pem_text)


def check_ca(confdir: Path, first_run: bool = False) -> list[Check]:
    """The CA file, and where it is trusted; the fixes are `trust.py`'s, as `run` prints them.

    Before the first `run` there is no CA yet: that is a warning (the next step), not a
    failure."""
    from cursor_byok.cli import trust

    ca = confdir / "mitmproxy-ca-cert.pem"
    if not ca.exists():
        return [
            Check(
                WARN if first_run else FAIL,
                "mitmproxy CA",
                f"{ca} does not exist yet",
                fix="start the proxy once (cursor-byok run); it creates the CA, then "
                + trust.trust_command(confdir),
            )
        ]
    ours = _der_certs(ca.read_text())
    checks = [Check(OK, "mitmproxy CA", str(ca))]
    cafile = ssl.get_default_verify_paths().cafile
    trusted = False
    if sys.platform == "darwin" or sys.platform.startswith("win"):
        system = trust.status(confdir)[0]  # keychain / Root store, asked with their own tools
        trusted, cafile = bool(system.trusted), system.detail
    elif cafile and Path(cafile).exists():
        trusted = bool(ours & _der_certs(Path(cafile).read_text(errors="replace")))
    checks.append(
        Check(OK, "CA in the system trust store")
        if trusted
        else Check(
            WARN,
            "CA not found in the system trust store",
            f"looked in {cafile}" if cafile else "no default CA file",
            fix=f"{trust.trust_command(confdir)} (not needed in reverse mode)",
        )
    )
    if sys.platform == "linux":
        checks.append(check_nss(ca, fix=trust.trust_command(confdir)))
    extra = os.environ.get("NODE_EXTRA_CA_CERTS")
    if (
        extra
        and Path(extra).expanduser().exists()
        and ours & _der_certs(Path(extra).expanduser().read_text(errors="replace"))
    ):
        checks.append(Check(OK, "NODE_EXTRA_CA_CERTS points at the CA"))
    else:
        checks.append(
            Check(
                WARN,
                "NODE_EXTRA_CA_CERTS is not the mitmproxy CA",
                fix="start Cursor with NODE_EXTRA_CA_CERTS="
                + trust.node_ca_path(trust.system_store(), ca),
            )
        )
    return checks


def check_nss(ca: Path, nssdb: Path | None = None, fix: str = "") -> Check:
    """Linux: Chromium/Electron (Cursor's window) read the user's NSS database, not the bundle."""
    from cursor_byok.cli import trust

    nssdb = nssdb or trust.invoking_user().home / ".pki" / "nssdb"
    listed, detail = trust.nss_status(nssdb, ca)
    if listed:
        return Check(OK, "CA in the NSS database (Chromium/Electron)", detail)
    return Check(
        WARN,
        "CA not in the NSS database (Chromium/Electron)",
        detail,
        fix=(fix or "cursor-byok trust install")
        + " (needs certutil: apt-get install libnss3-tools)",
    )


def check_local_capture(
    platform: str = sys.platform,
    release: str | None = None,
    exists: Callable[[str], bool] = os.path.exists,
    which: Callable[[str], str | None] | None = None,
) -> Check:
    """Whether `run --local` can work here (mitmproxy's Linux redirector: sudo, eBPF with BTF)."""
    import shutil

    title = "local capture (run --local)"
    if platform != "linux":
        return Check(OK, title, "macOS: network extension; Windows: WinDivert (needs admin)")
    release = release or os.uname().release
    reasons = []
    if "microsoft" in release.lower():
        reasons.append("WSL is not supported")
    try:
        major, minor = (int(x) for x in release.split("-")[0].split(".")[:2])
        if (major, minor) < (6, 8):
            reasons.append(f"kernel {major}.{minor} < 6.8")
    except ValueError:
        pass
    if not exists("/sys/kernel/btf/vmlinux"):
        reasons.append("no BTF (/sys/kernel/btf/vmlinux): the eBPF redirector cannot load")
    if (which or shutil.which)("sudo") is None:
        reasons.append("mitmproxy's redirector is started with sudo, which is not on PATH")
    if reasons:
        return Check(
            WARN,
            f"{title} cannot run here",
            "; ".join(reasons),
            fix="use the regular proxy or cursor-byok run --transparent",
        )
    return Check(
        OK, title, "kernel, BTF and sudo present (a sandbox may still refuse the eBPF load)"
    )


def check_data_dir(data_dir: Path, min_free_mb: int = 64) -> Check:
    """The store's size (the proxy keeps blobs and media under their caps), and its disk."""
    from cursor_byok.store.files import low_space
    from cursor_byok.store.sizes import sizes_line

    title = f"data dir {data_dir}"
    if not data_dir.is_dir():
        return Check(OK, title, "not created yet (the proxy makes it at start)")
    detail = sizes_line(data_dir)
    full = low_space(data_dir, min_free_mb)
    if full is not None:
        return Check(WARN, title, f"{detail}; {full}", fix=f"free some space on {data_dir}'s disk")
    return Check(OK, title, detail)


def check_port(host: str, port: int, data_dir: Path | None = None) -> Check:
    """Whether the port is free, or taken by the cursor-byok proxy of this data dir (its
    activity record names its pid and port), or by something else."""
    with socket.socket() as sock:
        try:
            sock.bind((host, port))
        except OSError as exc:
            ours = _proxy_on(port, data_dir) if data_dir is not None else None
            if ours is not None:
                return Check(OK, f"port {host}:{port}: the cursor-byok proxy runs there", ours)
            return Check(
                WARN,
                f"port {host}:{port} is in use",
                (exc.strerror or "") + ", not by a cursor-byok proxy with this data dir",
                fix="stop what runs there, or start cursor-byok with --port N (and give the "
                "doctor the same --port)",
            )
    return Check(OK, f"port {host}:{port} is free")


def _proxy_on(port: int | None, data_dir: Path) -> str | None:
    """`pid N` when the activity record says a live cursor-byok proxy listens on `port` (any
    port: None)."""
    activity, _stamp = read_activity(data_dir)
    if not activity or (port is not None and activity.get("listen_port") != port):
        return None
    pid = activity.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, someone else's
    return f"pid {pid}"


def _agent_line(activity: dict) -> str:
    how = " / ".join(x for x in (activity.get("last_transport"), activity.get("last_route")) if x)
    return f"last at {activity.get('last_agent_call', '?')}" + (f" via {how}" if how else "")


def check_activity(
    data_dir: Path,
    watch: float,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.time,
) -> Check:
    """Whether Cursor's Agent calls reach the running proxy.

    Without `watch`, what the record says (calls may be from an earlier session). With `watch`,
    wait up to that many seconds for an Agent call made after this check started, and say which
    transport and route it took.
    """
    path = data_dir / ACTIVITY_FILE
    if watch > 0:
        return _watch_activity(data_dir, watch, sleep, clock)
    activity, _stamp = read_activity(data_dir)
    if activity is None:
        return Check(
            WARN,
            "the proxy has not run yet with this data dir",
            f"no {path}",
            fix="start it (cursor-byok run), send a message in Cursor's Agent, then run the "
            "doctor again",
        )
    if activity.get("agent_calls", 0) > 0:
        return Check(OK, "Agent calls arrive", f"{_counted(activity)}, {_agent_line(activity)}")
    return _no_agent_calls(activity)


def _counted(activity: dict) -> str:
    """`3 Agent turns (41 calls)`: a turn is one stream; its many uploads are calls."""
    calls = activity.get("agent_calls", 0)
    if "agent_turns" not in activity:  # a proxy before turns were counted
        return f"{calls} Agent calls"
    turns = activity["agent_turns"]
    return f"{turns} Agent turn{'s' if turns != 1 else ''} ({calls} calls)"


def _no_agent_calls(activity: dict, other_calls: int | None = None) -> Check:
    others = activity.get("other_cursor_calls", 0) if other_calls is None else other_calls
    if others > 0:
        return Check(
            FAIL,
            "Cursor talks to the proxy, but no Agent calls arrived",
            f"{others} other Cursor calls seen",
            fix="fully restart Cursor; if Agent calls still bypass the proxy (some Cursor builds "
            "do), use local capture (cursor-byok run --local) or transparent mode",
        )
    return Check(
        FAIL,
        "no Cursor traffic reached the proxy",
        fix='set "http.proxy" and "http.proxySupport" in Cursor, trust the CA, restart Cursor',
    )


def _is_new(activity: dict | None, stamp: float, before: dict | None, started: float) -> bool:
    """An Agent call after `started`: by its time, or (older proxies) by count and file time."""
    if not activity or activity.get("agent_calls", 0) <= 0:
        return False
    if "last_agent_at" in activity:
        return float(activity["last_agent_at"]) > started
    # File times come from a coarse kernel clock: allow a little slack; the count decides.
    counted_before = (before or {}).get("agent_calls", 0)
    return stamp >= started - 1.0 and activity["agent_calls"] != counted_before


def _watch_activity(
    data_dir: Path, watch: float, sleep: Callable[[float], None], clock: Callable[[], float]
) -> Check:
    started = clock()
    before, _ = read_activity(data_dir)
    legacy = before is not None and not isinstance(before.get("pid"), int)  # no pid: wait
    if not legacy and _proxy_on(None, data_dir) is None:  # nothing to wait for: say so now
        return Check(
            FAIL,
            "no cursor-byok proxy runs with this data dir",
            f"{data_dir}: "
            + ("no activity record" if before is None else "the proxy that wrote it has exited"),
            fix="start the proxy (cursor-byok run) with this data dir, then run the doctor "
            "with --watch again and send a message in Cursor's Agent while it waits",
        )
    deadline = started + watch
    activity = before
    while True:
        activity, stamp = read_activity(data_dir)
        if _is_new(activity, stamp, before, started):
            assert activity is not None
            waited = max(float(activity.get("last_agent_at", clock())) - started, 0.0)
            return Check(
                OK,
                "a new Agent call arrived",
                f"after {waited:.1f}s, {_agent_line(activity)}",
            )
        if clock() >= deadline:
            break
        sleep(min(WATCH_POLL, max(deadline - clock(), 0.0)))
    title = f"no new Agent call in {watch:g}s"
    if activity is None:
        return Check(
            FAIL,
            title,
            f"no activity record at {data_dir / ACTIVITY_FILE} (is the proxy running, with this "
            "data dir?)",
            fix="start the proxy (cursor-byok run) with this data dir, then send a message in "
            "Cursor's Agent while the doctor waits",
        )
    others = activity.get("other_cursor_calls", 0) - (before or {}).get("other_cursor_calls", 0)
    if others > 0:
        check = _no_agent_calls(activity, others)
        return Check(check.status, title, f"{others} other Cursor calls arrived", check.fix)
    return Check(
        FAIL,
        title,
        "no Cursor call reached the proxy while waiting",
        fix="send a message in Cursor's Agent while the doctor waits; if it still does not "
        'arrive, check "http.proxy" in Cursor and restart Cursor',
    )


def check_census(
    data_dir: Path,
    before: dict | None,
    settle: float = 0.0,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.time,
) -> Check | None:
    """What Cursor sent to the running proxy (since `before`, the census when the doctor
    started watching): every RPC path and what became of it, the transport of every Agent call,
    cases and fields of its messages cursor-byok does not model, ids nothing resolved. With
    `settle`, first wait (up to that long) until the record stops changing: a turn's calls come
    over seconds. A warning when something is not modelled or unresolved: a Cursor update may
    have added it (docs/protocol.md §15)."""
    deadline = clock() + settle
    activity, _ = read_activity(data_dir)
    last, still_since = (activity or {}).get("census"), clock()
    while settle > 0 and clock() < deadline and clock() - still_since < CENSUS_SETTLE:
        sleep(min(WATCH_POLL, max(deadline - clock(), 0.0)))
        activity, _ = read_activity(data_dir)
        now = (activity or {}).get("census")
        if now != last:
            last, still_since = now, clock()
    if not last:
        return None
    seen = since(last, before) if before is not None else last
    lines = census_lines(seen)
    if not lines:
        return Check(OK, "Cursor RPC census", "nothing new since the doctor started")
    new = bool(seen.get("unmodelled") or seen.get("unresolved"))
    sent = leaked(seen)
    fix = (
        "update cursor-byok, or report what is not modelled with `cursor-byok doctor "
        "--watch 60` output attached"
    )
    if sent:
        fix = (
            f'{sent} bytes of BYOK conversations went to Cursor although privacy = "local": '
            'the proxy log names the call ("a call cursor-byok does not answer named BYOK '
            'conversation"); report it with that line'
        )
    return Check(
        WARN if new or sent else OK,
        "Cursor RPC census" + (" since the doctor started" if before is not None else ""),
        "\n    " + "\n    ".join(lines),
        fix=fix,
    )


def run_doctor(
    *,
    config_path: Path,
    confdir: Path,
    data_dir: Path,
    host: str = "127.0.0.1",
    port: int = 8080,
    providers: bool = True,
    watch: float = 0.0,
    first_run: bool = False,
    out: Callable[[str], None] | None = None,
) -> int:
    """Run every check, print one line each; exit code 1 when any check failed.

    `first_run` (after `init`): the proxy has not run yet, so a missing CA is only a warning and
    there is no traffic to look at.
    """
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=True)  # one line per check, whatever the width
    emit = out or console.print
    marks = {OK: "[green]✔[/green]", WARN: "[yellow]![/yellow]", FAIL: "[red]✘[/red]"}
    checks: list[Check] = []

    def report(*new: Check) -> None:
        for check in new:
            checks.append(check)
            line = f"{marks[check.status]} {check.title}"
            if check.detail:
                line += f" — {check.detail}"
            if check.fix and check.status != OK:
                line += f"\n    fix: {check.fix}"
            emit(line)

    report(check_python(), check_mitmproxy())
    config_check, config = check_config(config_path)
    report(config_check)
    if config is not None and providers and config.used_providers():
        count = len(config.models)
        emit(
            f"… asking the provider{'s' if len(config.used_providers()) > 1 else ''} "
            f"({', '.join(config.used_providers())}) for a one-word answer from each of the "
            f"{count} model{'s' if count != 1 else ''} (up to 30s)"
        )
        report(*check_providers(config))
    if config is not None:
        report(*check_safety(config, pinged=providers))
        report(*check_spend(config, data_dir))
        report(*check_unused_providers(config))
        report(check_tab(config))
    # No activity record: the proxy never ran with this data dir, so no CA yet is "not yet".
    never_ran = read_activity(data_dir)[0] is None
    report(*check_ca(confdir, first_run or never_ran))
    report(check_local_capture())
    report(check_data_dir(data_dir))
    report(check_port(host, port, data_dir))
    if watch > 0:
        emit(f"… waiting up to {watch:g}s for a new Agent call: send a message in Cursor's Agent")
    if not first_run:
        before = (read_activity(data_dir)[0] or {}).get("census", {}) if watch > 0 else None
        started = time.monotonic()
        report(check_activity(data_dir, watch))
        left = max(watch - (time.monotonic() - started), 0.0)
        census = check_census(data_dir, before, settle=min(left, 10.0) if watch > 0 else 0.0)
        if census is not None:
            report(census)
    failed = sum(c.status == FAIL for c in checks)
    emit(f"{len(checks) - failed} of {len(checks)} checks passed" + (" (see ✘)" if failed else ""))
    return 1 if failed else 0
