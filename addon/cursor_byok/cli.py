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
    modes.add_argument("--transparent", action="store_true", help="transparent proxy mode")
    parser.add_argument("--config", help="config TOML (default: the user config dir)")
    parser.add_argument("--agent", choices=["provider", "scripted"], default="provider")
    parser.add_argument("--data-dir", help="where conversation blobs are kept")
    parser.add_argument("--confdir", help="mitmproxy's confdir (CA certificates)")
    parser.add_argument("-q", "--quiet", action="store_true", help="logs only, no live status")
    parser.add_argument("extra", nargs=argparse.REMAINDER, help="-- then extra mitmdump args")


def run_options(args: argparse.Namespace):
    from pathlib import Path

    from cursor_byok.launch import RunOptions

    mode = "regular"
    extra = tuple(a for a in args.extra if a != "--")
    kwargs = {}
    if args.reverse:
        mode, kwargs["upstream"] = "reverse", args.reverse
    elif args.local:
        mode, kwargs["local_process"] = "local", args.local
    elif args.transparent:
        mode = "transparent"
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
        **kwargs,
    )


def _cmd_run(args: argparse.Namespace) -> int:
    from cursor_byok.launch import run

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

    from cursor_byok.launch import run

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

    from cursor_byok.capture import replay

    width = None if sys.stdout.isatty() else 160
    console = Console(file=sys.stdout, width=width, highlight=False)
    paths = [Path(p) for p in args.captures]
    if args.compare:
        from cursor_byok.capture import compare

        return compare.main(paths, stall=args.timeout, console=console)
    return replay.main(paths, stall=args.timeout, console=console, update=args.update)


# --- doctor -------------------------------------------------------------------------------------


def _add_doctor(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check the setup: versions, config, provider keys, CA, port, Agent traffic",
        description="Run every check and print one line each, with the fix for what fails.",
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
        help="wait this long for Cursor's next Agent call to reach the running proxy",
    )
    parser.set_defaults(func=_cmd_doctor)


def _cmd_doctor(args: argparse.Namespace) -> int:
    from pathlib import Path

    from cursor_byok.addon import default_data_dir
    from cursor_byok.config import default_config_path
    from cursor_byok.doctor import run_doctor

    return run_doctor(
        config_path=Path(args.config).expanduser() if args.config else default_config_path(),
        confdir=Path(args.confdir).expanduser() if args.confdir else Path.home() / ".mitmproxy",
        data_dir=Path(args.data_dir).expanduser() if args.data_dir else default_data_dir(),
        host=args.host,
        port=args.port,
        providers=not args.no_provider,
        watch=args.watch,
    )


# --- parser --------------------------------------------------------------------------------------

SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    _add_run,
    _add_record,
    _add_replay,
    _add_doctor,
    _add_decode,
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
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    handler: Handler = args.func
    return handler(args)


if __name__ == "__main__":
    sys.exit(main())
