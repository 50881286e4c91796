"""`cursor-byok run` command lines per mode, and the live status table."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
from rich.console import Console

from cursor_byok.agent.turn import UsageTally
from cursor_byok.agent.turn_status import TurnStatus
from cursor_byok.cli.launch import ALLOW_HOSTS
from cursor_byok.cli.launch import CURSOR_PROCESSES
from cursor_byok.cli.launch import LOCAL_SPEC
from cursor_byok.cli.launch import mitmdump_args
from cursor_byok.cli.launch import setup_text
from cursor_byok.cli.main import build_parser
from cursor_byok.cli.proxy_commands import run_options
from cursor_byok.proxy.mitmproxy_compat import local_mode_captures
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
    assert args[args.index("--mode") + 1] == f"local:{LOCAL_SPEC}"
    assert "cursor_byok_status=false" in args
    assert args[-2:] == ["--set", "termlog_verbosity=warn"]
    named = mitmdump_args(options("--local", "Code"))
    assert named[named.index("--mode") + 1] == "local:Code"  # a spec of the user's, as given


# Where Cursor's processes run from (the app, its Electron helpers, the Linux binary), and
# where the proxy itself may: local capture must take the first and never the second.
CURSOR_PATHS = {
    "darwin": [
        "/Applications/Cursor.app/Contents/MacOS/Cursor",
        "/Applications/Cursor.app/Contents/Frameworks/Cursor Helper.app/Contents/MacOS/"
        "Cursor Helper",
        "/Applications/Cursor.app/Contents/Frameworks/Cursor Helper (Plugin).app/Contents/"
        "MacOS/Cursor Helper (Plugin)",
    ],
    "win32": [
        r"C:\Users\me\AppData\Local\Programs\cursor\Cursor.exe",
        "Cursor Helper (Plugin)",  # a process name as a redirector may report it
        "Cursor Helper",
    ],
    "linux": ["/tmp/.mount_Cursor1a2b/usr/share/cursor/cursor", "cursor"],
}
PROXY_PATHS = [
    "/Users/me/.local/share/uv/tools/cursor-byok/bin/python",
    r"C:\Users\me\AppData\Roaming\uv\tools\cursor-byok\Scripts\python.exe",
]


@pytest.mark.parametrize("platform", sorted(CURSOR_PATHS))
def test_local_capture_takes_every_cursor_process_and_never_the_proxy(platform) -> None:
    regex = platform == "darwin"  # the macOS network extension searches a regular expression
    for path in CURSOR_PATHS[platform]:
        assert local_mode_captures(LOCAL_SPEC, path, regex=regex), path
    for path in PROXY_PATHS:
        assert not local_mode_captures(LOCAL_SPEC, path, regex=regex), path
    assert not local_mode_captures(LOCAL_SPEC, "/usr/bin/firefox", regex=regex)


def test_local_spec_is_what_mitmproxy_parses_it_as() -> None:
    """The installed mitmproxy_rs reads the spec as includes then an exclude, in this order."""
    import mitmproxy_rs.local

    described = mitmproxy_rs.local.LocalRedirector.describe_spec(LOCAL_SPEC)
    wanted = [f'Include processes matching "{name}".' for name in CURSOR_PROCESSES]
    wanted += ['Exclude processes matching "cursor-byok".']
    assert described == " ".join(wanted)


def test_status_table_shows_model_tokens_and_tool() -> None:
    usage = UsageTally()
    usage.add(input_tokens=1200, output_tokens=300)
    turn = SimpleNamespace(
        usage=usage,
        run_request=SimpleNamespace(conversation_id="conv-1234567890"),
        status=TurnStatus(
            started=time.monotonic() - 10,
            outcome=None,
            model="my-model",
            current_tool="shell_tool_call",
        ),
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
    assert "Shell" in text and "running" in text  # the card's name, not the proto field
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

    example = Path(__file__).resolve().parents[2] / "config.example.toml"
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
    # Before the first `run` (no activity record, no CA yet): warnings with the next step, no ✘
    assert code == 0, out
    assert "config" in out and "Claude Sonnet (BYOK)" in out
    assert "runs on other models (Cursor's own): Cursor's backend" in out  # the routing rule
    assert "does not exist yet" in out and "fix:" in out
    assert "the proxy has not run yet" in out and "✘" not in out


def _turn(model: str, out: int, *, started: float, ended: float | None = None, tool=None):
    usage = UsageTally()
    usage.add(input_tokens=123456, output_tokens=out, cache_read_tokens=100000)
    return SimpleNamespace(
        usage=usage,
        run_request=SimpleNamespace(conversation_id="conv-1234567890"),
        transcript=SimpleNamespace(used_tokens=150000, context_window=200000),
        status=TurnStatus(
            started=started,
            ended=ended,
            outcome="ok" if ended is not None else None,
            model=model,
            current_tool=tool,
        ),
    )


@pytest.mark.parametrize("width", [80, 100, 120])
def test_status_table_fits_the_terminal_keeping_what_matters(width) -> None:
    now = time.monotonic()
    model = "Claude Sonnet 4.5 Thinking (BYOK, my gateway)"
    live = SimpleNamespace(
        turn=_turn(model, 812, started=now - 20, tool="read_tool_call"),
        request_id="req-abcdefgh-1",
        state="streaming",
    )
    console = Console(width=width, record=True)
    console.print(status_table([live], now=now, width=width))
    text = console.export_text()
    lines = text.splitlines()
    assert all(len(line) <= width for line in lines), text
    header = next(line for line in lines if "tok/s" in line)
    for column in ("model", "route", "state", "in", "out", "tok/s", "tool"):
        assert f" {column} " in header, (column, text)
    row = next(line for line in lines if "local" in line)
    for value in ("local", "streaming", "123456", "812", "40.6", "Read"):
        assert value in row, (value, text)
    assert "Claude Son" in row  # shortened, not dropped
    assert "…" not in header
    if width >= 120:
        assert "context" in header and "cached" in header


def test_a_finished_turn_keeps_its_final_rate() -> None:
    now = time.monotonic()
    turn = _turn("m", 406, started=now - 30, ended=now - 20)  # 406 tokens in 10 s
    live = SimpleNamespace(turn=turn, request_id="r", state="done")
    for later in (now, now + 600):
        console = Console(width=200, record=True)
        console.print(status_table([live], now=later))
        assert "40.6" in console.export_text()


def test_the_running_tool_shows_until_the_last_of_a_batch_completes() -> None:
    from cursor_byok.pb import agent_v1_pb2 as pb

    turn = TurnStatus()  # only the tool tracking; no run behind it

    def card(kind: str) -> pb.ToolCall:
        call = pb.ToolCall()
        getattr(call, kind).SetInParent()
        return call

    turn.track(
        {
            "partial_tool_call": pb.PartialToolCallUpdate(
                call_id="1", tool_call=card("read_tool_call")
            )
        }
    )
    assert turn.current_tool == "read_tool_call…"
    turn.track(
        {
            "tool_call_started": pb.ToolCallStartedUpdate(
                call_id="1", tool_call=card("read_tool_call")
            )
        }
    )
    turn.track(
        {
            "tool_call_started": pb.ToolCallStartedUpdate(
                call_id="2", tool_call=card("shell_tool_call")
            )
        }
    )
    assert turn.current_tool == "shell_tool_call"
    turn.track({"tool_call_completed": pb.ToolCallCompletedUpdate(call_id="2")})
    assert turn.current_tool == "read_tool_call"  # the Read still runs
    turn.track({"tool_call_completed": pb.ToolCallCompletedUpdate(call_id="1")})
    assert turn.current_tool is None


def test_status_table_has_a_row_per_editor_feature() -> None:
    """Cmd-K and terminal calls (issue 34): calls, tokens, the last latency, the cost; a running
    one says so; one table with the turns, never a second one."""
    from cursor_byok.store.feature_calls import FeatureCalls
    from cursor_byok.store.usage import Prices

    calls = FeatureCalls()
    calls.started("cmd_k", "Edit Model")
    calls.ended("cmd_k", "Edit Model", usage={"input_tokens": 1200, "output_tokens": 80},
                duration=0.84, first_text=0.31)  # fmt: skip
    calls.started("terminal", "Edit Model")
    prices = Prices(input=1.0, output=2.0)
    console = Console(width=200, record=True)
    console.print(status_table([], features=calls.rows(), prices_for=lambda _m: prices))
    text = console.export_text()
    assert text.count("┏") == 1
    lines = text.splitlines()
    cmd_k = next(line for line in lines if "cmd_k: Edit Model" in line)
    assert "1 call " in cmd_k and "1200" in cmd_k and "80" in cmd_k
    assert "last 0.84s, 1st 0.31s" in cmd_k and "$0.0014" in cmd_k
    terminal = next(line for line in lines if "terminal: Edit Model" in line)
    assert "0 calls" in terminal and "answering…" in terminal
