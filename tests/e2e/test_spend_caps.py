"""Spending caps through a real mitmdump (issue 36, item 4). Spend comes from the usage rows of
every kind (a turn, a chat title, a Cmd-K row another feature writes): a turn that would start past
the daily, monthly or conversation cap ends at once with `resource_exhausted` naming the cap, the
amount spent and the reset, and the provider is never called; a turn that crosses a cap finishes
its step (the tool ran, the checkpoint went out) and stops."""

from __future__ import annotations

import time
import uuid

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from mitm import start_mitmdump

from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.store.usage import TITLE
from cursor_byok.store.usage import TurnUsage
from cursor_byok.store.usage import UsageStore

pytestmark = pytest.mark.timeout(180)
SEEDED = "seed-conversation"


def seed(data_dir) -> None:
    """$1.00 spent today at $1 per million tokens: $0.60 turn + $0.30 title in one conversation,
    $0.10 of a Cmd-K call (a kind this branch does not write itself)."""
    now = time.time()
    store = UsageStore(data_dir)
    store.add_many(
        [
            TurnUsage(now - 60, 1.0, SEEDED, "r1", "Priced", input_tokens=600_000),
            TurnUsage(now - 50, 1.0, SEEDED, "r2", "Priced", input_tokens=300_000, outcome=TITLE),
            TurnUsage(now - 40, 1.0, "", "r3", "Priced", output_tokens=100_000, outcome="cmd_k"),
        ]
    )
    store.close()


def write(path, fp: FakeProvider, limits: str) -> None:
    path.write_text(
        f"""
default_model = "Priced"

[providers.fake]
kind = "openai-chat"
base_url = "{fp.base_url}"
api_key_env = "FAKE_PROVIDER_KEY"

[[models]]
name = "Priced"
provider = "fake"
model = "priced-1"
prices = {{ input = 1, output = 1 }}

[limits]
{limits}
"""
    )


def shown(result) -> aipb.ErrorDetails:
    [detail] = result.end.error.details
    return aipb.ErrorDetails.FromString(detail.value)


async def test_caps_refuse_a_turn_before_the_provider_and_stop_one_after_a_step(
    tmp_path, workspace
):
    data_dir = tmp_path / "data"
    seed(data_dir)
    config = tmp_path / "config.toml"
    async with FakeProvider() as fp:
        write(config, fp, "daily_usd = 1.0")
        proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=config,
            data_dir=data_dir,
            env={"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"},
        )
        client = CursorLikeClient.through(proxy, workspace)

        async def turn(conversation: str):
            message = client.run_request("hi", conversation_id=conversation, model="Priced")
            return await client.turn(message)

        try:
            refused = {}
            for limits in ("daily_usd = 1.0", "monthly_usd = 0.99", "conversation_usd = 0.5"):
                write(config, fp, limits)
                refused[limits] = await turn(SEEDED)
            assert fp.requests == []  # no cap let the provider be called

            fp.script.text("a cheap answer")  # another conversation: under its own cap
            served = await turn(str(uuid.uuid4()))

            notes = str(workspace / "notes.txt")  # this step costs $0.60: past the $0.50
            fp.script.tool_calls([("call_read", "Read", {"path": notes})], usage=(600_000, 0, 0))
            crossed = await turn(str(uuid.uuid4()))
        finally:
            await client.aclose()
            proxy.stop()

    daily = refused["daily_usd = 1.0"]
    assert daily.end.error.code == "resource_exhausted"
    assert "[limits] daily_usd = $1.00 is reached: $1.00 spent today" in daily.end.error.message
    assert "it resets " in daily.end.error.message
    assert shown(daily).details.title == "Spending cap reached (daily_usd)"
    assert shown(daily).error == aipb.ErrorDetails.ERROR_CUSTOM_MESSAGE
    monthly = refused["monthly_usd = 0.99"].end.error
    assert monthly.code == "resource_exhausted"
    assert "monthly_usd = $0.99 is reached: $1.00 spent this month" in monthly.message
    conversation = refused["conversation_usd = 0.5"].end.error
    assert "conversation_usd = $0.50 is reached: $0.90 spent in this conversation" in (
        conversation.message
    )
    assert "start a new chat" in conversation.message

    assert served.end.ok and served.text == "a cheap answer"

    assert len(fp.requests) == 2  # the step that crossed the cap, and no call after it
    assert crossed.end.error.code == "resource_exhausted"
    assert "$0.60 spent in this conversation" in crossed.end.error.message
    assert [c.call_id for c in crossed.updates("tool_call_completed")] == ["call_read"]
    assert crossed.checkpoints  # the step's settled checkpoint went out before the stop
