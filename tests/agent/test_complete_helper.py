"""agent/completion.complete: the one whole-answer call behind titles, compaction summaries and
image descriptions (issue 32 item 7)."""

from __future__ import annotations

import pytest

from cursor_byok.agent.completion import add_counts
from cursor_byok.agent.completion import complete
from cursor_byok.agent.turn import UsageTally
from cursor_byok.providers.base import ModelRequest
from cursor_byok.providers.base import TextDelta
from cursor_byok.providers.base import Usage
from cursor_byok.providers.provider_error import ProviderError

REQUEST = ModelRequest(model="m", system="s", messages=[], tools=[], max_output_tokens=8)


class Answers:
    """A provider that fails `failures` times before its first event, then streams `events`."""

    def __init__(self, *events: object, failures: int = 0) -> None:
        self.events, self.failures, self.calls = events, failures, 0

    async def stream(self, request: ModelRequest):
        self.calls += 1
        if self.calls <= self.failures:
            raise ProviderError("server", "busy", status=503, retryable=True, retry_after=0)
        for event in self.events:
            yield event

    async def aclose(self) -> None:
        pass


async def test_the_answer_is_joined_stripped_and_its_usage_given_to_the_sink() -> None:
    provider = Answers(
        TextDelta("  Fix "), Usage(input_tokens=3), TextDelta("it \n"), Usage(output_tokens=2)
    )
    tally = UsageTally()
    assert await complete(provider, REQUEST, tally.add, max_retries=0) == "Fix it"
    assert (tally.input_tokens, tally.output_tokens) == (3, 2)
    assert tally.reported == {"input_tokens", "output_tokens"}  # None is not reported


async def test_a_dict_sink_counts_every_field_and_a_failure_before_text_is_retried() -> None:
    provider = Answers(TextDelta("ok"), Usage(input_tokens=3), Usage(input_tokens=4), failures=1)
    usage: dict[str, int] = {}
    assert await complete(provider, REQUEST, add_counts(usage), max_retries=1) == "ok"
    assert provider.calls == 2
    assert usage == {
        "input_tokens": 7,
        "output_tokens": 0,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "reasoning_tokens": 0,
    }


async def test_an_empty_answer_is_an_error_only_when_the_caller_names_it() -> None:
    blank = Answers(TextDelta(" \n"))
    assert await complete(blank, REQUEST, add_counts({}), max_retries=0) == ""
    with pytest.raises(ProviderError, match="the summary came back empty") as caught:
        await complete(blank, REQUEST, add_counts({}), max_retries=0, what="the summary")
    assert caught.value.kind == "protocol" and not caught.value.retryable
