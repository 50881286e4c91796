"""`ProviderError`, the one failure of a model call, and classifying provider failures into
it (providers.md §9).

One classifier serves HTTP error responses and in-band stream errors alike: both come down
to (status, error type/code, message). Order matters: quota/billing first (never retried,
even on 429), then context overflow (routed to compaction), then auth and status classes.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Mapping
from typing import Any
from typing import Literal

from cursor_byok import secrets as redaction
from cursor_byok.errors import ByokError

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
        reason: str | None = None,
    ) -> None:
        self.kind = kind
        self.message = message
        self.status = status
        self.retryable = kind in _RETRYABLE_KINDS if retryable is None else retryable
        self.retry_after = retry_after
        self.provider = provider
        # The provider's (or the HTTP layer's) own name for the failure, e.g.
        # "insufficient_quota", "tls", "first_token_timeout". `code` stays the Connect code.
        self.reason = reason
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
        self.message = scrub(self.message, secrets)
        self.args = (self.message,)
        return self


MAX_MESSAGE_CHARS = 2000

_QUOTA_MARKERS = (
    "insufficient_quota",
    "exceeded your current quota",
    "billing",
    "enforced_spend_limit",
    "spend limit",
    "spend_limit",
    "credit balance",
    "insufficient credits",
    "insufficient balance",
    "insufficient_balance",
    "perday",
    "per day",
    # a team gateway's budgets (LiteLLM: "Budget has been exceeded!", type budget_exceeded;
    # provider/deployment budgets: "No deployments available - crossed budget")
    "budget_exceeded",
    "budget has been exceeded",
    "crossed budget",
    "exceeded budget",
)
_CONTEXT_MARKERS = (
    "context_length_exceeded",
    "maximum context length",
    "context length",
    "context window",
    "context_window",
    "prompt is too long",
    "exceeds the maximum number of tokens",
    "input is too long",
    "too many input tokens",
    "request_too_large",
)
_AUTH_TYPES = {"authentication_error", "permission_error", "invalid_api_key", "unauthenticated"}
_RATE_TYPES = {"rate_limit_error", "rate_limit_exceeded", "resource_exhausted", "tokens_exceeded"}
_SERVER_TYPES = {"api_error", "overloaded_error", "server_error", "internal_error", "unavailable"}
_INVALID_TYPES = {"invalid_request_error", "not_found_error", "invalid_argument", "invalid_prompt"}


def scrub(text: str, secrets: list[str]) -> str:
    """Remove secrets (and anything shaped like a credential) from text meant for users/logs:
    the one redactor, `cursor_byok.secrets`."""
    return redaction.scrub(text, secrets)


def classify(
    status: int | None, etype: str | None, code: str | None, message: str
) -> tuple[str, bool]:
    """(kind, retryable) from whatever a provider told us."""
    hay = " ".join(x for x in (etype or "", code or "", message) if x).lower()
    tokens = {(etype or "").lower(), (code or "").lower()}
    if status == 402 or tokens & {"insufficient_quota", "billing_error", "insufficient_balance"}:
        return "quota", False
    if any(m in hay for m in _QUOTA_MARKERS):
        return "quota", False
    if status == 413 or any(m in hay for m in _CONTEXT_MARKERS):
        return "context_length", False
    if status in (401, 403) or tokens & _AUTH_TYPES:
        return "auth", False
    if status == 429 or tokens & _RATE_TYPES:
        return "rate_limit", True
    if status == 408:
        return "timeout", True
    if status == 409:
        return "server", True
    if (status is not None and status >= 500) or tokens & _SERVER_TYPES:
        return "server", True
    if (status is not None and 400 <= status < 500) or tokens & _INVALID_TYPES:
        return "invalid_request", False
    return "other", False


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms`, then `retry-after` (seconds or HTTP date)."""
    lower = {k.lower(): v for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lower.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _gemini_retry_delay(error: Mapping[str, Any]) -> float | None:
    """Gemini puts `RetryInfo{retryDelay: "3.5s"}` in `error.details`."""
    for detail in error.get("details") or []:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
            delay = str(detail.get("retryDelay", ""))
            if delay.endswith("s"):
                try:
                    return float(delay[:-1])
                except ValueError:
                    return None
    return None


def _fields(payload: Any) -> tuple[str, str | None, str | None, int | None, float | None]:
    """(message, type, code, embedded status, retry delay) from any known error body shape."""
    if isinstance(payload, list) and payload:
        payload = payload[0]  # Gemini sometimes wraps the error in a list
    if not isinstance(payload, dict):
        return "", None, None, None, None
    err = payload.get("error", payload)
    if isinstance(err, str):
        return err, None, None, None, None
    if not isinstance(err, dict):
        return "", None, None, None, None
    message = err.get("message") or payload.get("message") or ""
    if not isinstance(message, str):
        message = json.dumps(message, ensure_ascii=False)
    etype = err.get("type") if isinstance(err.get("type"), str) else None
    if etype == "error":  # Anthropic's envelope repeats "error"; the real type is nested
        etype = None
    status_name = err.get("status") if isinstance(err.get("status"), str) else None
    code = err.get("code")
    embedded: int | None = None
    if isinstance(code, int) and not isinstance(code, bool):
        embedded = code if 100 <= code <= 599 else None
        code = str(code)
    elif code is not None and not isinstance(code, str):
        code = str(code)
    details = err.get("details")
    if isinstance(details, dict) and isinstance(details.get("error_code"), str):
        code = details["error_code"]  # Anthropic: enforced_spend_limit_reached
    metadata = err.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("raw"), str):
        message = f"{message} ({metadata['raw']})" if message else metadata["raw"]
    return message, etype or status_name, code, embedded, _gemini_retry_delay(err)


def error_from_payload(
    payload: Any, *, provider: str, status: int | None = None, default_message: str = ""
) -> ProviderError:
    """A ProviderError from a parsed error object (HTTP body or in-band stream event)."""
    message, etype, code, embedded, delay = _fields(payload)
    message = message or default_message or "provider reported an error"
    kind, retryable = classify(status if status is not None else embedded, etype, code, message)
    return ProviderError(
        kind,
        _clip(message),
        status=status if status is not None else embedded,
        retryable=retryable,
        retry_after=delay,
        provider=provider,
        reason=code or etype,
    )


def error_from_response(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    provider: str,
    secrets: list[str],
) -> ProviderError:
    """Classify a non-2xx response; honours `retry-after*` and `x-should-retry`."""
    text = body.decode("utf-8", errors="replace").strip()
    try:
        payload: Any = json.loads(text) if text else None
    except ValueError:
        payload = None
    if payload is not None:
        error = error_from_payload(payload, provider=provider, status=status, default_message=text)
    else:
        message = text or f"HTTP {status}"
        kind, retryable = classify(status, None, None, message)
        error = ProviderError(
            kind, _clip(message), status=status, retryable=retryable, provider=provider
        )
    retry_after = parse_retry_after(headers)
    if retry_after is not None:
        error.retry_after = retry_after
    lower = {k.lower(): v for k, v in headers.items()}
    should = lower.get("x-should-retry", "").strip().lower()
    if error.kind != "quota" and should in ("true", "false"):
        error.retryable = should == "true"
    return error.redact(secrets)


def _clip(message: str) -> str:
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    return message[:MAX_MESSAGE_CHARS] + "…"
