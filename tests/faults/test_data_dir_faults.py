"""The data dir under stress, through a real mitmdump (issue 27 items 4 and 5): another process
holding the usage database's lock, and a disk that fills up."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from cursor_client import CursorLikeClient
from mitm import start_mitmdump
from store.test_usage_writer import LockHolder

from cursor_byok.store.usage import UsageStore

pytestmark = pytest.mark.timeout(120)


def _rows(data_dir: Path) -> list:
    store = UsageStore(data_dir)
    try:
        return store.rows()
    finally:
        store.close()


async def test_a_held_usage_lock_stops_no_turn_and_loses_no_row(tmp_path, workspace) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    holder = LockHolder(data_dir)  # held for both turns: a DB browser left open
    proxy = start_mitmdump(tmp_path, data_dir=data_dir)
    client = CursorLikeClient.through(proxy, workspace)
    took = []
    try:
        for text in ("please look at README.md", "and again"):
            begun = time.monotonic()
            result = await client.turn(client.run_request(text, conversation_id=str(uuid.uuid4())))
            took.append(time.monotonic() - begun)
            assert result.end.ok, result.end.error
    finally:
        await client.aclose()
        holder.release()
        proxy.stop()  # shutdown writes what waited
    print(f"turns with the usage database locked: {', '.join(f'{t:.2f} s' for t in took)}")
    assert len(_rows(data_dir)) == 2, proxy.log()


def _tmpfs(path: Path, size: str) -> bool:
    path.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)],
        capture_output=True,
    )
    return done.returncode == 0


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MiB file system of its own for the data dir (needs the right to mount one)."""
    path = tmp_path / "small"
    if os.geteuid() != 0 or not _tmpfs(path, "4m"):
        pytest.skip("cannot mount a tmpfs here")
    yield path
    subprocess.run(["umount", "-l", str(path)], check=False)


async def test_a_full_data_dir_before_a_turn_is_a_clear_error(tmp_path, workspace) -> None:
    """No tmpfs needed: the turn asks for more free space than any disk has."""
    proxy = start_mitmdump(tmp_path, "--set", "cursor_byok_min_free_mb=100000000")
    client = CursorLikeClient.through(proxy, workspace)
    try:
        result = await client.turn(client.run_request("hi", conversation_id=str(uuid.uuid4())))
    finally:
        await client.aclose()
        proxy.stop()
    assert result.end.error is not None and result.end.error.code == "resource_exhausted"
    assert str(proxy.data_dir) in result.end.error.message
    assert "cursor_byok_min_free_mb" in result.end.error.message
    assert not result.updates("text_delta")  # nothing was spent on an answer


async def test_the_disk_filling_up_mid_turn_ends_it_clearly_and_keeps_the_answer(
    tmp_path, workspace, small_disk
) -> None:
    data_dir = small_disk / "data"
    proxy = start_mitmdump(tmp_path, "--set", "cursor_byok_min_free_mb=0", data_dir=data_dir)
    filler = small_disk / "filler"

    def fill_the_disk(turn) -> None:
        """While the model's tool runs on the client, something else takes the last byte."""
        with open(filler, "wb", buffering=0) as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
            except OSError:
                pass

    client = CursorLikeClient.through(proxy, workspace)
    client.before_exec = fill_the_disk
    try:
        result = await client.turn(
            client.run_request("please look at README.md", conversation_id=str(uuid.uuid4()))
        )
    finally:
        await client.aclose()
        proxy.stop()
    log = proxy.log()
    assert result.end.error is not None and result.end.error.code == "resource_exhausted", log
    assert str(data_dir) in result.end.error.message and "kept" in result.end.error.message
    assert "# Demo project" in result.text  # the answer reached Cursor
    assert result.checkpoints  # and a checkpoint with it: the chat can continue from there
    assert "Traceback" not in log and "turn ended without closing" not in log
    assert "error resource_exhausted" in log  # the turn's one line says how it ended
