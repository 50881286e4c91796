"""What the second hardening round's fault tests share (issue 27): a config for one fake provider
with whatever extra provider or top-level keys a test needs, a real mitmdump serving it, and one
turn of a Cursor-like client through it."""

from __future__ import annotations

import uuid
from pathlib import Path

from cursor_client import CursorLikeClient
from cursor_client import TurnResult
from mitm import Mitm
from mitm import start_mitmdump

MODEL = "Fault Model"
KEY_ENV = "FAKE_PROVIDER_KEY"
KEY = "sk-test-not-a-real-key"


def write_config(
    tmp: Path, base_url: str, *, provider: str = "", top: str = "", name: str = "config.toml"
) -> Path:
    """One provider (`flaky`, OpenAI Chat at `base_url`) and one model; `provider` and `top` are
    extra TOML lines for the provider table and the top level."""
    path = tmp / name
    path.write_text(
        f"""
default_model = "{MODEL}"
{top}

[providers.flaky]
kind = "openai-chat"
base_url = "{base_url}"
api_key_env = "{KEY_ENV}"
max_retries = 0
{provider}

[[models]]
name = "{MODEL}"
provider = "flaky"
model = "fake-upstream-1"
"""
    )
    path.chmod(0o600)
    return path


def start_proxy(tmp: Path, config: Path, *extra: str, key: str = KEY, **kwargs) -> Mitm:
    return start_mitmdump(
        tmp / "proxy", *extra, agent="provider", config=config, env={KEY_ENV: key}, **kwargs
    )


async def one_turn(
    proxy: Mitm, workspace: Path, text: str = "hello", **client_options
) -> TurnResult:
    client = CursorLikeClient.through(proxy, workspace, **client_options)
    try:
        return await client.turn(
            client.run_request(text, conversation_id=str(uuid.uuid4()), model=MODEL)
        )
    finally:
        await client.aclose()
