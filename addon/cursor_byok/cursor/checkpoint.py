"""Conversation checkpoints: `ConversationStateStructure` and the blobs it points to (§10).

The client stores our conversation state for us and hands it back on the next turn as
`run_request.conversation_state`. The history lives in blobs: each `root_prompt_messages_json`
entry is the SHA-256 id of one JSON message (AI-SDK style, the same neutral format the provider
adapters read; typed in `history_format.py`), each `turns` entry the id of a
`ConversationTurnStructure`. Everything here is pure: it computes structures and the blobs they
need; sending and acknowledging is the turn runner's job.
"""

from __future__ import annotations

import json
from collections.abc import Container
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from json.encoder import encode_basestring
from typing import Any
from typing import cast

from google.protobuf.message import Message

from cursor_byok.conversation.history_format import AssistantHistoryMessage
from cursor_byok.conversation.history_format import HistoryMessage
from cursor_byok.conversation.history_format import UserHistoryMessage
from cursor_byok.cursor.context_meter import breakdown
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire.blob_ids import blob_id
from cursor_byok.wire.blob_pieces import LARGE_BLOB
from cursor_byok.wire.blob_pieces import BlobPieces
from cursor_byok.wire.varint import varint

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


def has_volatile(message: Message) -> bool:
    """Whether any `VOLATILE_FIELDS` field is set in a message tree. Reads only message fields
    and the volatile ones (a text field read would copy the text out of the message)."""
    for fd in message.DESCRIPTOR.fields:
        if fd.name in VOLATILE_FIELDS:
            if fd.has_presence and message.HasField(fd.name):
                return True
            if not fd.has_presence and getattr(message, fd.name):
                return True
        elif fd.message_type is not None:
            value = getattr(message, fd.name)
            if fd.message_type.GetOptions().map_entry:
                items = list(value.values()) if fd.message_type.fields[1].message_type else []
            elif fd.is_repeated:
                items = list(value)
            else:
                items = [value] if message.HasField(fd.name) else []
            if any(has_volatile(item) for item in items):
                return True
    return False


def timeless(message: Message) -> bytes:
    """A message's bytes without its `VOLATILE_FIELDS`: equal for equal content at any speed."""
    if not has_volatile(message):  # most steps: their bytes as they are, no copy first
        return message.SerializeToString(deterministic=True)
    copy = type(message)()
    copy.CopyFrom(message)
    clear_volatile(copy)
    return copy.SerializeToString(deterministic=True)


def encode_message(message: HistoryMessage) -> bytes:
    """Canonical bytes of one history message: stable, so equal messages share a blob id."""
    return _json(message).encode()


def _json(message: HistoryMessage) -> str:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_SLICE = 1 << 16


def message_id(message: HistoryMessage) -> bytes:
    """`blob_id(encode_message(message))` without making those bytes: the JSON is hashed
    piece by piece, a long string escaped 64 KiB at a time, so knowing the id of a message the
    client already holds costs no copy of its text."""
    return message_blob(message).ident


def json_size(value: object) -> int:
    """`len(encode_message(value))` without making those bytes (a long answer's JSON would be
    one more whole copy of it): the pieces' UTF-8 sizes, 64 KiB of a string at a time."""
    return sum(len(p) if p.isascii() else len(p.encode()) for p in _json_pieces(value))


def message_data(message: HistoryMessage) -> tuple[bytes, Blob]:
    """A message's blob id and its blob (`_message_data`)."""
    ident, data = _message_data(message)
    assert data is not None  # nothing is held
    return ident, data


def _message_data(
    message: HistoryMessage, have: Container[bytes] = frozenset()
) -> tuple[bytes, Blob | None]:
    """A message's blob id and its blob. A small one (`_small`) is encoded once by
    `json.dumps` and hashed; a large one's id comes from one pass over its JSON in pieces, and
    its blob is `BlobPieces` past LARGE_BLOB bytes (its JSON never made whole), bytes under
    it, or None when it is in `have` (the client holds it: no bytes made)."""
    if _small(message):
        data = encode_message(message)
        return blob_id(data), data
    blob = message_blob(message)
    if blob.ident in have:
        return blob.ident, None
    return blob.ident, blob if blob.size >= LARGE_BLOB else encode_message(message)


def message_blob(message: HistoryMessage) -> BlobPieces:
    """`encode_message(message)` as a `BlobPieces`: its id and size from one pass over the
    JSON's pieces, its bytes made again from the message whenever they are read."""
    return BlobPieces.of(lambda: (piece.encode() for piece in _json_pieces(message)))


def _json_pieces(value: object) -> Iterator[str]:
    """`encode_message`'s JSON text in pieces of at most a slice of any one string (escaping
    is per character, so escaped slices join into the escaped whole)."""
    if isinstance(value, str):
        if len(value) <= _SLICE:
            yield encode_basestring(value)
            return
        yield '"'
        for start in range(0, len(value), _SLICE):
            yield encode_basestring(value[start : start + _SLICE])[1:-1]
        yield '"'
    elif isinstance(value, dict) and all(isinstance(key, str) for key in value):
        yield "{"
        for index, (key, item) in enumerate(value.items()):
            yield f",{encode_basestring(key)}:" if index else f"{encode_basestring(key)}:"
            yield from _json_pieces(item)
        yield "}"
    elif isinstance(value, list | tuple):
        yield "["
        for index, item in enumerate(value):
            if index:
                yield ","
            yield from _json_pieces(item)
        yield "]"
    else:  # numbers, booleans, null (and anything json itself would reject)
        yield _ENCODER.encode(value)


def decode_message(data: bytes) -> HistoryMessage:
    """One history blob. Only the role is checked: readers check the rest (`history_format`)."""
    message = json.loads(data.decode("utf-8"))
    if not isinstance(message, dict) or "role" not in message:
        raise ValueError("a history blob must be a JSON object with a role")
    return cast(HistoryMessage, message)


Blob = bytes | BlobPieces  # a blob's bytes, or a long one made in pieces when written
Step = pb.ConversationStep | bytes | BlobPieces  # a message, a stored step's id, a long one


class _Store:
    """The blobs one checkpoint references: each id computed once, bytes kept only for what
    `have` (the client and the data dir) lacks; a long one as `BlobPieces`, never whole."""

    def __init__(self, have: Container[bytes], step_ids: dict[int, bytes]) -> None:
        self.have = have
        self.step_ids = step_ids  # the transcript's id(step) -> blob id
        self.blobs: dict[bytes, Blob] = {}

    def data(self, data: bytes) -> bytes:
        ident = blob_id(data)
        if ident not in self.have:
            self.blobs[ident] = data
        return ident

    def message(self, message: HistoryMessage) -> bytes:
        # Every message of the turn so far, again at each checkpoint: a small one whole (fast),
        # a large one held by the client without its bytes made again.
        ident, data = _message_data(message, self.have)
        if data is not None and ident not in self.have:
            self.blobs[ident] = data
        return ident

    def step(self, step: Step) -> bytes:
        if isinstance(step, bytes):
            return step
        ident = self.step_ids.get(id(step))
        if ident is None or ident not in self.have:
            if isinstance(step, BlobPieces):
                ident = step.ident
                if ident not in self.have:
                    self.blobs[ident] = step
            else:
                ident = self.data(step.SerializeToString())
            self.step_ids[id(step)] = ident
        return ident


SMALL_MESSAGE = 16 * 1024  # characters of strings: its JSON is at most ~6× that (escapes)


def _small(value: object, budget: int = SMALL_MESSAGE) -> bool:
    """Whether the strings in `value` (keys, text, tool-call arguments, at any depth) come to
    fewer than `budget` characters: its JSON is small enough to make whole. Stops counting at
    the budget, so a long message costs no more than a short one to tell."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            budget -= len(item)
        elif isinstance(item, dict):
            budget -= sum(len(key) for key in item if isinstance(key, str))
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
        if budget <= 0:
            return False
    return True


@dataclass
class Transcript:
    """One turn's view of a conversation: what it inherited plus what it adds.

    `base` is the checkpoint the client sent; `history` the messages its roots resolve to. New
    messages and steps are appended during the turn; checkpoints are computed from both, keeping
    the root list append-only so provider prompt caches stay warm.
    """

    base: pb.ConversationStateStructure
    history: list[HistoryMessage]
    request_id: str
    user_message: pb.UserMessage | None = None
    new_messages: list[HistoryMessage] = field(default_factory=list)
    # a step, or the blob id of one the client and the data dir hold (`settle_steps`)
    steps: list[Step] = field(default_factory=list)
    read_paths: list[str] = field(default_factory=list)
    todos: list[dict[str, Any]] = field(default_factory=list)  # TodoWrite state, one blob each
    context_window: int = DEFAULT_CONTEXT_WINDOW
    used_tokens: int = 0
    # Task cards: parent tool call id → run state (subagent_runs_by_parent_tool_call_id).
    subagent_runs: dict[str, pb.SubagentRunState] = field(default_factory=dict)
    # A shell command the user ran from the chat: (command, output) as a shell turn.
    shell_turn: tuple[str, str] | None = None
    # The assistant message whose tool batch is running (for checkpoints taken by tools).
    pending_message: AssistantHistoryMessage | None = None
    # bytes per context-meter category (tokens.CATEGORIES), set by the agent before each call
    category_bytes: dict[str, int] = field(default_factory=dict)
    # compaction: the roots were replaced by [summary, recent messages] during this turn
    rewritten: bool = False
    summary: str | None = None
    summarized: list[HistoryMessage] = field(default_factory=list)  # folded into the summary
    # id(step) -> its blob id: steps never change once added, so each is serialised once more
    # only while the client may still lack it (`checkpoint(have=...)`)
    _step_ids: dict[int, bytes] = field(default_factory=dict, repr=False)

    def messages(self) -> list[HistoryMessage]:
        """The whole model-facing history: inherited then new."""
        return self.history + self.new_messages

    def append(self, message: HistoryMessage) -> None:
        self.new_messages.append(message)

    def add_step(self, step: Step) -> None:
        self.steps.append(step)

    def note_read(self, path: str) -> None:
        """A file the model has read (once each, in order)."""
        if path not in self.read_paths:
            self.read_paths.append(path)

    def set_todos(self, todos: list[dict[str, Any]]) -> None:
        self.todos[:] = todos  # in place: a running tool batch's context holds this list

    def set_subagent_runs(self, runs: Mapping[str, pb.SubagentRunState]) -> None:
        """Task cards' states by parent tool call id (the newer state of a card wins)."""
        self.subagent_runs.update(runs)

    def settle_steps(self, have: Container[bytes]) -> dict[int, bytes]:
        """Keep only the blob id of each step in `have` (the client and the data dir hold it):
        a step's text is needed again only to SET it, so the turn lets it go once stored.
        Returns id(step) -> blob id for the steps let go (the turn forgets them too)."""
        settled: dict[int, bytes] = {}
        for index, step in enumerate(self.steps):
            if isinstance(step, bytes):
                continue
            ident = self._step_ids.get(id(step))
            if ident is not None and ident in have:
                self.steps[index] = settled[id(step)] = ident
        for key in settled:  # the step may die now, and its id() be reused by another
            del self._step_ids[key]
        return settled

    def compact(
        self,
        summary: str,
        summary_message: UserHistoryMessage,
        summarized: list[HistoryMessage],
        recent: list[HistoryMessage],
    ) -> None:
        """Replace the history by the summary message and the recent messages kept verbatim.

        The next checkpoint rewrites `root_prompt_messages_json` (once; later checkpoints
        append again) and records the summary in `summary` / `summary_archives`, so Cursor and
        any later turn, on this proxy or another, continue from it."""
        self.summarized.extend(summarized)
        self.history = [summary_message, *recent]
        self.new_messages = []
        self.rewritten = True
        self.summary = summary

    def checkpoint(
        self,
        *,
        pending: AssistantHistoryMessage | None = None,
        mode: int | None = None,
        into: pb.ConversationStateStructure | None = None,
        have: Container[bytes] = frozenset(),
        inline: bool = True,
    ) -> tuple[pb.ConversationStateStructure, dict[bytes, Blob]]:
        """The state to publish and every blob it references that this turn created, except
        those in `have` (the client and the data dir hold them already): their ids are found
        without making their bytes again, so the turn's last checkpoints hold no extra copy of
        the answer.

        With `pending` (an assistant message whose tool batch has not settled) the checkpoint is
        *staged*: that message stays out of the roots and travels inline in `pending_tool_calls`
        (with `inline=False` it is left out: `staged_frame` puts it in the frame as bytes).
        """
        store = _Store(have, self._step_ids)
        state = pb.ConversationStateStructure() if into is None else into
        state.CopyFrom(self.base)
        del state.pending_tool_calls[:]
        if self.rewritten:
            del state.root_prompt_messages_json[:]
            state.root_prompt_messages_json.extend(store.message(m) for m in self.history)
            self._store_summary(state, store.data)
        settled = [m for m in self.new_messages if m is not pending]
        state.root_prompt_messages_json.extend(store.message(m) for m in settled)
        if pending is not None and inline:
            state.pending_tool_calls.append(_json(pending))
        self._store_turns(state, store)
        for call_id, run in self.subagent_runs.items():
            state.subagent_runs_by_parent_tool_call_id[call_id].CopyFrom(run)
        if mode is not None:
            # proto3 enums are open (any int is stored); the stubs name only AgentMode's members
            state.mode = cast(pb.AgentMode, mode)
        del state.todos[:]
        state.todos.extend(store.data(encode_todo(t)) for t in self.todos)
        for path in self.read_paths:
            if path not in state.read_paths:
                state.read_paths.append(path)
        if not state.agent_type:
            state.agent_type = "ide"
        self._set_token_details(state.token_details)
        return state, store.blobs

    def _store_turns(self, state: pb.ConversationStateStructure, store: _Store) -> None:
        """This turn's `turns` entries: the agent turn (user message and steps) and a shell
        turn, each a blob of its own."""
        if self.user_message is not None:
            turn = pb.AgentConversationTurnStructure(
                user_message=store.data(self.user_message.SerializeToString()),
                steps=[store.step(s) for s in self.steps],
                request_id=self.request_id,
            )
            wrapper = pb.ConversationTurnStructure(agent_conversation_turn=turn)
            state.turns.append(store.data(wrapper.SerializeToString()))
        if self.shell_turn is not None:
            command, output = self.shell_turn
            shell = pb.ShellConversationTurnStructure(
                shell_command=store.data(pb.ShellCommand(command=command).SerializeToString()),
                shell_output=store.data(output.encode()),
            )
            wrapper = pb.ConversationTurnStructure(shell_conversation_turn=shell)
            state.turns.append(store.data(wrapper.SerializeToString()))

    def _set_token_details(self, details: pb.ConversationTokenDetails) -> None:
        """The context meter: the window, the tokens used, and their breakdown by category."""
        details.max_tokens = self.context_window
        details.used_tokens = min(self.used_tokens or self._estimate_tokens(), 2**32 - 1)
        if not self.category_bytes:
            return
        snapshot = details.breakdown
        snapshot.Clear()
        snapshot.total_used_tokens = details.used_tokens
        snapshot.max_tokens = details.max_tokens
        for ident, label, tokens, chars in breakdown(
            details.used_tokens, self.category_bytes, details.max_tokens
        ):
            snapshot.categories.add(
                id=ident, label=label, estimated_tokens=tokens, character_count=chars
            )

    def _store_summary(self, state: pb.ConversationStateStructure, store) -> None:
        """`summary` = blob of ConversationSummary{summary}; `summary_archives` += blob of
        ConversationSummaryArchive{summarized_messages, summary, window_tail, summary_message}
        (the Structure form holds blob ids, like `turns`; shapes from the client's schema)."""
        if self.summary is None:
            return
        text = self.summary.encode()
        state.summary = store(_field(1, text))
        summarized = b"".join(_field(1, store(encode_message(m))) for m in self.summarized)
        archive = (
            summarized
            + _field(2, text)
            + _varint_field(3, max(0, len(self.history) - 1))
            + _field(4, blob_id(encode_message(self.history[0])))
        )
        state.summary_archives.append(store(archive))
        state.self_summary_count += 1

    def _estimate_tokens(self) -> int:
        """About 4 bytes per token; shown as approximate until a provider reports usage."""
        return sum(len(encode_message(m)) for m in self.messages()) // 4


def _field(number: int, data: bytes) -> bytes:
    """A length-delimited protobuf field (our generated schema lacks these two messages)."""
    return varint(number << 3 | 2) + varint(len(data)) + data


def _varint_field(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


_PENDING_TOOL_CALLS = 4  # ConversationStateStructure.pending_tool_calls
_CHECKPOINT_UPDATE = b"\x1a"  # AgentServerMessage.conversation_checkpoint_update (3, bytes)


def staged_frame(state: pb.ConversationStateStructure, pending: HistoryMessage) -> bytes:
    """The Connect envelope of `AgentServerMessage{conversation_checkpoint_update: state}` with
    `pending` inline as its one `pending_tool_calls` entry, byte for byte what upb makes of it
    (`state` made with `checkpoint(pending=..., inline=False)`).

    Built around the message's JSON, encoded 64 KiB of any string at a time: the answer is
    copied once, into the frame, where the message route held it three times at once (in the
    message, in its serialised bytes and in the envelope made of them)."""
    head, tail = staged_splice(state, pending)
    parts = [piece.encode() for piece in _json_pieces(pending)]
    return b"".join([head, *parts, tail])


def staged_splice(
    state: pb.ConversationStateStructure, pending: HistoryMessage
) -> tuple[bytes, bytes]:
    """`staged_frame`'s bytes before and after the message's JSON, which is
    `encode_message(pending)`, the message's blob: so the frame is head + blob + tail."""
    body = state.SerializeToString()
    # the walk stops at token_details (5), which every checkpoint sets: before any unknown field
    cut = _first_field_after(body, _PENDING_TOOL_CALLS)
    size = sum(len(piece.encode()) for piece in _json_pieces(pending))
    field = varint(_PENDING_TOOL_CALLS << 3 | 2) + varint(size)
    state_size = len(body) + size + len(field)
    head = _CHECKPOINT_UPDATE + varint(state_size)
    payload_size = len(head) + state_size
    start = b"".join([b"\x00", payload_size.to_bytes(4, "big"), head, body[:cut], field])
    return start, body[cut:]


def _first_field_after(data: bytes, number: int) -> int:
    """Where the first top-level field numbered above `number` starts in a message's bytes
    (upb writes known fields in number order, unknown ones after them)."""
    pos = 0
    while pos < len(data):
        tag, after = _read_varint(data, pos)
        if tag >> 3 > number:
            return pos
        wire = tag & 7
        if wire == 0:
            _, after = _read_varint(data, after)
        elif wire == 2:
            length, after = _read_varint(data, after)
            after += length
        elif wire in (1, 5):
            after += 8 if wire == 1 else 4
        else:
            raise ValueError(f"wire type {wire}")
        pos = after
    return len(data)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def encode_todo(todo: dict[str, Any]) -> bytes:
    return json.dumps(todo, ensure_ascii=False, separators=(",", ":")).encode()


def referenced_blobs(state: pb.ConversationStateStructure) -> set[bytes]:
    """Blob ids a client-sent checkpoint refers to directly (the client has these)."""
    ids = set(state.root_prompt_messages_json)
    ids.update(state.turns)
    ids.update(state.todos)
    return ids
