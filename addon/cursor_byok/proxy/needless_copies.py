"""Copies mitmproxy makes on every flow that no one uses (issue 38), made no more.

**Option reads.** `ctx.options.X` is `_Option.current()`: a `copy.deepcopy` of the value, so
that a caller who changes a list it was given cannot change the option; an option left at its
default is copied twice (the `default` property copies too). mitmproxy reads several options
for every flow (the body size limit four times, the connection strategy, the addons' own), and
our addons read theirs in their hooks: ~1–4 µs a read, most of it the copy's dispatch for a
`str`, `int`, `bool` or `None`, which `deepcopy` returns as it is anyway. `read_options_quickly`
returns those at once and copies every other value once, so a caller gets what it got before.

**Context forks.** Each protocol layer of a flow gets its own `Context.fork()`, which builds a
new `connection.Server` (a dataclass with a checked `__setattr__` and a fresh uuid4) and then
replaces it with the parent's server: ~1.5 % of the proxy on RunPoll at 20 streams.
`fork_contexts_quickly` forks without making the server it throws away; the fork is the same.
"""

from __future__ import annotations

import copy
from typing import Any

from mitmproxy import optmanager
from mitmproxy.proxy import context

from cursor_byok.proxy.mitmproxy_compat import Undo
from cursor_byok.proxy.mitmproxy_compat import _replace

MITMPROXY_CURRENT = vars(optmanager._Option)["current"]  # as it ships
MITMPROXY_FORK = vars(context.Context)["fork"]
_AS_THEY_ARE = frozenset({str, int, float, bool, bytes, type(None)})  # deepcopy returns these


def _current(self: Any) -> Any:
    """`_Option.current`: the value (the default while unset), copied unless it cannot change."""
    value = self._default if self.value is optmanager.unset else self.value
    if type(value) in _AS_THEY_ARE:
        return value
    return copy.deepcopy(value)


def read_options_quickly() -> Undo | None:
    """Install `_current` (None: installed already)."""
    if vars(optmanager._Option).get("current") is _current:
        return None
    return _replace(optmanager._Option, "current", _current)


def _fork(self: context.Context) -> context.Context:
    """`Context.fork`: the same client, options and server, a copy of the layer stack."""
    forked = context.Context.__new__(context.Context)
    forked.client = self.client
    forked.options = self.options
    forked.server = self.server
    forked.layers = self.layers.copy()
    return forked


def fork_contexts_quickly() -> Undo | None:
    """Install `_fork` (None: installed already)."""
    if vars(context.Context).get("fork") is _fork:
        return None
    return _replace(context.Context, "fork", _fork)
