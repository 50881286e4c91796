"""A key pool through a real mitmdump (issue 36, item 2): one key rate-limited, the other
serves at once, and the first serves again once its retry-after has passed; no key is logged."""

from __future__ import annotations

import time
import uuid

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from fakes.fake_provider import RecordedRequest
from fakes.script import Step
from mitm import start_mitmdump

pytestmark = pytest.mark.timeout(120)
KEYS = {"POOL_KEY_ONE": "sk-pool-one-not-real", "POOL_KEY_TWO": "sk-pool-two-not-real"}
RETRY_AFTER = 1.0


class Limiter:
    """Answers every request; the first one with key one gets a 429 and its retry-after."""

    def __init__(self) -> None:
        self.limited_at: float | None = None
        self.keys: list[str] = []  # which key each request carried, by env var name

    def __call__(self, request: RecordedRequest) -> Step:
        key = request.headers.get("authorization", "").removeprefix("Bearer ")
        name = next(n for n, v in KEYS.items() if v == key)
        self.keys.append(name)
        if name == "POOL_KEY_ONE" and self.limited_at is None:
            self.limited_at = time.monotonic()
            return Step(
                "error",
                status=429,
                message="Rate limit reached for requests",
                code="rate_limit_exceeded",
                headers={"retry-after": f"{RETRY_AFTER:g}"},
            )
        return Step("reply", text=f"served with {name}")


async def test_a_rate_limited_key_rests_while_the_other_serves(tmp_path, workspace) -> None:
    limiter = Limiter()
    async with FakeProvider(responder=limiter) as fp:
        config = tmp_path / "config.toml"
        config.write_text(
            f"""
default_model = "Pooled"

[providers.pool]
kind = "openai-chat"
base_url = "{fp.base_url}"
api_key_env = ["POOL_KEY_ONE", "POOL_KEY_TWO"]
max_retries = 2

[[models]]
name = "Pooled"
provider = "pool"
model = "pooled-1"
"""
        )
        proxy = start_mitmdump(tmp_path / "proxy", agent="provider", config=config, env=KEYS)
        client = CursorLikeClient.through(proxy, workspace)
        served: list[str] = []
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                message = client.run_request(
                    "hi", conversation_id=str(uuid.uuid4()), model="Pooled"
                )
                result = await client.turn(message)
                assert result.end.ok, result.end.error
                served.append(result.text)
                if len(served) > 1 and served[-1] == "served with POOL_KEY_ONE":
                    break
            back_at = time.monotonic()
        finally:
            await client.aclose()
            proxy.stop()
    # turn 1: key one 429 (not waited out: the pool has another key), key two serves
    assert limiter.keys[:2] == ["POOL_KEY_ONE", "POOL_KEY_TWO"]
    assert served[0] == "served with POOL_KEY_TWO"
    # while key one rests only key two is used; then key one serves again
    assert served[-1] == "served with POOL_KEY_ONE", served
    assert all(text == "served with POOL_KEY_TWO" for text in served[:-1])
    assert limiter.limited_at is not None and back_at - limiter.limited_at >= RETRY_AFTER
    log = proxy.log()
    assert "the key from POOL_KEY_ONE rests 1 s (rate_limit)" in log
    for value in KEYS.values():
        assert value not in log
