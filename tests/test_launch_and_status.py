"""`cursor-byok run` command lines per mode, and the live status table."""

from __future__ import annotations

import time
from types import SimpleNamespace

from rich.console import Console

from cursor_byok.agent.turn import Usage
from cursor_byok.cli.launch import ALLOW_HOSTS
from cursor_byok.cli.launch import mitmdump_args
from cursor_byok.cli.launch import setup_text
from cursor_byok.cli.main import build_parser
from cursor_byok.cli.proxy_commands import run_options
from cursor_byok.proxy.status import status_table


def options(*argv: str):
    return run_options(build_parser().parse_args(["run", *argv]))


def test_regular_mode_is_lazy_and_only_decrypts_cursor_hosts() -> None:
    args = mitmdump_args(options())
    assert args[args.index("-p") + 1] == "8080"
    assert "connection_strategy=lazy" in args
    assert args[args.index("--allow-hosts") + 1] == ALLOW_HOSTS
    assert "--mode" not in args
    assert args[args.index("-s") + 1].endswith("cursor_byok/proxy/script.py")
    assert '"http.proxy": "http://127.0.0.1:8080"' in setup_text(options())


def test_reverse_mode_needs_no_ca_and_no_allow_hosts() -> None:
    opts = options("--reverse")
    args = mitmdump_args(opts)
    assert args[args.index("--mode") + 1] == "reverse:https://api2.cursor.sh"
    assert args[args.index("-p") + 1] == "8443"
    assert "--allow-hosts" not in args
    assert "No certificate" in setup_text(opts)
    assert "CURSOR_BACKEND_URL=http://127.0.0.1:8443" in setup_text(opts)  # for SDK agents


def test_local_capture_and_passthrough_args() -> None:
    args = mitmdump_args(options("--local", "--quiet", "--", "--set", "termlog_verbosity=warn"))
    assert args[args.index("--mode") + 1] == "local:Cursor"
    assert "cursor_byok_status=false" in args
    assert args[-2:] == ["--set", "termlog_verbosity=warn"]


def test_status_table_shows_model_tokens_and_tool() -> None:
    usage = Usage()
    usage.add(input_tokens=1200, output_tokens=300)
    turn = SimpleNamespace(
        usage=usage,
        started=time.monotonic() - 10,
        outcome=None,
        model="my-model",
        current_tool="shell_tool_call",
        run_request=SimpleNamespace(conversation_id="conv-1234567890"),
    )
    live = SimpleNamespace(
        turn=turn,
        request_id="req-abcdefgh-1",
        state="running",
    )
    console = Console(width=200, record=True)
    console.print(status_table([live]))
    text = console.export_text()
    assert "my-model" in text and "1200" in text and "300" in text
    assert "shell_tool_call" in text and "running" in text
    assert "30.0" in text  # 300 tokens in 10 s
    assert "local" in text


def test_status_table_lists_runs_sent_to_cursor() -> None:
    from cursor_byok.proxy.routing import RoutedRun

    run = RoutedRun("req-cursor-1", "conv-abcdefgh", "composer-1", at=time.monotonic() - 3)
    console = Console(width=200, record=True)
    console.print(status_table([], routed=[run]))
    text = console.export_text()
    assert "composer-1" in text and "cursor" in text and "sent to Cursor 3s ago" in text


def test_doctor_subcommand_reports_each_check(tmp_path, capsys) -> None:
    from pathlib import Path

    from cursor_byok.cli.main import main

    example = Path(__file__).resolve().parents[1] / "config.example.toml"
    code = main(
        [
            "doctor",
            "--no-provider",
            "--config",
            str(example),
            "--confdir",
            str(tmp_path),
            "--data-dir",
            str(tmp_path),
            "--port",
            "0",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1  # no CA and no proxy activity in an empty directory
    assert "config" in out and "Claude Sonnet (BYOK)" in out
    assert "runs on other models (Cursor's own): Cursor's backend" in out  # the routing rule
    assert "does not exist yet" in out and "fix:" in out
