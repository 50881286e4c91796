"""Issue 33 item 2: the README's own override, through the CLI. `cursor-byok run ... -- --set
cursor_byok_config=PATH` used to hand mitmproxy the option twice (ours from --config's default,
then the user's); mitmproxy refused it inside its script loader and served on as a plain proxy
without the addon: no "ready" line, Agent calls to Cursor. Now the `--set` is taken as --config,
or refused in one line naming --config; `run --set` says to put it after `--`; and any of our
options that cannot be read stops mitmdump at start with one line."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from mitm import REPO
from mitm import TEST_HOST
from mitm import mitmdump_path
from mitm import start_mitmdump
from provider_config import MODEL
from provider_config import write_config

pytestmark = pytest.mark.timeout(90)
CLI = str(Path(sys.executable).with_name("cursor-byok"))
ENV = {"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"}


def run_command(tmp_path: Path, *args: str, extra: tuple[str, ...] = ()) -> list[str]:
    return [
        CLI, "run", "--port", "0", "--confdir", str(tmp_path / "mitmconf"),
        "--data-dir", str(tmp_path / "data"), "--quiet", *args,
        "--", "--allow-hosts", r"^api2\.cursor\.test:443$",
        "--set", f"cursor_byok_hosts={TEST_HOST}", *extra,
    ]  # fmt: skip


@pytest.mark.parametrize("spelling", ["--set", "--set="])
async def test_the_config_given_after_the_dashes_is_used(tmp_path, workspace, spelling) -> None:
    async with FakeProvider() as fp:
        fp.script.text("from the config after --")
        config = write_config(tmp_path, fp, "openai-chat")
        setting = f"cursor_byok_config={config}"
        extra = ("--set", setting) if spelling == "--set" else (f"--set={setting}",)
        # -q sets cursor_byok_status itself: the user's own setting of it wins, no conflict
        extra += ("--set", "cursor_byok_status=false")
        proxy = start_mitmdump(tmp_path, command=run_command(tmp_path, extra=extra), env=ENV)
        client = CursorLikeClient.through(proxy, workspace)
        try:
            message = client.run_request("hi", conversation_id=str(uuid.uuid4()), model=MODEL)
            result = await client.turn(message)
        finally:
            await client.aclose()
            proxy.stop()
    assert result.end.ok, result.end.error
    assert result.text == "from the config after --"
    assert "no config at" not in proxy.log()  # the preflight read the same file


def test_two_different_configs_are_refused_at_once_naming_the_flag(tmp_path) -> None:
    command = run_command(
        tmp_path, "--config", str(tmp_path / "a.toml"),
        extra=("--set", f"cursor_byok_config={tmp_path / 'b.toml'}"),
    )  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--config" in lines[0] and "b.toml" in lines[0], done.stderr


def test_set_before_the_dashes_gets_a_hint(tmp_path) -> None:
    done = subprocess.run(
        [CLI, "run", "--set", "cursor_byok_config=x.toml"], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "after `--`" in done.stderr and "--config" in done.stderr, done.stderr


@pytest.mark.parametrize(
    "settings",
    [
        ("cursor_byok_config=a.toml", "cursor_byok_config=b.toml"),  # given twice
        ("cursor_byok_min_free_mb=lots",),  # not a number
    ],
)
def test_mitmdump_stops_on_an_option_of_ours_it_cannot_read(tmp_path, settings) -> None:
    """Straight mitmdump (as `cursor-byok addon-path` users run it): not a silent plain proxy."""
    command = [
        mitmdump_path(), "--listen-host", "127.0.0.1", "-p", "0",
        "--set", f"confdir={tmp_path / 'mitmconf'}",
        "-s", str(REPO / "addon" / "main.py"),
    ]  # fmt: skip
    for setting in settings:
        command += ["--set", setting]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "cursor-byok cannot start" in output and settings[0].split("=")[0] in output, output
    assert "proxy listening" not in output
