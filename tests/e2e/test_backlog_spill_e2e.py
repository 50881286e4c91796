"""Issue 38 item 2 through a real mitmdump: a long answer's older frames leave memory for a file
of the run in the data dir (`cursor_byok_backlog_memory_kb`, set to 1024 here), a stream
reopened mid-answer and a retry after the end replay them byte-identical from it, and the file
goes once the run is dropped (`cursor_byok_linger_ms`)."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from pathlib import Path

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from mitm import start_mitmdump
from provider_config import KEY_ENV
from provider_config import MODEL
from provider_config import write_config

from cursor_byok.pb import agent_v1_pb2 as pb

pytestmark = pytest.mark.timeout(180)
MiB = 1 << 20
TEXT = 3 * MiB  # three times the bound: it spills more than once
LINGER_MS = 8000  # the retry after the end comes well within it


def sse(text: str) -> bytes:
    event = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    return b"data: " + json.dumps(event, separators=(",", ":")).encode() + b"\n\n"


def answer() -> tuple[str, list[bytes]]:
    """TEXT characters in 1 KiB deltas (each its own letter run), ~64 KiB of SSE a chunk."""
    deltas = [chr(ord("a") + n % 26) * 1024 for n in range(TEXT // 1024)]
    chunks = [b"".join(sse(d) for d in deltas[i : i + 64]) for i in range(0, len(deltas), 64)]
    tail = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    chunks.append(b"data: " + json.dumps(tail).encode() + b"\n\ndata: [DONE]\n\n")
    return "".join(deltas), chunks


def replayable(frames: list[bytes]) -> list[bytes]:
    """The frames a new attempt of the run gets again (answered requests are not repeated)."""
    kept = []
    for payload in frames:
        kind = pb.AgentServerMessage.FromString(payload).WhichOneof("message")
        if kind not in ("kv_server_message", "exec_server_message"):
            kept.append(payload)
    return kept


def spill_files(data_dir: Path) -> list[Path]:
    return sorted((data_dir / "runs").glob("*.backlog"))


async def until_gone(data_dir: Path, deadline: float) -> list[Path]:
    """The spill files left once they went or the deadline passed (they go when the run is
    dropped, at the end of its linger: a condition waited on, not a sleep)."""
    while spill_files(data_dir) and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    return spill_files(data_dir)


async def test_a_spilled_backlog_replays_byte_identical_and_goes_with_its_run(
    tmp_path, transport
) -> None:
    text, chunks = answer()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    received = 0

    def past_the_bound(message: pb.AgentServerMessage) -> bool:
        """Drop the stream once 2 MiB of text came: the first MiB is on disk by then."""
        nonlocal received
        received += len(message.interaction_update.text_delta.text)
        return received > 2 * MiB

    async with FakeProvider() as fp:
        fp.script.raw(chunks).delay = 0
        proxy = start_mitmdump(
            tmp_path / "proxy",
            "--set",
            "cursor_byok_backlog_memory_kb=1024",
            "--set",
            f"cursor_byok_linger_ms={LINGER_MS}",
            agent="provider",
            config=write_config(tmp_path, fp, "openai-chat"),
            env={KEY_ENV: "sk-test-not-a-real-key"},
        )
        data_dir = tmp_path / "proxy" / "data"
        client = CursorLikeClient.through(
            proxy, workspace, transport=transport, drop_on=past_the_bound
        )
        try:
            run_id = str(uuid.uuid4())
            first = client.run_request("long", conversation_id=str(uuid.uuid4()), model=MODEL)
            first.run_request.run_id = run_id
            # the same request id reopened mid-answer: it replays what this stream had, each
            # frame checked byte for byte against it (cursor_client._Replay)
            done = await client.turn(first, request_id=run_id)
            spilled = [path.stat().st_size for path in spill_files(data_dir)]
            again = await client.turn(first, request_id=str(uuid.uuid4()))  # Cursor's retry
            left = await until_gone(data_dir, time.monotonic() + LINGER_MS / 1000 + 60)
        finally:
            await client.aclose()
            proxy.stop()
        calls = len(fp.requests)
    assert done.end.ok and again.end.ok, (done.end.error, again.end.error)
    assert done.reconnects == 1 and done.text == text
    assert calls == 1  # the retry replayed the run, it did not run it again
    assert len(spilled) == 1 and spilled[0] > MiB  # the run spilled, to one file
    assert replayable(again.frames) == replayable(done.frames)  # from disk, byte-identical
    assert left == []  # gone with the run
