"""B of bench_streaming.py: the trivial script plain mitmdump runs. It does what the addon does
for its own loopback hop (plain HTTP to 127.0.0.1:<port>, response streamed) and nothing else."""

import os

from mitmproxy import http

PORT = int(os.environ["BENCH_UPSTREAM_PORT"])
RUN = "/agent.v1.AgentService/Run"


def requestheaders(flow: http.HTTPFlow) -> None:
    # BR: a `Run` upload stays open for the whole turn (KV acks), so it goes on as it comes,
    # and the server is chosen now (mitmproxy connects before the `request` hook)
    if flow.request.path.endswith(RUN):
        flow.request.stream = True
        _to_feeder(flow)


def _to_feeder(flow: http.HTTPFlow) -> None:
    flow.request.scheme = "http"
    flow.request.host = "127.0.0.1"
    flow.request.port = PORT


def request(flow: http.HTTPFlow) -> None:
    _to_feeder(flow)
    # An HTTP/2 request without content-length reaches an HTTP/1.1 server unframed (see
    # mitmproxy_compat.frame_for_http1_upstream): frame it, as the addon does for its hops.
    if "content-length" not in flow.request.headers and flow.request.raw_content is not None:
        flow.request.headers["content-length"] = str(len(flow.request.raw_content))


def responseheaders(flow: http.HTTPFlow) -> None:
    if flow.response is not None:
        flow.response.stream = True
