"""The checkpoint Cursor's backend writes at the end of a run, for the loopback stand-in.

Built from protocol.md (§4.5 turn close, §9 KV, §10 checkpoints), independently of the
addon's own writer (`cursor_byok.cursor.checkpoint`), so a BYOK turn that continues from it proves
we read Cursor's layout and not only our own:

- `root_prompt_messages_json`: the incoming roots (append-only), then one JSON blob for the
  user message and one for the assistant answer (§10.3: AI-SDK style, assistant content a
  list of parts with `"id": "1"`, reasoning parts carrying Cursor's opaque `signature` and
  `providerOptions.cursor.modelName`). A new chat (no incoming roots) starts with Cursor's
  system prompt and its injected-context message, as the first three roots are in captures.
- `turns`: the incoming turns, then one `ConversationTurnStructure` blob whose
  `agent_conversation_turn` points at the serialised `UserMessage` and `ConversationStep` blobs.
- blob id = SHA-256 of the bytes; every blob this run wrote is returned in SET order.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from dataclasses import field

from cursor_byok.pb import agent_v1_pb2 as pb

SYSTEM_PROMPT = "You are an AI coding assistant, powered by Cursor (stand-in system prompt)."
INJECTED_CONTEXT = "<user_info>\nOS Version: linux\n</user_info>"  # env, rules, skills, MCP
CONTEXT_WINDOW = 200_000


def _json(message: dict) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()


@dataclass
class CursorCheckpoint:
    """The settled state, the staged one sent before it, and the blobs both reference."""

    settled: pb.ConversationStateStructure
    staged: pb.ConversationStateStructure
    blobs: dict[bytes, bytes] = field(default_factory=dict)  # id → bytes, in SET order
    new_roots: list[bytes] = field(default_factory=list)


def write_checkpoint(
    run_request: pb.AgentRunRequest,
    reply: str,
    *,
    request_id: str,
    thinking: str = "",
    signature: str = "",
) -> CursorCheckpoint:
    """What Cursor's backend publishes after answering `run_request` with `reply`."""
    incoming = run_request.conversation_state
    user = run_request.action.user_message_action.user_message
    model = run_request.requested_model.model_id
    out = CursorCheckpoint(pb.ConversationStateStructure(), pb.ConversationStateStructure())

    def store(data: bytes) -> bytes:
        ident = hashlib.sha256(data).digest()
        out.blobs.setdefault(ident, data)
        return ident

    roots: list[dict] = []
    if not incoming.root_prompt_messages_json:
        roots.append({"role": "system", "content": SYSTEM_PROMPT})
        roots.append({"role": "user", "content": [{"type": "text", "text": INJECTED_CONTEXT}]})
    roots.append(
        {"role": "user", "content": [{"type": "text", "text": user.text}], "id": user.message_id}
    )
    parts: list[dict] = []
    if thinking:
        parts.append(
            {
                "type": "reasoning",
                "text": thinking,
                "signature": signature,
                "providerOptions": {"cursor": {"modelName": model}},
            }
        )
    parts.append({"type": "text", "text": reply})
    answer = {"role": "assistant", "content": parts, "id": "1"}
    out.new_roots = [store(_json(m)) for m in roots]
    answer_id = store(_json(answer))
    out.new_roots.append(answer_id)

    steps = []
    if thinking:
        thought = pb.ThinkingMessage(text=thinking, duration_ms=1200)
        steps.append(store(pb.ConversationStep(thinking_message=thought).SerializeToString()))
    said = pb.AssistantMessage(text=reply)
    steps.append(store(pb.ConversationStep(assistant_message=said).SerializeToString()))
    turn = pb.AgentConversationTurnStructure(
        user_message=store(user.SerializeToString()), steps=steps, request_id=request_id
    )
    turn_id = store(pb.ConversationTurnStructure(agent_conversation_turn=turn).SerializeToString())

    state = out.settled
    state.CopyFrom(incoming)
    del state.pending_tool_calls[:]
    state.root_prompt_messages_json.extend(out.new_roots)
    state.turns.append(turn_id)
    state.mode = user.mode or pb.AGENT_MODE_AGENT
    state.agent_type = state.agent_type or "ide"
    if not state.conversation_started_timestamp_ms:
        state.conversation_started_timestamp_ms = int(time.time() * 1000)
    used = sum(len(data) for data in out.blobs.values()) // 4
    state.token_details.used_tokens = state.token_details.used_tokens + used
    state.token_details.max_tokens = CONTEXT_WINDOW
    # Staged (§10.4): stable roots without the answer, the answer inline as the pending batch.
    out.staged.CopyFrom(state)
    del out.staged.root_prompt_messages_json[-1]
    out.staged.pending_tool_calls.append(_json(answer).decode())
    return out


def read_summary(data: bytes) -> str:
    """The text of a ConversationSummary blob (field 1)."""
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        if key & 7 == 2:
            length, pos = _read_varint(data, pos)
            if key >> 3 == 1:
                return data[pos : pos + length].decode()
            pos += length
        elif key & 7 == 0:
            _, pos = _read_varint(data, pos)
        else:
            raise ValueError("unexpected wire type in ConversationSummary")
    return ""


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos
