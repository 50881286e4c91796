"""`usage` shows the spend against each cap; `doctor` warns from 80 % (issue 36, item 4)."""

from __future__ import annotations

import json
import time

from cursor_byok.cli.doctor import OK
from cursor_byok.cli.doctor import WARN
from cursor_byok.cli.doctor import check_spend
from cursor_byok.cli.main import main
from cursor_byok.config import load_config
from cursor_byok.store.usage import TurnUsage
from cursor_byok.store.usage import UsageStore

CONFIG = """
[providers.p]
kind = "openai-chat"
base_url = "http://127.0.0.1:9/v1"

[[models]]
name = "Priced"
provider = "p"
model = "priced"
prices = { input = 1, output = 1 }

[limits]
daily_usd = 1.0
monthly_usd = 10.0
"""


def setup(tmp_path, tokens: int):
    data_dir = tmp_path / "data"
    store = UsageStore(data_dir)
    store.add(TurnUsage(time.time() - 10, 1.0, "c", "r", "Priced", input_tokens=tokens))
    store.close()
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    path.chmod(0o600)
    return path, data_dir


def test_usage_lists_each_cap_with_its_spend(tmp_path, capsys) -> None:
    path, data_dir = setup(tmp_path, 850_000)
    args = ["usage", "--config", str(path), "--data-dir", str(data_dir), "--since", "all"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "cap daily_usd: $0.85 of $1.00 (85%); resets " in out
    assert "cap monthly_usd: $0.85 of $10.00 (8%); resets " in out
    assert main([*args, "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    cap = next(line for line in lines if line["key"] == "cap daily_usd")
    assert cap["spent"] == 0.85 and cap["amount"] == 1.0 and cap["resets"]


def test_doctor_warns_from_80_percent_of_a_cap(tmp_path) -> None:
    path, data_dir = setup(tmp_path, 850_000)
    checks = {c.title: c for c in check_spend(load_config(path), data_dir)}
    assert checks["spending cap daily_usd"].status == WARN
    assert "$0.85 of $1.00 (85%)" in checks["spending cap daily_usd"].detail
    assert checks["spending cap monthly_usd"].status == OK


def test_doctor_is_quiet_below_80_percent(tmp_path) -> None:
    path, data_dir = setup(tmp_path, 500_000)
    assert all(c.status == OK for c in check_spend(load_config(path), data_dir))
