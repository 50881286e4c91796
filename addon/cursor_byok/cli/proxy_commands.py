"""The subcommands that run the proxy or read what it carried: run, record, replay, decode,
addon-path.
"""

from __future__ import annotations

import argparse
import os
import sys

from rich.console import Console
from rich.text import Text

from cursor_byok.cli.common import EXIT_OK
from cursor_byok.cli.common import error_exit


def add_decode(subparsers: argparse._SubParsersAction) -> None:
    from cursor_byok.capture.view import KINDS

    parser = subparsers.add_parser(
        "decode",
        help="decode a capture: a recording, a Cursor trace, a Connect body, hex or base64",
        description=(
            "Decode a capture and print it as a tree (or JSON lines). Detects what `record` "
            "writes, the capture tool's JSON, BidiAppend bodies, RunSSE and Run request and "
            "response streams, bare Agent messages, and any of them as hex, base64 or gzip; "
            "--kind forces one. Bytes the schema cannot name are shown by field number."
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
    from cursor_byok.capture import render as capture_render
    from cursor_byok.capture import view as capture_view

    try:
        data = capture_view.read_input(args.file)
        capture = capture_view.load_capture(data, args.kind, source=args.file)
    except capture_view.CaptureError as exc:
        return error_exit(f"{args.file}: {exc}")
    try:
        if args.json:
            capture_render.render_json(capture, sys.stdout.write)
        else:
            # Not a terminal (pipe, file, test): never wrap or crop, keep one line per field.
            width = None if sys.stdout.isatty() else 10_000
            console = Console(file=sys.stdout, width=width, highlight=False)
            style = capture_render.Style(max_string=args.max_string, max_items=args.max_items)
            capture_render.render_human(capture, console, style)
        sys.stdout.flush()
    except BrokenPipeError:
        # `| head`: the reader left; stop quietly and keep Python from complaining at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return EXIT_OK


def add_run(subparsers: argparse._SubParsersAction) -> None:
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
    _listen_arguments(parser)
    _proxy_arguments(parser)


def _listen_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the proxy listens and how Cursor's traffic reaches it."""
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
        const=True,
        metavar="PROCESSES",
        help="capture Cursor's traffic at the OS level (needs root): by default Cursor and its "
        'helper processes ("Cursor Helper", "Cursor Helper (Plugin)"), else the processes '
        "named (mitmproxy's local:SPEC)",
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


def _proxy_arguments(parser: argparse.ArgumentParser) -> None:
    """What the proxy runs with (config, agent, dirs), how it shows itself, mitmdump's rest."""
    parser.add_argument("--config", help="config TOML (default: the user config dir)")
    parser.add_argument(
        "--agent",
        choices=["provider", "scripted"],
        default="provider",
        help="provider: turns on your config's models (default); scripted: a built-in agent "
        "that needs no provider (tries the setup, offline)",
    )
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
    parser.add_argument(
        "--web-port",
        type=int,
        metavar="PORT",
        help="with --web: the port of mitmweb's UI (default 8081, or a free one when 8081 is "
        "taken or is the proxy's --port)",
    )
    # mitmdump's own --set before `--` is not ours: caught to say where it goes.
    parser.add_argument("--set", action="append", metavar="NAME=VALUE", help=argparse.SUPPRESS)
    parser.add_argument("extra", nargs=argparse.REMAINDER, help="-- then extra mitmdump args")


def _misplaced_set(args: argparse.Namespace) -> int | None:
    """The error for `run --set X` (mitmdump's option, given before `--`), else None."""
    if not args.set:
        return None
    return error_exit(
        f"--set is mitmdump's option: put it after `--` (cursor-byok {args.command} [OPTIONS] "
        f"-- --set {args.set[0]}); the config goes with --config"
    )


def run_options(args: argparse.Namespace):
    from pathlib import Path

    from cursor_byok.cli.launch import LOCAL_SPEC
    from cursor_byok.cli.launch import RunOptions

    mode = "regular"
    extra = tuple(a for a in args.extra if a != "--")
    kwargs = {}
    if args.reverse:
        mode, kwargs["upstream"] = "reverse", args.reverse
    elif args.local:
        spec = args.local if isinstance(args.local, str) else LOCAL_SPEC
        mode, kwargs["local_process"] = "local", spec
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
        web_port=args.web_port,
        print_rules=args.print_rules,
        **kwargs,
    )


def _cmd_run(args: argparse.Namespace) -> int:
    from cursor_byok.cli.launch import run

    if (refused := _misplaced_set(args)) is not None:
        return refused
    return run(run_options(args))


RECORD_OPTION = "cursor_byok_record_dir"


def add_record(subparsers: argparse._SubParsersAction) -> None:
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

    if (refused := _misplaced_set(args)) is not None:
        return refused
    opts = run_options(args)
    if any(RECORD_OPTION in arg for arg in opts.extra):
        # A second --set of the same option makes mitmproxy skip our script without a word.
        return error_exit(f"give the directory with --dir, not --set {RECORD_OPTION}")
    directory = Path(args.dir).expanduser().resolve()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return error_exit(f"--dir {directory}: {exc.strerror or exc}")
    opts = dataclasses.replace(opts, extra=("--set", f"{RECORD_OPTION}={directory}", *opts.extra))
    console = Console(stderr=True, highlight=False, soft_wrap=True)  # paths stay on one line
    console.print(
        Text.assemble(
            ("Recording", "bold"), f" Agent turns into {directory} (one .jsonl file per request)"
        )
    )
    console.print(Text(f"Replay them offline with: cursor-byok replay {directory}"))
    return run(opts)


def add_replay(subparsers: argparse._SubParsersAction) -> None:
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
        help="experimental: drive our server like another server's capture (e.g. Cursor's own, "
        "which the proxy does not record yet) and report structural differences",
    )
    parser.set_defaults(func=_cmd_replay)


def _cmd_replay(args: argparse.Namespace) -> int:
    from pathlib import Path

    from cursor_byok.replay import report as replay

    width = None if sys.stdout.isatty() else 160
    console = Console(file=sys.stdout, width=width, highlight=False)
    paths = [Path(p) for p in args.captures]
    if args.compare:
        from cursor_byok.replay import compare

        return compare.main(paths, stall=args.timeout, console=console)
    return replay.main(paths, stall=args.timeout, console=console, update=args.update)


def add_addon_path(subparsers: argparse._SubParsersAction) -> None:
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


PASSTHROUGH = ("mitmdump", "mitmweb")


def add_passthrough(subparsers: argparse._SubParsersAction) -> None:
    for name in PASSTHROUGH:
        parser = subparsers.add_parser(
            name,
            add_help=False,
            help=f"mitmproxy's {name} from this installation, arguments unchanged "
            f'(compose: cursor-byok {name} -s "$(cursor-byok addon-path)" -s yours.py)',
        )
        parser.add_argument("args", nargs=argparse.REMAINDER)


def passthrough(name: str, args: list[str]) -> int:
    """Run mitmproxy's `name` (the one installed with cursor-byok: a tool install puts only
    `cursor-byok` on PATH) with `args` as given; its exit status is ours."""
    from cursor_byok.cli.launch import mitmdump_executable

    program = mitmdump_executable(name)
    if not os.path.isabs(program):
        return error_exit(f"{name} not found beside {sys.executable} or on PATH")
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "nt":  # no exec on Windows: a child, with its status
        import subprocess

        return subprocess.call([program, *args])
    os.execv(program, [program, *args])
    return EXIT_OK  # not reached
