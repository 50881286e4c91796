"""The rules every projection of the neutral history shares (providers.md §6).

The history format itself (AI-SDK style messages, what Cursor's checkpoint roots hold) is typed
in `conversation/history_format.py`, the lowest layer that owns it: user messages with text and
image parts, assistant messages with reasoning, text and tool-call parts and the provider's replay
data under `providerOptions.cursorByok`, tool messages with one tool-result part per call.

`normalise()` turns a message list into turns in which every assistant tool call has exactly
one result, in call order: results arrive in any order or grouping, orphan results are
dropped, missing ones become "Interrupted by user" errors, empty ids get stable generated ids.
It reads messages as they were stored (any mapping: a checkpoint may come from elsewhere) and
builds every part afresh, so the turns it returns are typed. The adapters then only have to
render turns in their wire format.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Literal
from typing import cast

from cursor_byok.conversation.history_format import REPLAY_KEY
from cursor_byok.conversation.history_format import AssistantHistoryMessage
from cursor_byok.conversation.history_format import AssistantPart
from cursor_byok.conversation.history_format import ImagePart
from cursor_byok.conversation.history_format import ProviderState
from cursor_byok.conversation.history_format import ReasoningPart
from cursor_byok.conversation.history_format import ToolCallPart
from cursor_byok.conversation.history_format import UserPart
from cursor_byok.conversation.text import TextParts

from .base import ReasoningDelta
from .base import TextDelta
from .base import streamed

log = logging.getLogger(__name__)

INTERRUPTED = "Interrupted by user"


@dataclass(slots=True)
class ToolResult:
    call_id: str
    name: str
    result: str
    is_error: bool = False


@dataclass(slots=True)
class UserTurn:
    """A user message; `parts` are neutral text/image parts."""

    parts: list[UserPart]


@dataclass(slots=True)
class AssistantTurn:
    """One model call's message and, when it made tool calls, one result per call in order."""

    parts: list[AssistantPart]  # reasoning / text / tool-call parts, ids filled in
    replay: ProviderState  # providerOptions.cursorByok (may be empty)
    results: list[ToolResult] = field(default_factory=list)

    @property
    def calls(self) -> list[ToolCallPart]:
        return [p for p in self.parts if p["type"] == "tool-call"]


Turn = UserTurn | AssistantTurn


def normalise(messages: Sequence[Mapping[str, Any]]) -> list[Turn]:
    """Neutral messages → turns with a complete, ordered result for every tool call."""
    turns: list[Turn] = []
    open_turn: AssistantTurn | None = None
    found: dict[str, ToolResult] = {}

    def close() -> None:
        nonlocal open_turn, found
        if open_turn is None:
            return
        for call in open_turn.calls:
            result = found.get(call["toolCallId"])
            if result is None:
                result = ToolResult(call["toolCallId"], call["toolName"], INTERRUPTED, True)
            open_turn.results.append(result)
        open_turn, found = None, {}

    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            for result in _tool_results(message):
                if open_turn is None:
                    log.warning("dropping tool result %r without a preceding call", result.call_id)
                    continue
                _match_result(open_turn, found, result)
            continue
        close()
        if role == "assistant":
            parts = _assistant_parts(message.get("content"), index)
            if not parts:
                continue
            opts = message.get("providerOptions")
            replay = opts.get(REPLAY_KEY) if isinstance(opts, dict) else None
            state = cast(ProviderState, replay) if isinstance(replay, dict) else ProviderState()
            turn = AssistantTurn(parts, state)
            turns.append(turn)
            if turn.calls:
                open_turn = turn
        elif role in ("user", "system", "developer"):
            if role != "user":
                log.warning("%s message inside history treated as user text", role)
            content = user_parts(message.get("content"))
            if content:
                turns.append(UserTurn(content))
        else:
            log.warning("skipping history message with role %r", role)
    close()
    return turns


def replay_data(turn: AssistantTurn, kind: str, provider: str, model: str) -> ProviderState | None:
    """The turn's replay data if it was produced by the same provider kind, endpoint and
    model; replaying signatures or encrypted reasoning anywhere else is rejected upstream."""
    r = turn.replay
    if (
        r.get("kind") == kind
        and r.get("provider") == provider
        and same_model_family(r.get("model"), model)
    ):
        return r
    return None


def native_reasoning(
    turn: AssistantTurn, replay: ProviderState | None
) -> tuple[list[Any], list[Any]]:
    """(native items to send first, native item per neutral reasoning part).

    Replay data holds one native reasoning item per reasoning part, matched by position. If
    the stored message gained or lost reasoning parts on the way (so positions no longer
    agree), all native items go first, which is where providers emit them anyway.
    """
    native = replay.get("reasoning") if replay else None
    if not isinstance(native, list) or not native:
        return [], []
    count = sum(1 for p in turn.parts if p["type"] == "reasoning")
    if count == len(native):
        return [], native
    log.info(
        "reasoning parts (%d) and replay items (%d) differ; replaying first", count, len(native)
    )
    return native, []


def same_model_family(a: object, b: object) -> bool:
    """Conservative: only the same model id counts (signatures are model-bound)."""
    return isinstance(a, str) and isinstance(b, str) and a.strip().lower() == b.strip().lower()


def user_parts(content: Any) -> list[UserPart]:
    """User content → list of {"type":"text"} / {"type":"image","mediaType","data"} parts."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    parts: list[UserPart] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str) and part["text"]:
            parts.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "image":
            data = part.get("data", part.get("image"))
            if isinstance(data, str) and data:
                parts.append(
                    {
                        "type": "image",
                        "mediaType": part.get("mediaType") or "image/png",
                        "data": data,
                    }
                )
        else:
            log.debug("skipping user part of type %r", part.get("type"))
    return parts


def image_data_url(part: ImagePart) -> str:
    data = part["data"]
    if data.startswith(("data:", "http://", "https://")):
        return data
    return f"data:{part['mediaType']};base64,{data}"


def args_json(args: dict[str, Any]) -> str:
    """Arguments as the compact, deterministic JSON string sent back to providers."""
    return json.dumps(args, ensure_ascii=False, separators=(",", ":"))


def _assistant_parts(content: Any, index: int) -> list[AssistantPart]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    parts: list[AssistantPart] = []
    for j, part in enumerate(content if isinstance(content, list) else []):
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            if part["text"]:
                parts.append({"type": "text", "text": part["text"]})
        elif kind == "reasoning":
            out: ReasoningPart = {"type": "reasoning", "text": part.get("text") or ""}
            if isinstance(part.get("signature"), str):
                out["signature"] = part["signature"]
            parts.append(out)
        elif kind == "tool-call":
            call_id = str(part.get("toolCallId") or "") or f"call_{index}_{j}"
            parts.append(
                {
                    "type": "tool-call",
                    "toolCallId": call_id,
                    "toolName": str(part.get("toolName") or "unknown_tool"),
                    "args": _coerce_args(part.get("args", part.get("input"))),
                }
            )
        else:
            log.debug("skipping assistant part of type %r", kind)
    return parts


def _coerce_args(args: Any) -> dict[str, Any]:
    if isinstance(args, dict):
        return args
    if isinstance(args, str):
        try:
            parsed = json.loads(args)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def _tool_results(message: Mapping[str, Any]) -> list[ToolResult]:
    content = message.get("content")
    if isinstance(content, str) or content is None:  # OpenAI-style {"tool_call_id", "content"}
        call_id = message.get("toolCallId") or message.get("tool_call_id") or ""
        return [ToolResult(str(call_id), str(message.get("toolName") or ""), content or "")]
    items = content if isinstance(content, list) else [content]
    results = []
    for part in items:
        if not isinstance(part, dict) or part.get("type", "tool-result") != "tool-result":
            continue
        raw = part.get("result", part.get("output", part.get("content", "")))
        results.append(
            ToolResult(
                str(part.get("toolCallId") or ""),
                str(part.get("toolName") or ""),
                raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False),
                bool(part.get("isError", False)),
            )
        )
    return results


def _match_result(turn: AssistantTurn, found: dict[str, ToolResult], result: ToolResult) -> None:
    calls = turn.calls
    if result.call_id:
        call = next((c for c in calls if c["toolCallId"] == result.call_id), None)
    else:  # no id: the first unanswered call of that name (or any name)
        call = next(
            (
                c
                for c in calls
                if c["toolCallId"] not in found
                and (not result.name or c["toolName"] == result.name)
            ),
            None,
        )
    if call is None:
        log.warning(
            "dropping tool result %r that matches no call of the preceding message", result.call_id
        )
        return
    if call["toolCallId"] in found:
        log.warning("dropping duplicate tool result for %r", call["toolCallId"])
        return
    found[call["toolCallId"]] = ToolResult(
        call["toolCallId"], call["toolName"], result.result, result.is_error
    )


class MessageBuilder:
    """Collects the parts of the assistant message an adapter returns in `Finish`.

    `append_*` extend the current part while deltas of one kind keep coming (joined once,
    at the end, so long answers stay linear); `add_*` append a complete part."""

    def __init__(self, kind: str, provider: str, model: str) -> None:
        self.parts: list[AssistantPart] = []
        self.replay: ProviderState = {"kind": kind, "provider": provider, "model": model}
        # type of the part that deltas currently extend
        self._open: Literal["text", "reasoning"] | None = None
        self._chunks = TextParts()  # few large strings, not one per delta

    def append_text(self, text: str) -> TextDelta:
        """Extend the text part; the event that shows `text` (a range of this part)."""
        self._append("text", text)
        return streamed(TextDelta, self._chunks, text)

    def append_reasoning(self, text: str) -> ReasoningDelta:
        self._append("reasoning", text)
        return streamed(ReasoningDelta, self._chunks, text)

    def add_reasoning(self, text: str, signature: str | None = None) -> None:
        self._flush()
        part: ReasoningPart = {"type": "reasoning", "text": text}
        if signature is not None:
            part["signature"] = signature
        self.parts.append(part)

    def add_text(self, text: str) -> None:
        self._flush()
        if text:
            self.parts.append({"type": "text", "text": text})

    def add_tool_call(self, call_id: str, name: str, args: dict[str, Any]) -> None:
        self._flush()
        self.parts.append(
            {"type": "tool-call", "toolCallId": call_id, "toolName": name, "args": args}
        )

    def has_tool_calls(self) -> bool:
        return any(p["type"] == "tool-call" for p in self.parts)

    def build(self) -> dict[str, Any]:
        """The `AssistantHistoryMessage` for `Finish.message`, which (in providers/base.py)
        is typed as a plain dict."""
        self._flush()
        message: AssistantHistoryMessage = {
            "role": "assistant",
            "content": self.parts,
            "providerOptions": {REPLAY_KEY: self.replay},
        }
        return cast(dict[str, Any], message)

    def _append(self, kind: Literal["text", "reasoning"], text: str) -> None:
        """Open a part of `kind` for `text` (an empty one opens nothing: it must not split the
        part that is open)."""
        if text and self._open != kind:
            self._flush()
            self._open = kind

    def _flush(self) -> None:
        """Close the open part: its text sealed (the events that showed it point into it), a
        new record for the next."""
        if self._open is not None and self._chunks:
            text = self._chunks.seal()
            if self._open == "text":
                self.parts.append({"type": "text", "text": text})
            else:
                self.parts.append({"type": "reasoning", "text": text})
        self._open = None
        if self._chunks:
            self._chunks = TextParts()
