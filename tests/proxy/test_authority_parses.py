"""authority_parses.py (issue 38): an authority or host check gives what mitmproxy's gave, for
good, malformed, IDNA, IPv6, bytes and str arguments, raises what it raised, asks mitmproxy once
per argument and keeps at most MAX_KEPT answers."""

from __future__ import annotations

import pytest
from mitmproxy import http
from mitmproxy.net import check
from mitmproxy.net.http import url

from cursor_byok.proxy import authority_parses

AUTHORITIES = [
    "api2.cursor.sh",
    "api2.cursor.sh:443",
    b"api2.cursor.sh:8443",
    "[::1]:8080",
    b"[::1]",
    "127.0.0.1:0",
    "b\u00fccher.example:80",
    b"xn--bcher-kva.example",
    "bad host:80",
    "host:99999",
    b"\xff\xfe",
    "",
]
HOSTS = ["api2.cursor.sh", b"api2.cursor.sh", "bad host", b"-bad-.example", "::1", b"", "a" * 300]


def _parse(parse, authority, check_it):
    try:
        return parse(authority, check_it)
    except ValueError as exc:
        return ("raised", type(exc))


def _as_shipped(monkeypatch) -> None:
    """mitmproxy's own functions for this test (an earlier test may have left the patches
    installed); monkeypatch puts back whatever was there."""
    monkeypatch.setattr(url, "parse_authority", authority_parses.MITMPROXY_PARSE_AUTHORITY)
    monkeypatch.setattr(check, "is_valid_host", authority_parses.MITMPROXY_IS_VALID_HOST)


@pytest.fixture
def installed(monkeypatch):
    _as_shipped(monkeypatch)
    undo = authority_parses.parse_authorities_once()
    assert undo is not None
    yield
    undo()


def test_answers_are_mitmproxys_for_every_kind_of_authority(installed) -> None:
    shipped = authority_parses.MITMPROXY_PARSE_AUTHORITY
    for _ in range(2):  # the first asks mitmproxy, the second is kept
        for authority in AUTHORITIES:
            for check_it in (False, True):
                assert _parse(url.parse_authority, authority, check_it) == _parse(
                    shipped, authority, check_it
                ), (authority, check_it)
        for host in HOSTS:
            assert check.is_valid_host(host) is authority_parses.MITMPROXY_IS_VALID_HOST(host)


def test_mitmproxy_is_asked_once_per_argument_and_errors_every_time(installed, monkeypatch):
    asked: list[object] = []
    shipped = authority_parses.MITMPROXY_PARSE_AUTHORITY

    def counting(authority, check_it):
        asked.append(authority)
        return shipped(authority, check_it)

    monkeypatch.setattr(authority_parses, "MITMPROXY_PARSE_AUTHORITY", counting)
    request = http.Request.make(
        "GET", "https://api2.cursor.sh/x", headers={"host": "api2.cursor.sh"}
    )
    for _ in range(5):
        assert request.pretty_host == "api2.cursor.sh"
    assert asked == ["api2.cursor.sh"]  # mitmproxy's parse every time before
    for _ in range(3):
        with pytest.raises(ValueError):
            url.parse_authority("bad host:80", check=True)
    assert asked.count("bad host:80") == 3


def test_at_most_max_kept_answers(installed, monkeypatch) -> None:
    monkeypatch.setattr(authority_parses, "MAX_KEPT", 8)
    for n in range(100):
        url.parse_authority(f"host{n}.example:1", False)
        check.is_valid_host(f"host{n}.example")
    assert len(authority_parses._authorities) <= 8 and len(authority_parses._hosts) <= 8


def test_installed_once_and_removed_whole(monkeypatch) -> None:
    _as_shipped(monkeypatch)
    undo = authority_parses.parse_authorities_once()
    assert undo is not None
    assert authority_parses.parse_authorities_once() is None
    url.parse_authority("api2.cursor.sh", False)
    undo()
    assert url.parse_authority is authority_parses.MITMPROXY_PARSE_AUTHORITY
    assert check.is_valid_host is authority_parses.MITMPROXY_IS_VALID_HOST
    assert authority_parses._authorities == {} and authority_parses._hosts == {}
