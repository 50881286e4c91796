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
from collections.abc import AsyncIterator
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
    policy = _Policy(provider, max_retries, max_retry_after, first_token_timeout, retry_if, jitter)
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
                        if forwarded or current.answered or policy.deadline is None:
                            event = await anext(iterator)
                        else:
                            event = await policy.first_event(iterator, current)
                    except StopAsyncIteration:
                        break
                    except TimeoutError:
                        raise policy.out_of_time(attempt) from None
                    forwarded = True
                    yield event
            return
        except ProviderError as error:
            if forwarded:
                raise
            delay = policy.delay(error, attempt)
            attempt += 1
            await _before_retry(error, attempt, max_retries, delay, on_retry)
            await sleep(delay)


class _Policy:
    """One call's retry rules and its first-token deadline (over all attempts and waits)."""

    def __init__(
        self,
        provider: Provider,
        max_retries: int,
        max_retry_after: float,
        first_token_timeout: float | None,
        retry_if: Callable[[ProviderError], bool] | None,
        jitter: Callable[[], float],
    ) -> None:
        self.label: str = getattr(provider, "label", "") or ""
        self.max_retries = max_retries
        self.max_retry_after = max_retry_after
        self.first_token_timeout = first_token_timeout
        self.retry_if = retry_if
        self.jitter = jitter
        self.loop = asyncio.get_running_loop()
        self.deadline = (
            None if first_token_timeout is None else self.loop.time() + first_token_timeout
        )

    async def first_event(
        self, iterator: AsyncIterator[ProviderEvent], current: _Attempt
    ) -> ProviderEvent:
        """The next event, within what is left of the first-token budget (TimeoutError after);
        the attempt stops the timer when the provider starts answering."""
        assert self.deadline is not None
        remaining = self.deadline - self.loop.time()
        if remaining <= 0:
            raise TimeoutError
        async with asyncio.timeout(remaining) as current.timer:
            event = await anext(iterator)
        current.timer = None
        return event

    def out_of_time(self, attempt: int) -> ProviderError:
        assert self.first_token_timeout is not None
        return first_token_error(self.label, self.first_token_timeout, attempt + 1)

    def delay(self, error: ProviderError, attempt: int) -> float:
        """The wait before retrying after `error` (nothing was forwarded yet); raises `error`
        when it is not retried, the first-token error when the wait would outlast the budget."""
        if not error.retryable or attempt >= self.max_retries:
            raise error
        if self.retry_if is not None and not self.retry_if(error):
            raise error
        if error.retry_after is not None and error.retry_after > self.max_retry_after:
            raise error
        delay = backoff_delay(error, attempt, jitter=self.jitter)
        if self.deadline is not None and self.loop.time() + delay >= self.deadline:
            assert self.first_token_timeout is not None
            raise first_token_error(
                self.label or error.provider, self.first_token_timeout, attempt + 1, str(error)
            ) from error
        return delay


async def _before_retry(
    error: ProviderError,
    attempt: int,
    max_retries: int,
    delay: float,
    on_retry: RetryCallback | None,
) -> None:
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
