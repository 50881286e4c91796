"""Where the run core used to live; it is `runs.py` (runs), `attempts.py` (attempts and their
registry), `outbox.py` and `states.py` now.

Kept only for `proxy/addon.py`, which imports `SessionConfig` from here while it is being split;
import from `cursor_byok.protocol.runs` instead, and delete this module with its last user.
"""

from __future__ import annotations

from cursor_byok.protocol.attempts import Subscriber
from cursor_byok.protocol.runs import Refused
from cursor_byok.protocol.runs import SessionConfig

__all__ = ["Refused", "SessionConfig", "Subscriber"]
