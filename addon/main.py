"""Entry point for `mitmdump -s addon/main.py`: loads the cursor-byok addon."""

import sys
from pathlib import Path

# Let a plain checkout work even when the package is not installed into the interpreter.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cursor_byok.addon import CursorByok

addons = [CursorByok()]
