"""header_reads.py (issue 38): a header lookup gives what mitmproxy's gave, for every kind of
name mitmproxy takes, present, repeated, empty or missing, and raises what it raised."""

from __future__ import annotations

import pytest
from mitmproxy import http

from cursor_byok.proxy import header_reads

SHIPPED = {
    "get_all": header_reads.MITMPROXY_GET_ALL,
    "__getitem__": http.Headers.__mro__[1].__getitem__,  # what Headers inherits
    "get": http.Headers.__mro__[1].get,
    "__contains__": http.Headers.__mro__[1].__contains__,
}
OURS = {
    "get_all": header_reads._get_all,
    "__getitem__": header_reads._getitem,
    "get": header_reads._get,
    "__contains__": header_reads._contains,
}


def _headers() -> http.Headers:
    return http.Headers(
        [
            (b"Host", b"api2.cursor.sh"),
            (b"Set-Cookie", b"a=1"),
            (b"set-cookie", b"b=2"),
            (b"X-Empty", b""),
            (b"X-Utf8", "caf\u00e9".encode()),
            (b"X-Raw", b"\xff\xfe"),
        ]
    )


NAMES = [
    "host",
    "HOST",
    b"Host",
    "set-cookie",
    b"SET-COOKIE",
    "x-empty",
    "X-Utf8",
    "x-raw",
    "missing",
    b"missing",
    "",
]


def _lookups(headers: http.Headers) -> list:
    out = []
    for name in NAMES:
        out.append(headers.get_all(name))
        out.append(headers.get(name))
        out.append(headers.get(name, "default"))
        out.append(name in headers)
        try:
            out.append(headers[name])
        except KeyError as exc:
            out.append(("KeyError", exc.args))
    out.append(dict(headers.items()))
    out.append(list(headers.keys()))
    return out


def _errors(headers: http.Headers) -> list[str]:
    out = []
    for call in (
        lambda: headers.get(5),
        lambda: headers.get_all(5),
        lambda: headers[5],
        lambda: 5 in headers,
        lambda: headers.get(None),
    ):
        try:
            call()
            out.append("none")
        except Exception as exc:  # the same kind of error as mitmproxy's
            out.append(type(exc).__name__)
    return out


def _install(monkeypatch, methods: dict) -> None:
    for name, method in methods.items():
        monkeypatch.setattr(http.Headers, name, method)


def test_the_lookups_are_mitmproxys(monkeypatch) -> None:
    _install(monkeypatch, SHIPPED)
    shipped, shipped_errors = _lookups(_headers()), _errors(_headers())
    _install(monkeypatch, OURS)
    assert _lookups(_headers()) == shipped
    assert _errors(_headers()) == shipped_errors
    assert shipped_errors[:4] == ["TypeError"] * 4


def test_a_changed_header_is_seen(monkeypatch) -> None:
    _install(monkeypatch, OURS)
    headers = _headers()
    headers["x-request-id"] = "one"
    assert headers.get("X-Request-Id") == "one"
    del headers["host"]
    assert "host" not in headers and headers.get("host", "") == ""


def test_installed_once_and_removed(monkeypatch) -> None:
    _install(monkeypatch, {"get_all": header_reads.MITMPROXY_GET_ALL})
    for name in ("__getitem__", "get", "__contains__"):
        if name in vars(http.Headers):
            monkeypatch.delattr(http.Headers, name)
    undo = header_reads.read_headers_quickly()
    assert undo is not None
    try:
        assert all(vars(http.Headers)[name] is method for name, method in OURS.items())
        assert header_reads.read_headers_quickly() is None
    finally:
        undo()
    assert vars(http.Headers)["get_all"] is header_reads.MITMPROXY_GET_ALL
    assert not {"__getitem__", "get", "__contains__"} & set(vars(http.Headers))


@pytest.mark.parametrize("name", ["content-length", b"Content-Length"])
def test_bytes_and_str_names_find_the_same_header(monkeypatch, name) -> None:
    _install(monkeypatch, OURS)
    headers = http.Headers(content_length="12")
    assert headers.get(name) == "12" and headers.get_all(name) == ["12"]
