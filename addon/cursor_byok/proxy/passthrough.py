"""An addon for what passes through to Cursor: its requests reach the upstream whole.

Everything but the Agent RPCs and the model lists goes to Cursor as it came. One thing mitmproxy
gets wrong on the way: an HTTP/2 request whose body has no content-length (how Cursor's SDK sends
every unary call over HTTP/2: privacy mode, analytics, team settings) reaches an HTTP/1.1
upstream with no framing, so the upstream reads an empty body (`mitmproxy_compat`). Buffered
bodies get their length here; streamed ones (ours) are not touched.
"""

from __future__ import annotations

from mitmproxy import http

from cursor_byok.proxy import mitmproxy_compat


class PassThrough:
    def request(self, flow: http.HTTPFlow) -> None:
        if flow.live and not flow.error:
            mitmproxy_compat.frame_for_http1_upstream(flow)
