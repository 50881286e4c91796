"""A provider that misbehaves, seen through the whole proxy: each fault ends the turn with an
error Cursor shows (or recovers), never a hang, never a traceback, never assistant text."""

from __future__ import annotations

import uuid

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from mitm import start_mitmdump

pytestmark = pytest.mark.timeout(120)
MiB = 1 << 20


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
