"""`cursor-byok run`: start mitmdump with our addons and the options each run mode needs.

Regular proxy mode limits interception to Cursor's API hosts (`--allow-hosts`), so every other
connection is tunnelled without ever being decrypted; reverse mode needs no CA at all. The setup
steps for Cursor are printed before mitmdump starts, because they are what users get wrong.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cursor_byok.cli.transparent import DEFAULT_REDIRECT_HOSTS
from cursor_byok.config import default_config_path

CURSOR_API = "https://api2.cursor.sh"
ALLOW_HOSTS = r"^(.+\.)?cursor\.sh:443$"
SCRIPT = Path(__file__).parents[1] / "proxy" / "script.py"
WEB_SCRIPT = Path(__file__).parents[1] / "proxy" / "webview.py"
LOG_BYTES = 5_000_000
LOG_BACKUPS = 3
# Local capture: Cursor's processes. Its Agent traffic comes from "Cursor" and from its Electron
# helpers "Cursor Helper" and "Cursor Helper (Plugin)" (macOS, Windows), and on Linux from the
# `cursor` binary. Each name is a substring of a process name or path (a regular expression on
# macOS, so none may contain a metacharacter: "Cursor Helper" covers both helpers), and the proxy
# itself (which may run from a path with "cursor-byok" in it) is never captured.
CURSOR_PROCESSES = ("Cursor", "Cursor Helper", "cursor")
NEVER_CAPTURED = ("cursor-byok",)
LOCAL_SPEC = ",".join([*CURSOR_PROCESSES, *(f"!{name}" for name in NEVER_CAPTURED)])


@dataclass(frozen=True)
class RunOptions:
    host: str = "127.0.0.1"
    port: int = 8080
    mode: str = "regular"  # regular | reverse | local | transparent
    upstream: str = CURSOR_API  # reverse mode target
    local_process: str = LOCAL_SPEC  # local capture: mitmproxy's process spec
    config: Path | None = None
    agent: str = "provider"
    data_dir: Path | None = None
    confdir: Path | None = None
    quiet: bool = False
    extra: tuple[str, ...] = ()
    log_file: Path | None = None  # write output there, rotated (services without a journal)
    web: bool = False  # mitmweb instead of mitmdump: watch the flows in a browser
    redirect_hosts: tuple[str, ...] = DEFAULT_REDIRECT_HOSTS  # transparent: port 443 redirected
    print_rules: bool = False  # transparent: show the redirect rules, start nothing
    web_port: int | None = None  # mitmweb's UI (with `web`); None: 8081 if free, else any


def ipv6_loopback() -> bool:
    """Whether ::1 can be bound (transparent mode then also takes redirected IPv6 connections)."""
    import socket

    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


def mitmdump_executable(name: str = "mitmdump") -> str:
    beside = Path(sys.executable).with_name(name)
    return str(beside) if beside.exists() else (shutil.which(name) or name)


def mitmdump_args(opts: RunOptions, ipv6: bool = False) -> list[str]:
    """The full mitmdump (or, with `web`, mitmweb) command line for one run mode (`ipv6`:
    transparent mode also listens on ::1)."""
    program = mitmdump_executable("mitmweb" if opts.web else "mitmdump")
    args = [program, "--listen-host", opts.host, "-p", str(opts.port)]
    args += _unless_set(opts.extra, "connection_strategy=lazy")
    if opts.mode == "reverse":
        args += ["--mode", f"reverse:{opts.upstream}"]
    elif opts.mode == "local":
        args += ["--mode", f"local:{opts.local_process}", "--allow-hosts", ALLOW_HOSTS]
    elif opts.mode == "transparent":
        args += ["--mode", "transparent", "--allow-hosts", ALLOW_HOSTS]
        if ipv6 and opts.host == "127.0.0.1":  # the kernel redirects IPv6 connections to ::1
            args += ["--mode", f"transparent@::1:{opts.port}"]
    else:
        args += ["--allow-hosts", ALLOW_HOSTS]
    args += ["--set", f"cursor_byok_config={opts.config or default_config_path()}"]
    args += ["--set", f"cursor_byok_agent={opts.agent}"]
    if opts.data_dir:
        args += ["--set", f"cursor_byok_data_dir={opts.data_dir}"]
    if opts.confdir:
        args += ["--set", f"confdir={opts.confdir}"]
    if opts.quiet:
        args += _unless_set(opts.extra, "cursor_byok_status=false")
    args += [*_unless_set(opts.extra, "flow_detail=0"), "-s", str(SCRIPT)]
    if opts.web:
        # Keep our synthesised RunSSE streams for the flow view, and decode Connect bodies.
        args += [*_unless_set(opts.extra, "store_streamed_bodies=true"), "-s", str(WEB_SCRIPT)]
        if opts.web_port is not None and not _sets(opts.extra, "web_port"):
            args += ["--set", f"web_port={opts.web_port}"]
            args += _unless_set(opts.extra, "web_host=127.0.0.1")
    return [*args, *opts.extra]


def _sets(extra: tuple[str, ...], option: str) -> bool:
    """Whether the extra mitmdump arguments set `option` themselves (theirs wins)."""
    return any(name == option for name, _value in _settings(extra))


def _unless_set(extra: tuple[str, ...], setting: str) -> list[str]:
    """`--set setting`, unless the extra arguments set that option (mitmproxy refuses an
    option given twice: theirs wins)."""
    return [] if _sets(extra, setting.split("=", 1)[0]) else ["--set", setting]


def _normal(extra: Sequence[str]) -> list[str]:
    """mitmdump arguments with each `--set=NAME=VALUE` split into `--set`, `NAME=VALUE`."""
    out: list[str] = []
    for arg in extra:
        out += ["--set", arg.removeprefix("--set=")] if arg.startswith("--set=") else [arg]
    return out


def _settings(extra: Sequence[str]) -> list[tuple[str, str]]:
    """The `--set NAME=VALUE` pairs among mitmdump arguments."""
    args = _normal(extra)
    pairs = [args[i + 1].partition("=") for i, a in enumerate(args[:-1]) if a == "--set"]
    return [(name, value) for name, _eq, value in pairs]


# Options `run` sets from flags of its own. The same option set again after `--` would reach
# mitmproxy twice, which it refuses (and before OptionCheck, silently served nothing): the
# `--set` is taken as the flag instead, or refused in one line naming the flag.
OWN_FLAGS = {
    "cursor_byok_config": ("--config", "config"),
    "cursor_byok_data_dir": ("--data-dir", "data_dir"),
    "confdir": ("--confdir", "confdir"),
    "cursor_byok_agent": ("--agent", "agent"),
}
AGENTS = ("provider", "scripted")


def take_own_settings(opts: RunOptions) -> tuple[RunOptions, str | None]:
    """`opts` with every `--set` of an option in OWN_FLAGS moved from `extra` to its field;
    the one-line problem when it contradicts the flag (or names no agent)."""
    import dataclasses

    args, extra = _normal(opts.extra), []
    changes: dict[str, Any] = {}
    given = {field: getattr(opts, field) for _flag, field in OWN_FLAGS.values()}
    given["agent"] = None if opts.agent == RunOptions.agent else opts.agent
    i = 0
    while i < len(args):
        setting = args[i + 1] if args[i] == "--set" and i + 1 < len(args) else ""
        name, _eq, value = setting.partition("=")
        if name not in OWN_FLAGS:
            extra.append(args[i])
            i += 1
            continue
        i += 2
        flag, field = OWN_FLAGS[name]
        if field == "agent" and value not in AGENTS:
            return opts, f"--set {name}={value}: use {flag} {' or '.join(AGENTS)}"
        wanted = value if field == "agent" else Path(value).expanduser()
        before = changes.get(field, given[field])
        if before is not None and before != wanted:
            return opts, (
                f"--set {name}={value} after `--` and {flag} {before} name two different "
                f"things: give it once, with {flag}"
            )
        changes[field] = wanted
    return dataclasses.replace(opts, extra=tuple(extra), **changes), None


def setup_text(opts: RunOptions) -> str:
    """What the user must do in Cursor for this mode (printed at start)."""
    confdir = opts.confdir or Path.home() / ".mitmproxy"
    ca = confdir / "mitmproxy-ca-cert.pem"
    url = f"http://{opts.host}:{opts.port}"
    if opts.mode == "reverse":
        return (
            f"Reverse mode: cursor-byok answers at {url} and forwards everything else to "
            f"{opts.upstream}.\nStart Cursor with its backend pointed here, e.g.\n"
            f"  CURSOR_API_BASE_URL={url} cursor   (or: cursor --test-backend-url={url})\n"
            "No certificate is needed for Cursor in this mode.\n"
            f"Agents built with Cursor's SDK (cursor-sdk, @cursor/sdk): CURSOR_BACKEND_URL={url} "
            "(RunSSE + BidiAppend); for HTTP/2 Run "
            f"CURSOR_BACKEND_URL=https://{opts.host}:{opts.port} NODE_EXTRA_CA_CERTS={ca}"
        )
    from cursor_byok.cli.trust import steps_text

    trust = steps_text(confdir)
    if opts.mode == "transparent":
        from cursor_byok.cli.trust import node_ca_path
        from cursor_byok.cli.trust import system_store
        from cursor_byok.cli.trust import trust_command

        node_ca = node_ca_path(system_store(), ca)
        return (
            "Transparent mode: connections to port 443 of Cursor's hosts are redirected to "
            "mitmdump by firewall rules cursor-byok installs now and removes on exit.\n"
            "No Cursor setting is needed: both of its Agent transports are served.\n"
            f"Trust mitmproxy's CA: {trust_command(confdir)} (system store and NSS); "
            f"start Cursor with NODE_EXTRA_CA_CERTS={node_ca} for its Node side."
        )
    if opts.mode == "local":
        which = (
            "Cursor and its helper processes"
            if opts.local_process == LOCAL_SPEC
            else f"the processes {opts.local_process!r}"
        )
        return (
            f"{opts.mode.title()} mode: the connections of {which} are redirected at the OS "
            "level (needs root/admin; on Linux kernel >= 6.8 for local capture).\n"
            "No Cursor setting is needed: both of its Agent transports are served.\n" + trust
        )
    return (
        f"Proxy listening on {url}. In Cursor's settings.json set:\n"
        f'  "http.proxy": "{url}",\n'
        '  "http.proxySupport": "override"\n'
        "then fully restart Cursor (a window reload keeps the old proxy setting). Cursor's "
        "transport setting can stay as it is: the HTTP/2 Run stream and the HTTP/1.1 pair are "
        "both served (cursor-byok doctor --watch 60 says which one arrived).\n" + trust
    )


def preflight(opts: RunOptions) -> tuple[RunOptions, str | None]:
    """The checks before mitmproxy starts (`preflight.py`); the options with the UI port
    picked, and the one-line problem that stops the run, if any."""
    import dataclasses

    from cursor_byok.cli import preflight as checks
    from cursor_byok.store.files import default_data_dir

    opts, problem = take_own_settings(opts)
    if problem is not None:
        return opts, problem
    if opts.mode == "local" and (problem := checks.local_problem()) is not None:
        return opts, problem
    problem = checks.port_problem(opts.host, opts.port)
    if problem is not None:
        return opts, problem
    for path, flag in (
        (opts.data_dir or default_data_dir(), "--data-dir"),
        (opts.confdir or Path.home() / ".mitmproxy", "--confdir"),
    ):
        if (problem := checks.dir_problem(path, flag)) is not None:
            return opts, problem
    if opts.web and not _sets(opts.extra, "web_port"):
        if opts.web_port is not None and opts.web_port == opts.port:
            return opts, f"--web-port {opts.web_port} is the proxy's own --port: pick another"
        if opts.web_port is not None:
            problem = checks.port_problem("127.0.0.1", opts.web_port, "--web-port")
            if problem is not None:
                return opts, problem
        port = checks.pick_web_port(opts.port, opts.web_port)
        opts = dataclasses.replace(opts, web_port=port)
    return opts, None


def run(opts: RunOptions) -> int:
    from rich.console import Console
    from rich.text import Text

    from cursor_byok.cli.preflight import config_warnings

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    if opts.print_rules and opts.mode != "transparent":
        console.print("cursor-byok: error: --print-rules goes with --transparent")
        return 2
    if opts.print_rules:
        from cursor_byok.cli.redirect import rules_text

        sys.stdout.write(rules_text(opts.port, opts.redirect_hosts))
        return 0
    opts, problem = preflight(opts)
    if problem is not None:
        console.print(Text(f"cursor-byok: error: {problem}"))
        return 2
    notes = config_warnings(opts.config or default_config_path(), opts.agent)
    for warning in notes:
        console.print(Text.assemble(("warning: ", "yellow"), warning))
    if opts.log_file is not None and opts.mode != "transparent":
        return run_logged(mitmdump_args(opts), opts, [f"warning: {n}" for n in notes])
    console.print(f"[bold]cursor-byok[/bold] ({opts.mode} mode)")
    console.print(Text(setup_text(opts)))
    if opts.web:
        ui = "<your web_port>" if opts.web_port is None else str(opts.web_port)
        console.print(
            Text(
                f"mitmweb: the flow list is at http://127.0.0.1:{ui}/ (the URL with its token "
                "is printed below; it opens in your browser); Cursor's Connect bodies show "
                "decoded in the 'Cursor Connect' view."
            )
        )
    if opts.mode == "transparent" and sys.platform.startswith("linux"):
        return run_transparent(opts, console)
    if opts.mode == "local":
        from cursor_byok.cli.doctor import WARN
        from cursor_byok.cli.doctor import check_local_capture

        check = check_local_capture()
        if check.status == WARN:  # say it plainly before mitmproxy's traceback
            console.print(f"[yellow]Local capture will likely fail here:[/yellow] {check.detail}")
    if opts.mode == "transparent" and sys.platform == "darwin":
        from cursor_byok.cli.redirect import mitmdump_gid
        from cursor_byok.cli.redirect import rules_text

        console.print("Load these pf rules (cursor-byok does not change pf on macOS):")
        sys.stderr.write(rules_text(opts.port, opts.redirect_hosts))
        if os.geteuid() == 0:
            os.setgid(mitmdump_gid())  # the group the pf rules exempt (no loop)
    args = mitmdump_args(opts)
    sys.stderr.flush()
    os.execv(args[0], args)
    return 0  # not reached


def run_logged(args: list[str], opts: RunOptions, notes: Sequence[str] = ()) -> int:
    """Run mitmdump as a child and copy its output into a size-rotated log file.

    For service managers without a journal (launchd, Task Scheduler): the log never grows past
    LOG_BYTES x (LOG_BACKUPS + 1). SIGTERM/SIGINT are passed on, so stopping the service stops
    the proxy; the exit status is mitmdump's (so "restart on failure" sees failures).
    """
    import logging
    import logging.handlers
    import signal
    import subprocess

    assert opts.log_file is not None
    opts.log_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    umask = os.umask(0o077)  # rotated files are created later: keep them private too
    handler = logging.handlers.RotatingFileHandler(
        opts.log_file, maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8"
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    logger = logging.getLogger("cursor_byok.service_log")
    logger.propagate = False
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        logger.info("cursor-byok: starting %s", " ".join(args))
        for note in notes:
            logger.info("cursor-byok: %s", note)
        child = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
        )

        def forward(signum, _frame) -> None:
            child.send_signal(signum)

        for signum in previous:
            signal.signal(signum, forward)
        assert child.stdout is not None
        for line in child.stdout:
            logger.info("%s", line.rstrip("\n"))
        code = child.wait()
        logger.info("cursor-byok: mitmdump exited with status %s", code)
    finally:
        for signum, handler_before in previous.items():
            signal.signal(signum, handler_before)
        logger.removeHandler(handler)
        handler.close()
        os.umask(umask)
    return code


def run_transparent(opts: RunOptions, console) -> int:
    """Linux: install the redirect, run mitmdump as a child, remove the redirect on exit."""
    from rich.text import Text

    from cursor_byok.cli import redirect
    from cursor_byok.cli.redirect import FirewallError

    def say(message: str) -> None:
        console.print(Text(message))

    args = mitmdump_args(opts, ipv6=ipv6_loopback())
    try:
        return redirect.run_transparent(args, port=opts.port, hosts=opts.redirect_hosts, say=say)
    except FirewallError as exc:
        console.print(Text(f"cursor-byok: error: {exc}"))
        return 2
