"""Which hosts are Cursor's: shared by the addons that decide whether a flow is theirs."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence

DEFAULT_HOSTS = ("cursor.sh", "*.cursor.sh")


def host_matches(host: str, patterns: Sequence[str]) -> bool:
    """True when `host` matches one of the fnmatch patterns (case-insensitive)."""
    host = host.lower().rstrip(".")
    return any(fnmatch.fnmatchcase(host, p.lower()) for p in patterns)
