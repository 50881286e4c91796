"""One tool batch: the tool calls of one model answer, run on the client, their results recorded.

Read-only calls run concurrently; a mutating call waits for everything the model asked for
before it and runs alone, so edits land in the order the model made them. Every call gets its
completed card in the chat and one `tool-result` part in the history, in call order, whatever
the order in which they finished. While the batch runs its assistant message is the transcript's
`pending_message`: a checkpoint taken meanwhile is *staged* (the batch travels inline, not in the
roots), and a resumed run finds it there and runs it again (protocol.md §10.4).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from typing import cast

from cursor_byok.agent import context as prompts
from cursor_byok.agent import subagents
from cursor_byok.agent.turn import Turn
from cursor_byok.conversation.history_format import AssistantHistoryMessage
from cursor_byok.conversation.history_format import HistoryMessage
from cursor_byok.conversation.history_format import ToolHistoryMessage
from cursor_byok.conversation.history_format import ToolResultPart
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools import goals
from cursor_byok.tools.base import Tool
from cursor_byok.tools.base import ToolOutcome

log = logging.getLogger(__name__)


@dataclass
class PendingCall:
    """One tool call of the current model answer, in the order the model made it.

    `error` set means the call is not run: the error text is its result (unknown tool, invalid
    arguments). `started_at_ms` is when its card showed as started (0: not started)."""

    call_id: str
    name: str
    tool: Tool | None
    args: dict[str, Any] | None = None
    error: str | None = None
    started_at_ms: int = 0

    def mark_started(self) -> None:
        self.started_at_ms = int(time.time() * 1000)


def tool_card(call: PendingCall, args: dict) -> pb.ToolCall:
    """The call's chat card for `args` (possibly half-streamed); an empty card if the tool
    cannot draw one."""
    ui = pb.ToolCall()
    if call.tool is not None:
        try:
            ui = call.tool.ui_call(args)
        except Exception:  # ui_call is best effort by contract; never break a turn
            log.exception("ui_call of %s failed", call.name)
    ui.tool_call_id = call.call_id
    if call.started_at_ms:
        ui.started_at_ms = call.started_at_ms
    return ui


class CallContext:
    """`tools.base.ToolContext` for one call, backed by the live turn."""

    def __init__(
        self,
        turn: Turn,
        call: PendingCall,
        model_call_id: str,
        mode: int,
        request_context: pb.RequestContext,
    ) -> None:
        self._turn = turn
        self.call_id = call.call_id
        self.model_call_id = model_call_id
        self.mode = mode
        self.request_context = request_context
        self.todos = turn.transcript.todos
        self.conversation_state = turn.transcript.base  # the checkpoint's base (goal tools)
        goals.note_tool_call(self.conversation_state)
        self.run_request = turn.run_request  # for tools that act on the run (Task)
        self.subagent_runs = turn.transcript.subagent_runs
        self.model_name = turn.status.model

    async def publish_checkpoint(self) -> None:
        """A checkpoint now, keeping the running batch staged (Task card states)."""
        await self._turn.publish_checkpoint(pending=self._turn.transcript.pending_message)

    async def exec(self, message, on_event=None):
        return await self._turn.exec(message, on_event)

    async def interact(self, query):
        return await self._turn.interact(query)

    def delta(self, delta: pb.ToolCallDelta) -> None:
        self._turn.update(
            tool_call_delta=pb.ToolCallDeltaUpdate(
                call_id=self.call_id, tool_call_delta=delta, model_call_id=self.model_call_id
            )
        )

    def follow_subagent(
        self, prompt: str, relay: Callable[[pb.InteractionUpdate], None]
    ) -> contextlib.AbstractContextManager[None]:
        """While this Task call waits for its child run, the child's progress goes to `relay`."""
        return subagents.awaiting_child(self.call_id, prompt, relay)


async def settle_batch(
    turn: Turn,
    message: AssistantHistoryMessage,
    calls: list[PendingCall],
    model_call_id: str,
    mode: int,
    request_context: pb.RequestContext,
) -> int | None:
    """Run the batch of `message` (staged while it runs) and append its results to the
    transcript; returns the mode a successful SwitchMode in it approved, if any."""
    turn.transcript.pending_message = message
    try:
        results, switched = await run_batch(turn, calls, model_call_id, mode, request_context)
    finally:
        turn.transcript.pending_message = None
    results_message: ToolHistoryMessage = {"role": "tool", "content": results}
    turn.transcript.append(results_message)
    return switched


async def run_batch(
    turn: Turn,
    calls: list[PendingCall],
    model_call_id: str,
    mode: int,
    request_context: pb.RequestContext,
) -> tuple[list[ToolResultPart], int | None]:
    """Execute one batch: read-only calls concurrently, mutating calls one at a time in
    call order (each waits for everything the model asked for before it). Returns the
    `tool-result` parts in call order and the approved mode switch, if any."""
    outcomes: dict[str, ToolOutcome | str] = {}
    running: list[asyncio.Task] = []

    async def run_one(call: PendingCall) -> None:
        outcomes[call.call_id] = await _run_call(turn, call, model_call_id, mode, request_context)

    for call in calls:
        if call.error is not None or call.tool is None:
            outcomes[call.call_id] = call.error or "invalid tool call"
            continue
        if call.tool.read_only:
            running.append(asyncio.ensure_future(run_one(call)))
        else:
            if running:
                await asyncio.gather(*running)
                running.clear()
            await run_one(call)
    try:
        if running:
            await asyncio.gather(*running)
    finally:
        for task in running:
            task.cancel()
    results: list[ToolResultPart] = []
    switched: int | None = None
    for call in calls:
        outcome = outcomes[call.call_id]
        if not isinstance(outcome, str) and not outcome.is_error:
            switch = outcome.tool_call.switch_mode_tool_call
            if switch.result.WhichOneof("result") == "success":
                switched = prompts.mode_id(switch.result.success.to_mode_id) or switched
        text, is_error = (
            (outcome, True) if isinstance(outcome, str) else (outcome.text, outcome.is_error)
        )
        if isinstance(outcome, str) and not text.startswith("Error"):
            text = f"Error: {text}"
        results.append(
            {
                "type": "tool-result",
                "toolCallId": call.call_id,
                "toolName": call.name,
                "result": text,
                "isError": is_error,
            }
        )
    return results, switched


async def _run_call(
    turn: Turn,
    call: PendingCall,
    model_call_id: str,
    mode: int,
    request_context: pb.RequestContext,
) -> ToolOutcome:
    """One call: run its tool, show its completed card, remember a file it read."""
    assert call.tool is not None
    ctx = CallContext(turn, call, model_call_id, mode, request_context)
    outcome = await call.tool.run(call.args or {}, ctx)
    outcome.tool_call.tool_call_id = call.call_id
    outcome.tool_call.started_at_ms = call.started_at_ms
    outcome.tool_call.completed_at_ms = int(time.time() * 1000)
    turn.update(
        tool_call_completed=pb.ToolCallCompletedUpdate(
            call_id=call.call_id, tool_call=outcome.tool_call, model_call_id=model_call_id
        )
    )
    if call.name == "Read" and not outcome.is_error:
        path = (call.args or {}).get("path") or (call.args or {}).get("target_file")
        if isinstance(path, str):
            turn.transcript.note_read(path)
    return outcome


# --- resume ------------------------------------------------------------------------------


def pending_batch(state: pb.ConversationStateStructure) -> AssistantHistoryMessage | None:
    """The unsettled assistant message of a checkpoint (§10.4), if it has tool calls.

    Checked only for that: `restart_batch` reads its parts defensively."""
    for raw in state.pending_tool_calls:
        try:
            message = json.loads(raw)
        except ValueError:
            log.warning("unreadable pending tool batch in the checkpoint; ignored")
            continue
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(p, dict) and p.get("type") == "tool-call" for p in content
        ):
            message.setdefault("role", "assistant")
            return cast(AssistantHistoryMessage, message)
    return None


def awaits_answer(messages: list[HistoryMessage]) -> bool:
    """The history ends with a user message or tool results the model has not answered."""
    return bool(messages) and messages[-1].get("role") in ("user", "tool")


async def restart_batch(
    turn: Turn, message: AssistantHistoryMessage, tools: dict[str, Tool]
) -> tuple[list[PendingCall], str]:
    """Resume (protocol.md §10.4): put the checkpoint's unsettled batch back in the transcript,
    staged, and show its calls started again, with a new model call id (so new exec ids).
    Returns the calls to settle and that id."""
    model_call_id = str(uuid.uuid4())
    calls = []
    for part in message.get("content") or []:
        if not isinstance(part, dict) or part.get("type") != "tool-call":
            continue
        name = str(part.get("toolName") or "")
        call = PendingCall(str(part.get("toolCallId") or uuid.uuid4()), name, tools.get(name))
        args = part.get("args")
        call.args = args if isinstance(args, dict) else {}
        if call.tool is None:
            call.error = f"Tool {name!r} is not available in this mode."
        calls.append(call)
    log.info("turn %s: resuming %d pending tool call(s)", turn.request_id, len(calls))
    turn.transcript.append(message)
    await turn.publish_checkpoint(pending=message)
    turn.step_started()
    for call in calls:
        if call.error is None:
            call.mark_started()
            turn.update(
                tool_call_started=pb.ToolCallStartedUpdate(
                    call_id=call.call_id,
                    tool_call=tool_card(call, call.args or {}),
                    model_call_id=model_call_id,
                )
            )
    return calls, model_call_id
