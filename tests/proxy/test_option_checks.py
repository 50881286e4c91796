"""Issue 32 item 6: options own their checks (`choices`, `minimum` in the options table), and an
addon's `configure` acts only on the options in `updated` that it reads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from mitmproxy import exceptions
from mitmproxy import hooks
from mitmproxy.test import taddons

from cursor_byok.proxy.compose import compose
from cursor_byok.proxy.options import OPTIONS

REPO = Path(__file__).resolve().parents[2]
CHECKED = sorted(n for n, o in OPTIONS.items() if o.choices is not None or o.minimum is not None)


def bad_value(name: str):
    option = OPTIONS[name]
    return "no-such-value" if option.choices is not None else option.minimum - 1


@pytest.fixture
def proxy(tmp_path):
    """Every addon, configured with every option as mitmdump's script loader does."""
    composed = compose()
    with taddons.context(*composed.addons) as tctx:
        tctx.options.update(cursor_byok_data_dir=str(tmp_path), cursor_byok_agent="scripted")
        tctx.master.addons.trigger(hooks.ConfigureHook(set(tctx.options.keys())))
        yield composed, tctx


def test_the_table_checks_what_the_addons_checked() -> None:
    assert len(CHECKED) == 25, CHECKED  # 18 positive, 3 not negative, 4 with choices
    assert OPTIONS["cursor_byok_coalesce_ms"].minimum == 0
    assert OPTIONS["cursor_byok_backlog_memory_kb"].minimum == 0
    assert OPTIONS["cursor_byok_min_free_mb"].minimum == 0
    assert OPTIONS["cursor_byok_models_mode"].choices == ("merge", "replace", "off")


@pytest.mark.parametrize("name", CHECKED)
def test_a_value_an_option_does_not_take_is_refused_and_rolled_back(proxy, name) -> None:
    """Some addon reads every checked option, and a running proxy refuses a bad value in one
    line naming it (mitmproxy rolls the update back)."""
    _, tctx = proxy
    before = getattr(tctx.options, name)
    with pytest.raises(exceptions.OptionsError) as refused:
        tctx.options.update(**{name: bad_value(name)})
    assert name in str(refused.value) and "\n" not in str(refused.value)
    assert getattr(tctx.options, name) == before


def test_configure_acts_only_on_the_options_it_was_given(proxy) -> None:
    composed, tctx = proxy
    config = composed.registry.config
    tctx.options.update(cursor_byok_status=False, cursor_byok_tab_timeout_ms=1234)
    assert composed.registry.config is config  # none of the run settings' options changed
    tctx.options.update(cursor_byok_heartbeat_ms=1234)
    assert composed.registry.config is not config
    assert composed.registry.config.heartbeat_interval == 1.234


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ("cursor_byok_heartbeat_ms=0", "cursor_byok_heartbeat_ms must be positive (not 0)"),
        ("cursor_byok_min_free_mb=-1", "cursor_byok_min_free_mb must not be negative (not -1)"),
        ("cursor_byok_agent=nobody", "cursor_byok_agent: unknown value 'nobody'"),
    ],
)
def test_mitmdump_refuses_a_value_out_of_range_in_one_line(tmp_path, setting, said) -> None:
    """Through `console.OptionCheck`, before any addon's `configure` sees it: one line, exit
    2, no traceback (a bad value reached `configure` first and mitmproxy printed its own)."""
    mitmdump = Path(sys.executable).with_name("mitmdump")
    command = [
        str(mitmdump), "--listen-host", "127.0.0.1", "-p", "0",
        "--set", f"confdir={tmp_path / 'mitmconf'}",
        "-s", str(REPO / "addon" / "main.py"),
        "--set", setting, "--set", f"cursor_byok_data_dir={tmp_path / 'data'}",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    lines = [line for line in output.splitlines() if "Loading script" not in line]
    assert len(lines) == 1 and "cursor-byok cannot start: " + said in lines[0], output
