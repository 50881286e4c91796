"""Answering an aiserver call from one completion on the user's model: the shared part of Cmd-K,
terminal Cmd-K, commit messages (and Tab, which may use it the same way).

`Answer` runs one `agent.completion` call and turns its text deltas into the call's response
messages (the caller says how), as Connect frames for a server stream, or as one text for a unary
call. Every failure ends the call in the client's own protocol with the Connect code that says
what happened (the Agent's table, `agent/error_details.py`): a bad key `unauthenticated`, a
missing key `failed_precondition`, a slow provider `deadline_exceeded`; never a hang. Each call
leaves one usage row of its kind (`store/usage.py` FEATURE_KINDS) with its tokens, and one log
line.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator
from collections.abc import AsyncIterator
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import json_format
from google.protobuf.message import Message

from cursor_byok.agent.completion import Completion
from cursor_byok.agent.completion import EndedEarly
from cursor_byok.agent.completion import stream_text
from cursor_byok.agent.error_details import PROVIDER_ERROR
from cursor_byok.agent.error_details import TITLES
from cursor_byok.agent.error_details import configuration_error
from cursor_byok.agent.error_details import provider_turn_error
from cursor_byok.agent.error_details import stream_ended_early
from cursor_byok.agent.turn_endings import TurnError
from cursor_byok.config import ConfigError
from cursor_byok.errors import ByokError
from cursor_byok.providers import Provider
from cursor_byok.providers.provider_error import ProviderError
from cursor_byok.store.feature_calls import FeatureCalls
from cursor_byok.store.usage import TurnUsage
from cursor_byok.store.usage import feature_outcome
from cursor_byok.store.usage import record_row
from cursor_byok.wire import connect

log = logging.getLogger(__name__)


class FeatureFailed(ByokError):
    """A feature call that ends with a Connect error (`code`, `message`)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def failure(exc: BaseException) -> connect.EndStreamError:
    """What a call ends with for `exc`, as the Agent's turns end (a title and the detail in
    `aiserver.v1.ErrorDetails`, which Cursor shows)."""
    if isinstance(exc, FeatureFailed):
        return connect.EndStreamError(exc.code, exc.message)
    if isinstance(exc, EndedEarly):
        return stream_ended_early().end_stream()
    if isinstance(exc, ProviderError):
        return provider_turn_error(exc).end_stream()
    if isinstance(exc, ConfigError):
        return configuration_error(exc).end_stream()
    if isinstance(exc, TimeoutError):
        return TurnError(
            "deadline_exceeded", "The model did not answer in time.", title=TITLES["timeout"],
            error=PROVIDER_ERROR,
        ).end_stream()  # fmt: skip
    return connect.EndStreamError("internal", f"cursor-byok: {type(exc).__name__}: {exc}")


def frame(message: Message, json: bool = False) -> bytes:
    """One Connect stream envelope with `message`, in the client's codec."""
    if json:
        data = json_format.MessageToJson(message, indent=None).encode()
    else:
        data = message.SerializeToString()
    return connect.encode_frame(data)


def end_frame(error: connect.EndStreamError | None = None) -> bytes:
    """The end-of-stream envelope, with the error the stream ends with (if any)."""
    return connect.encode_end_stream(error)


@dataclass
class Answer:
    """One feature call on the user's model: what it is, where its usage goes."""

    kind: str  # a usage kind: cmd_k, terminal, commit_message, tab
    label: str  # what the log calls it ("Cmd-K")
    call: Completion
    provider: Callable[[], Provider]  # built when the call starts (a missing key fails there)
    data_dir: Path
    started: float = 0.0
    first_delta: float | None = None  # seconds from start to the first text shown
    problem: str = ""
    calls: FeatureCalls | None = None  # the live status's rows (store/feature_calls.py)

    async def texts(self) -> AsyncGenerator[str]:
        """The answer's text deltas; raises what `failure` maps."""
        self.started = time.monotonic()
        if self.calls is not None:
            self.calls.started(self.kind, self.call.model.name)
        provider = self.provider()
        async for text in stream_text(provider, self.call):
            if self.first_delta is None:
                self.first_delta = time.monotonic() - self.started
            yield text

    async def frames(
        self,
        messages: Callable[[AsyncIterator[str]], AsyncGenerator[Message]],
        *,
        json: bool = False,
    ) -> AsyncIterator[bytes]:
        """A server stream's body: the frames of `messages(texts)`, then the end envelope (with
        the error, if the call failed). Cancelled (the client went away): the provider call is
        closed where it waits and the row says so."""
        error: connect.EndStreamError | None = None
        try:
            texts = self.texts()  # closed here too: `messages` may stop reading it early
            async with contextlib.aclosing(texts), contextlib.aclosing(messages(texts)) as stream:
                async for message in stream:
                    yield frame(message, json)
        except asyncio.CancelledError:
            self.problem = "client went away"
            self.record()
            raise
        except Exception as exc:
            error = failure(exc)
            self.problem = error.code
            if not isinstance(exc, ProviderError | ConfigError | FeatureFailed):
                log.exception("%s: failed (a bug of cursor-byok)", self.label)
        self.record(error)
        yield end_frame(error)

    def record(self, error: connect.EndStreamError | None = None) -> None:
        """The call's usage row and its log line."""
        duration = time.monotonic() - self.started if self.started else 0.0
        usage = self.call.usage
        if self.calls is not None:
            self.calls.ended(self.kind, self.call.model.name, usage=usage, duration=duration,
                             first_text=self.first_delta, problem=self.problem,
                             was_running=bool(self.started))  # fmt: skip
        record_row(
            self.data_dir,
            TurnUsage(
                started=time.time() - duration,
                duration=duration,
                conversation="",
                request="",
                model=self.call.model.name,
                input_tokens=usage.get("input_tokens", 0),
                cache_read_tokens=usage.get("cache_read_tokens", 0),
                cache_write_tokens=usage.get("cache_write_tokens", 0),
                output_tokens=usage.get("output_tokens", 0),
                reasoning_tokens=usage.get("reasoning_tokens", 0),
                outcome=feature_outcome(self.kind, self.problem),
                route=self.label,
            ),
        )
        first = f", first text after {self.first_delta:.2f}s" if self.first_delta else ""
        if error is not None:
            log.warning("%s on %s: %s (%s)", self.label, self.call.model.name, error.message,
                        error.code)  # fmt: skip
        else:
            log.info("%s answered here by %s in %.2fs%s, not sent to Cursor", self.label,
                     self.call.model.name, duration, first)  # fmt: skip
