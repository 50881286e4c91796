"""Agent requests that arrive before the proxy is ready wait or get `unavailable`, never a crash;
the addons load in any order."""

from __future__ import annotations

import asyncio
import json

from mitmproxy.test import taddons
from mitmproxy.test import tflow
from mitmproxy.test import tutils

from cursor_byok.proxy.compose import compose
from cursor_byok.proxy.console import warn_if_exposed
from cursor_byok.wire import connect
from cursor_byok.wire.bidi import encode_run_sse_request


def run_sse_flow():
    body = connect.encode_frame(encode_run_sse_request("early-request"))
    request = tutils.treq(
        method=b"POST",
        path=b"/agent.v1.AgentService/RunSSE",
        host="api2.cursor.sh",
        port=443,
        content=body,
    )
    request.headers["content-type"] = "application/connect+proto"
    request.headers["authorization"] = "Bearer test-token"
    return tflow.tflow(req=request)


def configured(tctx, proxy, tmp_path, **more) -> None:
    tctx.options.update(cursor_byok_data_dir=str(tmp_path), cursor_byok_agent="scripted", **more)


async def test_a_request_before_running_gets_unavailable_not_an_exception(tmp_path) -> None:
    proxy = compose()
    proxy.loopback.startup_wait = 0.05
    with taddons.context(*proxy.addons) as tctx:
        configured(tctx, proxy, tmp_path)
        flow = run_sse_flow()
        await proxy.rpc.request(flow)  # `running` never happened: nothing is ready
    assert flow.response is not None and flow.response.status_code == 503
    assert json.loads(flow.response.content)["code"] == "unavailable"


async def test_a_request_during_start_up_waits_for_the_streamer(tmp_path) -> None:
    proxy = compose()
    with taddons.context(*proxy.addons) as tctx:
        configured(tctx, proxy, tmp_path)
        flow = run_sse_flow()
        early = asyncio.ensure_future(proxy.rpc.request(flow))
        await asyncio.sleep(0)  # the hook is now waiting for readiness
        assert not early.done()
        proxy.loopback.running()
        await asyncio.wait_for(early, 10)
        try:
            assert flow.response is None  # routed to the loopback streamer, not refused
            streamer = proxy.loopback.streamer
            assert streamer is not None
            assert flow.request.host == "127.0.0.1" and flow.request.port in streamer.ports
        finally:
            await proxy.stop()


async def test_streamer_failure_is_an_error_every_agent_request_sees(tmp_path, monkeypatch) -> None:
    from cursor_byok.proxy.loopback import server as streamer

    async def broken(self):
        raise OSError("no loopback for you")

    monkeypatch.setattr(streamer.Streamer, "start", broken)
    proxy = compose()
    with taddons.context(*proxy.addons) as tctx:
        configured(tctx, proxy, tmp_path)
        proxy.loopback.running()
        flow = run_sse_flow()
        await asyncio.wait_for(proxy.rpc.request(flow), 10)
    assert flow.response is not None and flow.response.status_code == 503
    assert "no loopback for you" in json.loads(flow.response.content)["message"]


async def test_a_proxy_reachable_from_other_hosts_without_proxyauth_is_warned_about(
    tmp_path, caplog
) -> None:
    from mitmproxy.addons.proxyauth import ProxyAuth
    from mitmproxy.addons.proxyserver import Proxyserver

    for host, auth, warned in [
        ("0.0.0.0", None, True),
        ("", None, True),
        ("127.0.0.1", None, False),
        ("0.0.0.0", "user:pass", False),
    ]:
        caplog.clear()
        proxy = compose()
        with taddons.context(Proxyserver(), ProxyAuth(), *proxy.addons) as tctx:
            configured(tctx, proxy, tmp_path, listen_host=host)
            if auth:
                tctx.options.update(proxyauth=auth)
            warn_if_exposed()
        assert ("anyone who can reach it" in caplog.text) is warned, (host, auth)


def test_large_bodies_trigger_a_full_gc_now_and_then() -> None:
    """mitmproxy's message constructors leave cycles holding each body; a full GC per
    `every` bytes of large bodies keeps a flood bounded without paying it per request."""
    from cursor_byok.proxy.mitmproxy_compat import LargeBodies

    bodies = LargeBodies()
    assert not any(bodies.seen(1024) for _ in range(100))  # small bodies never count
    per_gc = bodies.every // (1 << 20)
    due = [bodies.seen(1 << 20) for _ in range(3 * per_gc)]
    assert due.count(True) == 3 and due[per_gc - 1] and due[-1]


async def test_the_addons_work_whatever_order_they_are_loaded_in(tmp_path) -> None:
    """Each addon declares the options it reads: reversed, they still configure and serve."""
    proxy = compose()
    with taddons.context(*reversed(proxy.addons)) as tctx:
        configured(tctx, proxy, tmp_path, cursor_byok_coalesce_ms=7, cursor_byok_route_wait_ms=5)
        assert proxy.registry.config.coalesce_window == 0.007
        assert proxy.routing.routes.patience == 0.005
        proxy.loopback.running()
        flow = run_sse_flow()
        await asyncio.wait_for(proxy.rpc.request(flow), 10)
        try:
            assert flow.response is None and flow.request.host == "127.0.0.1"
        finally:
            await proxy.stop()


def test_no_addon_finds_another_at_run_time() -> None:
    """Shared parts come in through constructors (script.compose), never `addons.get`."""
    from pathlib import Path

    proxy_dir = Path(__file__).resolve().parents[2] / "addon" / "cursor_byok" / "proxy"
    offenders = [p.name for p in proxy_dir.rglob("*.py") if "addons.get(" in p.read_text()]
    assert offenders == []
