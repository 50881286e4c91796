"""OpenAI Responses, stateless (`store: false`), providers.md §4.

Usage normalisation: `input_tokens` as reported (includes cached);
`cache_read_tokens` = `input_tokens_details.cached_tokens`; `output_tokens` as reported
(includes reasoning); `reasoning_tokens` = `output_tokens_details.reasoning_tokens`;
cache writes are not reported (None).

Replay data (`providerOptions.cursorByok.reasoning`): one entry per neutral reasoning part,
in order — the reasoning item `{"type": "reasoning", "id", "summary", "encrypted_content"}`
(None when the server sent no encrypted content: such an item cannot be replayed under
`store: false`). Items are replayed in output order, then the `function_call_output`s.
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
from .history_projection import image_data_url
from .history_projection import native_reasoning
from .history_projection import normalise
from .history_projection import replay_data
from .provider_error import ProviderError
from .provider_error import error_from_payload
from .sse import SseEvent
from .tool_args import parse_tool_args
from .tool_args import tool_schema

log = logging.getLogger(__name__)

KIND = "openai-responses"
_INCOMPLETE = {"max_output_tokens": "length", "content_filter": "content_filter"}


# --------------------------------------------------------------------------- request


def build_body(request: ModelRequest, settings: ProviderSettings) -> dict[str, Any]:
    """The JSON body for `POST {base}/responses`."""
    params = dict(request.params)
    effort = params.pop("reasoning_effort", None)
    summary = params.pop("reasoning_summary", settings.responses_reasoning_summary)
    body: dict[str, Any] = {
        "model": request.model,
        "input": project_input(request, settings),
        "stream": True,
        "store": False,
    }
    if request.system:
        body["instructions"] = request.system
    if settings.responses_include_encrypted:
        body["include"] = ["reasoning.encrypted_content"]
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": tool_schema(t),
                "strict": False,
            }
            for t in request.tools
        ]
        body["tool_choice"] = "auto"
    if request.web_search:  # OpenAI's hosted search; the sources come back on the call item
        body.setdefault("tools", []).append({"type": "web_search"})
        body["include"] = [*body.get("include", []), "web_search_call.action.sources"]
    if request.max_output_tokens:
        body["max_output_tokens"] = request.max_output_tokens
    if request.cache_key and settings.send_cache_key:
        body["prompt_cache_key"] = request.cache_key
    reasoning: dict[str, Any] = {}
    if effort:
        reasoning["effort"] = effort
    if request.reasoning and summary:
        reasoning["summary"] = summary
    if reasoning:
        body["reasoning"] = reasoning
    body.update(settings.extra_body)
    body.update(params)
    body["store"] = False  # stateless by design: never let params turn server state on
    return body


def project_input(request: ModelRequest, settings: ProviderSettings) -> list[dict[str, Any]]:
    """Neutral history → input items: each call's output items in order (reasoning with its
    encrypted content, assistant text, function calls), then its function_call_outputs."""
    items: list[dict[str, Any]] = []
    for turn in normalise(request.messages):
        if isinstance(turn, UserTurn):
            items.append({"role": "user", "content": [_user_part(p) for p in turn.parts]})
            continue
        items.extend(_assistant_items(turn, request.model, settings))
        for result in turn.results:
            items.append(
                {"type": "function_call_output", "call_id": result.call_id, "output": result.result}
            )
    return items


def _user_part(part: UserPart) -> dict[str, Any]:
    if part["type"] == "text":
        return {"type": "input_text", "text": part["text"]}
    return {"type": "input_image", "image_url": image_data_url(part)}


def _assistant_items(
    turn: AssistantTurn, model: str, settings: ProviderSettings
) -> list[dict[str, Any]]:
    replay = replay_data(turn, KIND, settings.label, model)
    leading, native = native_reasoning(turn, replay)
    items = [item for item in leading if _is_replayable(item)]
    text: list[str] = []

    def flush_text() -> None:
        if text:
            items.append(
                {"role": "assistant", "content": [{"type": "output_text", "text": "".join(text)}]}
            )
            text.clear()

    reasoning_index = 0
    for part in turn.parts:
        if part["type"] == "reasoning":
            item = native[reasoning_index] if reasoning_index < len(native) else None
            reasoning_index += 1
            if _is_replayable(item):
                flush_text()
                items.append(item)
        elif part["type"] == "text":
            text.append(part["text"])
        else:
            flush_text()
            items.append(
                {
                    "type": "function_call",
                    "call_id": part["toolCallId"],
                    "name": part["toolName"],
                    "arguments": args_json(part["args"]),
                }
            )
    flush_text()
    return items


def _is_replayable(item: Any) -> bool:
    """Under store=false a reasoning item is only accepted with its encrypted content."""
    return (
        isinstance(item, dict)
        and item.get("type") == "reasoning"
        and bool(item.get("encrypted_content"))
    )


# --------------------------------------------------------------------------- stream


@dataclass(slots=True, eq=False)
class _Item:
    type: str
    id: str
    call_id: str = ""
    name: str = ""
    chunks: list[str] = field(default_factory=list)  # arguments
    text: TextParts = field(default_factory=TextParts)  # text or reasoning text (`streamed`)
    final_args: str | None = None
    summary_parts: set[int] = field(default_factory=set)
    started: bool = False
    done: bool = False


class ResponsesStreamState:
    """Sans-IO decoder of a Responses stream. Deltas are streamed; the items of
    `output_item.done` / `response.completed` are authoritative."""

    def __init__(self, *, provider: str, model: str) -> None:
        self.done = False
        self._provider = provider
        self._builder = MessageBuilder(KIND, provider, model)
        self._by_id: dict[str, _Item] = {}
        self._by_index: dict[int, _Item] = {}
        self._native: list[dict[str, Any] | None] = []

    def on_event(self, event: SseEvent) -> list[ProviderEvent]:
        if self.done:
            return []
        obj = parse_json_event(event, self._provider)
        kind = str(obj.get("type") or event.event)
        if kind == "error":
            raise error_from_payload(obj, provider=self._provider)
        if kind == "response.failed":
            response = as_object(obj.get("response"))
            raise error_from_payload(
                {"error": response.get("error") or {}},
                provider=self._provider,
                default_message="response failed",
            )
        handler = _HANDLERS.get(kind)
        if handler is None:
            log.debug("%s: ignoring stream event %r", self._provider, kind)
            return []
        return handler(self, obj)

    def on_eof(self) -> list[ProviderEvent]:
        raise ProviderError(
            "protocol",
            "stream ended without response.completed (connection cut?)",
            provider=self._provider,
            retryable=True,
        )

    # -- items

    def _item_added(self, obj: dict[str, Any]) -> list[ProviderEvent]:
        raw = as_object(obj.get("item"))
        item = self._register(raw, obj.get("output_index"))
        if item.type != "function_call" or item.started:
            return []
        item.started = True
        out: list[ProviderEvent] = [ToolCallStart(item.call_id, item.name)]
        if isinstance(raw.get("arguments"), str) and raw["arguments"]:
            item.chunks.append(raw["arguments"])
            out.append(ToolCallArgsDelta(item.call_id, raw["arguments"]))
        return out

    def _register(self, raw: dict[str, Any], output_index: Any) -> _Item:
        item_id = str(raw.get("id") or "")
        existing = self._by_id.get(item_id) if item_id else None
        if existing is None and isinstance(output_index, int):
            existing = self._by_index.get(output_index)
        if existing is not None:
            return existing
        item = _Item(type=str(raw.get("type", "")), id=item_id)
        if item.type == "function_call":
            item.call_id = (
                str(raw.get("call_id") or "") or item_id or f"call_{uuid.uuid4().hex[:24]}"
            )
            item.name = str(raw.get("name") or "")
        if item_id:
            self._by_id[item_id] = item
        if isinstance(output_index, int):
            self._by_index[output_index] = item
        return item

    def _find(self, obj: dict[str, Any]) -> _Item | None:
        item_id = obj.get("item_id")
        if isinstance(item_id, str) and item_id in self._by_id:
            return self._by_id[item_id]
        index = obj.get("output_index")
        return self._by_index.get(index) if isinstance(index, int) else None

    def _summary_part(self, obj: dict[str, Any]) -> list[ProviderEvent]:
        item = self._find(obj)
        index = obj.get("summary_index")
        if item is None or not isinstance(index, int) or index in item.summary_parts:
            return []
        item.summary_parts.add(index)
        if item.text:  # paragraphs of a summary: keep them apart
            return [streamed(ReasoningDelta, item.text, "\n\n")]
        return []

    def _reasoning_delta(self, obj: dict[str, Any]) -> list[ProviderEvent]:
        item, delta = self._find(obj), obj.get("delta")
        if item is None or not isinstance(delta, str) or not delta:
            return []
        return [streamed(ReasoningDelta, item.text, delta)]

    def _text_delta(self, obj: dict[str, Any]) -> list[ProviderEvent]:
        item, delta = self._find(obj), obj.get("delta")
        if item is None:
            item = self._register(
                {"type": "message", "id": obj.get("item_id")}, obj.get("output_index")
            )
        if not isinstance(delta, str) or not delta:
            return []
        return [streamed(TextDelta, item.text, delta)]

    def _args_delta(self, obj: dict[str, Any]) -> list[ProviderEvent]:
        item, delta = self._find(obj), obj.get("delta")
        if item is None or item.type != "function_call" or not isinstance(delta, str) or not delta:
            return []
        item.chunks.append(delta)
        return [ToolCallArgsDelta(item.call_id, delta)] if item.started else []

    def _args_done(self, obj: dict[str, Any]) -> list[ProviderEvent]:
        item = self._find(obj)
        if item is not None and isinstance(obj.get("arguments"), str):
            item.final_args = obj["arguments"]
        return []

    def _item_done(self, obj: dict[str, Any]) -> list[ProviderEvent]:
        raw = as_object(obj.get("item"))
        return self._finalise(raw, obj.get("output_index"))

    def _finalise(self, raw: dict[str, Any], output_index: Any) -> list[ProviderEvent]:
        return self._finalise_item(self._register(raw, output_index), raw)

    def _finalise_item(self, item: _Item, raw: dict[str, Any]) -> list[ProviderEvent]:
        """Record one complete output item; emits what its deltas did not already show."""
        out: list[ProviderEvent] = []
        if item.done:
            return out
        item.done = True
        if item.type == "reasoning":
            text = item.text.seal()
            if not text:
                text = "\n\n".join(
                    s.get("text", "")
                    for s in raw.get("summary") or []
                    if isinstance(s, dict) and s.get("text")
                ) or "".join(
                    c.get("text", "")
                    for c in raw.get("content") or []
                    if isinstance(c, dict) and c.get("text")
                )
                if text:
                    out.append(ReasoningDelta(text))
            self._builder.add_reasoning(text)
            native = None
            if raw.get("encrypted_content"):
                native = {
                    "type": "reasoning",
                    "id": raw.get("id") or item.id,
                    "summary": raw.get("summary") or [],
                    "encrypted_content": raw["encrypted_content"],
                }
            self._native.append(native)
        elif item.type == "message":
            text = item.text.seal()
            if not text:
                text = "".join(
                    str(c.get("text") or c.get("refusal") or "")
                    for c in raw.get("content") or []
                    if isinstance(c, dict)
                )
                if text:
                    out.append(TextDelta(text))
            self._builder.add_text(text)
        elif item.type == "function_call":
            if not item.started:
                item.started = True
                out.append(ToolCallStart(item.call_id, item.name))
            raw_args = raw.get("arguments")
            if not isinstance(raw_args, str):
                raw_args = item.final_args if item.final_args is not None else "".join(item.chunks)
            if not item.chunks and raw_args:
                out.append(ToolCallArgsDelta(item.call_id, raw_args))
            args, error = parse_tool_args(raw_args, empty_is_object=True)
            self._builder.add_tool_call(item.call_id, item.name, args if args is not None else {})
            out.append(ToolCallEnd(item.call_id, item.name, args, raw_args, error))
        elif item.type == "web_search_call":
            out += _search_events(item.id, raw)  # not replayed: the search already happened
        else:
            log.debug("%s: ignoring output item of type %r", self._provider, item.type)
        return out

    # -- terminal

    def _terminal(self, obj: dict[str, Any]) -> list[ProviderEvent]:
        response = as_object(obj.get("response"))
        out: list[ProviderEvent] = []
        for index, raw in enumerate(response.get("output") or []):
            if isinstance(raw, dict):
                out += self._finalise(raw, index)
        # items the server never completed explicitly, in output order
        pending = [item for _, item in sorted(self._by_index.items())]
        seen = {id(item) for item in pending}
        pending += [item for item in self._by_id.values() if id(item) not in seen]
        for item in pending:
            out += self._finalise_item(item, {})
        self.done = True
        if obj.get("type") == "response.incomplete":
            details = as_object(response.get("incomplete_details"))
            reason = _INCOMPLETE.get(str(details.get("reason")), "length")
        else:
            reason = "tool_calls" if self._builder.has_tool_calls() else "stop"
        if any(n is not None for n in self._native):
            self._builder.replay["reasoning"] = self._native
        usage = response.get("usage")
        if isinstance(usage, dict):
            out.append(_usage(usage))
        out.append(Finish(reason, self._builder.build()))
        return out


def _search_events(item_id: str, raw: dict[str, Any]) -> list[ProviderEvent]:
    """A finished `web_search_call` item as a server tool call and its result."""
    action = as_object(raw.get("action"))
    query = action.get("query") or ""
    call_id = item_id or f"ws_{uuid.uuid4().hex[:24]}"
    refs = tuple(
        (str(src.get("title") or src["url"]), str(src["url"]))
        for src in action.get("sources") or []
        if isinstance(src, dict) and src.get("url")
    )
    error = None if raw.get("status") in (None, "completed") else str(raw.get("status"))
    return [
        ServerToolCall(call_id, "web_search", {"query": str(query)}),
        ServerToolResult(call_id, "web_search", refs, error),
    ]


def _usage(u: dict[str, Any]) -> Usage:
    inp = as_object(u.get("input_tokens_details"))
    outp = as_object(u.get("output_tokens_details"))
    return Usage(
        input_tokens=as_int(u.get("input_tokens")),
        output_tokens=as_int(u.get("output_tokens")),
        cache_read_tokens=as_int(inp.get("cached_tokens")),
        cache_write_tokens=None,
        reasoning_tokens=as_int(outp.get("reasoning_tokens")),
    )


_HANDLERS = {
    "response.output_item.added": ResponsesStreamState._item_added,
    "response.output_item.done": ResponsesStreamState._item_done,
    "response.reasoning_summary_part.added": ResponsesStreamState._summary_part,
    "response.reasoning_summary_text.delta": ResponsesStreamState._reasoning_delta,
    "response.reasoning_text.delta": ResponsesStreamState._reasoning_delta,
    "response.output_text.delta": ResponsesStreamState._text_delta,
    "response.refusal.delta": ResponsesStreamState._text_delta,
    "response.function_call_arguments.delta": ResponsesStreamState._args_delta,
    "response.function_call_arguments.done": ResponsesStreamState._args_done,
    "response.completed": ResponsesStreamState._terminal,
    "response.incomplete": ResponsesStreamState._terminal,
}


# --------------------------------------------------------------------------- provider


class OpenAIResponsesProvider(SseProvider):
    kind = KIND

    def build(self, request: ModelRequest) -> tuple[str, dict[str, str], dict[str, Any]]:
        headers = (
            {"authorization": f"Bearer {self.settings.api_key}"} if self.settings.api_key else {}
        )
        headers.update(self.settings.extra_headers)
        url = self.settings.base_url.rstrip("/") + "/responses"
        return url, headers, build_body(request, self.settings)

    def new_state(self, request: ModelRequest) -> ResponsesStreamState:
        return ResponsesStreamState(provider=self.label, model=request.model)
