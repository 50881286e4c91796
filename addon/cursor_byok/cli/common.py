"""What every subcommand shares: exit codes, the handler type, one-line errors."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

EXIT_OK = 0


EXIT_ERROR = 2  # also what argparse uses for usage errors


Handler = Callable[[argparse.Namespace], int]


def error_exit(message: str) -> int:
    """Print a one-line error (no traceback) and return the error exit code."""
    print(f"cursor-byok: error: {message}", file=sys.stderr)
    return EXIT_ERROR
