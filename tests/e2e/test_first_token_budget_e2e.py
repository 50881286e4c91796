"""A provider that accepts the connection and never answers ends the turn after the configured
first-token budget, with an error in Cursor naming the provider and the budget (issue 13)."""

from __future__ import annotations

import time
import uuid

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from mitm import start_mitmdump

from cursor_byok.pb import aiserver_v1_pb2 as aipb

pytestmark = pytest.mark.timeout(120)


def config(tmp_path, fp: FakeProvider) -> object:
    path = tmp_path / "config.toml"
    path.write_text(
        f"""
default_model = "Slow Model"

[providers.sleepy]
kind = "openai-chat"
base_url = "{fp.base_url}"
api_key_env = "FAKE_PROVIDER_KEY"
max_retries = 2
read_timeout = 300
first_token_timeout = 60

[[models]]
name = "Slow Model"
provider = "sleepy"
model = "fake-upstream-1"
first_token_timeout = 1.5
"""
    )
    return path


async def test_silent_provider_ends_the_turn_with_a_visible_budget_error(
    tmp_path, workspace
) -> None:
    async with FakeProvider(check_on_exit=False) as fp:
        fp.script.trickle(every=0.2)  # keep-alives only: a read timeout would never fire
        proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=config(tmp_path, fp),
            env={"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"},
        )
        client = CursorLikeClient.through(proxy, workspace)
        try:
            message = client.run_request(
                "hello", conversation_id=str(uuid.uuid4()), model="Slow Model", workspace=workspace
            )
            started = time.monotonic()
            result = await client.turn(message)
            elapsed = time.monotonic() - started
        finally:
            await client.aclose()
            proxy.stop()
    assert not result.end.ok
    assert result.end.error.code == "unavailable"
    assert "sleepy" in result.end.error.message
    assert "1.5 s" in result.end.error.message  # the model's budget overrides the provider's
    [detail] = result.end.error.details
    details = aipb.ErrorDetails.FromString(detail.value)
    assert details.details.title == "Provider timed out"
    assert elapsed < 20
    assert len(fp.requests) == 1
