"""The quick type checks of requests and responses accept and refuse exactly what mitmproxy's
own `MessageData.__post_init__` does, with its errors (issue 38: a set lookup a field)."""

from __future__ import annotations

import weakref

import pytest
from mitmproxy import http
from mitmproxy.http import MessageData

from cursor_byok.proxy import message_checks


class Raw(bytes):
    """A subclass: not one of the plain types, so mitmproxy's check decides."""


MITMPROXY_POST_INIT = message_checks.MITMPROXY_POST_INIT  # None when Python runs with -O


def _request(**changes):
    fields = dict(
        host="example.com",
        port=443,
        method=b"POST",
        scheme=b"https",
        authority=b"example.com",
        path=b"/",
        http_version=b"HTTP/1.1",
        headers=http.Headers(),
        content=b"",
        trailers=None,
        timestamp_start=1.0,
        timestamp_end=None,
    )
    fields.update(changes)
    return http.RequestData(**fields)  # the data class itself: no conversions before its check


ACCEPTED = [
    {},
    {"port": True},  # a bool is an int to mitmproxy
    {"timestamp_start": 3},  # an int is a float to mitmproxy
    {"timestamp_end": 2.5},
    {"content": None},
    {"path": Raw(b"/x")},
    {"trailers": http.Headers(a="b")},
]
REFUSED = [
    {"path": "/"},
    {"port": "443"},
    {"headers": {}},
    {"timestamp_start": None},
    {"content": "text"},
    {"host": b"example.com"},
]
CASES = ACCEPTED + REFUSED


def _outcome(changes: dict) -> str:
    try:
        _request(**changes)
    except TypeError as exc:
        return f"TypeError: {exc}"
    return "ok"


@pytest.mark.skipif(MITMPROXY_POST_INIT is None, reason="python -O: no checks")
@pytest.mark.parametrize("changes", CASES, ids=[",".join(c) or "plain" for c in CASES])
def test_same_outcome_as_mitmproxy(changes: dict, monkeypatch) -> None:
    monkeypatch.setattr(MessageData, "__post_init__", MITMPROXY_POST_INIT)
    theirs = _outcome(changes)
    monkeypatch.setattr(MessageData, "__post_init__", message_checks._post_init)
    assert _outcome(changes) == theirs
    assert theirs.startswith("TypeError") == (changes in REFUSED)


def test_responses_checked_too(monkeypatch) -> None:
    monkeypatch.setattr(MessageData, "__post_init__", message_checks._post_init)
    assert http.Response.make(200, b"x").status_code == 200
    with pytest.raises(TypeError, match="Expected <class 'bytes'> for reason"):
        http.ResponseData(b"HTTP/1.1", http.Headers(), b"", None, 1.0, None, 200, "OK")


@pytest.mark.skipif(MITMPROXY_POST_INIT is None, reason="python -O: no checks")
def test_installed_once_and_removed(monkeypatch) -> None:
    monkeypatch.setattr(MessageData, "__post_init__", MITMPROXY_POST_INIT)
    undo = message_checks.check_messages_quickly()
    assert undo is not None
    try:
        assert vars(MessageData)["__post_init__"] is message_checks._post_init
        assert message_checks.check_messages_quickly() is None
    finally:
        undo()
    assert vars(MessageData)["__post_init__"] is MITMPROXY_POST_INIT


class _Big:
    pass


def test_a_response_leaves_no_garbage_holding_its_callers_frames(
    no_automatic_gc, monkeypatch
) -> None:
    """mitmproxy's check caught a TypeError for every optional field, a cycle holding the
    calling frames' locals until a full collection (test_mitmproxy_compat.py pins that); with
    the quick checks a body dies with its last reference."""
    monkeypatch.setattr(MessageData, "__post_init__", message_checks._post_init)

    def handle() -> weakref.ref:
        body = _Big()
        http.Response.make(200, b"", {"content-type": "application/proto"})
        return weakref.ref(body)

    assert handle()() is None
