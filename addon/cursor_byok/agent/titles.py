"""A chat's title, made here for a BYOK conversation instead of by Cursor's NameAgent.

Cursor names a new chat from its first message with `NameAgent`, on its servers; for a BYOK
conversation that message must not go there. With `title_model` set, that model writes the
title in one short call (a few output tokens, no tools, bounded in time); without it, or when the
call fails or takes too long, the title is the message's first words. Either way the client gets
a title at once and nothing is forwarded. The call's usage is returned so the proxy can record
it (`cursor-byok usage` shows title calls with their cost).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field

from cursor_byok.agent.completion import add_counts
from cursor_byok.agent.completion import complete
from cursor_byok.config import Config
from cursor_byok.config import ConfigError
from cursor_byok.config import ModelConfig
from cursor_byok.config.routes import routed
from cursor_byok.providers import ModelRequest
from cursor_byok.providers import Provider
from cursor_byok.providers.provider_error import ProviderError

log = logging.getLogger(__name__)

TITLE_SYSTEM = (
    "You name chats between a user and a coding assistant. Reply with a title of two to six "
    "words for the chat that starts with the user's message below: no quotes, no final full "
    "stop, no preamble, in the language of the message."
)
TITLE_MAX_TOKENS = 24
MESSAGE_CHARS = 2000  # of the message the title model reads
TITLE_CHARS = 60  # the longest title given back
FIRST_WORDS = 6
UNTITLED = "New chat"


@dataclass
class Title:
    """A title and how it was made: by `model` (a configured name; "" for the first words),
    with the call's token counts, or why the model's title was not used (`problem`)."""

    name: str
    model: str = ""
    problem: str = ""
    usage: dict[str, int] = field(default_factory=dict)


def first_words(message: str, words: int = FIRST_WORDS, limit: int = TITLE_CHARS) -> str:
    """The message's first words, for a title when no model makes one."""
    picked = message.split()[:words]
    title = " ".join(picked)
    if len(title) > limit:
        title = title[: limit - 1].rstrip() + "…"
    elif len(message.split()) > words:
        title += "…"
    return title or UNTITLED


def clean(text: str) -> str:
    """A model's answer as a title: one line, no quotes or trailing full stop, bounded."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    line = line.removeprefix("Title:").strip().strip("\"'`*“”‘’").rstrip(".").strip()
    if len(line) > TITLE_CHARS:
        line = line[: TITLE_CHARS - 1].rstrip() + "…"
    return line


def title_model(config: Config | None) -> ModelConfig | None:
    if config is None:
        return None
    return routed(config, "title")  # [routes] title, else title_model


async def make_title(
    config: Config | None,
    message: str,
    provider_for: Callable[[ModelConfig], Provider],
    timeout: float,
) -> Title:
    """The title for a chat that starts with `message` (see the module doc); never raises."""
    fallback = first_words(message)
    model = title_model(config)
    if model is None or config is None:
        return Title(fallback)
    usage: dict[str, int] = {}
    try:
        provider = provider_for(model)
        async with asyncio.timeout(timeout):
            text = await _ask(provider, model, message, usage)
    except TimeoutError:
        problem = f"no answer within {timeout:g}s"
    except (ProviderError, ConfigError) as exc:
        problem = str(exc)
    except Exception as exc:  # a title must never fail the call (it would go to Cursor)
        log.exception("title_model %s failed", model.name)
        problem = f"{type(exc).__name__}: {exc}"
    else:
        name = clean(text)
        if name:
            return Title(name, model.name, usage=usage)
        problem = "the answer was empty"
    log.warning("title_model %s: %s; the chat is named from its first words", model.name, problem)
    return Title(fallback, model.name, problem, usage)


async def _ask(provider: Provider, model: ModelConfig, message: str, usage: dict[str, int]) -> str:
    request = ModelRequest(
        model=model.model,
        system=TITLE_SYSTEM,
        messages=[{"role": "user", "content": [{"type": "text", "text": message[:MESSAGE_CHARS]}]}],
        tools=[],
        max_output_tokens=TITLE_MAX_TOKENS,
        params=dict(model.params),
        reasoning=False,
        metadata={"kind": "title"},  # the conversation is not known here (NameAgent)
    )
    return await complete(provider, request, add_counts(usage), max_retries=0)
