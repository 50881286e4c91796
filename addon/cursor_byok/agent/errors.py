"""The errors a model turn ends with, in the shape Cursor shows them.

A provider failure never becomes assistant text (docs/architecture.md, principle 5): it ends the
turn with a `TurnError` whose `aiserver.v1.ErrorDetails` carry a title, the provider's message
and whether a retry may help. The titles per `ProviderError.kind` live here, in one table, so
every phase of the loop reports the same failure the same way.
"""

from __future__ import annotations

from cursor_byok.agent.compaction import TOO_LARGE_TITLE
from cursor_byok.agent.turn import TurnError
from cursor_byok.errors import ByokError
from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.providers.errors import ProviderError

PROVIDER_ERROR = aipb.ErrorDetails.ERROR_PROVIDER_ERROR  # 57
CUSTOM_MESSAGE = aipb.ErrorDetails.ERROR_CUSTOM_MESSAGE  # 29
BAD_MODEL_NAME = aipb.ErrorDetails.ERROR_BAD_MODEL_NAME  # 5
TITLES = {
    "auth": "Provider rejected the API key",
    "rate_limit": "Provider rate limit",
    "quota": "Provider quota or billing limit",
    "context_length": "Context too long for the model",
    "invalid_request": "Provider rejected the request",
    "server": "Provider server error",
    "network": "Cannot reach the provider",
    "timeout": "Provider timed out",
    "protocol": "Provider stream broke off",
}


class ContextOverflow(ByokError):
    """The provider said the prompt does not fit its context window.

    Raised by the model call only while nothing of the answer was shown, so the step loop can
    compact and retry the call once without the user seeing a half answer twice."""

    def __init__(self, error: ProviderError | None, detail: str) -> None:
        super().__init__(detail)
        self.error = error


def too_large(detail: str) -> TurnError:
    """protocol.md §2.8: the context still does not fit after compaction."""
    return TurnError("invalid_argument", detail, title=TOO_LARGE_TITLE, error=CUSTOM_MESSAGE)


def provider_turn_error(exc: ProviderError) -> TurnError:
    """A provider failure as the error Cursor shows: title, provider's message, retryable."""
    title = TITLES.get(exc.kind, "Provider error")
    if exc.status:
        title = f"{title} (HTTP {exc.status})"
    if exc.kind == "context_length":
        return TurnError("invalid_argument", exc.message, title=title, error=CUSTOM_MESSAGE)
    return TurnError(
        "deadline_exceeded" if exc.reason == "idle_timeout" else "unavailable",
        f"{exc.provider}: {exc.message}" if exc.provider else exc.message,
        title=title,
        error=PROVIDER_ERROR,
        retryable=exc.retryable,
    )


def stream_ended_early() -> TurnError:
    """The provider's stream stopped without its final event: a cut answer is not an answer."""
    return TurnError(
        "unavailable",
        "The provider stream ended without a final event.",
        title=TITLES["protocol"],
        error=PROVIDER_ERROR,
    )


def configuration_error(exc: Exception) -> TurnError:
    """The model's provider cannot be built from the config (a missing key, say)."""
    return TurnError(
        "failed_precondition",
        str(exc),
        title="cursor-byok configuration",
        error=CUSTOM_MESSAGE,
    )


def unknown_model(requested: str, configured: list[str]) -> TurnError:
    """Cursor asked for a model the config does not name."""
    names = ", ".join(configured)
    return TurnError(
        "invalid_argument",
        f"Model {requested!r} is not configured in cursor-byok. Configured models: {names}",
        title="Unknown model",
        error=BAD_MODEL_NAME,
    )


def unsupported_action(text: str) -> TurnError:
    """A ConversationAction cursor-byok cannot serve: an error that names it, never silence."""
    return TurnError(
        "unimplemented",
        text,
        title="Action not supported by cursor-byok",
        error=CUSTOM_MESSAGE,
    )
