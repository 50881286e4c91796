"""`hosts.cursor_host`, the one answer eight addons ask of every flow (issue 38): the same as
`host_matches(pretty_host, cursor_byok_hosts)` or reverse mode always was, with the options
read once per change and each host parsed once, not per flow and per addon."""

from __future__ import annotations

import pytest
from mitmproxy import optmanager
from mitmproxy.net.http import url
from mitmproxy.test import taddons
from mitmproxy.test import tflow
from mitmproxy.test import tutils

from cursor_byok.proxy import hosts
from cursor_byok.proxy import options
from cursor_byok.proxy.hosts import cursor_host
from cursor_byok.proxy.hosts import cursor_hostname


class _Declares:
    """What each of the eight addons does in `load`."""

    def load(self, loader) -> None:
        options.declare(loader, "cursor_byok_hosts")


def _flow(host_header: str | None, address: str = "10.1.2.3", http2: bool = False):
    flow = tflow.tflow(req=tutils.treq(host=address, port=443))
    if http2:
        flow.request.http_version = "HTTP/2.0"
        flow.request.authority = host_header or ""
        flow.request.headers.pop("host", None)
    else:
        flow.request.headers.pop("host", None)
        if host_header is not None:
            flow.request.headers["host"] = host_header
    return flow


@pytest.fixture
def tctx():
    with taddons.context(_Declares()) as context:
        yield context


@pytest.mark.parametrize(
    ("host_header", "address", "http2", "expected"),
    [
        ("api2.cursor.sh", "10.1.2.3", False, True),
        ("API2.Cursor.SH:443", "10.1.2.3", False, True),
        ("cursor.sh.", "10.1.2.3", False, True),
        ("example.com", "api2.cursor.sh", False, False),  # the Host header wins, as pretty_host
        (None, "api2.cursor.sh", False, True),  # no Host header: the address
        (None, "10.1.2.3", False, False),
        ("agent.api5.cursor.sh", "10.1.2.3", True, True),  # :authority
        ("notcursor.sh", "10.1.2.3", True, False),
    ],
)
def test_the_answer_is_pretty_host_against_the_patterns(
    tctx, host_header, address, http2, expected
) -> None:
    flow = _flow(host_header, address, http2)
    assert cursor_host(flow) is expected
    assert hosts.host_matches(flow.request.pretty_host, hosts.DEFAULT_HOSTS) is expected
    assert cursor_host(flow) is expected  # and again, from what it kept


def test_a_changed_option_is_read_again(tctx) -> None:
    flow = _flow("example.com")
    assert not cursor_host(flow)
    tctx.options.update(cursor_byok_hosts=["example.com"])
    assert cursor_host(flow)
    assert not cursor_host(_flow("api2.cursor.sh"))
    assert cursor_hostname("example.com") and not cursor_hostname("api2.cursor.sh")
    tctx.options.update(mode=["reverse:https://api2.cursor.sh"])
    assert cursor_host(_flow("anything.example")) and cursor_hostname("anything.example")


def test_new_options_get_their_own_answer() -> None:
    with taddons.context(_Declares()) as first:
        first.options.update(cursor_byok_hosts=["one.example"])
        assert cursor_host(_flow("one.example"))
    with taddons.context(_Declares()):
        assert not cursor_host(_flow("one.example"))
        assert cursor_host(_flow("api2.cursor.sh"))


def test_options_are_read_once_and_each_host_parsed_once(tctx, monkeypatch) -> None:
    cursor_host(_flow("warm.example"))  # the options read for these options
    reads, parses = [], []
    current = optmanager._Option.current
    parse = url.parse_authority

    def counted_current(self):
        reads.append(self.name)
        return current(self)

    def counted_parse(authority, check):
        parses.append(authority)
        return parse(authority, check)

    monkeypatch.setattr(optmanager._Option, "current", counted_current)
    monkeypatch.setattr(hosts.url, "parse_authority", counted_parse)
    for _ in range(50):
        assert cursor_host(_flow("api2.cursor.sh"))
        assert not cursor_host(_flow("example.com"))
    assert reads == []
    assert parses == ["api2.cursor.sh", "example.com"]
