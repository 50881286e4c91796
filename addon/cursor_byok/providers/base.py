"""The provider interface: requests, normalised stream events, errors, settings, retries.

Everything the agent loop needs to talk to an LLM provider is defined here; the adapters
(`openai_chat`, `openai_responses`, `anthropic`) turn each wire format into the same events.
Nothing in this module imports the HTTP client, so callers stay independent of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import logging
import random
from collections.abc import AsyncGenerator
from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Literal
from typing import Protocol

from cursor_byok.errors import ByokError
from cursor_byok.secrets import is_secret_header

log = logging.getLogger(__name__)

ProviderKind = Literal["openai-chat", "openai-responses", "anthropic"]
PROVIDER_KINDS: tuple[str, ...] = ("openai-chat", "openai-responses", "anthropic")


# --------------------------------------------------------------------------- request


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool offered to the model; `parameters` is a JSON Schema object."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(slots=True)
class ModelRequest:
    """One model call.

    `messages` are in the neutral history format (see `history.py`); the system prompt is
    `system`, never a message. `params` are extra body parameters merged into the request
    (e.g. `temperature`, `reasoning_effort`); a few keys are interpreted per adapter
    (`thinking_budget` for Anthropic, `reasoning_effort` / `reasoning_summary` for Responses).
    `cache_key` is a stable per-conversation key (OpenAI `prompt_cache_key`).
    """

    model: str
    system: str
    messages: list[dict[str, Any]]
    tools: list[ToolSpec] = field(default_factory=list)
    max_output_tokens: int | None = None
    params: dict[str, Any] = field(default_factory=dict)
    cache_key: str | None = None
    reasoning: bool = False
    # Let the provider search the web itself (Anthropic's server-side web search tool,
    # OpenAI Responses' hosted web_search); adapters without one ignore it.
    web_search: bool = False


# --------------------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    call_id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCallArgsDelta:
    call_id: str
    fragment: str


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    """A complete tool call. `args` is None and `error` is set when the arguments are not a
    JSON object (truncated by max tokens, model mistake); the loop returns `error` to the
    model as the tool result instead of executing the call."""

    call_id: str
    name: str
    args: dict[str, Any] | None
    raw_args: str
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one model call, normalised across providers.

    `input_tokens` is the whole prompt including cached tokens (Anthropic's three input
    counters are summed); `output_tokens` includes reasoning tokens. None = not reported.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None


FinishReason = Literal[
    "stop", "tool_calls", "length", "content_filter", "refusal", "pause_turn", "context_length"
]


@dataclass(frozen=True, slots=True)
class Finish:
    """End of a successful call. `message` is the assistant message in the neutral history
    format, with provider replay data under `providerOptions.cursorByok`; append it to the
    history unchanged. A call whose arguments were invalid appears with `args: {}` (its
    `ToolCallEnd.error` is what the model should get back as the result).

    `reason` is one of: stop, tool_calls, length, content_filter, refusal, pause_turn,
    context_length (Anthropic `model_context_window_exceeded`)."""

    reason: str
    message: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ServerToolCall:
    """A tool the provider ran itself (web search): shown to the user, not executed by us."""

    call_id: str
    name: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ServerToolResult:
    """The outcome of a `ServerToolCall`: (title, url) references, or an error."""

    call_id: str
    name: str
    references: tuple[tuple[str, str], ...] = ()
    error: str | None = None


ProviderEvent = (
    TextDelta
    | ReasoningDelta
    | ToolCallStart
    | ToolCallArgsDelta
    | ToolCallEnd
    | ServerToolCall
    | ServerToolResult
    | Usage
    | Finish
)


# --------------------------------------------------------------------------- errors

ErrorKind = Literal[
    "auth",
    "rate_limit",
    "quota",
    "context_length",
    "invalid_request",
    "server",
    "network",
    "timeout",
    "protocol",
    "other",
]
_RETRYABLE_KINDS = frozenset({"rate_limit", "server", "network", "timeout"})


class ProviderError(ByokError):
    """A failed model call, classified so the loop can decide: retry, compact, or show.

    `message` is the provider's own message with secrets redacted; safe to show and log.
    """

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        status: int | None = None,
        retryable: bool | None = None,
        retry_after: float | None = None,
        provider: str = "",
        code: str | None = None,
    ) -> None:
        self.kind = kind
        self.message = message
        self.status = status
        self.retryable = kind in _RETRYABLE_KINDS if retryable is None else retryable
        self.retry_after = retry_after
        self.provider = provider
        # The provider's own error code (e.g. "insufficient_quota"), not a Connect code: it
        # shadows ByokError.code; capture/format.py records it under this name.
        self.code = code  # type: ignore[assignment]
        super().__init__(message)

    def __str__(self) -> str:
        where = f"{self.provider}: " if self.provider else ""
        status = f" {self.status}" if self.status is not None else ""
        return f"{where}{self.kind}{status}: {self.message}"

    def __repr__(self) -> str:
        return (
            f"ProviderError(kind={self.kind!r}, status={self.status!r}, "
            f"retryable={self.retryable!r}, message={self.message!r})"
        )

    def redact(self, secrets: list[str]) -> ProviderError:
        """Remove secrets from the message in place (returns self for `raise e.redact(...)`)."""
        from .errors import scrub

        self.message = scrub(self.message, secrets)
        self.args = (self.message,)
        return self


# --------------------------------------------------------------------------- settings

ChatReasoningPassback = Literal["reasoning_content", "reasoning", "reasoning_details"]


@dataclass(slots=True)
class ProviderSettings:
    """How to reach one provider. Built from the user's profile.

    Chat knobs (`chat_*`): `chat_reasoning_passback` names the assistant-message field that
    reasoning is sent back in (`reasoning_content` for DeepSeek/Kimi/Qwen, `reasoning` or
    `reasoning_details` for OpenRouter, None = never); `chat_reasoning_passback_scope`
    limits it to assistant messages that made tool calls (DeepSeek's requirement) or sends it
    on all. `chat_reasoning_body` / `chat_no_reasoning_body` are merged into the body when
    the request asks for reasoning or not (vendors spell the switch differently).
    """

    kind: str
    base_url: str
    api_key: str = field(default="", repr=False)
    extra_headers: dict[str, str] = field(default_factory=dict, repr=False)
    connect_timeout: float = 10.0
    read_timeout: float = 300.0
    max_retries: int = 2
    name: str = ""  # label for errors, logs and replay matching; defaults to the host
    proxy: str | None = None  # an HTTP proxy (CONNECT for https) for this provider's calls
    proxy_auth: str = field(default="", repr=False)  # "user:password" for `proxy` (Basic)
    proxy_from_env: bool = False  # HTTPS_PROXY / NO_PROXY of the proxy's environment
    ca_file: str | None = None  # a PEM bundle trusted besides the system store and certifi
    extra_body: dict[str, Any] = field(default_factory=dict)
    send_cache_key: bool = True
    # openai-chat
    chat_reasoning_passback: str | None = None
    chat_reasoning_passback_scope: Literal["tool_turns", "all"] = "tool_turns"
    chat_reasoning_body: dict[str, Any] = field(default_factory=dict)
    chat_no_reasoning_body: dict[str, Any] = field(default_factory=dict)
    chat_max_tokens_field: str = "max_completion_tokens"
    chat_include_usage: bool = True
    chat_think_tags: bool = True
    # anthropic
    anthropic_version: str = "2023-06-01"
    anthropic_beta: str | None = None
    anthropic_max_tokens: int = 16384
    anthropic_thinking: Literal["enabled", "adaptive"] = "enabled"
    anthropic_thinking_budget: int = 8192
    anthropic_cache: bool = True
    # openai-responses (store is always false: we run stateless)
    responses_reasoning_summary: str | None = "auto"
    responses_include_encrypted: bool = True

    def __post_init__(self) -> None:
        if self.kind not in PROVIDER_KINDS:
            raise ValueError(
                f"unknown provider kind {self.kind!r}; expected one of {PROVIDER_KINDS}"
            )
        if self.chat_reasoning_passback not in (
            None,
            "reasoning_content",
            "reasoning",
            "reasoning_details",
        ):
            raise ValueError(f"unknown chat_reasoning_passback {self.chat_reasoning_passback!r}")

    def __repr__(self) -> str:
        key = "set" if self.api_key else "unset"
        headers = sorted(self.extra_headers)
        return (
            f"ProviderSettings(kind={self.kind!r}, base_url={self.base_url!r}, "
            f"name={self.label!r}, api_key=<{key}>, extra_headers={headers!r})"
        )

    @property
    def label(self) -> str:
        """Provider label used in errors and to decide whether replay data applies."""
        if self.name:
            return self.name
        from urllib.parse import urlsplit

        return urlsplit(self.base_url).hostname or self.kind

    def secrets(self) -> list[str]:
        """Strings that must never appear in messages or logs."""
        out = [self.api_key] if self.api_key else []
        if self.proxy_auth:
            out.append(self.proxy_auth)
            _, _, password = self.proxy_auth.partition(":")
            if password:
                out.append(password)
        for name, value in self.extra_headers.items():
            if is_secret_header(name) and value:
                out.append(value)
                # "Bearer xyz": also the bare token
                _, _, token = value.partition(" ")
                if token:
                    out.append(token)
        return out


# --------------------------------------------------------------------------- provider


class Provider(Protocol):
    """A model endpoint. `stream` yields events and ends with `Finish`, or raises
    `ProviderError`. Closing the iterator early (aclose / cancellation) closes the HTTP
    response, hence an async generator (callers wrap it in `contextlib.aclosing`)."""

    def stream(self, request: ModelRequest) -> AsyncGenerator[ProviderEvent]: ...

    async def aclose(self) -> None: ...


def make_provider(settings: ProviderSettings, *, transport: object | None = None) -> Provider:
    """Build the adapter for `settings.kind`. `transport` replaces the HTTP client's network
    side (`providers.http.Transport`; tests pass a scripted one); typed as object so callers
    need not import the HTTP layer."""
    if settings.kind == "openai-chat":
        from .openai_chat import OpenAIChatProvider

        return OpenAIChatProvider(settings, transport=transport)
    if settings.kind == "openai-responses":
        from .openai_responses import OpenAIResponsesProvider

        return OpenAIResponsesProvider(settings, transport=transport)
    if settings.kind == "anthropic":
        from .anthropic import AnthropicProvider

        return AnthropicProvider(settings, transport=transport)
    raise ValueError(f"unknown provider kind {settings.kind!r}")


# --------------------------------------------------------------------------- retries

MAX_BACKOFF = 8.0
RetryCallback = Callable[[int, ProviderError, float], Awaitable[None] | None]


def backoff_delay(
    error: ProviderError,
    attempt: int,
    *,
    jitter: Callable[[], float] = random.random,
) -> float:
    """Delay before retry number `attempt + 1`: the server's retry-after when given,
    else min(0.5 * 2**attempt, 8) s reduced by up to 25 % jitter."""
    if error.retry_after is not None:
        return max(0.0, error.retry_after)
    base = min(0.5 * 2**attempt, MAX_BACKOFF)
    return base * (1.0 - 0.25 * jitter())


DEFAULT_FIRST_TOKEN_TIMEOUT = 120.0

# Set by `stream_with_retries` for the attempt in progress; adapters call `stream_started()`
# when the response's first event arrives (before any normalised event may exist: a reasoning
# model can think for minutes after `response.created`). A context variable, because provider
# clients are shared between concurrent turns while each turn runs in its own task.
_on_started: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar(
    "cursor_byok_stream_started", default=None
)


def stream_started() -> None:
    """The provider began answering this call: its first-token budget no longer applies."""
    callback = _on_started.get()
    if callback is not None:
        callback()


class _Attempt:
    """One attempt's first-token state: answered yet, and the timer to stop when it is."""

    def __init__(self) -> None:
        self.answered = False
        self.timer: asyncio.Timeout | None = None

    def started(self) -> None:
        self.answered = True
        if self.timer is not None:
            self.timer.reschedule(None)


def first_token_error(provider: str, budget: float, attempts: int, last: str = "") -> ProviderError:
    """The visible error when no event arrived within the first-token budget."""
    tail = f"; last error: {last}" if last else ""
    return ProviderError(
        "timeout",
        f"no answer from {provider or 'the provider'} within the first-token budget of "
        f"{budget:g} s ({attempts} attempt{'s' if attempts != 1 else ''}; setting "
        f"first_token_timeout){tail}",
        provider=provider,
        retryable=False,
        code="first_token_timeout",
    )


async def stream_with_retries(
    provider: Provider,
    request: ModelRequest,
    *,
    max_retries: int,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    on_retry: RetryCallback | None = None,
    jitter: Callable[[], float] = random.random,
    max_retry_after: float = 60.0,
    first_token_timeout: float | None = None,
) -> AsyncGenerator[ProviderEvent]:
    """`provider.stream(request)`, retried while nothing has been yielded yet.

    Once an event has been forwarded, a retry would duplicate visible output, so a later
    failure is raised as is. Non-retryable kinds are never retried, and neither is a
    server-requested wait longer than `max_retry_after` seconds (the user should see it).
    `on_retry(attempt, error, delay)` (sync or async) runs before each wait.

    `first_token_timeout` bounds the time from the call until the provider starts answering
    (its first SSE event, or failing that the first normalised event) over all attempts and
    waits together: a provider that accepts connections and never answers ends the call after
    that many seconds instead of (read timeout) x (attempts).
    """
    loop = asyncio.get_running_loop()
    deadline = None if first_token_timeout is None else loop.time() + first_token_timeout
    label = getattr(provider, "label", "") or ""
    attempt = 0
    forwarded = False
    while True:
        current = _Attempt()
        _on_started.set(current.started)
        try:
            async with contextlib.aclosing(provider.stream(request)) as events:
                iterator = aiter(events)
                while True:
                    try:
                        if forwarded or current.answered or deadline is None:
                            event = await anext(iterator)
                        else:
                            remaining = deadline - loop.time()
                            if remaining <= 0:
                                raise TimeoutError
                            async with asyncio.timeout(remaining) as current.timer:
                                event = await anext(iterator)
                            current.timer = None
                    except StopAsyncIteration:
                        break
                    except TimeoutError:
                        assert first_token_timeout is not None
                        raise first_token_error(label, first_token_timeout, attempt + 1) from None
                    forwarded = True
                    yield event
            return
        except ProviderError as error:
            if forwarded or not error.retryable or attempt >= max_retries:
                raise
            if error.retry_after is not None and error.retry_after > max_retry_after:
                raise
            delay = backoff_delay(error, attempt, jitter=jitter)
            if deadline is not None and loop.time() + delay >= deadline:
                assert first_token_timeout is not None
                raise first_token_error(
                    label or error.provider, first_token_timeout, attempt + 1, str(error)
                ) from error
            attempt += 1
            log.warning(
                "provider %s: %s %s (%s); retry %d/%d in %.2fs",
                error.provider,
                error.kind,
                error.status if error.status is not None else "",
                error.message[:200],
                attempt,
                max_retries,
                delay,
            )
            if on_retry is not None:
                result = on_retry(attempt, error, delay)
                if inspect.isawaitable(result):
                    await result
            await sleep(delay)
