"""A BYOK chat's title made here (agent/titles.py): by title_model in one short bounded call,
else, or when that fails or is slow, from the message's first words; never an exception."""

from __future__ import annotations

import asyncio

from cursor_byok.agent import titles
from cursor_byok.config import parse_config
from cursor_byok.providers.base import ModelRequest
from cursor_byok.providers.base import TextDelta
from cursor_byok.providers.base import Usage
from cursor_byok.providers.provider_error import ProviderError

RAW = {
    "providers": {"p": {"kind": "openai-chat", "base_url": "http://127.0.0.1:1/v1"}},
    "models": [
        {"name": "Big", "provider": "p", "model": "big-1"},
        {"name": "Small", "provider": "p", "model": "small-1"},
    ],
    "title_model": "Small",
}
MESSAGE = "Please fix the flaky login test in tests/test_auth.py and explain why it fails"


class Scripted:
    """A provider that answers with `text` (or raises, or never answers)."""

    def __init__(self, text: str = "", *, error: ProviderError | None = None, hang: bool = False):
        self.text, self.error, self.hang = text, error, hang
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest):
        self.requests.append(request)
        if self.hang:
            await asyncio.Event().wait()
        if self.error is not None:
            raise self.error
        yield TextDelta(self.text)
        yield Usage(input_tokens=40, output_tokens=5)

    async def aclose(self) -> None:
        pass


def test_first_words_and_clean() -> None:
    assert titles.first_words(MESSAGE) == "Please fix the flaky login test…"
    assert titles.first_words("Short one") == "Short one"
    assert titles.first_words("   ") == titles.UNTITLED
    assert titles.first_words("x" * 200).endswith("…") and len(titles.first_words("x" * 200)) <= 60
    assert titles.clean('\n"Fix flaky login test."\nmore') == "Fix flaky login test"
    assert titles.clean("Title: **Auth fix**") == "Auth fix"


async def test_the_title_model_names_the_chat_in_one_short_call() -> None:
    config = parse_config(RAW)
    provider = Scripted('"Fix flaky login test"')
    title = await titles.make_title(config, MESSAGE, lambda model: provider, timeout=5)
    assert title.name == "Fix flaky login test" and title.model == "Small" and not title.problem
    assert title.usage == {
        "input_tokens": 40,
        "output_tokens": 5,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "reasoning_tokens": 0,
    }
    (request,) = provider.requests
    assert request.model == "small-1" and request.tools == []
    assert request.max_output_tokens == titles.TITLE_MAX_TOKENS and not request.reasoning
    assert MESSAGE in str(request.messages)


async def test_without_a_title_model_or_when_it_fails_the_first_words_name_it() -> None:
    config = parse_config(RAW)
    plain = parse_config({k: v for k, v in RAW.items() if k != "title_model"})
    title = await titles.make_title(plain, MESSAGE, lambda model: Scripted("unused"), timeout=5)
    assert title.name == titles.first_words(MESSAGE) and title.model == ""
    failing = Scripted(error=ProviderError("auth", "401 from the provider", retryable=False))
    title = await titles.make_title(config, MESSAGE, lambda model: failing, timeout=5)
    assert title.name == titles.first_words(MESSAGE) and "401" in title.problem
    empty = await titles.make_title(config, MESSAGE, lambda model: Scripted("  "), timeout=5)
    assert empty.name == titles.first_words(MESSAGE) and empty.problem == "the answer was empty"
    none = await titles.make_title(None, MESSAGE, lambda model: Scripted("x"), timeout=5)
    assert none.name == titles.first_words(MESSAGE)

    def broken(model):
        raise RuntimeError("an adapter's bug")

    title = await titles.make_title(config, MESSAGE, broken, timeout=5)
    assert title.name == titles.first_words(MESSAGE) and "an adapter's bug" in title.problem


async def test_a_title_model_that_does_not_answer_is_given_up_in_time() -> None:
    config = parse_config(RAW)
    loop = asyncio.get_running_loop()
    started = loop.time()
    title = await titles.make_title(config, MESSAGE, lambda model: Scripted(hang=True), 0.2)
    assert loop.time() - started < 5
    assert title.name == titles.first_words(MESSAGE) and "within 0.2s" in title.problem
