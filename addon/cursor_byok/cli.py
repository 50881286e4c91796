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
    from cursor_byok.capture_view import KINDS

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
    from cursor_byok import capture_view

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


# --- parser --------------------------------------------------------------------------------------

SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [_add_decode]


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
