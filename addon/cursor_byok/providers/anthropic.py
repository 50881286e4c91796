"""Anthropic Messages, providers.md §5.

Usage normalisation: `input_tokens` = `input_tokens + cache_creation_input_tokens +
cache_read_input_tokens` (Anthropic reports them separately); `cache_read_tokens` /
`cache_write_tokens` = the cache counters; `output_tokens` as reported (the last
`message_delta` value, which is cumulative); reasoning tokens are not reported (None).

Replay data (`providerOptions.cursorByok.reasoning`): one native block per neutral reasoning
part, in order — `{"type": "thinking", "thinking", "signature"}` or
`{"type": "redacted_thinking", "data"}` — sent back unchanged to the same model, which
requires them while a tool loop continues.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from cursor_byok.conversation.history_format import UserPart
from cursor_byok.conversation.text import TextParts

from .adapter import SseProvider
from .adapter import as_int
from .adapter import as_object
from .adapter import parse_json_event
from .base import Finish
from .base import ModelRequest
from .base import ProviderEvent
from .base import ProviderSettings
from .base import ReasoningDelta
from .base import ServerToolCall
from .base import ServerToolResult
from .base import TextDelta
from .base import ToolCallArgsDelta
from .base import ToolCallEnd
from .base import ToolCallStart
from .base import Usage
from .base import streamed
from .history_projection import AssistantTurn
from .history_projection import MessageBuilder
from .history_projection import UserTurn
from .history_projection import args_json
from .history_projection import native_reasoning
from .history_projection import normalise
from .history_projection import replay_data
from .provider_error import ProviderError
from .provider_error import error_from_payload
from .sse import SseEvent
from .tool_args import parse_tool_args
from .tool_args import tool_schema

log = logging.getLogger(__name__)

KIND = "anthropic"
EPHEMERAL = {"type": "ephemeral"}
WEB_SEARCH_TOOL = {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}
MIN_THINKING_BUDGET = 1024
_REASONING_BLOCKS = ("thinking", "redacted_thinking")
_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "pause_turn": "pause_turn",
    "refusal": "refusal",
    "model_context_window_exceeded": "context_length",
}


# --------------------------------------------------------------------------- request


def messages_url(base_url: str) -> str:
    base = base_url.rstrip("/")
    return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"


def build_body(request: ModelRequest, settings: ProviderSettings) -> dict[str, Any]:
    """The JSON body for `POST /v1/messages`, with prompt-cache breakpoints."""
    messages = project_messages(request, settings)
    params = dict(request.params)
    budget = params.pop("thinking_budget", None)
    max_tokens = request.max_output_tokens or settings.anthropic_max_tokens
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": max_tokens,
        "messages": messages,
        "stream": True,
    }
    if request.system:
        body["system"] = [{"type": "text", "text": request.system}]
    if request.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": tool_schema(t)}
            for t in request.tools
        ]
        body["tool_choice"] = {"type": "auto"}
    if request.web_search:  # Anthropic's server-side search; results come back in the stream
        body.setdefault("tools", []).append(WEB_SEARCH_TOOL)
    if request.reasoning:
        thinking = _thinking(settings, max_tokens, budget)
        if thinking is not None and _thinking_replayable(messages):
            body["thinking"] = thinking
        elif thinking is not None:
            log.info(
                "thinking off for this call: the open tool turn has no replayable thinking block"
            )
    if settings.anthropic_cache:
        _add_cache_breakpoints(body)
    body.update(settings.extra_body)
    body.update(params)
    return body


def _thinking(settings: ProviderSettings, max_tokens: int, budget: Any) -> dict[str, Any] | None:
    if settings.anthropic_thinking == "adaptive":
        return {"type": "adaptive"}
    budget = (
        budget if isinstance(budget, int) and budget > 0 else settings.anthropic_thinking_budget
    )
    budget = max(budget, MIN_THINKING_BUDGET)
    if budget >= max_tokens:  # the budget must leave room for the answer
        budget = max_tokens - MIN_THINKING_BUDGET
    if budget < MIN_THINKING_BUDGET:
        log.info("max_tokens %d too small for thinking; thinking disabled", max_tokens)
        return None
    return {"type": "enabled", "budget_tokens": budget}


def _thinking_replayable(messages: list[dict[str, Any]]) -> bool:
    """With thinking on, the assistant message of an unfinished tool loop must start with a
    thinking block (else 400). History from another provider has none: then run without."""
    for message in reversed(messages):
        if message["role"] != "assistant":
            continue
        blocks = message["content"]
        if not any(b.get("type") == "tool_use" for b in blocks):
            return True
        return blocks[0].get("type") in _REASONING_BLOCKS
    return True


def _add_cache_breakpoints(body: dict[str, Any]) -> None:
    """Breakpoints: end of the stable prefix (system, else tools), the last message, and the
    previous user message so that a long tool loop still hits the cache written by the
    previous call (breakpoints look back only 20 blocks)."""
    if body.get("system"):
        body["system"][-1]["cache_control"] = EPHEMERAL
    elif body.get("tools"):
        body["tools"][-1]["cache_control"] = EPHEMERAL
    marked = 0
    for message in reversed(body["messages"]):
        if marked == 2:
            break
        if marked == 1 and message["role"] != "user":
            continue
        blocks = message["content"]
        if blocks and blocks[-1].get("type") not in _REASONING_BLOCKS:
            blocks[-1] = {**blocks[-1], "cache_control": EPHEMERAL}
            marked += 1


def project_messages(request: ModelRequest, settings: ProviderSettings) -> list[dict[str, Any]]:
    """Neutral history → Anthropic messages: tool results of one call batch in one user
    message (tool_result blocks first), tool_use blocks last in their assistant message."""
    out: list[dict[str, Any]] = []
    for turn in normalise(request.messages):
        if isinstance(turn, UserTurn):
            blocks = [_user_block(p) for p in turn.parts]
            if out and out[-1]["role"] == "user":
                out[-1]["content"].extend(blocks)  # e.g. text typed after tool results
            else:
                out.append({"role": "user", "content": blocks})
            continue
        content = _assistant_blocks(turn, request.model, settings)
        if not content:
            continue
        out.append({"role": "assistant", "content": content})
        if turn.results:
            out.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": r.call_id,
                            "content": r.result or "(no output)",
                            **({"is_error": True} if r.is_error else {}),
                        }
                        for r in turn.results
                    ],
                }
            )
    return out


def _user_block(part: UserPart) -> dict[str, Any]:
    if part["type"] == "text":
        return {"type": "text", "text": part["text"]}
    data = part["data"]
    if data.startswith(("http://", "https://")):
        return {"type": "image", "source": {"type": "url", "url": data}}
    if data.startswith("data:"):
        data = data.partition(",")[2]
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": part["mediaType"], "data": data},
    }


def _assistant_blocks(
    turn: AssistantTurn, model: str, settings: ProviderSettings
) -> list[dict[str, Any]]:
    replay = replay_data(turn, KIND, settings.label, model)
    leading, native = native_reasoning(turn, replay)
    blocks = [b for b in leading if _is_reasoning_block(b)]
    tool_uses: list[dict[str, Any]] = []
    reasoning_index = 0
    for part in turn.parts:
        if part["type"] == "reasoning":
            block = native[reasoning_index] if reasoning_index < len(native) else None
            reasoning_index += 1
            # reasoning without its signed native block cannot be sent as thinking: drop it
            if _is_reasoning_block(block):
                blocks.append(block)
        elif part["type"] == "text":
            blocks.append({"type": "text", "text": part["text"]})
        else:
            tool_uses.append(
                {
                    "type": "tool_use",
                    "id": part["toolCallId"],
                    "name": part["toolName"],
                    "input": part["args"],
                }
            )
    return blocks + tool_uses  # nothing may follow a tool_use block


def _is_reasoning_block(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") in _REASONING_BLOCKS


# --------------------------------------------------------------------------- stream


@dataclass(slots=True)
class _Block:
    type: str
    chunks: list[str] = field(default_factory=list)  # partial_json
    text: TextParts = field(default_factory=TextParts)  # text / thinking (`streamed`)
    signature: list[str] = field(default_factory=list)
    data: str = ""  # redacted_thinking
    id: str = ""
    name: str = ""
    input: Any = None  # tool_use input given in content_block_start


def _search_result(call_id: str, content: Any) -> ServerToolResult:
    """A `web_search_tool_result` block: a list of results, or an error object."""
    if isinstance(content, dict):
        code = content.get("error_code") or content.get("type") or "error"
        return ServerToolResult(call_id, "web_search", error=str(code))
    refs = tuple(
        (str(item.get("title") or item.get("url")), str(item["url"]))
        for item in content or []
        if isinstance(item, dict) and item.get("url")
    )
    return ServerToolResult(call_id, "web_search", refs)


class AnthropicStreamState:
    """Sans-IO decoder of a Messages stream."""

    def __init__(self, *, provider: str, model: str) -> None:
        self.done = False
        self._provider = provider
        self._builder = MessageBuilder(KIND, provider, model)
        self._blocks: dict[int, _Block] = {}
        self._native: list[dict[str, Any]] = []
        self._usage: dict[str, Any] = {}
        self._stop_reason: str | None = None

    def on_event(self, event: SseEvent) -> list[ProviderEvent]:
        if self.done:
            return []
        obj = parse_json_event(event, self._provider)
        kind = obj.get("type") or event.event
        if kind == "error":
            raise error_from_payload(obj, provider=self._provider)
        handler = getattr(self, f"_on_{kind}", None)
        if handler is None:
            if kind != "ping":
                log.debug("%s: ignoring stream event %r", self._provider, kind)
            return []
        return handler(obj)

    def on_eof(self) -> list[ProviderEvent]:
        raise ProviderError(
            "protocol",
            "stream ended before message_stop (connection cut?)",
            provider=self._provider,
            retryable=True,
        )

    def _on_message_start(self, obj: dict[str, Any]) -> list[ProviderEvent]:
        message = as_object(obj.get("message"))
        self._merge_usage(message.get("usage"))
        return []

    def _on_content_block_start(self, obj: dict[str, Any]) -> list[ProviderEvent]:
        start = as_object(obj.get("content_block"))
        block = _Block(type=str(start.get("type", "")))
        self._blocks[self._index(obj)] = block
        if block.type == "tool_use":
            block.id = str(start.get("id") or "") or f"toolu_{uuid.uuid4().hex[:24]}"
            block.name = str(start.get("name") or "")
            block.input = start.get("input")
            return [ToolCallStart(block.id, block.name)]
        if block.type == "server_tool_use":
            block.id = str(start.get("id") or "")
            block.name = str(start.get("name") or "")
            block.input = start.get("input")
        elif block.type == "web_search_tool_result":
            block.id = str(start.get("tool_use_id") or "")
            block.input = start.get("content")
        elif block.type == "redacted_thinking":
            block.data = str(start.get("data") or "")
        elif block.type == "text" and start.get("text"):
            return [streamed(TextDelta, block.text, start["text"])]
        elif block.type == "thinking":
            if start.get("signature"):
                block.signature.append(start["signature"])
            if start.get("thinking"):
                return [streamed(ReasoningDelta, block.text, start["thinking"])]
        return []

    def _on_content_block_delta(self, obj: dict[str, Any]) -> list[ProviderEvent]:
        block = self._blocks.get(self._index(obj))
        delta = as_object(obj.get("delta"))
        if block is None:
            raise ProviderError(
                "protocol",
                "content_block_delta for an unknown block",
                provider=self._provider,
                retryable=False,
            )
        kind = delta.get("type")
        if kind == "text_delta" and delta.get("text"):
            return [streamed(TextDelta, block.text, delta["text"])]
        if kind == "thinking_delta" and delta.get("thinking"):
            return [streamed(ReasoningDelta, block.text, delta["thinking"])]
        if kind == "signature_delta" and delta.get("signature"):
            block.signature.append(delta["signature"])
        elif kind == "input_json_delta" and delta.get("partial_json"):
            block.chunks.append(delta["partial_json"])
            if block.type == "tool_use":
                return [ToolCallArgsDelta(block.id, delta["partial_json"])]
        return []

    def _on_content_block_stop(self, obj: dict[str, Any]) -> list[ProviderEvent]:
        block = self._blocks.pop(self._index(obj), None)
        return self._close_block(block) if block is not None else []

    def _on_message_delta(self, obj: dict[str, Any]) -> list[ProviderEvent]:
        delta = as_object(obj.get("delta"))
        if delta.get("stop_reason"):
            self._stop_reason = str(delta["stop_reason"])
        self._merge_usage(obj.get("usage"))
        return []

    def _on_message_stop(self, obj: dict[str, Any]) -> list[ProviderEvent]:
        out: list[ProviderEvent] = []
        for index in sorted(self._blocks):  # blocks never stopped: close them in order
            out += self._close_block(self._blocks.pop(index))
        self.done = True
        reason = _STOP_REASONS.get(self._stop_reason or "end_turn")
        if reason is None:
            log.info(
                "%s: unknown stop_reason %r treated as stop", self._provider, self._stop_reason
            )
            reason = "stop"
        if reason == "stop" and self._builder.has_tool_calls():
            reason = "tool_calls"
        if self._native:
            self._builder.replay["reasoning"] = self._native
        if self._usage:
            out.append(self._normalised_usage())
        out.append(Finish(reason, self._builder.build()))
        return out

    def _close_block(self, block: _Block) -> list[ProviderEvent]:
        args: dict[str, Any] | None
        if block.type == "text":
            self._builder.add_text(block.text.seal())
        elif block.type == "thinking":
            text, signature = block.text.seal(), "".join(block.signature)
            self._builder.add_reasoning(text, signature or None)
            native: dict[str, Any] = {"type": "thinking", "thinking": text}
            if signature:
                native["signature"] = signature
            self._native.append(native)
        elif block.type == "redacted_thinking":
            self._builder.add_reasoning("")
            self._native.append({"type": "redacted_thinking", "data": block.data})
        elif block.type == "tool_use":
            raw = "".join(block.chunks)
            if not raw and isinstance(block.input, dict) and block.input:
                args, error = block.input, None
                raw = args_json(args)
            else:
                args, error = parse_tool_args(raw, empty_is_object=True)
            self._builder.add_tool_call(block.id, block.name, args if args is not None else {})
            return [ToolCallEnd(block.id, block.name, args, raw, error)]
        elif block.type == "server_tool_use":
            raw = "".join(block.chunks)
            args = block.input if not raw and isinstance(block.input, dict) else None
            if args is None:
                args, _error = parse_tool_args(raw, empty_is_object=True)
            # Not replayed: the search already happened; the answer text carries what it found.
            return [ServerToolCall(block.id, block.name, args if isinstance(args, dict) else {})]
        elif block.type == "web_search_tool_result":
            return [_search_result(block.id, block.input)]
        else:
            log.info("%s: dropping unsupported content block %r", self._provider, block.type)
        return []

    def _index(self, obj: dict[str, Any]) -> int:
        index = obj.get("index")
        return index if isinstance(index, int) else 0

    def _merge_usage(self, usage: Any) -> None:
        if isinstance(usage, dict):
            self._usage.update({k: v for k, v in usage.items() if v is not None})

    def _normalised_usage(self) -> Usage:
        u = self._usage
        fresh = as_int(u.get("input_tokens"))
        write = as_int(u.get("cache_creation_input_tokens"))
        read = as_int(u.get("cache_read_input_tokens"))
        total = (
            None
            if fresh is None and write is None and read is None
            else (fresh or 0) + (write or 0) + (read or 0)
        )
        return Usage(
            input_tokens=total,
            output_tokens=as_int(u.get("output_tokens")),
            cache_read_tokens=read,
            cache_write_tokens=write,
            reasoning_tokens=None,
        )


# --------------------------------------------------------------------------- provider


class AnthropicProvider(SseProvider):
    kind = KIND

    def build(self, request: ModelRequest) -> tuple[str, dict[str, str], dict[str, Any]]:
        headers = {"anthropic-version": self.settings.anthropic_version}
        if self.settings.api_key:
            headers["x-api-key"] = self.settings.api_key
        if self.settings.anthropic_beta:
            headers["anthropic-beta"] = self.settings.anthropic_beta
        headers.update(self.settings.extra_headers)
        return messages_url(self.settings.base_url), headers, build_body(request, self.settings)

    def new_state(self, request: ModelRequest) -> AnthropicStreamState:
        return AnthropicStreamState(provider=self.label, model=request.model)
