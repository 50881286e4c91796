"""History-validity checks the fake provider runs on every request it receives.

They mirror what the real APIs reject with HTTP 400: unanswered or orphaned tool calls,
empty ids, Anthropic block ordering, Responses reasoning items without encrypted content,
and reasoning that the fake emitted with a tool call but that was not replayed with it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .script import Format


@dataclass
class Emitted:
    """What the fake sent for one tool call, so later requests can be checked for replay."""

    fmt: Format
    reasoning: str | None
    signature: str | None = None
    encrypted: str | None = None


def check_request(fmt: Format, body: dict[str, Any]) -> list[str]:
    """Structural validity of a request body, as the real provider would judge it."""
    try:
        return {"chat": _check_chat, "anthropic": _check_anthropic, "responses": _check_responses}[
            fmt
        ](body)
    except (KeyError, TypeError, AttributeError) as exc:  # malformed beyond the checks
        return [f"malformed {fmt} request: {exc!r}"]


def _check_chat(body: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    open_ids: list[str] = []
    for i, m in enumerate(body["messages"]):
        role = m["role"]
        if role == "tool":
            cid = m.get("tool_call_id") or ""
            if not cid:
                problems.append(f"messages[{i}]: tool message without tool_call_id")
            elif cid not in open_ids:
                problems.append(f"messages[{i}]: tool result {cid!r} has no preceding call")
            else:
                open_ids.remove(cid)
            continue
        if open_ids:
            problems.append(
                f"messages[{i}]: calls {open_ids} have no tool result before this message"
            )
            open_ids = []
        if role == "assistant":
            for call in m.get("tool_calls") or []:
                if not call.get("id"):
                    problems.append(f"messages[{i}]: tool call with empty id")
                if not call.get("function", {}).get("name"):
                    problems.append(f"messages[{i}]: tool call without name")
                try:
                    json.loads(call["function"]["arguments"])
                except (ValueError, KeyError, TypeError):
                    problems.append(f"messages[{i}]: tool call arguments are not a JSON string")
                open_ids.append(call.get("id") or "")
    if open_ids:
        problems.append(f"calls {open_ids} have no tool result")
    return problems


def _check_anthropic(body: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    msgs = body["messages"]
    if msgs and msgs[0]["role"] != "user":
        problems.append("first message must be a user message")
    for i, m in enumerate(msgs):
        blocks = (
            m["content"]
            if isinstance(m["content"], list)
            else [{"type": "text", "text": m["content"]}]
        )
        for b in blocks:
            if b.get("type") == "text" and not b.get("text"):
                problems.append(f"messages[{i}]: empty text block")
        if m["role"] == "assistant":
            ids = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
            if any(not x for x in ids):
                problems.append(f"messages[{i}]: tool_use with empty id")
            seen_tool = False
            for b in blocks:
                if b.get("type") == "tool_use":
                    seen_tool = True
                elif seen_tool:
                    problems.append(f"messages[{i}]: {b.get('type')} block after tool_use")
                if b.get("type") == "thinking" and not b.get("signature"):
                    problems.append(f"messages[{i}]: thinking block without signature")
            if ids:
                nxt = msgs[i + 1] if i + 1 < len(msgs) else None
                nblocks = nxt["content"] if nxt and isinstance(nxt["content"], list) else []
                results = [b.get("tool_use_id") for b in nblocks if b.get("type") == "tool_result"]
                if nxt is None or nxt["role"] != "user" or sorted(results) != sorted(ids):
                    problems.append(
                        f"messages[{i}]: tool_use ids {ids} not answered by the next user message"
                    )
                kinds = [b.get("type") for b in nblocks]
                if results and kinds[: len(results)] != ["tool_result"] * len(results):
                    problems.append(f"messages[{i + 1}]: tool_result blocks must come first")
        else:
            prev = msgs[i - 1] if i else None
            prev_ids = (
                {b.get("id") for b in prev["content"] if b.get("type") == "tool_use"}
                if prev and prev["role"] == "assistant" and isinstance(prev["content"], list)
                else set()
            )
            for b in blocks:
                if b.get("type") == "tool_result" and b.get("tool_use_id") not in prev_ids:
                    problems.append(
                        f"messages[{i}]: tool_result {b.get('tool_use_id')!r} "
                        "has no tool_use in the previous message"
                    )
    return problems


def _check_responses(body: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    if body.get("store") is not False:
        problems.append("store must be false (stateless replay)")
    items = body["input"]
    calls: dict[str, int] = {}
    answered: set[str] = set()
    for i, item in enumerate(items):
        kind = item.get("type")
        if kind == "function_call":
            if not item.get("call_id"):
                problems.append(f"input[{i}]: function_call with empty call_id")
            calls[item.get("call_id") or ""] = i
        elif kind == "function_call_output":
            cid = item.get("call_id") or ""
            if cid not in calls:
                problems.append(
                    f"input[{i}]: function_call_output {cid!r} has no preceding function_call"
                )
            answered.add(cid)
        elif kind == "reasoning":
            if not item.get("encrypted_content"):
                problems.append(
                    f"input[{i}]: reasoning item without encrypted_content (store=false)"
                )
            if i == len(items) - 1:
                problems.append(f"input[{i}]: reasoning item without its following item")
    for cid in calls:
        if cid not in answered:
            problems.append(f"function_call {cid!r} has no function_call_output")
    return problems


def check_replay(
    fmt: Format, body: dict[str, Any], emitted: dict[str, Emitted], *, chat_reasoning: bool
) -> list[str]:
    """The reasoning this fake emitted with a tool call comes back with that call."""
    problems: list[str] = []
    if fmt == "anthropic":
        if "thinking" not in body:
            return problems  # thinking blocks are only required while thinking is on
        for i, m in enumerate(body["messages"]):
            if m["role"] != "assistant" or not isinstance(m["content"], list):
                continue
            sigs = {b.get("signature") for b in m["content"] if b.get("type") == "thinking"}
            for b in m["content"]:
                e = emitted.get(b.get("id", "")) if b.get("type") == "tool_use" else None
                if e and e.fmt == fmt and e.signature and e.signature not in sigs:
                    problems.append(
                        f"messages[{i}]: thinking block {e.signature!r} "
                        f"not replayed with {b['id']!r}"
                    )
    elif fmt == "responses":
        seen_encrypted: set[str] = set()
        for i, item in enumerate(body["input"]):
            if item.get("type") == "reasoning":
                seen_encrypted.add(item.get("encrypted_content"))
            elif item.get("type") == "function_call":
                e = emitted.get(item.get("call_id", ""))
                if e and e.fmt == fmt and e.encrypted and e.encrypted not in seen_encrypted:
                    problems.append(
                        f"input[{i}]: reasoning item {e.encrypted!r} not replayed before its call"
                    )
    elif chat_reasoning:
        for i, m in enumerate(body["messages"]):
            calls = m.get("tool_calls") if m["role"] == "assistant" else None
            for call in calls or []:
                e = emitted.get(call.get("id", ""))
                if e and e.fmt == fmt and e.reasoning and m.get("reasoning_content") != e.reasoning:
                    problems.append(
                        f"messages[{i}]: reasoning_content not replayed with {call['id']!r}"
                    )
    return problems
