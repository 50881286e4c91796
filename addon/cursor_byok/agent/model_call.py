"""One model call: the provider's event stream, turned into Cursor UI updates as it arrives.

Thinking and text go to the chat as deltas; a tool call shows as a partial card while its
arguments stream and as started once they are complete (it is run later, with the whole batch:
`tool_batch`); a search the provider runs itself gets its WebSearch card; usage goes into the
turn's counters and the context meter. The call ends with `Finish`: the assistant message for
the history and the tool calls to run, in the order the model made them.

Retries and the first-token deadline are the provider layer's (`stream_with_retries`). A context
overflow before anything was shown raises `ContextOverflow`, so the step loop can compact and
call again; every other provider failure ends the turn as the error Cursor shows.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from dataclasses import field
from typing import cast

from cursor_byok.agent.errors import ContextOverflow
from cursor_byok.agent.errors import provider_turn_error
from cursor_byok.agent.errors import stream_ended_early
from cursor_byok.agent.tool_batch import PendingCall
from cursor_byok.agent.tool_batch import tool_card
from cursor_byok.agent.turn import Turn
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.protocol.history_format import AssistantHistoryMessage
from cursor_byok.providers import Finish
from cursor_byok.providers import ModelRequest
from cursor_byok.providers import Provider
from cursor_byok.providers import ReasoningDelta
from cursor_byok.providers import ServerToolCall
from cursor_byok.providers import ServerToolResult
from cursor_byok.providers import TextDelta
from cursor_byok.providers import ToolCallArgsDelta
from cursor_byok.providers import ToolCallEnd
from cursor_byok.providers import ToolCallStart
from cursor_byok.providers import Usage
from cursor_byok.providers.errors import ProviderError
from cursor_byok.providers.retries import stream_with_retries
from cursor_byok.tools.base import Tool
from cursor_byok.tools.task import TaskTool
from cursor_byok.tools.task import running_state

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Caller:
    """Who answers the calls of a turn, and how patiently: the provider, its retry budget and
    the first-token deadline (per provider, overridable per model)."""

    provider: Provider
    max_retries: int
    first_token_timeout: float | None = None


@dataclass
class Answer:
    """What one model call produced: the assistant message for the history, the tool calls to
    run (in the model's order), why it stopped and the usage it reported last."""

    message: AssistantHistoryMessage
    calls: list[PendingCall] = field(default_factory=list)
    reason: str = "stop"
    usage: Usage | None = None


async def stream_answer(
    turn: Turn,
    caller: Caller,
    request: ModelRequest,
    tools: dict[str, Tool],
    model_call_id: str,
) -> Answer:
    """Send `request` and show its answer as it streams; see the module doc."""
    calls: dict[str, PendingCall] = {}
    order: list[str] = []
    server_calls: dict[str, pb.ToolCall] = {}  # provider-run searches awaiting results
    thinking_since: float | None = None
    last_usage: Usage | None = None
    call: PendingCall | None
    shown = False  # text visible to the user (an overflow then cannot be retried cleanly)

    def end_thinking() -> None:
        nonlocal thinking_since
        if thinking_since is not None:
            ms = max(1, int((time.monotonic() - thinking_since) * 1000))
            turn.update(thinking_completed=pb.ThinkingCompletedUpdate(thinking_duration_ms=ms))
            thinking_since = None

    async def on_retry(attempt: int, error: ProviderError, delay: float) -> None:
        log.info("provider %s, retry %d in %.1fs: %s", error.kind, attempt, delay, error)

    try:
        async for event in stream_with_retries(
            caller.provider,
            request,
            max_retries=caller.max_retries,
            on_retry=on_retry,
            first_token_timeout=caller.first_token_timeout,
        ):
            match event:
                case ReasoningDelta(text):
                    if thinking_since is None:
                        thinking_since = time.monotonic()
                    turn.thinking(text)
                case TextDelta(text):
                    end_thinking()
                    shown = True
                    turn.text(text)
                case ToolCallStart(call_id, name):
                    end_thinking()
                    call = PendingCall(call_id, name, tools.get(name))
                    calls[call_id] = call
                    order.append(call_id)
                    turn.update(
                        partial_tool_call=pb.PartialToolCallUpdate(
                            call_id=call_id,
                            tool_call=tool_card(call, {}),
                            model_call_id=model_call_id,
                        )
                    )
                case ToolCallArgsDelta(call_id, fragment):
                    call = calls.get(call_id)
                    if call is not None:
                        turn.update(
                            partial_tool_call=pb.PartialToolCallUpdate(
                                call_id=call_id,
                                tool_call=tool_card(call, {}),
                                args_text_delta=fragment,
                                model_call_id=model_call_id,
                            )
                        )
                case ToolCallEnd(call_id, name, args, _raw, error):
                    end_thinking()
                    call = calls.get(call_id)
                    if call is None:
                        call = PendingCall(call_id, name, tools.get(name))
                        calls[call_id] = call
                        order.append(call_id)
                    _complete_call(turn, call, name, args, error, tools, model_call_id)
                case ServerToolCall(call_id, _name, args):
                    end_thinking()
                    server_calls[call_id] = _server_search_card(call_id, args)
                    turn.update(
                        tool_call_started=pb.ToolCallStartedUpdate(
                            call_id=call_id,
                            tool_call=server_calls[call_id],
                            model_call_id=model_call_id,
                        )
                    )
                case ServerToolResult(call_id, _name, references, error):
                    card = server_calls.pop(call_id, None) or _server_search_card(call_id, {})
                    _show_search_result(turn, call_id, card, references, error, model_call_id)
                case Usage() as usage:
                    last_usage = usage
                    _count_usage(turn, usage)
                case Finish(reason, message):
                    end_thinking()
                    if reason == "context_length" and not order and not shown:
                        raise ContextOverflow(None, "the model stopped: context window exceeded")
                    # the adapters build it (`MessageBuilder`); `Finish` types it as a dict
                    answer = cast(AssistantHistoryMessage, message)
                    return Answer(answer, [calls[c] for c in order], reason, last_usage)
    except ProviderError as exc:
        if exc.kind == "context_length" and not shown:
            raise ContextOverflow(exc, str(exc)) from None
        raise provider_turn_error(exc) from None
    raise stream_ended_early()


def _complete_call(
    turn: Turn,
    call: PendingCall,
    name: str,
    args: dict | None,
    error: str | None,
    tools: dict[str, Tool],
    model_call_id: str,
) -> None:
    """A call's arguments are complete: it shows as started, or is marked failed (invalid
    arguments, a tool this mode does not have) so its error becomes its result."""
    call.args, call.error = args, error
    if call.tool is None:
        call.error = (
            f"Tool {name!r} is not available in this mode. Available tools: {', '.join(tools)}"
        )
    if call.error is not None:
        return
    if isinstance(call.tool, TaskTool):  # in the staged checkpoint too
        turn.transcript.subagent_runs[call.call_id] = running_state(call.call_id, args or {})
    call.mark_started()
    turn.update(
        tool_call_started=pb.ToolCallStartedUpdate(
            call_id=call.call_id,
            tool_call=tool_card(call, args or {}),
            model_call_id=model_call_id,
        )
    )


def _count_usage(turn: Turn, usage: Usage) -> None:
    """A usage report: the turn's token counters, the context meter's last known size, and
    the output-token count Cursor shows."""
    turn.usage.add(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        reasoning_tokens=usage.reasoning_tokens,
    )
    if usage.input_tokens is not None:
        turn.transcript.used_tokens = usage.input_tokens + (usage.output_tokens or 0)
    if usage.output_tokens:
        turn.update(token_delta=pb.TokenDeltaUpdate(tokens=usage.output_tokens))


def _server_search_card(call_id: str, args: dict) -> pb.ToolCall:
    """The WebSearch card of a search the provider ran itself."""
    query = args.get("query") if isinstance(args, dict) else None
    search = pb.WebSearchArgs(search_term=str(query or ""), tool_call_id=call_id)
    return pb.ToolCall(
        web_search_tool_call=pb.WebSearchToolCall(args=search),
        tool_call_id=call_id,
        started_at_ms=int(time.time() * 1000),
    )


def _show_search_result(
    turn: Turn,
    call_id: str,
    card: pb.ToolCall,
    references: tuple[tuple[str, str], ...],
    error: str | None,
    model_call_id: str,
) -> None:
    """A provider-run search finished: its card completes with the references or the error."""
    result = card.web_search_tool_call.result
    if error is not None:
        result.error.error = f"web search failed: {error}"
    else:
        result.success.SetInParent()
        for title, url in references:
            result.success.references.add(title=title, url=url)
    card.completed_at_ms = int(time.time() * 1000)
    turn.update(
        tool_call_completed=pb.ToolCallCompletedUpdate(
            call_id=call_id, tool_call=card, model_call_id=model_call_id
        )
    )
