"""The model-facing tools: each model tool call becomes Cursor's own execution.

Import from here: `tools_for(mode, run_request)` gives the run's `ToolSet`; each `Tool` has
`ui_call(args)` for the card and `run(args, ctx)` returning a `ToolOutcome`. The loop
provides the `ToolContext`. Spec: docs/tools.md.
"""

from .base import MAX_RESULT_CHARS
from .base import MAX_RESULT_LINES
from .base import Tool
from .base import ToolContext
from .base import ToolError
from .base import ToolImage
from .base import ToolOutcome
from .base import truncate_text
from .registry import BUILTIN
from .registry import ToolSet
from .registry import get_tool
from .registry import provider_specs
from .registry import request_context_of
from .registry import specs
from .registry import tools_for

__all__ = [
    "BUILTIN",
    "MAX_RESULT_CHARS",
    "MAX_RESULT_LINES",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolImage",
    "ToolOutcome",
    "ToolSet",
    "get_tool",
    "provider_specs",
    "request_context_of",
    "specs",
    "tools_for",
    "truncate_text",
]
