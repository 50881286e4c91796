"""GetServerConfig's http2_config is rewritten only for a client that cannot have HTTP/2 here."""

from __future__ import annotations

import json

import pytest
from mitmproxy.test import taddons
from mitmproxy.test import tflow
from mitmproxy.test import tutils

from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.proxy.server_config import ServerConfig

PATH = "/aiserver.v1.ServerConfigService/GetServerConfig"
OTHER_FIELD = b"\x0a\x03abc"  # a field we do not model: must pass through


def _flow(body: bytes, ctype: str = "application/proto", *, tls: bool = False):
    flow = tflow.tflow(req=tutils.treq(method=b"POST", path=PATH.encode()))
    flow.response = tutils.tresp(content=body)
    flow.response.headers["content-type"] = ctype
    flow.client_conn.timestamp_tls_setup = 1.0 if tls else None
    return flow


def _config(flow) -> aipb.GetServerConfigResponse:
    return aipb.GetServerConfigResponse.FromString(flow.response.content)


@pytest.mark.parametrize(
    "forced", [aipb.HTTP2_CONFIG_FORCE_ALL_ENABLED, aipb.HTTP2_CONFIG_FORCE_BIDI_ENABLED]
)
def test_a_cleartext_client_is_told_to_use_http1(forced) -> None:
    body = aipb.GetServerConfigResponse(http2_config=forced).SerializeToString() + OTHER_FIELD
    flow = _flow(body)
    with taddons.context():
        ServerConfig().response(flow)
    assert _config(flow).http2_config == aipb.HTTP2_CONFIG_FORCE_ALL_DISABLED
    assert flow.response.content.endswith(OTHER_FIELD)


def test_a_tls_client_keeps_what_cursor_said() -> None:
    body = aipb.GetServerConfigResponse(http2_config=2).SerializeToString()
    flow = _flow(body, tls=True)
    with taddons.context():
        ServerConfig().response(flow)
    assert flow.response.content == body


def test_http2_off_rewrites_for_tls_clients_too() -> None:
    flow = _flow(aipb.GetServerConfigResponse(http2_config=2).SerializeToString(), tls=True)
    with taddons.context() as tctx:
        tctx.options.http2 = False
        ServerConfig().response(flow)
    assert _config(flow).http2_config == aipb.HTTP2_CONFIG_FORCE_ALL_DISABLED


def test_json_answers_and_other_values_are_handled() -> None:
    flow = _flow(
        json.dumps({"http2Config": "HTTP2_CONFIG_FORCE_ALL_ENABLED"}).encode(), "application/json"
    )
    with taddons.context():
        ServerConfig().response(flow)
    assert json.loads(flow.response.content) == {"http2Config": "HTTP2_CONFIG_FORCE_ALL_DISABLED"}
    untouched = aipb.GetServerConfigResponse(http2_config=3).SerializeToString()
    flow = _flow(untouched)
    with taddons.context():
        ServerConfig().response(flow)
    assert flow.response.content == untouched
