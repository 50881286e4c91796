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
from cursor_byok.providers.provider_error import ProviderError

PROVIDER_ERROR = aipb.ErrorDetails.ERROR_PROVIDER_ERROR  # 57
CUSTOM_MESSAGE = aipb.ErrorDetails.ERROR_CUSTOM_MESSAGE  # 29
BAD_MODEL_NAME = aipb.ErrorDetails.ERROR_BAD_MODEL_NAME  # 5
TITLES = {
    "auth": "Provider rejected the API key",
    "forbidden": "Provider refused access",
    "not_found": "Provider does not know this model",
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


# ProviderError.kind -> the Connect code the turn ends with. Only what may pass by itself
# (a server error, the network, a timeout, a broken stream) is `unavailable`: Cursor and people
# read that as "try again later", which a bad key or an unknown model never is.
CODES = {
    "auth": "unauthenticated",
    "forbidden": "permission_denied",
    "rate_limit": "resource_exhausted",
    "quota": "resource_exhausted",
    "not_found": "not_found",
    "invalid_request": "invalid_argument",
    "context_length": "invalid_argument",
}
_NOT_FOUND_CODES = {"model_not_found", "not_found_error", "not_found"}


def provider_kind(exc: ProviderError) -> str:
    """The failure as the user must act on it: the classifier's kind, with a refused
    credential (403) told from a missing one (401) and an unknown model (404) from a bad
    request, which the classifier (built for retries) does not separate."""
    if exc.kind == "auth" and exc.status == 403:
        return "forbidden"
    if exc.kind == "invalid_request" and (
        exc.status == 404 or (exc.reason or "").lower() in _NOT_FOUND_CODES
    ):
        return "not_found"
    return exc.kind


def provider_turn_error(exc: ProviderError) -> TurnError:
    """A provider failure as the error Cursor shows: the Connect code that says what happened
    (`CODES`), a title, the provider's message, retryable.

    The `ErrorDetails` enum stays PROVIDER_ERROR for all of them: Cursor shows its title and
    detail as they are, while the enum values of its own accounts (BAD_USER_API_KEY,
    RATE_LIMITED, ...) open Cursor's settings or plans, which have nothing to do with a key in
    the cursor-byok config."""
    kind = provider_kind(exc)
    title = TITLES.get(kind, "Provider error")
    if exc.status:
        title = f"{title} (HTTP {exc.status})"
    if kind == "context_length":
        return TurnError("invalid_argument", exc.message, title=title, error=CUSTOM_MESSAGE)
    return TurnError(
        "deadline_exceeded" if exc.reason == "idle_timeout" else CODES.get(kind, "unavailable"),
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
