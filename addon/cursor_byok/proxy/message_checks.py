"""mitmproxy's type checks of every request and response, at a set lookup a field (issue 38).

mitmproxy 12 checks the type of each field of every `RequestData` / `ResponseData` it makes
(`MessageData.__post_init__`, when Python runs without -O): `typecheck.check_option_type` per
field, with `typing.get_origin` and the union's arguments walked each time. A request has twelve
fields, a response eight; every flow makes at least two, so on the fallback transports (a flow per
client message, a RunPoll per couple of frames) this was ~6 % of the main thread's samples
(py-spy --gil, RunSSE + BidiAppend). `check_messages_quickly` keeps the checks and their errors:
a field whose value is exactly of a type its annotation names (`bytes`, `Headers`, `None` of an
optional, …) passes at a set lookup; any other value goes through mitmproxy's check as before
(which accepts it, e.g. an int for a float, or raises its TypeError).

A side effect: mitmproxy's check of an optional field tries the first member of the union and
catches its TypeError, a reference cycle that kept every calling frame's locals (a parsed body)
alive until the next full collection (`mitmproxy_compat.LargeBodies`, `forget_traceback`). A
value of a plain member raises nothing now, so building a request or response leaves no garbage.
"""

from __future__ import annotations

import types
import typing
from dataclasses import fields
from typing import Any

from mitmproxy.http import MessageData
from mitmproxy.utils.typecheck import check_option_type

from cursor_byok.proxy.mitmproxy_compat import Undo
from cursor_byok.proxy.mitmproxy_compat import _replace

_MARK = "_cursor_byok_quick_checks"
MITMPROXY_POST_INIT = vars(MessageData).get("__post_init__")  # as it ships (None with -O)
Checks = tuple[tuple[str, frozenset[type], Any], ...]  # (field, types passed at once, annotation)
_CHECKS: dict[type, Checks] = {}


def _plain_types(annotation: Any) -> frozenset[type]:
    """The classes a value may be exactly of to pass `check_option_type(annotation)` for sure:
    the annotation itself if it is a plain class, each plain class of a union; none for
    anything else (sequences, tuples, `Any`, IO: mitmproxy's check decides those)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        members = typing.get_args(annotation)
    else:
        members = (annotation,)
    if all(isinstance(member, type) and typing.get_origin(member) is None for member in members):
        return frozenset(members)
    return frozenset()


def _checks(cls: type) -> Checks:
    checks = _CHECKS.get(cls)
    if checks is None:
        checks = _CHECKS[cls] = tuple(
            (field.name, _plain_types(field.type), field.type) for field in fields(cls)
        )
    return checks


def _post_init(self: MessageData) -> None:
    """`MessageData.__post_init__`: every field checked against its annotation."""
    for name, plain, annotation in _checks(type(self)):
        value = getattr(self, name)
        if type(value) not in plain:
            check_option_type(name, value, annotation)


def check_messages_quickly() -> Undo | None:
    """Install `_post_init` (None: installed already, or Python runs with -O and mitmproxy
    checks nothing)."""
    current = vars(MessageData).get("__post_init__")
    if current is None or getattr(current, _MARK, False):
        return None
    setattr(_post_init, _MARK, True)
    return _replace(MessageData, "__post_init__", _post_init)
