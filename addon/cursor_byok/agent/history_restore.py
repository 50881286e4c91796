"""The conversation so far, as the model will read it: rebuilt each turn from the checkpoint the
client sent back (its root prompt messages and todos are blobs, in our store or the client's KV)."""

from __future__ import annotations

import json
from collections.abc import Awaitable
from collections.abc import Callable

from cursor_byok.agent.turn_endings import TurnError
from cursor_byok.conversation.history_format import HistoryMessage
from cursor_byok.cursor.checkpoint import Transcript
from cursor_byok.cursor.checkpoint import decode_message
from cursor_byok.pb import agent_v1_pb2 as pb


async def load_transcript(
    turn_blob: Callable[[bytes], Awaitable[bytes]], run_request: pb.AgentRunRequest, request_id: str
) -> Transcript:
    """The conversation so far, from the checkpoint the client sent back."""
    state = run_request.conversation_state
    history: list[HistoryMessage] = []
    roots = state.root_prompt_messages_json
    for index, ident in enumerate(roots):
        try:
            data = await turn_blob(ident)
        except TurnError as exc:
            if exc.code != "not_found":
                raise
            # A checkpoint written elsewhere (Cursor's backend, another machine) whose blob
            # neither our store nor the client's KV has: the history has a hole.
            raise TurnError(
                "not_found",
                f"cannot continue this conversation: history message {index + 1} of "
                f"{len(roots)} is in neither cursor-byok's store nor the client's ({exc}); "
                "start a new chat or go back to an earlier message",
            ) from None
        try:
            message = decode_message(data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise TurnError(
                "invalid_argument", f"protocol error: bad history blob: {exc}"
            ) from None
        if message.get("role") != "system":  # the system prompt is rebuilt every turn
            history.append(message)
    todos = []
    for ident in state.todos:
        try:
            todo = json.loads(await turn_blob(ident))
        except (ValueError, UnicodeDecodeError):
            continue  # a todo format we do not know (written by Cursor's server): keep going
        if isinstance(todo, dict):
            todos.append(todo)
    return Transcript(
        base=state, history=history, request_id=request_id, read_paths=[], todos=todos
    )
