"""Each adapter's text and reasoning deltas say where they are in the message part it builds
(`TextDelta.source`/`end`): the turn's record of what it showed is ranges of that part, not a
second copy (issue 38). Checked against every adapter: the ranges the deltas name are the
deltas, and, once the part ends, they are ranges of the very string the history keeps."""

from __future__ import annotations

import pytest
from fakes.sse_wire import decode_all
from fakes.sse_wire import sse

from cursor_byok.conversation.text import TextView
from cursor_byok.providers import Finish
from cursor_byok.providers import ReasoningDelta
from cursor_byok.providers import TextDelta
from cursor_byok.providers.anthropic import AnthropicStreamState
from cursor_byok.providers.openai_chat import ChatStreamState
from cursor_byok.providers.openai_responses import ResponsesStreamState

TEXT = [f"word {i} é🙂, " for i in range(400)]
THINKING = [f"step {i}; " for i in range(300)]


def _chat() -> tuple[ChatStreamState, bytes]:
    def chunk(delta: dict, finish: str | None = None) -> bytes:
        return sse({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    body = b"".join(chunk({"reasoning_content": t}) for t in THINKING)
    body += b"".join(chunk({"content": t}) for t in TEXT)
    body += chunk({}, "stop") + sse("[DONE]")
    return ChatStreamState(provider="p", model="m"), body


def _anthropic() -> tuple[AnthropicStreamState, bytes]:
    def event(kind: str, **body) -> bytes:
        return sse({"type": kind, **body}, kind)

    body = event("message_start", message={"id": "m", "usage": {"input_tokens": 1}})
    body += event("content_block_start", index=0, content_block={"type": "thinking"})
    body += b"".join(
        event("content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": t})
        for t in THINKING
    )
    body += event(
        "content_block_delta", index=0, delta={"type": "signature_delta", "signature": "sig"}
    )
    body += event("content_block_stop", index=0)
    body += event("content_block_start", index=1, content_block={"type": "text", "text": ""})
    body += b"".join(
        event("content_block_delta", index=1, delta={"type": "text_delta", "text": t}) for t in TEXT
    )
    body += event("content_block_stop", index=1)
    body += event("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 2})
    body += event("message_stop")
    return AnthropicStreamState(provider="p", model="m"), body


def _responses() -> tuple[ResponsesStreamState, bytes]:
    def event(kind: str, **body) -> bytes:
        return sse({"type": kind, **body}, kind)

    reasoning = {"type": "reasoning", "id": "rs_1", "summary": []}
    message = {"type": "message", "id": "msg_1", "role": "assistant", "content": []}
    body = event("response.output_item.added", output_index=0, item=reasoning)
    body += b"".join(
        event("response.reasoning_summary_text.delta", item_id="rs_1", output_index=0, delta=t)
        for t in THINKING
    )
    body += event("response.output_item.done", output_index=0, item=reasoning)
    body += event("response.output_item.added", output_index=1, item=message)
    body += b"".join(
        event("response.output_text.delta", item_id="msg_1", output_index=1, delta=t) for t in TEXT
    )
    body += event("response.output_item.done", output_index=1, item=message)
    body += event("response.completed", response={"id": "r", "status": "completed"})
    return ResponsesStreamState(provider="p", model="m"), body


@pytest.mark.parametrize("make", [_chat, _anthropic, _responses], ids=lambda f: f.__name__[1:])
def test_deltas_are_ranges_of_the_parts_the_history_keeps(make) -> None:
    state, body = make()
    events, error = decode_all(state, [body])
    assert error is None
    text, thinking = TextView(), TextView()
    for event in events:
        if isinstance(event, TextDelta | ReasoningDelta):
            assert event.source is not None, event  # every streamed delta names its record
            assert "".join(event.source.view(event.end - len(event.text), event.end)) == event.text
            (text if isinstance(event, TextDelta) else thinking).append(
                event.text, event.source, event.end
            )
    [finish] = [e for e in events if isinstance(e, Finish)]
    parts = {p["type"]: p["text"] for p in finish.message["content"] if "text" in p}
    assert parts["text"] == "".join(TEXT) and parts["reasoning"] == "".join(THINKING)
    assert text.take() is parts["text"]  # the history's own string: no second copy
    assert thinking.take() is parts["reasoning"]


def test_an_empty_delta_does_not_split_the_open_part() -> None:
    from cursor_byok.providers.history_projection import MessageBuilder

    builder = MessageBuilder("k", "p", "m")
    builder.append_text("one ")
    builder.append_reasoning("")
    builder.append_text("part")
    assert builder.build()["content"] == [{"type": "text", "text": "one part"}]
