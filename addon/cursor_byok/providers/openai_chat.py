"""OpenAI Chat Completions (and the many compatible servers), providers.md §3.

Usage normalisation: `input_tokens` = `prompt_tokens` (already includes cached tokens);
`cache_read_tokens` = `prompt_tokens_details.cached_tokens`, else DeepSeek's
`prompt_cache_hit_tokens`; `cache_write_tokens` = `prompt_tokens_details.cache_write_tokens`
(OpenRouter); `output_tokens` = `completion_tokens` (includes reasoning);
`reasoning_tokens` = `completion_tokens_details.reasoning_tokens`.

Replay data (`providerOptions.cursorByok`): `reasoningContent` (reasoning received in
`reasoning_content`/`reasoning`, never `<think>` text), `reasoningDetails` (OpenRouter's
typed objects, merged per index), `toolCalls` {call id: unknown tool-call keys such as
Gemini's `extra_content`}.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from .adapter import SseProvider
from .adapter import as_int
from .adapter import as_object
from .adapter import parse_json_event
from .base import Finish
from .base import ModelRequest
from .base import ProviderEvent
from .base import ProviderSettings
from .base import ToolCallArgsDelta
from .base import ToolCallEnd
from .base import ToolCallStart
from .base import ToolSpec
from .base import Usage
from .history_projection import AssistantTurn
from .history_projection import MessageBuilder
from .history_projection import UserTurn
from .history_projection import args_json
from .history_projection import image_data_url
from .history_projection import normalise
from .history_projection import replay_data
from .provider_error import ProviderError
from .provider_error import error_from_payload
from .sse import SseEvent
from .think_tags import ThinkTagSplitter
from .tool_args import parse_tool_args
from .tool_args import tool_schema

log = logging.getLogger(__name__)

KIND = "openai-chat"
_KNOWN_CALL_KEYS = frozenset({"index", "id", "type", "function"})
_FINISH_REASONS = {
    "stop": "stop",
    "end_turn": "stop",
    "eos": "stop",
    "length": "length",
    "max_tokens": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "tool_use": "tool_calls",
    "content_filter": "content_filter",
    "safety": "content_filter",
}


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


# --------------------------------------------------------------------------- request


def build_body(request: ModelRequest, settings: ProviderSettings) -> dict[str, Any]:
    """The JSON body for `POST {base}/chat/completions`."""
    body: dict[str, Any] = {
        "model": request.model,
        "messages": project_messages(request, settings),
        "stream": True,
    }
    if settings.chat_include_usage:
        body["stream_options"] = {"include_usage": True}
    if request.tools:
        body["tools"] = [tool_spec(t) for t in request.tools]
        body["tool_choice"] = "auto"
    if request.max_output_tokens:
        body[settings.chat_max_tokens_field] = request.max_output_tokens
    if request.cache_key and settings.send_cache_key:
        body["prompt_cache_key"] = request.cache_key
    body.update(
        settings.chat_reasoning_body if request.reasoning else settings.chat_no_reasoning_body
    )
    body.update(settings.extra_body)
    body.update(request.params)
    return body


def tool_spec(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool_schema(tool),
        },
    }


def project_messages(request: ModelRequest, settings: ProviderSettings) -> list[dict[str, Any]]:
    """Neutral history → Chat messages: one assistant message per model call, then one
    `tool` message per call in call order."""
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    for turn in normalise(request.messages):
        if isinstance(turn, UserTurn):
            out.append({"role": "user", "content": _user_content(turn)})
            continue
        out.append(_assistant_message(turn, request.model, settings))
        for result in turn.results:
            out.append({"role": "tool", "tool_call_id": result.call_id, "content": result.result})
    return out


def _user_content(turn: UserTurn) -> str | list[dict[str, Any]]:
    if len(turn.parts) == 1 and turn.parts[0]["type"] == "text":
        return turn.parts[0]["text"]
    return [
        {"type": "text", "text": p["text"]}
        if p["type"] == "text"
        else {"type": "image_url", "image_url": {"url": image_data_url(p)}}
        for p in turn.parts
    ]


def _assistant_message(
    turn: AssistantTurn, model: str, settings: ProviderSettings
) -> dict[str, Any]:
    replay = replay_data(turn, KIND, settings.label, model) or {}
    calls = turn.calls
    text = "".join(p["text"] for p in turn.parts if p["type"] == "text")
    message: dict[str, Any] = {"role": "assistant", "content": text if text or not calls else None}
    passback = settings.chat_reasoning_passback
    if passback and (calls or settings.chat_reasoning_passback_scope == "all"):
        if passback == "reasoning_details":
            details = replay.get("reasoningDetails")
            if isinstance(details, list) and details:
                message["reasoning_details"] = details
        else:
            reasoning = replay.get("reasoningContent")
            if not isinstance(reasoning, str):
                reasoning = "".join(p["text"] for p in turn.parts if p["type"] == "reasoning")
            if passback == "reasoning_content":
                # DeepSeek rejects tool-calling turns that lack the field, even if empty
                message["reasoning_content"] = reasoning
            elif reasoning:
                message["reasoning"] = reasoning
    if calls:
        extras = as_object(replay.get("toolCalls"))
        message["tool_calls"] = []
        for call in calls:
            item: dict[str, Any] = {
                "id": call["toolCallId"],
                "type": "function",
                "function": {"name": call["toolName"], "arguments": args_json(call["args"])},
            }
            extra = extras.get(call["toolCallId"])
            if isinstance(extra, dict):
                item.update({k: v for k, v in extra.items() if k not in _KNOWN_CALL_KEYS})
            message["tool_calls"].append(item)
    return message


# --------------------------------------------------------------------------- stream


@dataclass(slots=True)
class _Call:
    id: str
    id_given: bool
    name: str = ""
    args: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    started: bool = False
    ended: bool = False


_DETAIL_TEXT_KEYS = frozenset({"text", "summary", "data"})


@dataclass(slots=True)
class _Detail:
    """One merged `reasoning_details` object: its fields in first-seen order, its string
    fields (`text`, `summary`, `data`) as pieces, appended, never re-concatenated."""

    fields: dict[str, Any] = field(default_factory=dict)
    pieces: dict[str, list[str]] = field(default_factory=dict)

    def append(self, key: str, piece: str) -> None:
        pieces = self.pieces.get(key)
        if pieces is None:
            pieces = self.pieces[key] = []
            self.fields[key] = None  # its place in the key order; filled in by build
        pieces.append(piece)

    def build(self) -> dict[str, Any]:
        out = dict(self.fields)
        for key, pieces in self.pieces.items():
            out[key] = "".join(pieces)
        return out


class ChatStreamState:
    """Sans-IO decoder of a Chat Completions stream (see module doc for the quirks)."""

    def __init__(
        self,
        *,
        provider: str,
        model: str,
        think_tags: bool = True,
        new_id: Callable[[], str] = new_call_id,
    ) -> None:
        self.done = False
        self._provider = provider
        self._builder = MessageBuilder(KIND, provider, model)
        self._splitter = ThinkTagSplitter() if think_tags else None
        self._new_id = new_id
        self._calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}
        self._finish_reason: str | None = None
        self._usage: dict[str, Any] | None = None
        self._field_reasoning: list[str] = []
        self._details: dict[tuple[Any, Any], _Detail] = {}

    def on_event(self, event: SseEvent) -> list[ProviderEvent]:
        if self.done:
            return []
        data = event.data.strip()
        if not data:
            return []
        if data == "[DONE]":
            return self._finish(terminated=True)
        chunk = parse_json_event(event, self._provider)
        if chunk.get("error") or chunk.get("object") == "error":
            raise error_from_payload(chunk, provider=self._provider)
        if isinstance(chunk.get("usage"), dict):
            self._usage = chunk["usage"]
        out: list[ProviderEvent] = []
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict):
                out += self._delta(delta)
            reason = choice.get("finish_reason")
            if reason:
                if reason == "error":
                    raise error_from_payload(choice.get("error") or {}, provider=self._provider)
                self._finish_reason = str(reason)
                out += self._flush_content()
                out += self._end_calls()
        return out

    def on_eof(self) -> list[ProviderEvent]:
        return self._finish(terminated=False)

    # -- deltas

    def _delta(self, delta: dict[str, Any]) -> list[ProviderEvent]:
        content = delta.get("content")
        if (
            type(content) is str
            and content
            and (self._splitter is None or self._splitter.settled)
            and not delta.get("tool_calls")
            and not delta.get("reasoning_content")  # DeepSeek and others send null here
            and not delta.get("reasoning")
            and not delta.get("reasoning_details")
        ):
            # the usual delta, once any leading <think> block is decided: just text
            return [self._builder.append_text(content)]
        out: list[ProviderEvent] = []
        reasoning = _first_str(delta.get("reasoning_content"), delta.get("reasoning"))
        details = delta.get("reasoning_details")
        if isinstance(details, list):
            text = self._merge_details(details)
            reasoning = reasoning or text
        if reasoning:
            self._field_reasoning.append(reasoning)
            out += self._content("reasoning", reasoning)
        content = delta.get("content")
        if isinstance(content, list):  # some servers send content parts
            content = "".join(
                p.get("text", "")
                for p in content
                if isinstance(p, dict) and p.get("type") == "text"
            )
        if isinstance(content, str) and content:
            pieces = self._splitter.feed(content) if self._splitter else [("text", content)]
            for kind, text in pieces:
                out += self._content(kind, text)
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            for fragment in calls:
                if isinstance(fragment, dict):
                    out += self._tool_fragment(fragment)
        return out

    def _content(self, kind: str, text: str) -> list[ProviderEvent]:
        if kind == "reasoning":
            return [self._builder.append_reasoning(text)]
        return [self._builder.append_text(text)]

    def _flush_content(self) -> list[ProviderEvent]:
        out: list[ProviderEvent] = []
        if self._splitter:
            for kind, text in self._splitter.flush():
                out += self._content(kind, text)
        return out

    def _merge_details(self, details: list[Any]) -> str:
        """Merge OpenRouter `reasoning_details` fragments by (index, type); returns the
        reasoning text they carry (used when no plain `reasoning` string came along).

        The string fields are kept as lists of pieces, joined once at the end
        (`_merged_details`): concatenating each fragment onto the text so far made 100k small
        fragments cost 58 s (quadratic)."""
        text: list[str] = []
        for d in details:
            if not isinstance(d, dict):
                continue
            key = (d.get("index", len(self._details)), d.get("type"))
            merged = self._details.get(key)
            if merged is None:
                merged = self._details[key] = _Detail()
            for k, v in d.items():
                if k in _DETAIL_TEXT_KEYS and isinstance(v, str):
                    merged.append(k, v)
                elif v is not None:
                    merged.fields[k] = v
            if d.get("type") == "reasoning.text" and isinstance(d.get("text"), str):
                text.append(d["text"])
            elif d.get("type") == "reasoning.summary" and isinstance(d.get("summary"), str):
                text.append(d["summary"])
        return "".join(text)

    def _tool_fragment(self, fragment: dict[str, Any]) -> list[ProviderEvent]:
        index = fragment.get("index")
        index = index if isinstance(index, int) else 0
        raw_id = fragment.get("id")
        call_id = str(raw_id) if raw_id not in (None, "") else None
        call = self._by_index.get(index)
        if (
            call is None
            or call.ended
            or (call_id is not None and call.id_given and call_id != call.id)
        ):
            # Ollama reuses index 0 for every call of a batch; a new id means a new call
            call = _Call(id=call_id or self._new_id(), id_given=call_id is not None)
            self._calls.append(call)
            self._by_index[index] = call
        elif call_id is not None and not call.id_given and not call.started:
            call.id, call.id_given = call_id, True
        function = as_object(fragment.get("function"))
        if isinstance(function.get("name"), str) and function["name"]:
            call.name = function["name"]  # assign, never append: some servers repeat it
        piece = function.get("arguments")
        if piece is not None and not isinstance(piece, str):
            piece = json.dumps(piece, ensure_ascii=False)  # a few servers send an object
        if piece:
            call.args.append(piece)
        for key, value in fragment.items():
            if key not in _KNOWN_CALL_KEYS:
                call.extra[key] = value
        if not call.started:
            if not call.name:
                return []
            call.started = True
            out: list[ProviderEvent] = [ToolCallStart(call.id, call.name)]
            if call.args:
                out.append(ToolCallArgsDelta(call.id, "".join(call.args)))
            return out
        return [ToolCallArgsDelta(call.id, piece)] if piece else []

    def _end_calls(self) -> list[ProviderEvent]:
        out: list[ProviderEvent] = []
        for call in self._calls:
            if call.ended:
                continue
            call.ended = True
            if not call.name:
                log.warning("%s: dropping tool call %s without a name", self._provider, call.id)
                continue
            if not call.started:
                call.started = True
                out.append(ToolCallStart(call.id, call.name))
            raw = "".join(call.args)
            args, error = parse_tool_args(raw, empty_is_object=True)
            self._builder.add_tool_call(call.id, call.name, args if args is not None else {})
            if call.extra:
                self._builder.replay.setdefault("toolCalls", {})[call.id] = call.extra
            out.append(ToolCallEnd(call.id, call.name, args, raw, error))
        return out

    # -- end

    def _finish(self, *, terminated: bool) -> list[ProviderEvent]:
        if not terminated and self._finish_reason is None:
            raise ProviderError(
                "protocol",
                "stream ended without [DONE] or a finish_reason (connection cut?)",
                provider=self._provider,
                retryable=True,
            )
        out = self._flush_content() + self._end_calls()
        self.done = True
        reason = _FINISH_REASONS.get((self._finish_reason or "stop").lower())
        if reason is None:
            log.info(
                "%s: unknown finish_reason %r treated as stop", self._provider, self._finish_reason
            )
            reason = "stop"
        has_calls = self._builder.has_tool_calls()
        if has_calls and reason == "stop":
            reason = "tool_calls"
        elif not has_calls and reason == "tool_calls":
            reason = "stop"
        if self._field_reasoning:
            self._builder.replay["reasoningContent"] = "".join(self._field_reasoning)
        if self._details:
            self._builder.replay["reasoningDetails"] = [d.build() for d in self._details.values()]
        if self._usage is not None:
            out.append(_usage(self._usage))
        out.append(Finish(reason, self._builder.build()))
        return out


def _first_str(*values: Any) -> str:
    for value in values:
        if isinstance(value, str) and value:
            return value
    return ""


def _usage(u: dict[str, Any]) -> Usage:
    prompt = as_object(u.get("prompt_tokens_details"))
    completion = as_object(u.get("completion_tokens_details"))
    cache_read = as_int(prompt.get("cached_tokens"))
    if cache_read is None:
        cache_read = as_int(u.get("prompt_cache_hit_tokens"))
    return Usage(
        input_tokens=as_int(u.get("prompt_tokens")),
        output_tokens=as_int(u.get("completion_tokens")),
        cache_read_tokens=cache_read,
        cache_write_tokens=as_int(prompt.get("cache_write_tokens")),
        reasoning_tokens=as_int(completion.get("reasoning_tokens")),
    )


# --------------------------------------------------------------------------- provider


class OpenAIChatProvider(SseProvider):
    kind = KIND

    def build(self, request: ModelRequest) -> tuple[str, dict[str, str], dict[str, Any]]:
        headers = (
            {"authorization": f"Bearer {self.settings.api_key}"} if self.settings.api_key else {}
        )
        headers.update(self.settings.extra_headers)
        url = self.settings.base_url.rstrip("/") + "/chat/completions"
        return url, headers, build_body(request, self.settings)

    def new_state(self, request: ModelRequest) -> ChatStreamState:
        return ChatStreamState(
            provider=self.label, model=request.model, think_tags=self.settings.chat_think_tags
        )
