"""Bodies built to exhaust memory get Connect errors while the proxy's peak RSS stays bounded."""

from __future__ import annotations

import sys
import uuid

import httpx
import pytest
from bombs import gzip_zeros
from bombs import zstd_zeros
from cursor_client import BIDI_APPEND
from cursor_client import ssl_context
from faultlib import LARGE
from faultlib import peak_rss_mib
from mitm import TEST_HOST

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire.bidi import encode_bidi_append

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(sys.platform != "linux", reason="peak RSS is read from /proc"),
]
MiB = 1 << 20
GROWTH_LIMIT = 100  # MiB, the goal


async def post(mitm, body: bytes, headers: dict[str, str]) -> httpx.Response:
    async with httpx.AsyncClient(
        proxy=mitm.proxy_url,
        verify=ssl_context(mitm.ca_file, False),
        trust_env=False,
        timeout=httpx.Timeout(120),
    ) as http:
        return await http.post(f"https://{TEST_HOST}{BIDI_APPEND}", content=body, headers=headers)


@pytest.mark.parametrize("encoding", ["gzip", "zstd"])
async def test_content_encoding_bombs_are_refused_with_bounded_memory(mitm, encoding) -> None:
    expanded = (1024 if LARGE or encoding == "gzip" else 256) * MiB
    body = gzip_zeros(expanded) if encoding == "gzip" else zstd_zeros(expanded)
    before = peak_rss_mib(mitm.process.pid)
    response = await post(
        mitm, body, {"content-type": "application/proto", "content-encoding": encoding}
    )
    growth = peak_rss_mib(mitm.process.pid) - before
    assert response.status_code == 400
    assert "exceeds" in response.json()["message"]
    assert growth < GROWTH_LIMIT, f"{encoding} bomb ({len(body)} bytes) grew RSS by {growth} MiB"


async def test_out_of_order_flood_hits_the_global_budget(mitm) -> None:
    ids, per_id = (12, 60) if LARGE else (4, 20)
    payload = pb.AgentClientMessage(client_heartbeat=pb.ClientHeartbeat()).SerializeToString()
    padded = payload + _bytes_field(1000, b"\x00" * MiB)  # an unknown field protobuf skips
    before = peak_rss_mib(mitm.process.pid)
    refused = 0
    for _ in range(ids):
        request_id = str(uuid.uuid4())
        for seqno in range(1, per_id + 1):  # seqno 0 never comes: everything waits
            response = await post(
                mitm,
                encode_bidi_append(request_id, seqno, padded, binary=True),
                {"content-type": "application/proto"},
            )
            refused += response.status_code != 200
    growth = peak_rss_mib(mitm.process.pid) - before
    assert growth < GROWTH_LIMIT, f"out-of-order flood grew RSS by {growth} MiB"
    # The 48 MiB global budget, then resource_exhausted (gaps that time out free budget again).
    assert refused > 0


def _bytes_field(number: int, value: bytes) -> bytes:
    """An unknown length-delimited field (protobuf keeps and ignores it)."""
    out = bytearray()
    tag = (number << 3) | 2
    for v in (tag, len(value)):
        while True:
            byte = v & 0x7F
            v >>= 7
            out.append(byte | (0x80 if v else 0))
            if not v:
                break
    return bytes(out) + value
