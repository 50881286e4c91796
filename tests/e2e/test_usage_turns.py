"""Usage rows written by real turns (mitmdump, fake provider) and the `usage` report's totals."""

from __future__ import annotations

import json
import stat
import uuid

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from mitm import start_mitmdump
from provider_config import MODEL
from provider_config import write_config

from cursor_byok.cli.main import main
from cursor_byok.store.usage import USAGE_FILE
from cursor_byok.store.usage import UsageStore

pytestmark = pytest.mark.timeout(120)
USAGE = (1_000_000, 100_000, 400_000)  # input (cached included), output, cache read
# 600k uncached x 2 + 400k cached x 0.5 + 100k output x 10, per million tokens
TURN_COST = 1.2 + 0.2 + 1.0


async def test_turns_are_recorded_and_the_report_prices_them(tmp_path, workspace, capsys) -> None:
    conv_a, conv_b = str(uuid.uuid4()), str(uuid.uuid4())
    async with FakeProvider() as fp:
        for n in range(3):
            fp.script.text(f"answer {n}", usage=USAGE)
        config = write_config(tmp_path, fp, "openai-chat")
        proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=config,
            env={"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"},
        )
        client = CursorLikeClient.through(proxy, workspace)
        try:
            for conversation in (conv_a, conv_a, conv_b):
                message = client.run_request("hi", conversation_id=conversation, model=MODEL)
                assert (await client.turn(message)).end.ok
        finally:
            await client.aclose()
            proxy.stop()
    db = proxy.data_dir / USAGE_FILE
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    store = UsageStore(proxy.data_dir)
    rows = store.rows()
    store.close()
    assert [r["conversation"] for r in rows] == [conv_a, conv_a, conv_b]
    row = rows[0]
    assert row["model"] == MODEL and row["outcome"] == "ok" and row["duration"] > 0
    assert (row["input_tokens"], row["output_tokens"], row["cache_read_tokens"]) == USAGE

    # Prices added to the config afterwards apply to the recorded turns.
    text = config.read_text().replace(
        "context_window = 64000",
        "context_window = 64000\nprices = { input = 2, cached_input = 0.5, output = 10 }",
    )
    config.write_text(text)
    base = ["usage", "--data-dir", str(proxy.data_dir), "--config", str(config), "--since", "all"]
    capsys.readouterr()
    assert main([*base, "--by", "conversation", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    by_key = {line["key"]: line for line in lines}
    assert by_key[conv_a]["turns"] == 2 and by_key[conv_b]["turns"] == 1
    assert by_key[conv_a]["cost"] == pytest.approx(2 * TURN_COST)
    assert by_key["total"]["turns"] == 3
    assert by_key["total"]["input_tokens"] == 3 * USAGE[0]
    assert by_key["total"]["cost"] == pytest.approx(3 * TURN_COST)

    assert main([*base, "--by", "model"]) == 0
    table = capsys.readouterr().out
    assert MODEL in table and "$7.20" in table and "3,000,000" in table

    assert main([*base[:-2], "--since", "today", "--by", "day"]) == 0
    assert "$7.20" in capsys.readouterr().out  # all three turns were today
