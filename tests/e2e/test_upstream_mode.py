"""`--mode upstream:` (issue 27 item 9): mitmproxy sends every server connection through the
upstream proxy, which would include the hop to our loopback server; the upstream proxy is
another machine as a rule, whose 127.0.0.1 is not ours, so served turns failed. The hop must
connect directly while everything else still goes through the upstream proxy.

The upstream proxy here is a plain mitmdump that writes down every request and CONNECT it is
asked for, so the test sees what left through it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from cursor_client import CursorLikeClient
from mitm import TEST_HOST
from mitm import Mitm
from mitm import start_mitmdump
from mitm import start_plain_proxy

pytestmark = pytest.mark.timeout(120)
RECORDER = """
import os
from mitmproxy import http

LOG = os.environ["UPSTREAM_PROXY_LOG"]


def _note(kind, flow):
    with open(LOG, "a") as f:
        f.write(f"{kind} {flow.request.host}:{flow.request.port}\\n")


def http_connect(flow: http.HTTPFlow) -> None:
    _note("CONNECT", flow)


def requestheaders(flow: http.HTTPFlow) -> None:
    _note(flow.request.method, flow)
"""


@pytest.fixture(scope="module")
def upstream(tmp_path_factory) -> Iterator[tuple[Mitm, Path]]:
    tmp = tmp_path_factory.mktemp("upstream")
    log = tmp / "seen.log"
    proxy = start_plain_proxy(tmp, RECORDER, {"UPSTREAM_PROXY_LOG": str(log)})
    yield proxy, log
    proxy.stop()


@pytest.fixture(scope="module")
def behind(tmp_path_factory, upstream) -> Iterator[Mitm]:
    proxy, _log = upstream
    tmp = tmp_path_factory.mktemp("behind")
    byok = start_mitmdump(tmp, mode=f"upstream:http://127.0.0.1:{proxy.port}")
    yield byok
    byok.stop()


def _seen(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


@pytest.mark.parametrize("transport", ["run", "bidi"])
async def test_a_served_turn_behind_an_upstream_proxy(
    behind, upstream, workspace, transport
) -> None:
    _proxy, log = upstream
    client = CursorLikeClient.through(behind, workspace, transport=transport)
    try:
        result = await client.turn(
            client.run_request("please look at README.md", conversation_id=str(uuid.uuid4()))
        )
    finally:
        await client.aclose()
    assert result.end.ok, (result.end.error, behind.log())
    assert "# Demo project" in result.text
    # the loopback hop never went to the upstream proxy
    assert not [line for line in _seen(log) if "127.0.0.1" in line], _seen(log)


def test_other_traffic_still_goes_through_the_upstream_proxy(behind, upstream) -> None:
    """A call that is not an Agent run (here: an unknown path of the test host) is mitmproxy's
    to forward, and in upstream mode that means through the upstream proxy."""
    import httpx

    _proxy, log = upstream
    with httpx.Client(proxy=behind.proxy_url, verify=str(behind.ca_file), timeout=20) as http:
        http.post(f"https://{TEST_HOST}/aiserver.v1.DashboardService/GetTeams", content=b"")
    assert f"CONNECT {TEST_HOST}:443" in _seen(log), _seen(log)
