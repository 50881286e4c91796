"""A provider that misbehaves, seen through the whole proxy: each fault ends the turn with an
error Cursor shows (or recovers), never a hang, never a traceback, never assistant text."""

from __future__ import annotations

import contextlib
import sys
import uuid
from pathlib import Path

import pytest
from bombs import gzip_zeros
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from faultlib import peak_rss_mib
from mitm import start_mitmdump

pytestmark = pytest.mark.timeout(120)
MiB = 1 << 20
BOMB_GROWTH_LIMIT = 100  # MiB; the goal is < 200, the SSE line bound is 32


def config(tmp_path, fp: FakeProvider):
    path = tmp_path / "config.toml"
    path.write_text(
        f"""
default_model = "Fault Model"

[providers.flaky]
kind = "openai-chat"
base_url = "{fp.base_url}"
api_key_env = "FAKE_PROVIDER_KEY"
max_retries = 1
read_timeout = 3
first_token_timeout = 2

[[models]]
name = "Fault Model"
provider = "flaky"
model = "fake-upstream-1"
"""
    )
    return path


async def one_turn(tmp_path, workspace, fp) -> tuple:
    proxy = start_mitmdump(
        tmp_path / "proxy",
        agent="provider",
        config=config(tmp_path, fp),
        env={"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"},
    )
    client = CursorLikeClient.through(proxy, workspace)
    try:
        result = await client.turn(
            client.run_request(
                "hello", conversation_id=str(uuid.uuid4()), model="Fault Model", workspace=workspace
            )
        )
    finally:
        await client.aclose()
        proxy.stop()
    return result, proxy.log()


FAULTS = {
    "500-then-ok": lambda s: (s.error(500), s.text("recovered")),
    "429-twice": lambda s: (s.error(429, retry_after=0), s.error(429, retry_after=0)),
    "reset-mid-stream": lambda s: (s.cut(text="half", hard=True), s.cut(text="half", hard=True)),
    "cut-mid-stream": lambda s: (s.cut(text="half"), s.cut(text="half")),
    "in-band-error": lambda s: s.stream_error(text="so far", message="overloaded"),
    "stall": lambda s: (s.stall(), s.stall()),
    "trickle": lambda s: (s.trickle(every=0.2), s.trickle(every=0.2)),
    "giant-line": lambda s: s.giant(40 * MiB),
    "malformed-sse": lambda s: s.raw([b"data: {not json\n\n", b"data: [DONE]\n\n"]),
    "empty-body": lambda s: (s.empty(), s.empty()),
}


@pytest.mark.parametrize("fault", list(FAULTS))
async def test_provider_fault_through_the_proxy(tmp_path, workspace, fault) -> None:
    async with FakeProvider(check_on_exit=False) as fp:
        FAULTS[fault](fp.script)
        result, log = await one_turn(tmp_path, workspace, fp)
    assert "Traceback" not in log
    if fault == "500-then-ok":
        assert result.end.ok and result.text == "recovered"
        return
    assert result.end.error is not None, f"{fault}: the turn ended without an error"
    assert result.end.error.details, "Cursor gets a typed error it can show"
    assert "turn_ended" not in result.kinds()
    if fault in ("stall", "trickle"):
        assert "2" in result.end.error.message  # names the first-token budget (2 s)


@pytest.mark.skipif(sys.platform != "linux", reason="peak RSS is read from /proc")
async def test_a_gzip_bomb_from_the_provider_ends_the_turn_with_bounded_memory(
    tmp_path, workspace
) -> None:
    """1 MB of gzip that inflates to 1 GiB of zeros (no line end: the SSE line bound must stop
    it). The decoder hands the SSE parser 64 KiB at a time, so the proxy grows by about that
    bound (32 MiB), not by what the provider's bytes inflate to."""
    bomb = gzip_zeros(1 << 30)
    assert len(bomb) < 1.1 * MiB
    async with FakeProvider(check_on_exit=False) as fp:
        fp.script.text("warm")
        fp.script.raw(
            [bomb[i : i + 64 * 1024] for i in range(0, len(bomb), 64 * 1024)],
            headers={"content-encoding": "gzip"},
        ).delay = 0
        proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=config(tmp_path, fp),
            env={"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"},
        )
        client = CursorLikeClient.through(proxy, workspace)
        try:
            warm = await client.turn(
                client.run_request("hi", conversation_id=str(uuid.uuid4()), model="Fault Model")
            )
            assert warm.end.ok and warm.text == "warm"
            with contextlib.suppress(OSError):  # VmHWM := now (Linux ≥ 4.0)
                Path(f"/proc/{proxy.process.pid}/clear_refs").write_text("5")
            before = peak_rss_mib(proxy.process.pid)
            result = await client.turn(
                client.run_request("bomb", conversation_id=str(uuid.uuid4()), model="Fault Model")
            )
            growth = peak_rss_mib(proxy.process.pid) - before
        finally:
            await client.aclose()
            proxy.stop()
    assert result.end.error is not None, "the bomb turn ended without an error"
    assert "larger than 32 MiB" in result.end.error.message
    assert "Traceback" not in proxy.log()
    assert growth < BOMB_GROWTH_LIMIT, f"a 1 MB gzip bomb grew the proxy by {growth:.0f} MiB"
