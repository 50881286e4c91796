"""Tool schemas out, tool arguments in: the small rules all three formats share."""

from __future__ import annotations

import json
from typing import Any

from .base import ToolSpec


def tool_schema(tool: ToolSpec) -> dict[str, Any]:
    """The tool's JSON Schema with `"type": "object"` guaranteed (Kimi rejects it missing)."""
    schema = dict(tool.parameters or {})
    schema.setdefault("type", "object")
    if schema["type"] == "object":
        schema.setdefault("properties", {})
    return schema


def parse_tool_args(raw: str, *, empty_is_object: bool) -> tuple[dict[str, Any] | None, str | None]:
    """(args, None) for a JSON object, else (None, error text for the model).

    Invalid arguments are returned to the model as a tool error rather than executed; models
    correct themselves. An empty string means "no arguments" where the format allows it.
    """
    if not raw.strip():
        if empty_is_object:
            return {}, None
        return None, "invalid JSON arguments: empty"
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return None, f"invalid JSON arguments: {exc}"
    if not isinstance(value, dict):
        return None, f"invalid arguments: expected a JSON object, got {type(value).__name__}"
    return value, None
