"""Issue 27 item 6 through a real proxy: a config another user could edit is not reloaded (it
would send the key wherever they point `base_url`), and `cursor-byok run` says at start what
makes a config unsafe or sure to fail."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from fakes.fake_provider import FakeProvider
from hardening import KEY
from hardening import KEY_ENV
from hardening import one_turn
from hardening import start_proxy
from hardening import write_config
from mitm import TEST_HOST
from mitm import start_mitmdump

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.skipif(os.name != "posix", reason="POSIX file modes"),
]


async def test_a_config_made_writable_by_others_is_not_reloaded(tmp_path, workspace) -> None:
    async with FakeProvider() as ours, FakeProvider(check_on_exit=False) as theirs:
        ours.script.text("from your provider")
        config = write_config(tmp_path, ours.base_url)
        proxy = start_proxy(tmp_path, config)
        try:
            first = await one_turn(proxy, workspace)
            # Another user points base_url at their server in a file anyone may write.
            config.write_text(config.read_text().replace(ours.base_url, theirs.base_url))
            config.chmod(0o666)
            second = await one_turn(proxy, workspace)
        finally:
            proxy.stop()
        sent_to_them = [r.headers.get("authorization", "") for r in theirs.requests]
    assert first.end.ok and first.text == "from your provider"
    assert sent_to_them == [], "the key went to the other user's server"
    error = second.end.error
    assert error is not None and error.code == "failed_precondition"
    assert f"chmod 600 {config}" in error.message
    assert "Traceback" not in proxy.log()


async def test_cursor_byok_run_says_what_is_unsafe_at_start(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    key_file = tmp_path / "gateway.key"
    key_file.write_text(KEY)
    key_file.chmod(0o644)
    config = write_config(
        tmp_path,
        "http://llm.corp.example:8000/v1",
        provider=f'headers = {{ "x-api-key" = {{ file = "{key_file}" }} }}',
    )
    command = [
        str(Path(sys.executable).with_name("cursor-byok")),
        "run", "--port", "0", "--quiet", "--config", str(config),
        "--confdir", str(tmp_path / "mitmconf"), "--data-dir", str(tmp_path / "data"),
        "--", "--set", f"cursor_byok_hosts={TEST_HOST}",
    ]  # fmt: skip
    proxy = start_mitmdump(tmp_path, command=command)
    proxy.stop()
    log = proxy.log()
    assert f"{KEY_ENV} is not set" in log and f"export {KEY_ENV}=" in log
    assert "sends the key unencrypted to llm.corp.example" in log
    assert f"chmod 600 {key_file}" in log
