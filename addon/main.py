"""Entry point for `mitmdump -s addon/main.py` from a checkout: loads the cursor-byok addons."""

import sys
from pathlib import Path

# Let a plain checkout work even when the package is not installed into the interpreter.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cursor_byok.proxy.script import addons

__all__ = ["addons"]
