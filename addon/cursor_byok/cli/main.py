"""The `cursor-byok` command line: one argparse subcommand per tool.

Adding a subcommand = one `add_<name>(subparsers)` function (in `proxy_commands.py` or
`setup_commands.py`) that builds its parser and sets `func` to a handler `(args) -> exit code`,
plus its entry in `SUBCOMMANDS`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from collections.abc import Sequence

from cursor_byok import __version__
from cursor_byok.cli.common import EXIT_ERROR
from cursor_byok.cli.common import Handler
from cursor_byok.cli.proxy_commands import PASSTHROUGH
from cursor_byok.cli.proxy_commands import add_addon_path
from cursor_byok.cli.proxy_commands import add_decode
from cursor_byok.cli.proxy_commands import add_passthrough
from cursor_byok.cli.proxy_commands import add_record
from cursor_byok.cli.proxy_commands import add_replay
from cursor_byok.cli.proxy_commands import add_run
from cursor_byok.cli.proxy_commands import passthrough
from cursor_byok.cli.setup_commands import add_doctor
from cursor_byok.cli.setup_commands import add_init
from cursor_byok.cli.setup_commands import add_service
from cursor_byok.cli.setup_commands import add_trust
from cursor_byok.cli.setup_commands import add_usage

SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    add_init,
    add_run,
    add_record,
    add_replay,
    add_doctor,
    add_usage,
    add_service,
    add_addon_path,
    add_decode,
    add_trust,
    add_passthrough,
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
    if argv[:1] and argv[0] in PASSTHROUGH:  # every argument is mitmproxy's, --help too
        return passthrough(argv[0], argv[1:])
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
