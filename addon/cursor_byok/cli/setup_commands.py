"""The subcommands that set up and check a machine, and report on it: init, trust, doctor,
service, usage.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from cursor_byok.cli.common import EXIT_OK
from cursor_byok.cli.common import error_exit

if TYPE_CHECKING:
    from cursor_byok.config.spend import CapStatus
    from cursor_byok.store.usage import Group


def add_trust(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "trust",
        help="put mitmproxy's CA into the system trust store and NSS (or take it out)",
        description="install: add mitmproxy's CA (created if missing) to the system trust store "
        "and to the NSS database Chromium/Electron read on Linux, and print the "
        "NODE_EXTRA_CA_CERTS to start Cursor with. uninstall: remove it. status: where it is "
        "trusted. Changing the system store needs root (sudo).",
    )
    parser.add_argument("action", choices=["install", "uninstall", "status"])
    parser.add_argument("--confdir", help="mitmproxy's confdir (default ~/.mitmproxy)")
    parser.add_argument("--no-nss", action="store_true", help="leave the NSS database alone")
    parser.set_defaults(func=_cmd_trust)


def _cmd_trust(args: argparse.Namespace) -> int:
    from pathlib import Path

    from cursor_byok.cli import trust

    confdir = Path(args.confdir).expanduser() if args.confdir else Path.home() / ".mitmproxy"
    if args.action == "status":
        marks = {True: "✔", False: "✘", None: "?"}
        items = trust.status(confdir)
        for item in items:
            print(f"{marks[item.trusted]} {item.store} — {item.detail}")
        if any(item.trusted is False for item in items):
            if any(item.trusted is False and "Node" not in item.store for item in items):
                print(f"fix: {trust.trust_command(confdir)}")
            return 1  # scripts and the doctor can tell a setup that is not done yet
        return EXIT_OK
    try:
        return trust.change(confdir, args.action == "install", print, nss=not args.no_nss)
    except trust.TrustError as exc:
        return error_exit(str(exc))


def add_doctor(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check the setup: versions, config, provider keys, CA, port, Agent traffic",
        description="Run every check and print one line each, with the fix for what fails. "
        "Only providers that a configured model uses are asked for a one-word answer.",
    )
    parser.add_argument("--config", help="config TOML (default: the user config dir)")
    parser.add_argument("--confdir", help="mitmproxy's confdir (default ~/.mitmproxy)")
    parser.add_argument("--data-dir", help="cursor-byok's data dir (activity of the proxy)")
    parser.add_argument(
        "--host", default="127.0.0.1", help="where the proxy listens (default 127.0.0.1)"
    )
    parser.add_argument(
        "-p", "--port", type=int, default=8080, help="the proxy's port (default 8080)"
    )
    parser.add_argument(
        "--no-provider", action="store_true", help="skip the one-word request to each provider"
    )
    parser.add_argument(
        "--watch",
        type=float,
        default=0,
        metavar="SECONDS",
        help="wait up to SECONDS for a new Agent call (made after the doctor started) to reach "
        "the running proxy, and say which transport and route it took",
    )
    parser.set_defaults(func=_cmd_doctor)


def _cmd_doctor(args: argparse.Namespace) -> int:
    from pathlib import Path

    from cursor_byok.cli.doctor import run_doctor
    from cursor_byok.config import default_config_path
    from cursor_byok.store.files import default_data_dir

    return run_doctor(
        config_path=Path(args.config).expanduser() if args.config else default_config_path(),
        confdir=Path(args.confdir).expanduser() if args.confdir else Path.home() / ".mitmproxy",
        data_dir=Path(args.data_dir).expanduser() if args.data_dir else default_data_dir(),
        host=args.host,
        port=args.port,
        providers=not args.no_provider,
        watch=args.watch,
    )


def add_init(subparsers: argparse._SubParsersAction) -> None:
    from cursor_byok.config.presets import PRESETS
    from cursor_byok.config.presets import TAB_PRESETS

    parser = subparsers.add_parser(
        "init",
        help="write a minimal working config for one provider, then run the doctor",
        description="Write a config with one provider (a preset of a well-known service) and one "
        "model, refuse to overwrite an existing one without --force, then check it with the "
        "doctor (including a one-word request to the provider).",
    )
    parser.add_argument(
        "--provider",
        choices=list(PRESETS),
        help="which service (a preset); in a terminal without it, init asks for the provider "
        "and the key (hidden) and offers to keep the key in a 0600 file",
    )
    parser.add_argument("--model", help="the provider's model id (default: the preset's)")
    parser.add_argument("--name", help="the name Cursor's model picker shows")
    keys = parser.add_mutually_exclusive_group()
    keys.add_argument("--key-env", metavar="VAR", help="environment variable holding the key")
    keys.add_argument("--key-file", metavar="PATH", help="file holding the key")
    parser.add_argument("--base-url", help="override the preset's base URL (proxies, gateways)")
    parser.add_argument(
        "--context-window",
        type=int,
        metavar="TOKENS",
        help="the model's context window in tokens (default: the preset's); the context ring "
        "and compaction go by it",
    )
    parser.add_argument(
        "--tab",
        choices=list(TAB_PRESETS),
        help="also put Tab on your own model: a local Ollama FIM model or Codestral",
    )
    parser.add_argument("--config", help="where to write (default: the user config dir)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing config")
    parser.add_argument("--no-doctor", action="store_true", help="do not run the doctor after")
    parser.add_argument("--no-provider", action="store_true", help="doctor: skip the provider")
    parser.add_argument("--confdir", help="mitmproxy's confdir, for the doctor")
    parser.set_defaults(func=_cmd_init)


def _cmd_init(args: argparse.Namespace) -> int:
    from cursor_byok.cli.doctor import run_doctor
    from cursor_byok.config import default_config_path
    from cursor_byok.config.presets import key_hint
    from cursor_byok.store.files import default_data_dir

    path = Path(args.config).expanduser() if args.config else default_config_path()
    if args.provider is None:
        stopped = _ask_init(args, path)
        if stopped is not None:
            return stopped
    written = _write_init(args, path)
    if written is not None:
        return written
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    console.print(Text.assemble(("Wrote", "bold"), f" {path}"))
    hint = key_hint(args.provider, args.key_env, args.key_file)
    if hint:
        console.print(f"Next: {hint}")
    if args.no_doctor:
        return EXIT_OK
    console.print("Checking it (cursor-byok doctor):")
    code = run_doctor(
        config_path=path,
        confdir=Path(args.confdir).expanduser() if args.confdir else Path.home() / ".mitmproxy",
        data_dir=default_data_dir(),
        providers=not args.no_provider,
        first_run=True,
    )
    if code == 0:
        console.print(f"Start the proxy with: {_run_hint()}")
    return code


def _ask_init(args: argparse.Namespace, path: Path) -> int | None:
    """No --provider: ask in the terminal (into `args`); the exit code when init stops here."""
    if not sys.stdin.isatty():
        return error_exit("give --provider NAME (or run init in a terminal to be asked)")
    from cursor_byok.cli.init_prompt import ask

    if path.exists() and not args.force:  # before asking for a key that goes nowhere
        return error_exit(f"{path} already exists (use --force to overwrite it)")
    try:
        answers = ask(path)
    except (EOFError, KeyboardInterrupt):
        print()
        return error_exit("init stopped: nothing written")
    args.provider = answers.provider
    args.key_file = args.key_file or answers.key_file
    return None


def _write_init(args: argparse.Namespace, path: Path) -> int | None:
    """Render the preset, validate it, write it; the exit code when that fails."""
    import tomllib

    from cursor_byok.config import ConfigError
    from cursor_byok.config import parse_config
    from cursor_byok.config.presets import InitError
    from cursor_byok.config.presets import render_config
    from cursor_byok.config.presets import render_tab
    from cursor_byok.config.presets import write_config

    try:
        text = render_config(
            args.provider,
            model=args.model,
            name=args.name,
            key_env=args.key_env,
            key_file=args.key_file,
            base_url=args.base_url,
            context_window=args.context_window,
        )
        if args.tab:
            text += render_tab(args.tab)
        parse_config(tomllib.loads(text), path)  # validate first: a bad --base-url shows here
        write_config(path, text, force=args.force)
    except (InitError, ConfigError) as exc:
        return error_exit(str(exc))
    return None


def _run_hint() -> str:
    """`cursor-byok run`, as this installation is started: `uv run …` from a checkout's venv."""
    from pathlib import Path

    prefix = Path(sys.prefix)
    if prefix.name == ".venv" and (prefix.parent / "addon" / "cursor_byok").is_dir():
        return "uv run cursor-byok run"
    return "cursor-byok run"


def add_usage(subparsers: argparse._SubParsersAction) -> None:
    from cursor_byok.store.usage import BY

    parser = subparsers.add_parser(
        "usage",
        help="tokens and cost of your turns (today, this week, by model or conversation)",
        description="Sum the usage the proxy recorded for every Agent turn, and for every chat "
        "title a title_model made (outcome 'title'), Cmd-K, terminal Cmd-K and commit message "
        "(cmd_k, terminal, commit_message; --by kind separates them all). Costs come from "
        "the `prices` of each model in the config (per million tokens); models without prices "
        "show tokens only.",
    )
    parser.add_argument(
        "--since",
        default="7d",
        metavar="WHEN",
        help="today, week (since Monday), 7d, 12h, 2w, all or a date (default 7d)",
    )
    parser.add_argument("--by", choices=BY, default="day", help="group rows by (default day)")
    parser.add_argument("--json", action="store_true", help="one JSON object per group per line")
    parser.add_argument("--config", help="config TOML, for prices (default: the user config dir)")
    parser.add_argument("--data-dir", help="cursor-byok's data dir (where usage.sqlite3 is)")
    parser.set_defaults(func=_cmd_usage)


def _cmd_usage(args: argparse.Namespace) -> int:
    from cursor_byok.config import ConfigError
    from cursor_byok.config import default_config_path
    from cursor_byok.config import load_config
    from cursor_byok.store import usage
    from cursor_byok.store.files import default_data_dir

    try:
        since = usage.parse_since(args.since)
    except ValueError as exc:
        return error_exit(str(exc))
    config_path = Path(args.config).expanduser() if args.config else default_config_path()
    console = Console(file=sys.stdout, width=None if sys.stdout.isatty() else 160, highlight=False)
    try:
        config = load_config(config_path)
    except ConfigError as exc:
        config = None
        Console(stderr=True, highlight=False).print(f"no prices (config not loaded: {exc})")
    data_dir = Path(args.data_dir).expanduser() if args.data_dir else default_data_dir()
    try:
        store = usage.UsageStore(data_dir)
    except (OSError, usage.sqlite3.Error) as exc:
        return error_exit(f"{data_dir}: {exc}")
    try:
        if config is not None and config.usage.retention_days:
            store.prune(config.usage.retention_days)
        rows = store.rows(since.timestamp())
    finally:
        store.close()
    groups, total = usage.summarise(rows, args.by, config.prices_of if config else None)
    caps = _caps(config, data_dir)
    if args.json:
        _usage_json([*groups, total], caps)
        return EXIT_OK
    title = f"cursor-byok usage since {since:%Y-%m-%d %H:%M} by {args.by}"
    if not rows:
        console.print(f"{title}: no turns recorded in {data_dir / usage.USAGE_FILE}", markup=False)
    else:
        console.print(usage.usage_table(groups, total, args.by, title))
    _usage_footer(console, data_dir, caps if rows else [], total if rows else None)
    return EXIT_OK


def _usage_json(groups: list[Group], caps: list[CapStatus]) -> None:
    """One JSON object per group (the total last; no cost when nothing was priced), then one
    per spending cap."""
    import dataclasses
    import json

    for group in groups:
        record = dataclasses.asdict(group)
        if group.unpriced == group.turns:
            record["cost"] = None
        print(json.dumps(record))
    for cap in caps:
        resets = cap.resets.isoformat() if cap.resets else None
        line = {"key": f"cap {cap.name}", "amount": cap.amount, "spent": cap.spent}
        print(json.dumps({**line, "resets": resets}))


def _usage_footer(
    console: Console, data_dir: Path, caps: list[CapStatus], total: Group | None
) -> None:
    """Under the table: each cap's spend, the data dir's size, and how many turns had no prices
    (`total`: the table's total row; None when there was no table)."""
    from cursor_byok.store.sizes import sizes_line

    for cap in caps:
        resets = f"; resets {cap.resets:%Y-%m-%d %H:%M}" if cap.resets else ""
        console.print(
            f"cap {cap.name}: ${cap.spent:,.2f} of ${cap.amount:,.2f} ({cap.share:.0%}){resets}",
            markup=False,
        )
    console.print(f"data dir {data_dir}: {sizes_line(data_dir)}", markup=False)
    if total is not None and total.unpriced:
        console.print(
            f"{total.unpriced} of {total.turns} turns have no prices: add "
            "prices = { input = ..., cached_input = ..., output = ... } to their [[models]]",
            markup=False,
        )


def _caps(config, data_dir) -> list:
    """The spending caps of `[limits]` against the spend so far (every kind of row counts)."""
    from cursor_byok.config.spend import cap_statuses
    from cursor_byok.store import usage

    if config is None or not config.limits.caps():
        return []
    store = usage.UsageStore(data_dir)
    try:
        return cap_statuses(config, store, None)
    finally:
        store.close()


def add_service(subparsers: argparse._SubParsersAction) -> None:
    from cursor_byok.cli.service import PLATFORMS

    parser = subparsers.add_parser(
        "service",
        help="keep the proxy running: install|uninstall|status|logs a per-user service",
        description="Run `cursor-byok run` as a per-user service that starts at login and "
        "restarts on failure: a systemd user unit (Linux), a LaunchAgent (macOS) or a logon task "
        "(Windows). Options for `run` go after `--`, e.g. `service install -- --port 8081`. "
        "Uninstall leaves config, data and the CA alone.",
    )
    parser.add_argument("action", choices=["install", "uninstall", "status", "logs"])
    parser.add_argument(
        "--platform", choices=PLATFORMS, help="whose files (default: this machine's)"
    )
    parser.add_argument(
        "--print",
        action="store_true",
        help="print the files and commands instead of installing (any platform)",
    )
    parser.set_defaults(func=_cmd_service, run_args=[])  # main() fills run_args from after `--`


def _config_of(run_args: list[str]):
    """The --config a service's `run` options name, if any."""
    from pathlib import Path

    for index, arg in enumerate(run_args):
        if arg == "--config" and index + 1 < len(run_args):
            return Path(run_args[index + 1]).expanduser()
        if arg.startswith("--config="):
            return Path(arg.split("=", 1)[1]).expanduser()
    return None


def _cmd_service(args: argparse.Namespace) -> int:
    from pathlib import Path

    from cursor_byok.cli import service

    here = service.current_platform()
    platform = args.platform or here
    home = Path.home()
    run_args = [a for a in args.run_args if a != "--"]
    if args.print or platform != here:
        if not args.print:
            print(f"# {platform} is not this machine ({here}): printing only", file=sys.stderr)
        if args.action == "install":
            for file in service.unit_files(platform, home, run_args):
                print(f"# {file.path} (mode {file.mode:o})")
                content = file.content
                print(
                    content.decode(
                        "utf-16" if content[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8"
                    )
                )
        for command in service.manager_commands(platform, args.action, home):
            print(service.shell_line(command))
        return EXIT_OK
    if args.action == "install":
        from cursor_byok.cli.preflight import service_warnings
        from cursor_byok.config import default_config_path

        config_path = _config_of(run_args) or default_config_path()
        for warning in service_warnings(platform, home, config_path):
            print(f"warning: {warning}", file=sys.stderr)
        paths, code = service.install(platform, home, run_args)
        for path in paths:
            print(f"wrote {path}")
        if code == 0:
            print(service.describe(platform, home))
            return EXIT_OK
        print(
            f"the service manager failed (status {code}); the file is in place, start it with:\n"
            + "\n".join(
                "  " + service.shell_line(c)
                for c in service.manager_commands(platform, "install", home)
            ),
            file=sys.stderr,
        )
        return 1
    if args.action == "uninstall":
        removed, code = service.uninstall(platform, home)
        for path in removed:
            print(f"removed {path}")
        print("config, data and the CA are kept")
        return EXIT_OK if code == 0 else 1
    print(service.describe(platform, home))
    codes = [service.run_manager(c) for c in service.manager_commands(platform, args.action, home)]
    return EXIT_OK if not any(codes) else 1
