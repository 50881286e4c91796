"""A stdio MCP server with one tool, `echo(text)`, for clients that start MCP servers themselves
(Cursor's SDK does). Newline-delimited JSON-RPC 2.0 on stdin/stdout; no dependencies.

    {"type": "stdio", "command": sys.executable, "args": [".../mcp_echo.py"]}

`tools/call echo {"text": T}` answers `echo: T`. Its `instructions` are what the server tells
the agent about itself (they reach the model's system prompt through the request context).
"""

from __future__ import annotations

import json
import sys

INSTRUCTIONS = "The echo server repeats text back; use it to check that MCP works."
TOOL = {
    "name": "echo",
    "description": "Echo the text back",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}


def answer(request: dict) -> dict | None:
    method, ident = request.get("method"), request.get("id")
    if ident is None:  # a notification (initialized, cancelled): no answer
        return None
    if method == "initialize":
        params = request.get("params") or {}
        result = {
            "protocolVersion": params.get("protocolVersion", "2024-11-05"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "echo", "version": "1.0"},
            "instructions": INSTRUCTIONS,
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        arguments = (request.get("params") or {}).get("arguments") or {}
        text = "echo: " + str(arguments.get("text", ""))
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    else:
        result = {}
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def main() -> None:
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        reply = answer(request) if isinstance(request, dict) else None
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
