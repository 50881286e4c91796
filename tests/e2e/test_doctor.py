"""`cursor-byok doctor` against a healthy and a broken setup (real proxy, fake provider)."""

from __future__ import annotations

import json
import uuid

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from mitm import start_mitmdump

from cursor_byok.cli.doctor import check_activity
from cursor_byok.cli.doctor import run_doctor

pytestmark = pytest.mark.timeout(120)


def write_config(path, base_url: str) -> None:
    path.write_text(
        f"""
[providers.fake]
kind = "openai-chat"
base_url = "{base_url}"
api_key_env = "DOCTOR_TEST_KEY"

[[models]]
name = "Fake"
provider = "fake"
model = "fake-1"
"""
    )


async def test_doctor_on_a_healthy_setup(tmp_path, workspace, monkeypatch) -> None:
    proxy = start_mitmdump(tmp_path)
    client = CursorLikeClient.through(proxy, workspace)
    try:
        result = await client.turn(
            client.run_request("notes.txt", conversation_id=str(uuid.uuid4()))
        )
    finally:
        await client.aclose()
        proxy.stop()
    assert result.end.ok
    monkeypatch.setenv("DOCTOR_TEST_KEY", "sk-doctor-test")
    lines: list[str] = []
    async with FakeProvider() as fp:
        fp.script.text("pong")
        config = tmp_path / "config.toml"
        write_config(config, fp.base_url)

        def doctor() -> int:
            return run_doctor(
                config_path=config,
                confdir=proxy.confdir,
                data_dir=proxy.data_dir,
                port=0,
                out=lines.append,
            )

        import asyncio

        code = await asyncio.to_thread(doctor)
    text = "\n".join(lines)
    assert code == 0, text
    assert "✔" in text and "provider fake (fake-1)" in text
    assert "Agent calls arrive" in text
    assert "✘" not in text


def test_doctor_on_a_broken_setup(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("DOCTOR_TEST_KEY", raising=False)
    config = tmp_path / "config.toml"
    write_config(config, "http://127.0.0.1:9/v1")
    data = tmp_path / "data"
    data.mkdir()
    (data / "activity.json").write_text(json.dumps({"agent_calls": 0, "other_cursor_calls": 7}))
    lines: list[str] = []
    code = run_doctor(
        config_path=config, confdir=tmp_path / "nomitm", data_dir=data, port=0, out=lines.append
    )
    text = "\n".join(lines)
    assert code == 1
    assert "DOCTOR_TEST_KEY is not set" in text
    assert "does not exist yet" in text  # no CA
    assert "bypass the proxy" in text  # Cursor reached us, but not its Agent calls
    missing = run_doctor(
        config_path=tmp_path / "none.toml",
        confdir=tmp_path,
        data_dir=tmp_path / "empty",
        port=0,
        out=lines.append,
    )
    assert missing == 1
    assert "no such file" in "\n".join(lines)


def test_activity_check_waits_for_calls(tmp_path) -> None:
    import os

    calls = []
    running = {"agent_calls": 0, "pid": os.getpid()}  # a proxy runs (this process stands in)
    (tmp_path / "activity.json").write_text(json.dumps(running))

    def fake_sleep(seconds: float) -> None:
        calls.append(seconds)
        (tmp_path / "activity.json").write_text(json.dumps({**running, "agent_calls": 2}))

    check = check_activity(tmp_path, watch=5, sleep=fake_sleep)
    assert check.status == "ok" and calls


def test_watch_does_not_wait_out_its_time_without_a_proxy(tmp_path) -> None:
    """Issue 33 item 12: no proxy (no record, or its pid gone): said at once, no waiting."""
    import subprocess
    import sys

    calls: list[float] = []
    check = check_activity(tmp_path, watch=60, sleep=calls.append)
    assert check.status == "fail" and "no cursor-byok proxy runs" in check.title and not calls
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()  # fmt: skip
    (tmp_path / "activity.json").write_text(json.dumps({"agent_calls": 3, "pid": int(gone)}))
    check = check_activity(tmp_path, watch=60, sleep=calls.append)
    assert check.status == "fail" and "has exited" in check.detail and not calls
