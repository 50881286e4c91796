"""Issue 33 item 3 through a real mitmdump: the media store is bounded and has an owner.

A 2 MiB gzip body PUT to `/cursor-byok/media/...` was decoded by mitmproxy's unbounded decoder
(the proxy grew by 4 GB). Now our bounded inflater stops at the per-upload bound: the proxy's
peak RSS (VmHWM of the mitmdump process) grows by about that bound, not by the body's decoded
size. The URLs name their owner: another client asking for the same key gets a URL (and a file)
of its own, and a URL we did not make reads and writes nothing. In total the store keeps
`cursor_byok_media_max_mb`, dropping the oldest uploads first.
"""

from __future__ import annotations

import uuid
import zlib

import pytest
from cursor_client import FAKE_TOKEN
from cursor_client import CursorLikeClient
from fakes.fake_cursor import FakeCursor
from fakes.fake_provider import FakeProvider
from mitm import start_in_front_of
from provider_config import write_config

from cursor_byok.pb import agent_v1_pb2 as pb

pytestmark = pytest.mark.timeout(120)
SIGNED = "/agent.v1.AgentService/GetSignedUrlForAttachedMedia"
MiB = 1024 * 1024
BOMB = 256 * MiB  # decoded size of the gzip body (~256 KiB on the wire)


def gzip_of_zeros(size: int) -> bytes:
    """gzip of `size` zero bytes, made without holding them."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = bytes(MiB)
    out = [packer.compress(chunk) for _ in range(size // MiB)]
    return b"".join([*out, packer.flush()])


def peak_rss(pid: int) -> int:
    """The process's peak resident set (VmHWM), bytes."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


class Stack:
    def __init__(self, tmp_path, workspace, fp, backend, *extra: str) -> None:
        config = write_config(tmp_path, fp, "openai-chat")
        self.proxy = start_in_front_of(
            backend, tmp_path / "proxy", config, "--set", "cursor_byok_route_wait_ms=200", *extra
        )
        self.client = CursorLikeClient.to_backend(backend.port, self.proxy, workspace)

    async def signed(self, conversation: str, key: str, token: str = FAKE_TOKEN):
        request = pb.GetSignedUrlForAttachedMediaRequest(
            conversation_id=conversation, key=key, mime_type="image/png"
        )
        headers = {"content-type": "application/proto", "connect-protocol-version": "1"}
        response = await self.client.http.post(
            self.client.base_url + SIGNED,
            content=request.SerializeToString(),
            headers={**headers, "authorization": token},
        )
        assert response.status_code == 200, response.text
        return pb.GetSignedUrlForAttachedMediaResponse.FromString(response.content)

    async def close(self) -> None:
        await self.client.aclose()
        self.proxy.stop()


@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/status"), reason="needs /proc")
async def test_a_gzip_bomb_is_refused_within_the_bound_and_media_has_an_owner(
    tmp_path, workspace
) -> None:
    bomb = gzip_of_zeros(BOMB)
    conversation = str(uuid.uuid4())
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        stack = Stack(tmp_path, workspace, fp, backend)
        try:
            mine = await stack.signed(conversation, "shot.png")
            http = stack.client.http
            pid = stack.proxy.process.pid
            before = peak_rss(pid)
            refused = await http.put(
                mine.put_url,
                content=bomb,
                headers={"content-encoding": "gzip", "content-type": "image/png"},
            )
            grown = peak_rss(pid) - before
            # the owner's upload, and what another client (or a guessed URL) gets
            kept = await http.put(mine.put_url, content=b"mine", headers={"content-type": "a/b"})
            theirs = await stack.signed(conversation, "shot.png", token="Bearer someone.else")
            their_read = await http.get(theirs.get_url)
            overwrite = await http.put(theirs.put_url, content=b"theirs")
            mine_after = await http.get(mine.get_url)
            theirs_after = await http.get(theirs.get_url)
            _owner, mac, _rest = mine.put_url.split("/cursor-byok/media/")[1].split("/", 2)
            forged = mine.put_url.replace(f"/{mac}/", "/" + "0" * len(mac) + "/")
            forged_put = await http.put(forged, content=b"forged")
            forged_get = await http.get(forged.replace("shot.png", "other.png"))
            again = await stack.signed(conversation, "shot.png")  # a refresh: the same URL
        finally:
            await stack.close()
    print(f"media bomb: {len(bomb)} B gzip of {BOMB} B; proxy peak RSS grew {grown / MiB:.0f} MiB")
    assert refused.status_code == 413, refused.text
    assert grown < 160 * MiB, f"peak RSS grew {grown / MiB:.0f} MiB for a {BOMB // MiB} MiB bomb"
    assert kept.status_code == 200
    assert theirs.put_url != mine.put_url and their_read.status_code == 404
    assert overwrite.status_code == 200 and theirs_after.content == b"theirs"
    assert mine_after.status_code == 200 and mine_after.content == b"mine"
    assert mine_after.headers["content-type"] == "a/b"
    assert forged_put.status_code == 404 and forged_get.status_code == 404
    assert again.get_url == mine.get_url


async def test_media_in_total_keeps_the_newest_uploads(tmp_path, workspace) -> None:
    conversation = str(uuid.uuid4())
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        stack = Stack(tmp_path, workspace, fp, backend, "--set", "cursor_byok_media_max_mb=1")
        try:
            urls = [await stack.signed(conversation, f"shot-{n}.png") for n in range(4)]
            puts = [
                await stack.client.http.put(u.put_url, content=bytes([n]) * 400_000)
                for n, u in enumerate(urls)
            ]
            reads = [await stack.client.http.get(u.get_url) for u in urls]
            too_big = await stack.client.http.put(urls[0].put_url, content=bytes(MiB + 1))
        finally:
            await stack.close()
        media = [p for p in (stack.proxy.data_dir / "media").iterdir() if p.suffix == ""]
    assert [p.status_code for p in puts] == [200] * 4
    # 1 MiB holds two uploads of 400 kB: the two oldest went
    assert [r.status_code for r in reads] == [404, 404, 200, 200]
    assert reads[3].content == bytes([3]) * 400_000
    assert too_big.status_code == 507 and "cursor_byok_media_max_mb" in too_big.text
    assert sum(p.stat().st_size for p in media if not p.name.startswith(".")) <= MiB
