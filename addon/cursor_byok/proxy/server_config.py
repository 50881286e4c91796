"""Cursor's server config never steers a client to a transport this proxy cannot serve.

`GetServerConfig` (passed through to Cursor) carries `http2_config` (docs/protocol.md §2.2):
FORCE_ALL_ENABLED / FORCE_BIDI_ENABLED make Cursor's client open its Agent stream over HTTP/2
(`Run`) whatever its base URL says. A client that reaches us in cleartext (the SDK with an
`http://` base URL, reverse mode) or a proxy running with HTTP/2 off (`--set http2=false`) cannot
be served that way: its HTTP/2 stream would fail, and the turn with it. For those the answer is
rewritten to FORCE_ALL_DISABLED (RunSSE + BidiAppend, which every listener serves); every other
field passes through untouched (kept as unknown fields of our one-field message).
"""

from __future__ import annotations

import json
import logging

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from mitmproxy import ctx
from mitmproxy import http

from cursor_byok.pb import aiserver_v1_pb2 as aipb

log = logging.getLogger(__name__)

_PATH_SUFFIX = "/GetServerConfig"
_HTTP2_ON = (
    aipb.HTTP2_CONFIG_FORCE_ALL_ENABLED,
    aipb.HTTP2_CONFIG_FORCE_BIDI_ENABLED,
)
_JSON_KEY = "http2Config"


def cannot_serve_http2(flow: http.HTTPFlow) -> str | None:
    """Why this client cannot get HTTP/2 from us (None: it can)."""
    if not getattr(ctx.options, "http2", True):
        return "HTTP/2 is off (http2=false)"
    if not flow.client_conn.tls_established:
        return "the client reaches the proxy in cleartext"
    return None


class ServerConfig:
    """Rewrites an HTTP/2-forcing `http2_config` for clients that cannot have HTTP/2."""

    def response(self, flow: http.HTTPFlow) -> None:
        response = flow.response
        if response is None or flow.error or response.stream:
            return
        if not flow.request.path.split("?", 1)[0].endswith(_PATH_SUFFIX):
            return
        if not 200 <= response.status_code < 300 or not response.raw_content:
            return
        why = cannot_serve_http2(flow)
        if why is None:
            return
        ctype = (response.headers.get("content-type") or "").split(";")[0].strip().lower()
        try:
            if ctype == "application/proto":
                changed = _rewrite_proto(response)
            elif ctype == "application/json":
                changed = _rewrite_json(response)
            else:
                return
        except (DecodeError, json_format.ParseError, ValueError) as exc:
            log.info("GetServerConfig: answer not understood (%s); passed through", exc)
            return
        if changed:
            log.info(
                "GetServerConfig: Cursor asked for HTTP/2, but %s: told the client to use "
                "RunSSE + BidiAppend instead",
                why,
            )


def _rewrite_proto(response: http.Response) -> bool:
    message = aipb.GetServerConfigResponse.FromString(response.content or b"")
    if message.http2_config not in _HTTP2_ON:
        return False
    message.http2_config = aipb.HTTP2_CONFIG_FORCE_ALL_DISABLED
    response.content = message.SerializeToString()
    return True


def _rewrite_json(response: http.Response) -> bool:
    body = response.json()
    if not isinstance(body, dict):
        return False
    value = body.get(_JSON_KEY, body.get("http2_config"))
    on = {aipb.Http2Config.Name(v) for v in _HTTP2_ON} | set(_HTTP2_ON)
    if value not in on:
        return False
    body.pop("http2_config", None)
    body[_JSON_KEY] = aipb.Http2Config.Name(aipb.HTTP2_CONFIG_FORCE_ALL_DISABLED)
    response.content = json.dumps(body).encode()
    return True
