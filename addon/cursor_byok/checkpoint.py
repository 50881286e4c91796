"""Conversation checkpoints: `ConversationStateStructure` and the blobs it points to (§10).

The client stores our conversation state for us and hands it back on the next turn as
`run_request.conversation_state`. The history lives in blobs: each `root_prompt_messages_json`
entry is the SHA-256 id of one JSON message (AI-SDK style, the same neutral format the provider
adapters read), each `turns` entry the id of a `ConversationTurnStructure`. Everything here is pure:
it computes structures and the blobs they need; sending and acknowledging is the turn runner's job.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field

from google.protobuf.message import Message

from cursor_byok.blobs import blob_id
from cursor_byok.pb import agent_v1_pb2 as pb

DEFAULT_CONTEXT_WINDOW = 128_000

# Fields the proxy fills from clocks and uuids: equal runs of a turn differ only in these
# (replay compares without them; `timeless` keys steps by everything else).
VOLATILE_FIELDS = frozenset(
    {
        "model_call_id",
        "started_at_ms",
        "completed_at_ms",
        "step_duration_ms",
        "thinking_duration_ms",
        "duration_ms",  # ThinkingMessage steps in the checkpoint's turn blobs
        "exec_id",
        "execution_time",  # shell: measured by the proxy around the exec
        "created_at",  # todos (protobuf items and JSON blobs)
        "updated_at",
    }
)


def clear_volatile(message: Message) -> None:
    """Clear every `VOLATILE_FIELDS` field in a message tree, in place."""
    for fd, value in message.ListFields():
        if fd.name in VOLATILE_FIELDS:
            message.ClearField(fd.name)
        elif fd.message_type is not None:
            items = value.values() if isinstance(value, Mapping) else value
            for item in [value] if isinstance(value, Message) else items:
                if isinstance(item, Message):
                    clear_volatile(item)


def timeless(message: Message) -> bytes:
    """A message's bytes without its `VOLATILE_FIELDS`: equal for equal content at any speed."""
    copy = type(message)()
    copy.CopyFrom(message)
    clear_volatile(copy)
    return copy.SerializeToString(deterministic=True)


def encode_message(message: dict) -> bytes:
    """Canonical bytes of one history message: stable, so equal messages share a blob id."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()


def decode_message(data: bytes) -> dict:
    message = json.loads(data.decode("utf-8"))
    if not isinstance(message, dict) or "role" not in message:
        raise ValueError("a history blob must be a JSON object with a role")
    return message


@dataclass
class Transcript:
    """One turn's view of a conversation: what it inherited plus what it adds.

    `base` is the checkpoint the client sent; `history` the messages its roots resolve to. New
    messages and steps are appended during the turn; checkpoints are computed from both, keeping
    the root list append-only so provider prompt caches stay warm.
    """

    base: pb.ConversationStateStructure
    history: list[dict]
    request_id: str
    user_message: pb.UserMessage | None = None
    new_messages: list[dict] = field(default_factory=list)
    steps: list[pb.ConversationStep] = field(default_factory=list)
    read_paths: list[str] = field(default_factory=list)
    todos: list[dict] = field(default_factory=list)  # TodoWrite state, one blob per item
    context_window: int = DEFAULT_CONTEXT_WINDOW
    used_tokens: int = 0

    def messages(self) -> list[dict]:
        """The whole model-facing history: inherited then new."""
        return self.history + self.new_messages

    def append(self, message: dict) -> None:
        self.new_messages.append(message)

    def add_step(self, step: pb.ConversationStep) -> None:
        self.steps.append(step)

    def checkpoint(
        self, *, pending: dict | None = None, mode: int | None = None
    ) -> tuple[pb.ConversationStateStructure, dict[bytes, bytes]]:
        """The state to publish and every blob it references that this turn created.

        With `pending` (an assistant message whose tool batch has not settled) the checkpoint is
        *staged*: that message stays out of the roots and travels inline in `pending_tool_calls`.
        """
        blobs: dict[bytes, bytes] = {}

        def store(data: bytes) -> bytes:
            ident = blob_id(data)
            blobs[ident] = data
            return ident

        state = pb.ConversationStateStructure()
        state.CopyFrom(self.base)
        del state.pending_tool_calls[:]
        settled = [m for m in self.new_messages if m is not pending]
        state.root_prompt_messages_json.extend(store(encode_message(m)) for m in settled)
        if pending is not None:
            state.pending_tool_calls.append(encode_message(pending).decode())
        if self.user_message is not None:
            turn = pb.AgentConversationTurnStructure(
                user_message=store(self.user_message.SerializeToString()),
                steps=[store(s.SerializeToString()) for s in self.steps],
                request_id=self.request_id,
            )
            wrapper = pb.ConversationTurnStructure(agent_conversation_turn=turn)
            state.turns.append(store(wrapper.SerializeToString()))
        if mode is not None:
            state.mode = mode
        del state.todos[:]
        state.todos.extend(store(encode_todo(t)) for t in self.todos)
        for path in self.read_paths:
            if path not in state.read_paths:
                state.read_paths.append(path)
        if not state.agent_type:
            state.agent_type = "ide"
        details = state.token_details
        details.max_tokens = self.context_window
        details.used_tokens = min(self.used_tokens or self._estimate_tokens(), 2**32 - 1)
        return state, blobs

    def _estimate_tokens(self) -> int:
        """About 4 bytes per token; shown as approximate until a provider reports usage."""
        return sum(len(encode_message(m)) for m in self.messages()) // 4


def encode_todo(todo: dict) -> bytes:
    return json.dumps(todo, ensure_ascii=False, separators=(",", ":")).encode()


def referenced_blobs(state: pb.ConversationStateStructure) -> set[bytes]:
    """Blob ids a client-sent checkpoint refers to directly (the client has these)."""
    ids = set(state.root_prompt_messages_json)
    ids.update(state.turns)
    ids.update(state.todos)
    return ids
