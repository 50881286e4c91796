"""Fallbacks through a real mitmdump (issue 36, item 1): a primary that answers 429, 500, 401 or
refuses the connection hands the same request to its backup of the other wire format; a failure
after output reached Cursor never falls back and says so."""

from __future__ import annotations

import socket
import uuid

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from mitm import start_mitmdump

from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.store.usage import UsageStore

pytestmark = pytest.mark.timeout(180)
KEY_ENV = "FAKE_PROVIDER_KEY"


def refused_url() -> str:
    """A loopback port nobody listens on (bound, then closed): connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def provider(name: str, kind: str, base_url: str) -> str:
    return f"""
[providers.{name}]
kind = "{kind}"
base_url = "{base_url}"
api_key_env = "{KEY_ENV}"
max_retries = 0
"""


def model(name: str, provider_name: str, fallbacks: list[str]) -> str:
    names = ", ".join(f'"{n}"' for n in fallbacks)
    return f"""
[[models]]
name = "{name}"
provider = "{provider_name}"
model = "{name.lower().replace(" ", "-")}"
fallbacks = [{names}]
prices = {{ input = 1, output = 2 }}
"""


def write_config(tmp_path, chat: FakeProvider, anthropic: FakeProvider) -> object:
    path = tmp_path / "config.toml"
    path.write_text(
        provider("chat", "openai-chat", chat.base_url)
        + provider("claude", "anthropic", anthropic.base_url)
        + provider("gone", "openai-chat", refused_url())
        + model("OpenAI Primary", "chat", ["Claude Backup"])
        + model("Claude Primary", "claude", ["OpenAI Backup"])
        + model("Gone Primary", "gone", ["Claude Backup"])
        + model("Claude Backup", "claude", [])
        + model("OpenAI Backup", "chat", [])
    )
    return path


async def test_a_failing_primary_falls_back_to_the_other_wire_format(tmp_path, workspace):
    async with FakeProvider() as chat, FakeProvider() as claude:
        proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=write_config(tmp_path, chat, claude),
            env={KEY_ENV: "sk-test-not-a-real-key"},
        )
        client = CursorLikeClient.through(proxy, workspace)
        cases = [
            ("429", "OpenAI Primary", claude),
            ("500", "OpenAI Primary", claude),
            ("401", "Claude Primary", chat),
            ("refused", "Gone Primary", claude),
        ]
        try:
            for case, primary, backup in cases:
                if case == "429":  # a retry-after longer than any wait: no retry, fall back
                    chat.script.error(429, message="slow down", retry_after=3600)
                elif case == "500":
                    chat.script.error(500, message="upstream exploded")
                elif case == "401":
                    claude.script.error(401, message="invalid x-api-key")
                backup.script.text(f"backup answered {case}")
                before = (len(chat.requests), len(claude.requests))
                message = client.run_request("hi", conversation_id=str(uuid.uuid4()), model=primary)
                result = await client.turn(message)
                assert result.end.ok, (case, result.end.error)
                assert result.text == f"backup answered {case}", case
                calls = (len(chat.requests) - before[0], len(claude.requests) - before[1])
                expected = {
                    "429": (1, 1),
                    "500": (1, 1),
                    "401": (1, 1),
                    "refused": (0, 1),
                }[case]
                assert calls == expected, case
                assert (chat.requests if backup is chat else claude.requests)[-1].json["model"] == (
                    "openai-backup" if backup is chat else "claude-backup"
                )
            proxy.wait_for_log(lambda lines: "".join(lines).count("(fallback for ") >= 8)
        finally:
            await client.aclose()
            proxy.stop()
    log = proxy.log()
    assert "served by Claude Backup (fallback for OpenAI Primary)" in log
    assert "served by OpenAI Backup (fallback for Claude Primary)" in log
    assert "served by Claude Backup (fallback for Gone Primary)" in log
    assert "sk-test-not-a-real-key" not in log
    store = UsageStore(proxy.data_dir)
    rows = store.rows()
    store.close()
    assert [(r["model"], r["outcome"]) for r in rows] == [
        ("Claude Backup", "ok (fallback for OpenAI Primary)"),
        ("Claude Backup", "ok (fallback for OpenAI Primary)"),
        ("OpenAI Backup", "ok (fallback for Claude Primary)"),
        ("Claude Backup", "ok (fallback for Gone Primary)"),
    ]


async def test_a_failure_after_output_reached_cursor_never_falls_back(tmp_path, workspace):
    async with FakeProvider(check_on_exit=False) as chat, FakeProvider() as claude:
        # text shown, then a server error in the stream: a kind that falls back before output
        chat.script.stream_error(text="half an answer", message="upstream overloaded")
        proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=write_config(tmp_path, chat, claude),
            env={KEY_ENV: "sk-test-not-a-real-key"},
        )
        client = CursorLikeClient.through(proxy, workspace)
        try:
            message = client.run_request(
                "hi", conversation_id=str(uuid.uuid4()), model="OpenAI Primary"
            )
            result = await client.turn(message)
        finally:
            await client.aclose()
            proxy.stop()
    assert "half an answer" in result.text
    assert not result.end.ok
    assert "no fallback was tried" in result.end.error.message
    [detail] = result.end.error.details
    shown = aipb.ErrorDetails.FromString(detail.value)
    assert shown.details.title == "Provider server error"
    assert claude.requests == []  # the backup was never called
