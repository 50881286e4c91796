"""The `cursor-byok` command line: one argparse subcommand per tool.

Adding a subcommand = one `_add_<name>(subparsers)` function that builds its parser and sets
`func` to a handler `(args) -> exit code`, plus its entry in `SUBCOMMANDS`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from cursor_byok import __version__

EXIT_OK = 0
EXIT_ERROR = 2  # also what argparse uses for usage errors

Handler = Callable[[argparse.Namespace], int]


def _error(message: str) -> int:
    """Print a one-line error (no traceback) and return the error exit code."""
    print(f"cursor-byok: error: {message}", file=sys.stderr)
    return EXIT_ERROR


# --- decode --------------------------------------------------------------------------------------


def _add_decode(subparsers: argparse._SubParsersAction) -> None:
    from cursor_byok.capture.view import KINDS

    parser = subparsers.add_parser(
        "decode",
        help="decode a captured BidiAppend / RunSSE body or JSON capture",
        description=(
            "Decode a capture and print it as a tree (or JSON lines). Detects BidiAppend request "
            "bodies, RunSSE request/response streams and the JSON captures; --kind forces one."
        ),
    )
    parser.add_argument("file", metavar="FILE", help='capture file, or "-" for stdin')
    parser.add_argument("--json", action="store_true", help="one JSON object per message per line")
    parser.add_argument(
        "--kind", choices=KINDS, default="auto", help="capture kind (default: auto)"
    )
    parser.add_argument(
        "--max-string",
        type=int,
        default=100,
        metavar="N",
        help="elide strings after N chars (0: never)",
    )
    parser.add_argument(
        "--max-items", type=int, default=20, metavar="N", help="show N items per list/map (0: all)"
    )
    parser.set_defaults(func=_cmd_decode)


def _cmd_decode(args: argparse.Namespace) -> int:
    from cursor_byok.capture import view as capture_view

    try:
        data = capture_view.read_input(args.file)
        capture = capture_view.load_capture(data, args.kind, source=args.file)
    except capture_view.CaptureError as exc:
        return _error(f"{args.file}: {exc}")
    try:
        if args.json:
            capture_view.render_json(capture, sys.stdout.write)
        else:
            # Not a terminal (pipe, file, test): never wrap or crop, keep one line per field.
            width = None if sys.stdout.isatty() else 10_000
            console = Console(file=sys.stdout, width=width, highlight=False)
            style = capture_view.Style(max_string=args.max_string, max_items=args.max_items)
            capture_view.render_human(capture, console, style)
        sys.stdout.flush()
    except BrokenPipeError:
        # `| head`: the reader left; stop quietly and keep Python from complaining at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return EXIT_OK


# --- run ---------------------------------------------------------------------------------------


def _add_run(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "run",
        help="start the proxy (mitmdump with the cursor-byok addon)",
        description="Start mitmdump with cursor-byok and print what to set up in Cursor. "
        "Arguments after `--` go to mitmdump unchanged.",
    )
    _run_arguments(parser)
    parser.set_defaults(func=_cmd_run)


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `run`, shared with `record` (which runs the same proxy)."""
    parser.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    parser.add_argument("-p", "--port", type=int, default=None, help="listen port (default 8080)")
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument(
        "--reverse",
        nargs="?",
        const="https://api2.cursor.sh",
        metavar="URL",
        help="reverse-proxy mode in front of Cursor's API (no CA needed)",
    )
    modes.add_argument(
        "--local",
        nargs="?",
        const="Cursor",
        metavar="PROCESS",
        help="capture one application's traffic at the OS level (needs root)",
    )
    modes.add_argument(
        "--transparent",
        action="store_true",
        help="transparent proxy mode: installs (and on exit removes) a redirect (needs root)",
    )
    parser.add_argument(
        "--print-rules", action="store_true", help="with --transparent: show the rules, apply none"
    )
    parser.add_argument(
        "--redirect-host",
        action="append",
        metavar="HOST",
        help="with --transparent: a host whose port 443 is redirected (repeatable; "
        "default: Cursor's API hosts)",
    )
    parser.add_argument("--config", help="config TOML (default: the user config dir)")
    parser.add_argument("--agent", choices=["provider", "scripted"], default="provider")
    parser.add_argument("--data-dir", help="where conversation blobs are kept")
    parser.add_argument("--confdir", help="mitmproxy's confdir (CA certificates)")
    parser.add_argument("-q", "--quiet", action="store_true", help="logs only, no live status")
    parser.add_argument(
        "--log-file",
        metavar="PATH",
        help="write the proxy's output to PATH, rotated (used by `service` without a journal)",
    )
    parser.add_argument(
        "--web",
        action="store_true",
        help="run under mitmweb: watch Cursor's calls (and ours, decoded) in the browser",
    )
    parser.add_argument("extra", nargs=argparse.REMAINDER, help="-- then extra mitmdump args")


def run_options(args: argparse.Namespace):
    from pathlib import Path

    from cursor_byok.cli.launch import RunOptions

    mode = "regular"
    extra = tuple(a for a in args.extra if a != "--")
    kwargs = {}
    if args.reverse:
        mode, kwargs["upstream"] = "reverse", args.reverse
    elif args.local:
        mode, kwargs["local_process"] = "local", args.local
    elif args.transparent:
        mode = "transparent"
        if args.redirect_host:
            kwargs["redirect_hosts"] = tuple(args.redirect_host)
    return RunOptions(
        host=args.host,
        port=args.port if args.port is not None else (8443 if mode == "reverse" else 8080),
        mode=mode,
        config=Path(args.config).expanduser() if args.config else None,
        agent=args.agent,
        data_dir=Path(args.data_dir).expanduser() if args.data_dir else None,
        confdir=Path(args.confdir).expanduser() if args.confdir else None,
        quiet=args.quiet,
        extra=extra,
        log_file=Path(args.log_file).expanduser().resolve() if args.log_file else None,
        web=args.web,
        print_rules=args.print_rules,
        **kwargs,
    )


def _cmd_run(args: argparse.Namespace) -> int:
    from cursor_byok.cli.launch import run

    return run(run_options(args))


# --- record / replay ---------------------------------------------------------------------------

RECORD_OPTION = "cursor_byok_record_dir"


def _add_record(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "record",
        help="start the proxy like `run`, recording every Agent turn as a capture file",
        description="Start mitmdump with cursor-byok (same options as `run`) and write one "
        "capture file per Agent request into --dir: client messages, server frames and the "
        "provider's events, with credentials in headers redacted. File contents, prompts and "
        "model output are kept as they are: review captures before sharing them. "
        "`cursor-byok replay` re-runs them offline.",
    )
    _run_arguments(parser)
    parser.add_argument(
        "--dir",
        default="captures/recorded",
        metavar="DIR",
        help="where capture files go (default: ./captures/recorded)",
    )
    parser.set_defaults(func=_cmd_record)


def _cmd_record(args: argparse.Namespace) -> int:
    import dataclasses
    from pathlib import Path

    from cursor_byok.cli.launch import run

    opts = run_options(args)
    if any(RECORD_OPTION in arg for arg in opts.extra):
        # A second --set of the same option makes mitmproxy skip our script without a word.
        return _error(f"give the directory with --dir, not --set {RECORD_OPTION}")
    directory = Path(args.dir).expanduser().resolve()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return _error(f"--dir {directory}: {exc.strerror or exc}")
    opts = dataclasses.replace(opts, extra=("--set", f"{RECORD_OPTION}={directory}", *opts.extra))
    console = Console(stderr=True, highlight=False, soft_wrap=True)  # paths stay on one line
    console.print(
        Text.assemble(
            ("Recording", "bold"), f" Agent turns into {directory} (one .jsonl file per request)"
        )
    )
    console.print(Text(f"Replay them offline with: cursor-byok replay {directory}"))
    return run(opts)


def _add_replay(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="re-run recorded turns offline and check the server frames match",
        description="Replay captures (files, or directories of *.jsonl) through the addon in an "
        "in-process proxy on 127.0.0.1: the recorded client messages are sent again, the model "
        "answers with the recorded events, and the frames are compared with the recorded ones "
        "(ignoring ids and timings). Exit status: 0 all match, 1 a mismatch, 2 unusable input.",
    )
    parser.add_argument("captures", nargs="+", metavar="CAPTURE", help="capture file or directory")
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="give up on a turn that produces no frame for this long (default 10)",
    )
    parser.add_argument(
        "--update",
        action="store_true",
        help="rewrite mismatching captures to expect the replayed frames (diff shown first)",
    )
    parser.add_argument(
        "--compare",
        action="store_true",
        help="drive our server like another server's capture (e.g. Cursor's, recorded natively) "
        "and report structural differences",
    )
    parser.set_defaults(func=_cmd_replay)


def _cmd_replay(args: argparse.Namespace) -> int:
    from pathlib import Path

    from cursor_byok.replay import engine as replay

    width = None if sys.stdout.isatty() else 160
    console = Console(file=sys.stdout, width=width, highlight=False)
    paths = [Path(p) for p in args.captures]
    if args.compare:
        from cursor_byok.replay import compare

        return compare.main(paths, stall=args.timeout, console=console)
    return replay.main(paths, stall=args.timeout, console=console, update=args.update)


# --- trust --------------------------------------------------------------------------------------


def _add_trust(subparsers: argparse._SubParsersAction) -> None:
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
        for item in trust.status(confdir):
            print(f"{marks[item.trusted]} {item.store} — {item.detail}")
        return EXIT_OK
    try:
        return trust.change(confdir, args.action == "install", print, nss=not args.no_nss)
    except trust.TrustError as exc:
        return _error(str(exc))


# --- doctor -------------------------------------------------------------------------------------


def _add_doctor(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check the setup: versions, config, provider keys, CA, port, Agent traffic",
        description="Run every check and print one line each, with the fix for what fails. "
        "Only providers that a configured model uses are asked for a one-word answer.",
    )
    parser.add_argument("--config", help="config TOML (default: the user config dir)")
    parser.add_argument("--confdir", help="mitmproxy's confdir (default ~/.mitmproxy)")
    parser.add_argument("--data-dir", help="cursor-byok's data dir (activity of the proxy)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, default=8080)
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


# --- init --------------------------------------------------------------------------------------


def _add_init(subparsers: argparse._SubParsersAction) -> None:
    from cursor_byok.config.presets import PRESETS

    parser = subparsers.add_parser(
        "init",
        help="write a minimal working config for one provider, then run the doctor",
        description="Write a config with one provider (a preset of a well-known service) and one "
        "model, refuse to overwrite an existing one without --force, then check it with the "
        "doctor (including a one-word request to the provider).",
    )
    parser.add_argument(
        "--provider", required=True, choices=list(PRESETS), help="which service (a preset)"
    )
    parser.add_argument("--model", help="the provider's model id (default: the preset's)")
    parser.add_argument("--name", help="the name Cursor's model picker shows")
    keys = parser.add_mutually_exclusive_group()
    keys.add_argument("--key-env", metavar="VAR", help="environment variable holding the key")
    keys.add_argument("--key-file", metavar="PATH", help="file holding the key")
    parser.add_argument("--base-url", help="override the preset's base URL (proxies, gateways)")
    parser.add_argument("--context-window", type=int, metavar="TOKENS")
    parser.add_argument("--config", help="where to write (default: the user config dir)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing config")
    parser.add_argument("--no-doctor", action="store_true", help="do not run the doctor after")
    parser.add_argument("--no-provider", action="store_true", help="doctor: skip the provider")
    parser.add_argument("--confdir", help="mitmproxy's confdir, for the doctor")
    parser.set_defaults(func=_cmd_init)


def _cmd_init(args: argparse.Namespace) -> int:
    import tomllib
    from pathlib import Path

    from cursor_byok.cli.doctor import run_doctor
    from cursor_byok.config import ConfigError
    from cursor_byok.config import default_config_path
    from cursor_byok.config import parse_config
    from cursor_byok.config.presets import InitError
    from cursor_byok.config.presets import key_hint
    from cursor_byok.config.presets import render_config
    from cursor_byok.config.presets import write_config
    from cursor_byok.store.files import default_data_dir

    path = Path(args.config).expanduser() if args.config else default_config_path()
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
        parse_config(tomllib.loads(text), path)  # validate first: a bad --base-url shows here
        write_config(path, text, force=args.force)
    except (InitError, ConfigError) as exc:
        return _error(str(exc))
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
        console.print("Start the proxy with: cursor-byok run")
    return code


# --- usage -------------------------------------------------------------------------------------


def _add_usage(subparsers: argparse._SubParsersAction) -> None:
    from cursor_byok.store.usage import BY

    parser = subparsers.add_parser(
        "usage",
        help="tokens and cost of your turns (today, this week, by model or conversation)",
        description="Sum the usage the proxy recorded for every Agent turn. Costs come from the "
        "`prices` of each model in the config (per million tokens); models without prices show "
        "tokens only.",
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
    import dataclasses
    import json
    from pathlib import Path

    from cursor_byok.config import ConfigError
    from cursor_byok.config import default_config_path
    from cursor_byok.config import load_config
    from cursor_byok.store import usage
    from cursor_byok.store.files import default_data_dir

    try:
        since = usage.parse_since(args.since)
    except ValueError as exc:
        return _error(str(exc))
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
        return _error(f"{data_dir}: {exc}")
    try:
        if config is not None and config.usage.retention_days:
            store.prune(config.usage.retention_days)
        rows = store.rows(since.timestamp())
    finally:
        store.close()
    groups, total = usage.summarise(rows, args.by, config.prices_of if config else None)
    if args.json:
        for group in [*groups, total]:
            record = dataclasses.asdict(group)
            if group.unpriced == group.turns:
                record["cost"] = None
            print(json.dumps(record))
        return EXIT_OK
    title = f"cursor-byok usage since {since:%Y-%m-%d %H:%M} by {args.by}"
    if not rows:
        console.print(f"{title}: no turns recorded in {data_dir / usage.USAGE_FILE}", markup=False)
        return EXIT_OK
    console.print(usage.usage_table(groups, total, args.by, title))
    if total.unpriced:
        console.print(
            f"{total.unpriced} of {total.turns} turns have no prices: add "
            "prices = { input = ..., cached_input = ..., output = ... } to their [[models]]",
            markup=False,
        )
    return EXIT_OK


# --- addon-path --------------------------------------------------------------------------------


def _add_addon_path(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "addon-path",
        help="print the path of the mitmproxy script, for mitmdump -s",
        description='For composing with other addons: mitmdump -s "$(cursor-byok addon-path)" '
        "-s your_addon.py (works from a tool install, no checkout needed).",
    )
    parser.set_defaults(func=_cmd_addon_path)


def _cmd_addon_path(args: argparse.Namespace) -> int:
    from cursor_byok.cli.launch import SCRIPT

    print(SCRIPT)
    return EXIT_OK


# --- service -----------------------------------------------------------------------------------


def _add_service(subparsers: argparse._SubParsersAction) -> None:
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


# --- parser --------------------------------------------------------------------------------------

SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    _add_init,
    _add_run,
    _add_record,
    _add_replay,
    _add_doctor,
    _add_usage,
    _add_service,
    _add_addon_path,
    _add_decode,
    _add_trust,
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cursor-byok", description="Run Cursor's Agent on your own LLM provider and key."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in SUBCOMMANDS:
        add(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `cursor-byok` script; returns the process exit code."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    tail: list[str] = []
    if argv[:1] == ["service"] and "--" in argv:  # `service install -- RUN_OPTIONS...`
        cut = argv.index("--")
        argv, tail = argv[:cut], argv[cut + 1 :]
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    if tail:
        args.run_args = tail
    handler: Handler = args.func
    return handler(args)


if __name__ == "__main__":
    sys.exit(main())
