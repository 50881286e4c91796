"""The usage store and report, without a proxy."""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace

import pytest

from cursor_byok.agent.turn import UsageTally
from cursor_byok.agent.turn_status import TurnStatus
from cursor_byok.config import parse_config
from cursor_byok.store.usage import TurnUsage
from cursor_byok.store.usage import UsageStore
from cursor_byok.store.usage import format_cost
from cursor_byok.store.usage import parse_since
from cursor_byok.store.usage import record_row
from cursor_byok.store.usage import summarise
from cursor_byok.store.usage import writer_for

CONFIG = parse_config(
    {
        "providers": {"p": {"kind": "anthropic", "base_url": "http://127.0.0.1:1"}},
        "models": [
            {"name": "Priced", "provider": "p", "model": "a",
             "prices": {"input": 3, "output": 15, "cached_input": 0.3, "cache_write": 3.75}},
            {"name": "Free", "provider": "p", "model": "b"},
        ],
    }
)  # fmt: skip


def row(model: str, started: float, **tokens) -> TurnUsage:
    return TurnUsage(started, 2.0, "conv", "req", model, **tokens)


def test_cache_reads_and_writes_are_priced_apart_from_input(tmp_path) -> None:
    store = UsageStore(tmp_path)
    store.add(
        row("Priced", 100.0, input_tokens=1_000_000, cache_read_tokens=500_000,
            cache_write_tokens=100_000, output_tokens=10_000)
    )  # fmt: skip
    store.add(row("Free", 200.0, input_tokens=5, output_tokens=1))
    groups, total = summarise(store.rows(), "model", CONFIG.prices_of)
    store.close()
    priced, free = groups
    # 400k uncached x 3 + 500k read x 0.3 + 100k write x 3.75 + 10k out x 15
    assert priced.cost == pytest.approx(1.2 + 0.15 + 0.375 + 0.15)
    assert format_cost(free) == "—" and free.unpriced == 1
    assert total.turns == 2 and format_cost(total).endswith(" +?")


def test_prune_and_since(tmp_path) -> None:
    store = UsageStore(tmp_path)
    for day in (1, 5, 9):
        store.add(row("Free", day * 86400.0))
    assert store.prune(3, now=10 * 86400.0) == 2
    assert [r["started"] for r in store.rows()] == [9 * 86400.0]
    assert [r["started"] for r in store.rows(since=9.5 * 86400)] == []
    store.close()


def test_parse_since() -> None:
    now = datetime(2026, 11, 26, 15, 30).astimezone()  # a Thursday
    assert parse_since("today", now).hour == 0 and parse_since("today", now).day == 26
    assert parse_since("week", now).day == 23  # Monday
    assert (now - parse_since("7d", now)).days == 7
    assert (now - parse_since("12h", now)).seconds == 12 * 3600
    assert parse_since("2026-11-01", now).month == 11
    with pytest.raises(ValueError, match="cannot read --since"):
        parse_since("yesterday-ish", now)


def test_a_turn_row_is_built_by_the_turn_and_recording_never_raises(tmp_path, caplog) -> None:
    from cursor_byok.agent.turn import usage_row

    turn = SimpleNamespace(
        usage=UsageTally(input_tokens=7, output_tokens=3),
        run_request=SimpleNamespace(conversation_id="c1"),
        request_id="r1",
        status=TurnStatus(model="Free"),
        options=SimpleNamespace(route="regular proxy"),
        transcript=SimpleNamespace(used_tokens=1200, context_window=200_000),
    )
    row = usage_row(turn, "ok", 1.5)  # type: ignore[arg-type]
    record_row(tmp_path, row)
    assert writer_for(tmp_path).flush(10)  # written by the writer's thread
    store = UsageStore(tmp_path)
    [recorded] = store.rows()
    store.close()
    assert recorded["route"] == "regular proxy" and recorded["input_tokens"] == 7
    assert (recorded["context_used"], recorded["context_max"]) == (1200, 200_000)
    assert (recorded["model"], recorded["request"], recorded["conversation"]) == (
        "Free",
        "r1",
        "c1",
    )
    (tmp_path / "file").write_text("")
    record_row(tmp_path / "file", row)  # not a directory
    assert writer_for(tmp_path / "file").flush(10)
    assert "could not record the usage" in caplog.text


def test_live_status_shows_the_turn_cost_and_the_session_total(tmp_path) -> None:
    import time

    from rich.console import Console

    from cursor_byok.proxy.status import prices_lookup
    from cursor_byok.proxy.status import session_cost_text
    from cursor_byok.proxy.status import status_table

    usage = UsageTally()
    usage.add(input_tokens=1_000_000, output_tokens=100_000)
    turn = SimpleNamespace(
        usage=usage,
        run_request=SimpleNamespace(conversation_id="c"),
        status=TurnStatus(
            started=time.monotonic() - 1, outcome=None, model="Priced", current_tool=None
        ),
    )
    live = SimpleNamespace(turn=turn, request_id="r" * 10, state="running")
    store = UsageStore(tmp_path)
    store.add(row("Priced", time.time(), input_tokens=1_000_000))
    store.add(row("Priced", 1.0, input_tokens=1_000_000))  # before this proxy started
    store.close()
    total = session_cost_text(tmp_path, time.time() - 60, CONFIG)
    assert total == "this session: 1 turn, $3.00"
    console = Console(width=200, record=True)
    table = status_table([live], prices_for=prices_lookup(CONFIG), session_cost=total)
    console.print(table)
    text = console.export_text()
    assert "$4.5000" in text and "this session: 1 turn, $3.00" in text


def test_usage_command_names_unpriced_models_literally(tmp_path, capsys) -> None:
    import time

    from cursor_byok.cli.main import main

    store = UsageStore(tmp_path)
    store.add(row("Free", time.time(), input_tokens=10))
    store.close()
    config = tmp_path / "c.toml"
    config.write_text(
        '[providers.p]\nkind = "openai-chat"\nbase_url = "http://127.0.0.1:1/v1"\n'
        '[[models]]\nname = "Free"\nprovider = "p"\nmodel = "b"\n'
    )
    assert main(["usage", "--data-dir", str(tmp_path), "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "1 of 1 turns have no prices" in out and "to their [[models]]" in out
    assert main(["usage", "--data-dir", str(tmp_path), "--since", "soon"]) == 2


def test_a_database_of_the_first_schema_keeps_its_rows_and_gains_the_context(tmp_path) -> None:
    import sqlite3

    from cursor_byok.store.usage import USAGE_FILE

    db = sqlite3.connect(tmp_path / USAGE_FILE)
    db.executescript(
        "CREATE TABLE turns (id INTEGER PRIMARY KEY, started REAL NOT NULL, duration REAL NOT "
        "NULL, conversation TEXT NOT NULL, request TEXT NOT NULL, model TEXT NOT NULL, "
        "input_tokens INTEGER NOT NULL, cache_read_tokens INTEGER NOT NULL, cache_write_tokens "
        "INTEGER NOT NULL, output_tokens INTEGER NOT NULL, reasoning_tokens INTEGER NOT NULL, "
        "outcome TEXT NOT NULL, route TEXT NOT NULL);"
        "INSERT INTO turns VALUES (1, 1.0, 2.0, 'c', 'r', 'm', 10, 0, 0, 5, 0, 'ok', '');"
        "PRAGMA user_version=1;"
    )
    db.commit()
    db.close()
    store = UsageStore(tmp_path)
    store.add(
        TurnUsage(
            started=3.0,
            duration=1.0,
            conversation="c",
            request="r2",
            model="m",
            context_used=7,
            context_max=9,
        )
    )
    old, new = store.rows()
    store.close()
    assert (old["input_tokens"], old["context_used"], old["context_max"]) == (10, 0, 0)
    assert (new["context_used"], new["context_max"]) == (7, 9)


def _locked(tmp_path):
    """Another connection holding the database's write lock, as a DB browser or a backup may."""
    import sqlite3

    UsageStore(tmp_path).close()  # the database exists, in WAL mode
    holder = sqlite3.connect(tmp_path / "usage.sqlite3", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    return holder


def test_a_locked_database_spools_rows_and_writes_them_once_free(tmp_path) -> None:
    from cursor_byok.store.usage import UsageWriter

    holder = _locked(tmp_path)
    writer = UsageWriter(tmp_path, retry=0.05, busy_timeout=0.05)
    for i in range(3):
        writer.add(row("Free", 100.0 + i))
    assert writer.flush(10)  # handed over at once, none waits for the lock
    assert writer.spooled == 3 and (tmp_path / "usage-spool.jsonl").exists()
    assert not writer.written(0.2)  # still locked
    holder.execute("ROLLBACK")
    holder.close()
    assert writer.written(10)  # the thread retried and got through
    writer.close()
    store = UsageStore(tmp_path)
    assert [r["started"] for r in store.rows()] == [100.0, 101.0, 102.0]  # in order, once
    store.close()
    assert not (tmp_path / "usage-spool.jsonl").exists()


def test_rows_spooled_at_shutdown_are_imported_by_the_next_start(tmp_path) -> None:
    from cursor_byok.store.usage import UsageWriter

    holder = _locked(tmp_path)
    writer = UsageWriter(tmp_path, retry=0.05, busy_timeout=0.05)
    writer.add(row("Free", 7.0))
    assert writer.flush(10)
    writer.close()  # the lock is still held: the row stays in the spool
    holder.execute("ROLLBACK")
    holder.close()
    store = UsageStore(tmp_path)  # the next start
    assert [r["started"] for r in store.rows()] == [7.0]
    assert store.import_spool() == 0  # imported once
    store.close()


def test_title_calls_are_rows_of_their_own_with_their_cost(tmp_path) -> None:
    from cursor_byok.store.usage import TITLE
    from cursor_byok.store.usage import record_row

    record_row(tmp_path, row("Priced", 100.0, input_tokens=1_000_000, output_tokens=10_000))
    record_row(
        tmp_path,
        TurnUsage(200.0, 0.3, "conv", "", "Priced", input_tokens=40, output_tokens=5,
                  outcome=TITLE, route="NameAgent"),
    )  # fmt: skip
    assert writer_for(tmp_path).flush(10)  # written by the writer's thread
    store = UsageStore(tmp_path)
    groups, _total = summarise(store.rows(), "kind", CONFIG.prices_of)
    store.close()
    assert [g.key for g in groups] == ["turn", "title"]
    assert groups[1].turns == 1 and groups[1].cost == pytest.approx((40 * 3 + 5 * 15) / 1e6)
    record_row(tmp_path / "not-a-dir" / "\0", row("Priced", 1.0))  # never raises
    assert writer_for(tmp_path / "not-a-dir" / "\0").flush(10)  # nor does its thread


def test_tab_rows_are_their_own_kind(tmp_path):
    from cursor_byok.store.usage import TurnUsage
    from cursor_byok.store.usage import UsageStore
    from cursor_byok.store.usage import summarise

    store = UsageStore(tmp_path)
    for outcome in ("ok", "title", "tab", "tab:cancelled", "tab:error"):
        store.add(
            TurnUsage(
                started=1.0,
                duration=0.1,
                conversation="",
                request="",
                model="m",
                input_tokens=10,
                outcome=outcome,
            )
        )
    groups, total = summarise(store.rows(), "kind")
    store.close()
    assert {g.key: g.turns for g in groups} == {"turn": 1, "title": 1, "tab": 3}
    assert total.input_tokens == 50


def test_editor_feature_calls_are_kinds_of_their_own(tmp_path) -> None:
    """Cmd-K, terminal Cmd-K and commit message calls (issue 34) group by their kind, failed
    ones with the others of their kind; `--by outcome` still tells them apart."""
    from cursor_byok.store.usage import feature_outcome
    from cursor_byok.store.usage import record_row

    record_row(tmp_path, row("Priced", 100.0, input_tokens=10, output_tokens=1))
    for started, outcome in enumerate(
        (
            feature_outcome("cmd_k"),
            feature_outcome("cmd_k", "unauthenticated"),
            feature_outcome("terminal"),
            feature_outcome("commit_message", "deadline; summary line"),
        )
    ):
        record_row(
            tmp_path,
            TurnUsage(200.0 + started, 0.3, "", "", "Priced", input_tokens=40, output_tokens=5,
                      outcome=outcome, route="Cmd-K"),
        )  # fmt: skip
    assert writer_for(tmp_path).flush(10)
    store = UsageStore(tmp_path)
    groups, _total = summarise(store.rows(), "kind", CONFIG.prices_of)
    by_outcome, _ = summarise(store.rows(), "outcome", CONFIG.prices_of)
    store.close()
    assert [(g.key, g.turns) for g in groups] == [
        ("turn", 1),
        ("cmd_k", 2),
        ("terminal", 1),
        ("commit_message", 1),
    ]
    assert groups[1].cost == pytest.approx(2 * (40 * 3 + 5 * 15) / 1e6)
    assert "cmd_k" in [g.key for g in by_outcome]


PROXY_LIKE = """
import sys, time
from cursor_byok.store import usage
data_dir = sys.argv[1]
writer = usage.writer_for(data_dir)
for line in sys.stdin:  # one row per line, then the live status's read, as the proxy does
    writer.add(usage.TurnUsage(time.time(), 1.0, "conv", line.strip(), "Free"))
    assert writer.flush(10)
    usage.store_for(data_dir).rows()
    print("written", flush=True)
"""


def test_rows_survive_another_process_reading_and_a_kill(tmp_path) -> None:
    """Issue 33 item 1: the live status opening the database in the writer's process dropped
    the writer's locks (a raw open/close of the file); one `cursor-byok usage` then deleted
    the WAL, every later row went to a deleted file, and a kill -9 lost them."""
    import signal
    import subprocess
    import sys

    proxy = subprocess.Popen(
        [sys.executable, "-c", PROXY_LIKE, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proxy.stdin is not None and proxy.stdout is not None
    from pathlib import Path

    cli = str(Path(sys.executable).with_name("cursor-byok"))
    usage_command = [cli, "usage", "--json", "--since", "all"]
    usage_command += ["--data-dir", str(tmp_path), "--config", str(tmp_path / "none.toml")]
    try:
        for i in range(4):
            proxy.stdin.write(f"request-{i}\n")
            proxy.stdin.flush()
            assert proxy.stdout.readline().strip() == "written"
            report = subprocess.run(usage_command, capture_output=True, text=True, check=True)
            assert f'"turns": {i + 1},' in report.stdout.splitlines()[-1], report.stdout
    finally:
        proxy.send_signal(signal.SIGKILL)
        proxy.wait(10)
    store = UsageStore(tmp_path)
    assert [r["request"] for r in store.rows()] == [f"request-{i}" for i in range(4)]
    store.close()
