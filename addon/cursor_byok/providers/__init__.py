"""Provider adapters: the user's LLM endpoint as one normalised event stream.

Import from here: `make_provider(settings).stream(request)` yields `TextDelta`,
`ReasoningDelta`, `ToolCallStart`, `ToolCallArgsDelta`, `ToolCallEnd`, `Usage` and finally
`Finish` (whose `message` goes into the history), or raises `ProviderError`.
"""

from .base import Finish
from .base import ModelRequest
from .base import Provider
from .base import ProviderError
from .base import ProviderEvent
from .base import ProviderSettings
from .base import ReasoningDelta
from .base import TextDelta
from .base import ToolCallArgsDelta
from .base import ToolCallEnd
from .base import ToolCallStart
from .base import ToolSpec
from .base import Usage
from .base import backoff_delay
from .base import make_provider
from .base import stream_with_retries
from .history import INTERRUPTED

__all__ = [
    "INTERRUPTED",
    "Finish",
    "ModelRequest",
    "Provider",
    "ProviderError",
    "ProviderEvent",
    "ProviderSettings",
    "ReasoningDelta",
    "TextDelta",
    "ToolCallArgsDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolSpec",
    "Usage",
    "backoff_delay",
    "make_provider",
    "stream_with_retries",
]
