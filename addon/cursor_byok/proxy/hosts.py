"""Which hosts are Cursor's: shared by the addons that decide whether a flow is theirs.

Eight addons ask it of every flow they see. Asked naively, each answer reads two options (a
deep copy each, `mitmproxy.optmanager._Option.current`) and parses the Host header again
(`Request.pretty_host`): ~14 µs, several times a flow, on every BidiAppend and RunPoll
(issue 38). `cursor_host` reads the options once per change and matches each host once.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from typing import Any

from mitmproxy import ctx
from mitmproxy import http
from mitmproxy.net.http import url

DEFAULT_HOSTS = ("cursor.sh", "*.cursor.sh")
_WATCHED = {"mode", "cursor_byok_hosts"}


def host_matches(host: str, patterns: Sequence[str]) -> bool:
    """True when `host` matches one of the fnmatch patterns (case-insensitive)."""
    host = host.lower().rstrip(".")
    return any(fnmatch.fnmatchcase(host, p.lower()) for p in patterns)


def reverse_mode(options: Any) -> bool:
    """Whether mitmproxy runs as a reverse proxy (then every host is Cursor's)."""
    return any(str(mode).startswith("reverse:") for mode in options.mode)


class CursorHosts:
    """The answer for one set of options: read again when `mode` or `cursor_byok_hosts`
    changes (mitmproxy's `changed` signal), each host's match kept (bounded)."""

    MAX_KNOWN = 512

    def __init__(self, options: Any) -> None:
        self.options = options
        self.reverse = False
        self.patterns: tuple[str, ...] = DEFAULT_HOSTS
        self._known: dict[str, bool] = {}
        self._read()
        options.changed.connect(self._changed)  # a weak reference: it goes with us

    def _changed(self, updated: set[str]) -> None:
        if updated & _WATCHED:
            self._read()

    def _read(self) -> None:
        self.reverse = reverse_mode(self.options)
        self.patterns = tuple(self.options.cursor_byok_hosts)
        self._known.clear()

    def matches(self, request: http.Request) -> bool:
        """Whether `request` goes to one of Cursor's hosts (every host in reverse mode), by
        `pretty_host` as before: the Host header's (or :authority's) host, else the address."""
        if self.reverse:
            return True
        authority = request.host_header
        key = authority if authority else "\0" + request.host
        known = self._known.get(key)
        if known is None:
            host = url.parse_authority(authority, check=False)[0] if authority else request.host
            known = host_matches(host, self.patterns)
            if len(self._known) >= self.MAX_KNOWN:
                self._known.clear()
            self._known[key] = known
        return known


_current: CursorHosts | None = None


def _hosts() -> CursorHosts:
    """The answer for the running mitmproxy's options (a new set of options, as each test's,
    gets its own)."""
    global _current
    if _current is None or _current.options is not ctx.options:
        _current = CursorHosts(ctx.options)
    return _current


def cursor_host(flow: http.HTTPFlow) -> bool:
    """Whether a flow is for one of Cursor's hosts (every host in reverse mode)."""
    return _hosts().matches(flow.request)


def cursor_hostname(host: str) -> bool:
    """`cursor_host` for a bare host name (a server's address, not a flow)."""
    hosts = _hosts()
    return hosts.reverse or host_matches(host, hosts.patterns)
