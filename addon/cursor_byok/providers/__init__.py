"""Provider adapters: the user's LLM endpoint as one normalised event stream.

Import from here: `make_provider(settings).stream(request)` yields `TextDelta`,
`ReasoningDelta`, `ToolCallStart`, `ToolCallArgsDelta`, `ToolCallEnd`, `Usage` and finally
`Finish` (whose `message` goes into the history), or raises `ProviderError`.
"""

from .anthropic import AnthropicProvider
from .base import PROVIDER_KINDS
from .base import Finish
from .base import ModelRequest
from .base import Provider
from .base import ProviderEvent
from .base import ProviderSettings
from .base import ReasoningDelta
from .base import ServerToolCall
from .base import ServerToolResult
from .base import TextDelta
from .base import ToolCallArgsDelta
from .base import ToolCallEnd
from .base import ToolCallStart
from .base import ToolSpec
from .base import Usage
from .base import event_fields
from .fim import FIM_KINDS
from .fim import FimProvider
from .history_projection import INTERRUPTED
from .openai_chat import OpenAIChatProvider
from .openai_responses import OpenAIResponsesProvider
from .provider_error import ProviderError
from .retries import backoff_delay
from .retries import stream_with_retries


def make_provider(settings: ProviderSettings, *, transport: object | None = None) -> Provider:
    """Build the adapter for `settings.kind`. `transport` replaces the HTTP client's network
    side (`providers.http.Transport`; tests pass a scripted one); typed as object so callers
    need not import the HTTP layer."""
    if settings.kind == "openai-chat":
        return OpenAIChatProvider(settings, transport=transport)
    if settings.kind == "openai-responses":
        return OpenAIResponsesProvider(settings, transport=transport)
    if settings.kind == "anthropic":
        return AnthropicProvider(settings, transport=transport)
    if settings.kind in FIM_KINDS:
        return FimProvider(settings, transport=transport)
    raise ValueError(f"unknown provider kind {settings.kind!r}")


__all__ = [
    "FIM_KINDS",
    "INTERRUPTED",
    "PROVIDER_KINDS",
    "Finish",
    "ModelRequest",
    "Provider",
    "ProviderError",
    "ProviderEvent",
    "ProviderSettings",
    "ReasoningDelta",
    "ServerToolCall",
    "ServerToolResult",
    "TextDelta",
    "ToolCallArgsDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolSpec",
    "Usage",
    "backoff_delay",
    "event_fields",
    "make_provider",
    "stream_with_retries",
]
