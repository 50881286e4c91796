"""mitmproxy's host and authority checks answered once per host (issue 38).

`url.parse_authority` (a regex, then `check.is_valid_host`: an IDNA decode and a regex per
label) and `check.is_valid_host` are pure functions of their arguments, and mitmproxy asks them
of the same few hosts for every request and every TLS handshake: `Request.pretty_host` (the
onboarding app asks it of every request), the HTTP/1 and HTTP/2 request parses, the HTTP layer,
the ClientHello's SNI. On a one-delta `Run` turn at 20 streams they were ~1.5 % of the proxy's
samples, and on RunPoll, where every poll is a request, ~1 %.

`parse_authorities_once` keeps each answer for the arguments it was given (a tuple of a `str`
and an `int` or None, or a bool: nothing a caller can change) for up to MAX_KEPT of them, then
starts over, so a client making up hosts costs what it did before and holds nothing. A
malformed authority raises as mitmproxy raises it, every time: errors are not kept.
"""

from __future__ import annotations

from typing import Any

from mitmproxy.net import check
from mitmproxy.net.http import url

from cursor_byok.proxy.mitmproxy_compat import Undo
from cursor_byok.proxy.mitmproxy_compat import _replace
from cursor_byok.proxy.mitmproxy_compat import _undo_all

MAX_KEPT = 512  # answers kept per function; real clients name a handful of hosts

# as mitmproxy ships them
MITMPROXY_PARSE_AUTHORITY = url.parse_authority
MITMPROXY_IS_VALID_HOST = check.is_valid_host

_authorities: dict[tuple[Any, bool], tuple[str, int | None]] = {}
_hosts: dict[Any, bool] = {}


def _parse_authority(authority: Any, check: bool) -> tuple[str, int | None]:
    """`url.parse_authority`, answered from what it said before for these arguments."""
    key = (authority, check)
    answer = _authorities.get(key)
    if answer is None:
        answer = MITMPROXY_PARSE_AUTHORITY(authority, check)  # raises as mitmproxy's does
        if len(_authorities) >= MAX_KEPT:
            _authorities.clear()
        _authorities[key] = answer
    return answer


def _is_valid_host(host: Any) -> bool:
    """`check.is_valid_host`, answered from what it said before for this host."""
    answer = _hosts.get(host)
    if answer is None:
        answer = MITMPROXY_IS_VALID_HOST(host)
        if len(_hosts) >= MAX_KEPT:
            _hosts.clear()
        _hosts[host] = answer
    return answer


def parse_authorities_once() -> Undo | None:
    """Install both on their modules (None: installed already). mitmproxy's callers look them
    up there at each call (`url.parse_authority`, `check.is_valid_host`); `url`'s own
    `is_valid_host` import is left as it is: `parse_authority`, its one user, is kept whole."""
    if url.parse_authority is _parse_authority:
        return None
    return _undo_all(
        [
            _replace(url, "parse_authority", _parse_authority),
            _replace(check, "is_valid_host", _is_valid_host),
        ],
        then=_forget_answers,
    )


def _forget_answers() -> None:
    _authorities.clear()
    _hosts.clear()
