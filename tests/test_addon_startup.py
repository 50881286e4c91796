"""Agent requests that arrive before the addon is ready wait or get `unavailable`, never a crash."""

from __future__ import annotations

import asyncio
import json

from mitmproxy.test import taddons
from mitmproxy.test import tflow
from mitmproxy.test import tutils

from cursor_byok.protocol import connect
from cursor_byok.protocol.bidi import encode_run_sse_request
from cursor_byok.proxy.addon import CursorByok


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
    return tflow.tflow(req=request)


async def test_a_request_before_running_gets_unavailable_not_an_exception(tmp_path) -> None:
    addon = CursorByok()
    addon.startup_wait = 0.05
    with taddons.context(addon) as tctx:
        tctx.configure(addon, cursor_byok_data_dir=str(tmp_path), cursor_byok_agent="scripted")
        flow = run_sse_flow()
        await addon.request(flow)  # `running` never happened: nothing is ready
    assert flow.response is not None and flow.response.status_code == 503
    assert json.loads(flow.response.content)["code"] == "unavailable"


async def test_a_request_during_start_up_waits_for_the_streamer(tmp_path) -> None:
    addon = CursorByok()
    with taddons.context(addon) as tctx:
        tctx.configure(addon, cursor_byok_data_dir=str(tmp_path), cursor_byok_agent="scripted")
        flow = run_sse_flow()
        early = asyncio.ensure_future(addon.request(flow))
        await asyncio.sleep(0)  # the hook is now waiting for readiness
        assert not early.done()
        addon.running()
        await asyncio.wait_for(early, 10)
        try:
            assert flow.response is None  # routed to the loopback streamer, not refused
            assert flow.request.host == "127.0.0.1" and flow.request.port == addon.streamer.port
        finally:
            await addon.stop()


async def test_streamer_failure_is_an_error_every_agent_request_sees(tmp_path, monkeypatch) -> None:
    from cursor_byok.proxy.loopback import server as streamer

    async def broken(self):
        raise OSError("no loopback for you")

    monkeypatch.setattr(streamer.Streamer, "start", broken)
    addon = CursorByok()
    with taddons.context(addon) as tctx:
        tctx.configure(addon, cursor_byok_data_dir=str(tmp_path), cursor_byok_agent="scripted")
        addon.running()
        flow = run_sse_flow()
        await asyncio.wait_for(addon.request(flow), 10)
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
        addon = CursorByok()
        with taddons.context(Proxyserver(), ProxyAuth(), addon) as tctx:
            tctx.configure(
                addon,
                cursor_byok_data_dir=str(tmp_path),
                cursor_byok_agent="scripted",
                listen_host=host,
            )
            if auth:
                tctx.options.update(proxyauth=auth)
            addon._warn_if_exposed()
        assert ("anyone who can reach it" in caplog.text) is warned, (host, auth)


def test_large_bodies_trigger_a_full_gc_now_and_then(monkeypatch) -> None:
    """mitmproxy's message constructors leave cycles holding each body; a full GC per
    GC_EVERY bytes of large bodies keeps a flood bounded without paying it per request."""
    from cursor_byok.proxy import addon as addon_module

    calls = []
    monkeypatch.setattr(addon_module.gc, "collect", lambda *a: calls.append(a))
    addon = CursorByok()
    for _ in range(100):
        addon._collect_after(1024)  # small bodies never count
    assert calls == []
    per_gc = addon_module.GC_EVERY // (1 << 20)
    for _ in range(3 * per_gc):
        addon._collect_after(1 << 20)
    assert len(calls) == 3
