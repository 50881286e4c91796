"""mitmproxy's header lookups at the cost of a loop over the fields (issue 38).

`Headers.get(name)` is `Mapping.get`: `__getitem__`, which raises and catches a `KeyError` for
every header that is not there; under it `Headers.get_all` turns the name into bytes through
`strutils.always_bytes` (two `isinstance` checks), and `_MultiDict.get_all` lowers each field's
name through a static method call. mitmproxy looks up a flow's headers a few dozen times
(`content-length`, `transfer-encoding`, `host`, …) and our hooks theirs: ~5 % of the proxy's
samples on RunPoll at 20 streams, where every poll and BidiAppend is a flow.
`read_headers_quickly` makes the same lookups directly: the same name conversion (a `str` is
encoded as mitmproxy encodes it, anything else goes through mitmproxy's own conversion and its
errors), the same case-insensitive match, values decoded the same way and folded with ", ";
a header that is not there is the default (or a `KeyError` from `[]`), without an exception in
between.
"""

from __future__ import annotations

from typing import Any

from mitmproxy import http

from cursor_byok.proxy.mitmproxy_compat import Undo
from cursor_byok.proxy.mitmproxy_compat import _replace
from cursor_byok.proxy.mitmproxy_compat import _undo_all

# as mitmproxy ships them: Headers' own get_all, and what it inherits for the rest
MITMPROXY_GET_ALL = vars(http.Headers)["get_all"]


def _key(name: Any) -> bytes:
    """A header name as mitmproxy compares it: bytes, lowered."""
    if type(name) is str:
        return name.encode("utf-8", "surrogateescape").lower()
    return http._always_bytes(name).lower()  # bytes, or mitmproxy's TypeError


def _get_all(self: http.Headers, name: Any) -> list[str]:
    """`Headers.get_all`: every value of the header `name`, unfolded."""
    key = _key(name)
    return [v.decode("utf-8", "surrogateescape") for k, v in self.fields if k.lower() == key]


def _getitem(self: http.Headers, name: Any) -> str:
    """`Headers[name]`: its values folded with ", "; KeyError when there are none."""
    values = self.get_all(name)
    if not values:
        raise KeyError(name)
    return ", ".join(values)


def _get(self: http.Headers, name: Any, default: Any = None) -> Any:
    """`Headers.get`: as `[]`, or `default` when the header is not there."""
    values = self.get_all(name)
    return ", ".join(values) if values else default


def _contains(self: http.Headers, name: Any) -> bool:
    """`name in headers`."""
    return bool(self.get_all(name))


def read_headers_quickly() -> Undo | None:
    """Install the four on `http.Headers` (None: installed already)."""
    if vars(http.Headers).get("get_all") is _get_all:
        return None
    return _undo_all(
        [
            _replace(http.Headers, "get_all", _get_all),
            _replace(http.Headers, "__getitem__", _getitem),
            _replace(http.Headers, "get", _get),
            _replace(http.Headers, "__contains__", _contains),
        ]
    )
