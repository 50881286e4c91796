"""mitmproxy's option reads without deep copies of values no one can change (issue 38).

`ctx.options.X` is `_Option.current()`: a `copy.deepcopy` of the value, so that a caller who
changes a list it was given cannot change the option; an option left at its default is copied
twice (the `default` property copies too). mitmproxy reads several options for every flow (the
body size limit four times, the connection strategy, the addons' own), and our addons read
theirs in their hooks: ~1–4 µs a read, most of it the copy's dispatch for a `str`, `int`,
`bool` or `None`, which `deepcopy` returns as it is anyway. `read_options_quickly` returns
those at once and copies every other value once, so what a caller gets is what it got before.
"""

from __future__ import annotations

import copy
from typing import Any

from mitmproxy import optmanager

from cursor_byok.proxy.mitmproxy_compat import Undo
from cursor_byok.proxy.mitmproxy_compat import _replace

_MARK = "_cursor_byok_quick_reads"
MITMPROXY_CURRENT = vars(optmanager._Option)["current"]  # as it ships
_AS_THEY_ARE = frozenset({str, int, float, bool, bytes, type(None)})  # deepcopy returns these


def _current(self: Any) -> Any:
    """`_Option.current`: the value (the default while unset), copied unless it cannot change."""
    value = self._default if self.value is optmanager.unset else self.value
    if type(value) in _AS_THEY_ARE:
        return value
    return copy.deepcopy(value)


def read_options_quickly() -> Undo | None:
    """Install `_current` (None: installed already)."""
    if getattr(vars(optmanager._Option).get("current"), _MARK, False):
        return None
    setattr(_current, _MARK, True)
    return _replace(optmanager._Option, "current", _current)
