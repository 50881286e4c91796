"""The one retry policy of a model call: back-off, the server's retry-after, and the first-token
budget over all attempts (providers.md §9). The HTTP client never retries on its own.
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

from .base import ModelRequest
from .base import Provider
from .base import ProviderEvent
from .provider_error import ProviderError

log = logging.getLogger(__name__)

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
        reason="first_token_timeout",
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
    retry_if: Callable[[ProviderError], bool] | None = None,
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

    `retry_if` narrows what is retried (a pooled key's 429 is not waited out: another key
    takes the call).
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
            if retry_if is not None and not retry_if(error):
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
