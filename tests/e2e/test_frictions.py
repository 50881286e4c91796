"""Issue 33 item 12, everyday frictions, each through the real thing: a config edit is said at
once (reloaded, or what is wrong); a second proxy on a data dir in use is refused at start;
the doctor asks every configured model, says "encrypted in transit" only when it is, and names
`cursor-byok init` for a missing config; every option of every command has help text."""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from fakes.fake_provider import FakeProvider
from mitm import start_mitmdump
from provider_config import KEY_ENV
from provider_config import MODEL
from provider_config import write_config

from cursor_byok.cli.main import build_parser

pytestmark = pytest.mark.timeout(120)
CLI = str(Path(sys.executable).with_name("cursor-byok"))


async def test_a_config_edit_is_said_at_once(tmp_path) -> None:
    async with FakeProvider() as fp:
        config = write_config(tmp_path, fp, "openai-chat")
        proxy = start_mitmdump(tmp_path, agent="provider", config=config, env={KEY_ENV: "k"})
        try:
            text = config.read_text()
            config.write_text(text.replace(f'name = "{MODEL}"', 'name = "Renamed"').replace(
                f'default_model = "{MODEL}"', 'default_model = "Renamed"'))  # fmt: skip
            proxy.wait_for_log(lambda lines: any("reloaded: models Renamed" in x for x in lines))
            config.write_text(text + "\n[[models]\n")  # broken TOML
            proxy.wait_for_log(
                lambda lines: any("config not reloaded" in x and "TOML" in x for x in lines)
            )
        finally:
            proxy.stop()


def test_a_second_proxy_on_the_same_data_dir_is_refused(tmp_path) -> None:
    first = start_mitmdump(tmp_path / "one", data_dir=tmp_path / "data")
    try:
        with pytest.raises(RuntimeError, match="did not start") as refused:
            start_mitmdump(tmp_path / "two", data_dir=tmp_path / "data")
    finally:
        first.stop()
    log = str(refused.value)
    assert f"another cursor-byok proxy (pid {first.process.pid}) uses the data dir" in log
    assert "cursor-byok ready" not in log


async def test_the_doctor_asks_every_model_and_says_how_keys_travel(tmp_path) -> None:
    async with FakeProvider() as fp:
        fp.script.text("pong")
        fp.script.text("pong")
        config = write_config(tmp_path, fp, "openai-chat")
        config.write_text(
            config.read_text()
            + '\n[[models]]\nname = "Second"\nprovider = "fake"\nmodel = "fake-upstream-2"\n'
        )
        command = [CLI, "doctor", "--config", str(config), "--data-dir", str(tmp_path / "d"),
                   "--confdir", str(tmp_path / "c"), "-p", "0"]  # fmt: skip
        done = await asyncio.to_thread(
            subprocess.run, command, capture_output=True, text=True, timeout=60,
            env={"PATH": "", "HOME": str(tmp_path), KEY_ENV: "sk-test"},
        )  # fmt: skip
        models = sorted(r.json["model"] for r in fp.requests)
    out = done.stdout
    assert models == ["fake-upstream-1", "fake-upstream-2"], out
    assert "for the model Second" in out and f"for the model {MODEL}" in out
    assert "encrypted in transit" not in out  # the fake provider is http://127.0.0.1
    assert "plain http to this machine only (fake)" in out


def test_the_doctor_names_init_for_a_missing_config(tmp_path) -> None:
    command = [CLI, "doctor", "--config", str(tmp_path / "none.toml"), "--no-provider"]
    command += ["--data-dir", str(tmp_path / "d"), "--confdir", str(tmp_path / "c"), "-p", "0"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert "fix: cursor-byok init --provider NAME" in done.stdout, done.stdout


def test_every_option_has_help() -> None:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = [
        f"{name} {action.option_strings[-1]}"
        for name, command in commands.choices.items()
        for action in command._actions
        if action.option_strings and not action.help
    ]
    assert missing == []
