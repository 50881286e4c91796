"""The neutral history format and the rules every projection shares (providers.md §6).

Neutral messages (AI-SDK style, what Cursor's checkpoint roots hold):

- user:      {"role": "user", "content": "text" | [{"type": "text", "text"},
              {"type": "image", "mediaType", "data": <base64>}]}
- assistant: {"role": "assistant", "content": [{"type": "reasoning", "text", "signature"?},
              {"type": "text", "text"}, {"type": "tool-call", "toolCallId", "toolName", "args"}],
              "providerOptions": {"cursorByok": {"kind", "provider", "model", ...replay data}}}
- tool:      {"role": "tool", "content": [{"type": "tool-result", "toolCallId", "toolName",
              "result": "text", "isError": bool}, ...]}

`normalise()` turns a message list into turns in which every assistant tool call has exactly
one result, in call order: results arrive in any order or grouping, orphan results are
dropped, missing ones become "Interrupted by user" errors, empty ids get stable generated ids.
The adapters then only have to render turns in their wire format.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from dataclasses import field
from typing import Any

log = logging.getLogger(__name__)

INTERRUPTED = "Interrupted by user"
REPLAY_KEY = "cursorByok"


@dataclass(slots=True)
class ToolResult:
    call_id: str
    name: str
    result: str
    is_error: bool = False


@dataclass(slots=True)
class UserTurn:
    """A user message; `parts` are neutral text/image parts."""

    parts: list[dict[str, Any]]


@dataclass(slots=True)
class AssistantTurn:
    """One model call's message and, when it made tool calls, one result per call in order."""

    parts: list[dict[str, Any]]  # reasoning / text / tool-call parts, ids filled in
    replay: dict[str, Any]  # providerOptions.cursorByok (may be empty)
    results: list[ToolResult] = field(default_factory=list)

    @property
    def calls(self) -> list[dict[str, Any]]:
        return [p for p in self.parts if p["type"] == "tool-call"]


Turn = UserTurn | AssistantTurn


def normalise(messages: list[dict[str, Any]]) -> list[Turn]:
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
            turn = AssistantTurn(parts, replay if isinstance(replay, dict) else {})
            turns.append(turn)
            if turn.calls:
                open_turn = turn
        elif role in ("user", "system", "developer"):
            if role != "user":
                log.warning("%s message inside history treated as user text", role)
            parts = user_parts(message.get("content"))
            if parts:
                turns.append(UserTurn(parts))
        else:
            log.warning("skipping history message with role %r", role)
    close()
    return turns


def replay_data(turn: AssistantTurn, kind: str, provider: str, model: str) -> dict[str, Any] | None:
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
    turn: AssistantTurn, replay: dict[str, Any] | None
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


def user_parts(content: Any) -> list[dict[str, Any]]:
    """User content → list of {"type":"text"} / {"type":"image","mediaType","data"} parts."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    parts: list[dict[str, Any]] = []
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


def image_data_url(part: dict[str, Any]) -> str:
    data = part["data"]
    if data.startswith(("data:", "http://", "https://")):
        return data
    return f"data:{part['mediaType']};base64,{data}"


def args_json(args: dict[str, Any]) -> str:
    """Arguments as the compact, deterministic JSON string sent back to providers."""
    return json.dumps(args, ensure_ascii=False, separators=(",", ":"))


def _assistant_parts(content: Any, index: int) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    parts: list[dict[str, Any]] = []
    for j, part in enumerate(content if isinstance(content, list) else []):
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            if part["text"]:
                parts.append({"type": "text", "text": part["text"]})
        elif kind == "reasoning":
            out = {"type": "reasoning", "text": part.get("text") or ""}
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


def _tool_results(message: dict[str, Any]) -> list[ToolResult]:
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
        self.parts: list[dict[str, Any]] = []
        self.replay: dict[str, Any] = {"kind": kind, "provider": provider, "model": model}
        self._open: str | None = None  # type of the part that deltas currently extend
        self._chunks: list[str] = []

    def append_text(self, text: str) -> None:
        self._append("text", text)

    def append_reasoning(self, text: str) -> None:
        self._append("reasoning", text)

    def add_reasoning(self, text: str, signature: str | None = None) -> None:
        self._flush()
        part: dict[str, Any] = {"type": "reasoning", "text": text}
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
        self._flush()
        return {
            "role": "assistant",
            "content": self.parts,
            "providerOptions": {REPLAY_KEY: self.replay},
        }

    def _append(self, kind: str, text: str) -> None:
        if not text:
            return
        if self._open != kind:
            self._flush()
            self._open = kind
        self._chunks.append(text)

    def _flush(self) -> None:
        if self._open is not None and self._chunks:
            self.parts.append({"type": self._open, "text": "".join(self._chunks)})
        self._open = None
        self._chunks = []
