"""Issue 33 item 10 through a real mitmdump: mitmproxy's own port is bounded.

- A body announced larger than `body_size_limit` is refused on its headers: before, mitmproxy
  buffered a 200 MiB upload whole (the proxy's peak RSS grew by ~200 MiB) before a hook could
  refuse it. The user's own `--set body_size_limit` wins over ours.
- The open-file soft limit is raised to the hard one at start.
"""

from __future__ import annotations

import os
import resource
import sys

import httpx
import pytest
from mitm import TEST_HOST
from mitm import start_mitmdump

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(not os.path.exists("/proc/self/limits"), reason="needs /proc"),
]
MiB = 1024 * 1024


def peak_rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))


def open_files(pid: int) -> tuple[int, int]:
    with open(f"/proc/{pid}/limits") as limits:
        line = next(line for line in limits if line.startswith("Max open files"))
    soft, hard = line.split()[3:5]
    return int(soft), int(hard)


async def upload(proxy, size: int) -> int | str:
    """PUT `size` bytes (announced by content-length, sent 1 MiB at a time) through the proxy;
    the status, or how the connection ended."""

    async def body():
        chunk = bytes(MiB)
        for _ in range(size // MiB):
            yield chunk

    async with httpx.AsyncClient(proxy=proxy.proxy_url, verify=str(proxy.ca_file)) as client:
        try:
            response = await client.put(
                f"https://{TEST_HOST}/agent.v1.AgentService/UploadConversationBlobs",
                content=body(),
                headers={"content-length": str(size), "content-type": "application/proto"},
            )
        except httpx.HTTPError as exc:
            return type(exc).__name__
    return response.status_code


LOW = "import os, resource, sys; s, h = resource.getrlimit(resource.RLIMIT_NOFILE); "
LOW += "resource.setrlimit(resource.RLIMIT_NOFILE, (min(256, h), h)); "
LOW += "os.execv(sys.argv[1], sys.argv[1:])"


async def test_a_body_over_the_limit_is_refused_on_its_headers(tmp_path) -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    proxy = start_mitmdump(tmp_path, wrap=[sys.executable, "-c", LOW])
    try:
        pid = proxy.process.pid
        before = peak_rss(pid)
        outcome = await upload(proxy, 200 * MiB)
        grown = peak_rss(pid) - before
        limits = open_files(pid)
    finally:
        proxy.stop()
    print(f"200 MiB upload: {outcome}; proxy peak RSS grew {grown / MiB:.0f} MiB; files {limits}")
    assert outcome != 200
    assert grown < 64 * MiB, f"peak RSS grew {grown / MiB:.0f} MiB"
    assert "body_size_limit" in proxy.log()
    if hard != resource.RLIM_INFINITY and hard > 256:
        assert limits == (hard, hard)
        assert f"soft limit 256 raised to {hard}" in proxy.log()


async def test_the_users_own_body_size_limit_wins(tmp_path) -> None:
    proxy = start_mitmdump(tmp_path, "--set", "body_size_limit=1m")
    try:
        outcome = await upload(proxy, 2 * MiB)  # under our default, over the user's
    finally:
        proxy.stop()
    assert outcome != 200 and "body_size_limit" in proxy.log()
