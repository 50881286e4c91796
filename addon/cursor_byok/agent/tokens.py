"""Token accounting without a tokenizer: byte estimates calibrated by the provider's usage.

Why no tokenizer: exact counts exist only for some OpenAI models (and their vocabularies are not
in the wheel); every provider reports the true prompt size after each call anyway. So the meter
counts bytes of what we send (system prompt, tool schemas, history), converts them with a
tokens-per-byte ratio that starts at 1/4 and is re-fitted from each reported `input_tokens`,
and between reports adds the estimate of what was appended since (providers.md §8).

The meter's categories are Cursor's (`cursor/context_meter.py`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_RATIO = 0.25  # tokens per byte before any usage report
_MIN_RATIO, _MAX_RATIO = 0.1, 1.0  # clamp: a broken report must not wreck the estimate


def json_bytes(value: Any) -> int:
    """Size of `value` as compact JSON (the shape it is sent in, near enough)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def messages_bytes(messages: Sequence[Mapping[str, Any]]) -> int:
    return sum(json_bytes(m) for m in messages)


@dataclass
class TokenMeter:
    """The prompt size of one conversation, as the model sees it.

    `observe()` after every call that reported usage; `estimate()` for a request about to be
    sent; `used()` for the context meter (last report plus what was appended since)."""

    ratio: float = DEFAULT_RATIO
    last_input: int | None = None  # the provider's input tokens of the last call
    last_output: int = 0
    last_bytes: int = 0  # prompt bytes of that call
    calibrated: bool = False

    def seed(self, used_tokens: int, prompt_bytes: int) -> None:
        """Start from the previous turn's meter (its checkpoint) when nothing better is known."""
        if used_tokens > 0 and prompt_bytes > 0 and not self.calibrated:
            self.ratio = _clamp(used_tokens / prompt_bytes)

    def estimate(self, prompt_bytes: int) -> int:
        return math.ceil(prompt_bytes * self.ratio)

    def observe(
        self,
        request_bytes: int,
        input_tokens: int | None,
        output_tokens: int | None,
        answer_bytes: int = 0,
    ) -> None:
        """A call of `request_bytes` reported `input_tokens`; its answer (now in the
        history) is `answer_bytes` long and `output_tokens` long."""
        if input_tokens is None or input_tokens <= 0:
            return
        if request_bytes > 0:
            self.ratio = _clamp(input_tokens / request_bytes)
            self.calibrated = True
        self.last_input = input_tokens
        self.last_output = output_tokens or 0
        self.last_bytes = request_bytes + answer_bytes

    def used(self, prompt_bytes: int) -> int:
        """Context in use now: the last report (input + output) plus an estimate of the bytes
        added since; a pure estimate before the first report, or after compaction shrank it."""
        if self.last_input is None or prompt_bytes < self.last_bytes:
            return self.estimate(prompt_bytes)
        return self.last_input + self.last_output + self.estimate(prompt_bytes - self.last_bytes)

    def reset_report(self) -> None:
        """After compaction the last report no longer describes the prompt."""
        self.last_input = None
        self.last_output = 0
        self.last_bytes = 0


def _clamp(ratio: float) -> float:
    return min(_MAX_RATIO, max(_MIN_RATIO, ratio))
