"""One completion on a model, outside the agent's loop: a system prompt and one user message in,
the answer's text out, its token counts given to whoever bills it.

`complete` is the whole answer at once: a chat's title, a compaction summary, an image's
description. `stream_text` streams one for the editor's features beyond the Agent (Cmd-K,
terminal Cmd-K, commit messages; Tab may use it too): text deltas out as they come.

No tools, no history, no retries once text was shown (a retry would repeat it). The caller owns
the deadline and the cancellation: closing the iterator (or cancelling its task) closes the
provider's response at once, so a client that went away stops the provider call.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Protocol

from cursor_byok.config import Config
from cursor_byok.config import ConfigError
from cursor_byok.config import ModelConfig
from cursor_byok.config.catalog import find_model
from cursor_byok.providers import Finish
from cursor_byok.providers import ModelRequest
from cursor_byok.providers import Provider
from cursor_byok.providers import TextDelta
from cursor_byok.providers import Usage
from cursor_byok.providers.provider_error import ProviderError
from cursor_byok.providers.retries import stream_with_retries

USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)


class UsageSink(Protocol):
    """Where a call's token counts go (`UsageTally.add`, or `add_counts` into a dict); a count
    the provider did not report is None."""

    def __call__(self, **counts: int | None) -> object: ...


def usage_counts(event: Usage) -> dict[str, int | None]:
    """A usage event's token counts by name (None: not reported)."""
    return {name: getattr(event, name) for name in USAGE_FIELDS}


def add_counts(total: dict[str, int]) -> UsageSink:
    """A sink that adds each count to `total` (one not reported counts 0)."""

    def add(**counts: int | None) -> None:
        for name, value in counts.items():
            total[name] = total.get(name, 0) + (value or 0)

    return add


async def complete(
    provider: Provider,
    request: ModelRequest,
    usage: UsageSink,
    *,
    max_retries: int,
    first_token_timeout: float | None = None,
    what: str = "",
) -> str:
    """The answer's whole text, stripped; each usage event's counts go to `usage` as they come.

    With `what` ("the summary"), an empty answer raises ProviderError ("… came back empty");
    without it, the caller judges an empty answer. Retried before the first event only (the
    retry policy's rules, `first_token_timeout` over all attempts)."""
    parts: list[str] = []
    events = stream_with_retries(
        provider, request, max_retries=max_retries, first_token_timeout=first_token_timeout
    )
    async with contextlib.aclosing(events) as stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                parts.append(event.text)
            elif isinstance(event, Usage):
                usage(**usage_counts(event))
    text = "".join(parts).strip()
    if what and not text:
        raise ProviderError("protocol", f"{what} came back empty", retryable=False)
    return text


class EndedEarly(ProviderError):
    """The provider's stream stopped without its final event: a cut answer is not an answer."""


@dataclass
class Completion:
    """One call's request and what it used (filled while it streams)."""

    model: ModelConfig
    system: str
    user: str
    max_output_tokens: int | None = None
    usage: dict[str, int] = field(default_factory=dict)
    images: list[dict[str, Any]] = field(default_factory=list)  # image parts, before the text

    def request(self) -> ModelRequest:
        content = [*self.images, {"type": "text", "text": self.user}]
        return ModelRequest(
            model=self.model.model,
            system=self.system,
            messages=[{"role": "user", "content": content}],
            tools=[],
            max_output_tokens=self.max_output_tokens or self.model.max_output_tokens,
            params=dict(self.model.params),
            reasoning=False,
        )


def feature_model(config: Config, name: str) -> ModelConfig:
    """The configured model `name` (from `[features]`); ConfigError when there is none."""
    model = find_model(config, name)
    if model is None:
        raise ConfigError(f"features: model {name!r} is not configured")
    return model


async def stream_text(
    provider: Provider, call: Completion, *, max_retries: int = 1
) -> AsyncIterator[str]:
    """The answer's text, delta by delta; raises ProviderError (EndedEarly for a cut stream).

    A failure before the first delta is retried `max_retries` times (the retry policy's own
    rules: never a bad key, never a long Retry-After)."""
    events = stream_with_retries(provider, call.request(), max_retries=max_retries)
    finished = False
    async with contextlib.aclosing(events) as stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                if event.text:
                    yield event.text
            elif isinstance(event, Usage):
                add_counts(call.usage)(**usage_counts(event))
            elif isinstance(event, Finish):
                finished = True
    if not finished:
        raise EndedEarly(
            "protocol", "the provider's stream ended without its final event", provider=""
        )
