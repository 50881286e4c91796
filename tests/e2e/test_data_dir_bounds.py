"""Issue 33 item 4 through a real mitmdump: the data dir does not only grow.

Uploads (UploadConversationBlobs) were kept for every conversation and never deleted, so a
burst of them filled a small disk and every later turn was refused. Now: the blob store stays
under `cursor_byok_blobs_max_mb` (least recently used first), an upload that would leave the
disk under `cursor_byok_min_free_mb` is refused before anything is written, a Cursor-model
conversation's uploads are not kept at all, and `cursor-byok usage` shows the store's size.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from cursor_client import FAKE_TOKEN
from cursor_client import CursorLikeClient
from fakes.fake_cursor import FakeCursor
from fakes.fake_provider import FakeProvider
from mitm import start_in_front_of
from provider_config import write_config

from cursor_byok.pb import agent_v1_pb2 as pb

pytestmark = pytest.mark.timeout(120)
UPLOAD = "/agent.v1.AgentService/UploadConversationBlobs"
CURSOR_MODEL = "composer-1"
MiB = 1024 * 1024
CHUNK = 400_000
UPLOADS = 8


class Stack:
    def __init__(self, tmp_path, workspace, fp, backend, *extra: str) -> None:
        config = write_config(tmp_path, fp, "openai-chat")
        backend.held_streams = 0  # Cursor's own runs answer at once
        self.proxy = start_in_front_of(
            backend, tmp_path / "proxy", config, "--set", "cursor_byok_route_wait_ms=200", *extra
        )
        self.client = CursorLikeClient.to_backend(backend.port, self.proxy, workspace)
        self.blobs = self.proxy.data_dir / "blobs"

    async def upload(self, conversation: str, value: bytes):
        request = pb.UploadConversationBlobsRequest(
            conversation_id=conversation, chunk_index=0, total_chunks=1
        )
        request.blobs.add(id=hashlib.sha256(value).digest(), value=value)
        return await self.client.http.post(
            self.client.base_url + UPLOAD,
            content=request.SerializeToString(),
            headers={
                "content-type": "application/proto",
                "connect-protocol-version": "1",
                "authorization": FAKE_TOKEN,
            },
        )

    def stored(self) -> int:
        return sum(p.stat().st_size for p in self.blobs.rglob("*") if p.is_file())

    def has(self, value: bytes) -> bool:
        name = hashlib.sha256(value).hexdigest()
        return (self.blobs / name[:2] / name).exists()

    async def close(self) -> None:
        await self.client.aclose()
        self.proxy.stop()


def blob(n: int) -> bytes:
    return os.urandom(CHUNK - 8) + n.to_bytes(8, "big")


async def test_the_blob_store_stays_under_its_cap_and_keeps_only_ours(tmp_path, workspace) -> None:
    byok = str(uuid.uuid4())  # nobody runs it: private after the route wait
    cursor = str(uuid.uuid4())
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        stack = Stack(tmp_path, workspace, fp, backend, "--set", "cursor_byok_blobs_max_mb=1")
        try:
            # a Cursor-model conversation: its uploads go to Cursor and are not kept here
            first = stack.client.run_request("hi", conversation_id=cursor, model=CURSOR_MODEL)
            assert (await stack.client.turn(first)).end.ok
            theirs = blob(999)
            forwarded = await stack.upload(cursor, theirs)
            values = [blob(n) for n in range(UPLOADS)]
            answers = []
            for value in values:
                answers.append(await stack.upload(byok, value))
                await asyncio.sleep(0.01)  # distinct modification times (the pruning order)
            deadline = time.monotonic() + 20
            while stack.stored() > MiB and time.monotonic() < deadline:
                await stack.upload(byok, values[-1])  # the next look at the store's size
                await asyncio.sleep(0.1)
            stored = stack.stored()
        finally:
            await stack.close()
        usage = subprocess.run(
            [str(Path(sys.executable).with_name("cursor-byok")), "usage", "--since", "all",
             "--data-dir", str(stack.proxy.data_dir), "--config", str(tmp_path / "none.toml")],
            capture_output=True, text=True,
        )  # fmt: skip
    print(f"{UPLOADS} uploads of {CHUNK} B under a 1 MiB cap: {stored} B kept")
    assert forwarded.status_code == 200 and not stack.has(theirs)
    assert any(r.path == UPLOAD for r in backend.requests)  # Cursor got its own upload
    assert [a.status_code for a in answers] == [200] * UPLOADS
    assert stored <= MiB, f"{stored} B kept under a 1 MiB cap"
    assert stack.has(values[-1]) and not stack.has(values[0])  # the oldest went first
    assert "least recently used blob(s)" in stack.proxy.log()
    assert f"data dir {stack.proxy.data_dir}:" in usage.stdout and "blobs " in usage.stdout


async def test_an_upload_the_disk_has_no_room_for_is_refused(tmp_path, workspace) -> None:
    byok = str(uuid.uuid4())
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        # more free space than any disk has: every upload is over the line
        stack = Stack(
            tmp_path, workspace, fp, backend, "--set", "cursor_byok_min_free_mb=1000000000"
        )
        try:
            value = blob(1)
            refused = await stack.upload(byok, value)
        finally:
            await stack.close()
    assert refused.status_code == 429 and refused.json()["code"] == "resource_exhausted"
    assert "this upload needs" in refused.json()["message"]
    assert not stack.has(value) and backend.requests == []
