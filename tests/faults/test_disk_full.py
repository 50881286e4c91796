"""Issue 27 item 5 through a real mitmdump whose data dir is a small tmpfs (in a mount namespace
of its own: `unshare -rm`): a full disk is a clear error naming the data dir, before a turn
spends provider tokens, and when a write fails mid-turn the answer is not lost. Before, the
whole answer streamed, then BlobStore's ENOSPC ended the turn with "internal: the turn ended
without closing", a traceback in the log after "ok", the answer missing from the history."""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from hardening import MODEL
from hardening import start_proxy
from hardening import write_config

pytestmark = pytest.mark.timeout(90)
MOUNT = 'mount -t tmpfs -o size="$1" tmpfs "$2" && shift 2 && exec "$@"'


@pytest.fixture(scope="module")
def tmpfs_ok(tmp_path_factory) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1)")
    probe = tmp_path_factory.mktemp("probe")
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", MOUNT, "sh", "1m", str(probe), "true"],
        capture_output=True,
    )
    if done.returncode != 0:
        pytest.skip(f"no tmpfs in a user mount namespace here: {done.stderr.decode()[:200]}")


def on_tmpfs(tmp_path, size: str):
    data = tmp_path / "proxy" / "data"
    data.mkdir(parents=True)
    return data, ["unshare", "-rm", "sh", "-c", MOUNT, "sh", size, str(data)]


def answer(size: int) -> list[bytes]:
    """An OpenAI Chat answer of `size` bytes of text in 1 KiB deltas, then its end."""
    event = {"choices": [{"index": 0, "delta": {"content": "z" * 1024}, "finish_reason": None}]}
    line = b"data: " + json.dumps(event).encode() + b"\n\n"
    stop = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    end = b"data: " + json.dumps(stop).encode() + b"\n\ndata: [DONE]\n\n"
    return [line * 64] * (size // (64 * 1024)) + [end]


async def one_turn(proxy, workspace):
    client = CursorLikeClient.through(proxy, workspace, transport="run")
    try:
        return client, await client.turn(
            client.run_request("hello", conversation_id=str(uuid.uuid4()), model=MODEL)
        )
    finally:
        await client.aclose()


async def test_a_turn_does_not_start_on_a_full_data_dir(tmp_path, workspace, tmpfs_ok) -> None:
    data, wrap = on_tmpfs(tmp_path, "8m")  # under the 64 MiB a turn wants free
    async with FakeProvider(check_on_exit=False) as fp:
        fp.script.text("never asked")
        proxy = start_proxy(tmp_path, write_config(tmp_path, fp.base_url), data_dir=data, wrap=wrap)
        try:
            _, result = await one_turn(proxy, workspace)
        finally:
            proxy.stop()
        asked = len(fp.requests)
    error = result.end.error
    assert error is not None and error.code == "resource_exhausted", error
    assert f"free in cursor-byok's data directory {data}" in error.message
    assert "cursor_byok_min_free_mb" in error.message
    assert asked == 0  # no provider tokens spent on an answer that could not be kept
    assert "Traceback" not in proxy.log()


async def test_a_write_failing_mid_turn_ends_it_clearly_and_keeps_the_answer(
    tmp_path, workspace, tmpfs_ok
) -> None:
    data, wrap = on_tmpfs(tmp_path, "1m")  # the answer's blobs (3 MiB each) cannot fit
    async with FakeProvider(check_on_exit=False) as fp:
        fp.script.raw(answer(3 * 1024 * 1024)).delay = 0
        proxy = start_proxy(
            tmp_path,
            write_config(tmp_path, fp.base_url),
            "--set",
            "cursor_byok_min_free_mb=0",
            data_dir=data,
            wrap=wrap,
        )
        try:
            client, result = await one_turn(proxy, workspace)
        finally:
            proxy.stop()
    log = proxy.log()
    error = result.end.error
    assert error is not None and error.code == "resource_exhausted", error
    assert f"could not store this conversation in its data directory {data}" in error.message
    assert "No space left on device" in error.message
    assert len(result.text) == 3 * 1024 * 1024  # the whole answer was shown ...
    final = result.checkpoints[-1]  # ... and is in the history Cursor keeps
    history = [json.loads(client.blobs[i]) for i in final.root_prompt_messages_json]
    assert history[-1]["role"] == "assistant"
    assert history[-1]["content"][0]["text"] == result.text
    turn_lines = [line for line in log.splitlines() if "conversation" in line and "turn " in line]
    assert len(turn_lines) == 1 and "error resource_exhausted" in turn_lines[0], turn_lines
    assert "Traceback" not in log
