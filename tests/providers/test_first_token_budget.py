"""A provider that accepts the connection and never answers ends the call within the
first-token budget, over all retries (issue 13), with an error naming provider and budget."""

from __future__ import annotations

import time

import pytest
from fakes.fake_provider import FakeProvider
from fakes.sse_wire import sse

from cursor_byok.providers import ModelRequest
from cursor_byok.providers import ProviderError
from cursor_byok.providers import TextDelta
from cursor_byok.providers import make_provider
from cursor_byok.providers import stream_with_retries

REQ = ModelRequest(model="m", system="s", messages=[{"role": "user", "content": "hi"}])
pytestmark = pytest.mark.timeout(60)


async def _drain(provider, budget: float, retries: int = 2) -> list:
    events = []
    async for event in stream_with_retries(
        provider, REQ, max_retries=retries, first_token_timeout=budget, sleep=_no_sleep
    ):
        events.append(event)
    return events


async def _no_sleep(_: float) -> None:
    return None


@pytest.mark.parametrize("silence", ["stall", "trickle"])
async def test_silent_provider_fails_within_the_budget_despite_a_long_read_timeout(
    silence,
) -> None:
    async with FakeProvider(check_on_exit=False) as fp:
        getattr(fp.script, silence)()
        provider = make_provider(fp.settings("anthropic", name="sleepy", read_timeout=300))
        started = time.monotonic()
        try:
            with pytest.raises(ProviderError) as caught:
                await _drain(provider, budget=0.5)
        finally:
            await provider.aclose()
        elapsed = time.monotonic() - started
        await fp.wait_for_disconnect(0)
    error = caught.value
    assert elapsed < 5
    assert error.kind == "timeout" and not error.retryable
    assert "sleepy" in error.message and "0.5 s" in error.message
    assert "first_token_timeout" in error.message
    assert len(fp.requests) == 1  # the budget covers retries: no new attempt after it


async def test_budget_spans_retries() -> None:
    async with FakeProvider(check_on_exit=False) as fp:
        fp.script.error(500, retry_after=0)
        fp.script.error(503, retry_after=0)
        fp.script.stall()
        provider = make_provider(fp.settings("openai-chat", name="flaky"))
        try:
            with pytest.raises(ProviderError) as caught:
                await _drain(provider, budget=3.0)
        finally:
            await provider.aclose()
    assert len(fp.requests) == 3
    assert "3 attempts" in caught.value.message and "flaky" in caught.value.message


async def test_answer_within_the_budget_streams_normally_even_if_slow_afterwards() -> None:
    async with FakeProvider() as fp:
        fp.script.text("slow but steady").delay = 0.3  # whole answer takes > budget
        provider = make_provider(fp.settings("openai-chat"))
        try:
            events = await _drain(provider, budget=2.0)
        finally:
            await provider.aclose()
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "slow but steady"


async def test_a_started_stream_may_think_silently_longer_than_the_budget() -> None:
    """A reasoning model opens its stream at once and may then be silent for minutes before
    its first delta: the budget ends with the provider's first event, not the first token."""
    chunks = [
        sse({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
        sse({"choices": [{"index": 0, "delta": {"content": "thought long"}}]}),
        sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        b"data: [DONE]\n\n",
    ]
    async with FakeProvider(split_events=False) as fp:
        fp.script.raw(chunks).delay = 2.5
        provider = make_provider(fp.settings("openai-chat"))
        try:
            events = await _drain(provider, budget=1.5)
        finally:
            await provider.aclose()
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "thought long"
