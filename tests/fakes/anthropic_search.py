"""An Anthropic Messages stream in which the model ran its server-side web search."""

from __future__ import annotations

import json
from typing import Any

from fakes.sse_wire import sse


def ev(name: str, **fields: Any) -> bytes:
    return sse({"type": name, **fields}, event=name)


def anthropic_search_stream(query: str, results: Any, answer: str) -> bytes:
    """A Messages stream: server_tool_use (web_search) → web_search_tool_result → text."""
    message = {"id": "m", "type": "message", "role": "assistant", "content": [],
               "usage": {"input_tokens": 5, "output_tokens": 1}}  # fmt: skip
    return b"".join(
        [
            ev("message_start", message=message),
            ev("content_block_start", index=0, content_block={
                "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}),
            ev("content_block_delta", index=0, delta={
                "type": "input_json_delta", "partial_json": json.dumps({"query": query})}),
            ev("content_block_stop", index=0),
            ev("content_block_start", index=1, content_block={
                "type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": results}),
            ev("content_block_stop", index=1),
            ev("content_block_start", index=2, content_block={"type": "text", "text": ""}),
            ev("content_block_delta", index=2, delta={"type": "text_delta", "text": answer}),
            ev("content_block_stop", index=2),
            ev("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 9}),
            ev("message_stop"),
        ]
    )  # fmt: skip


RESULTS = [
    {"type": "web_search_result", "title": "Release notes", "url": "https://ex.test/rel",
     "encrypted_content": "abc", "page_age": "1 day"},
    {"type": "web_search_result", "url": "https://ex.test/2", "encrypted_content": "def"},
]  # fmt: skip
