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
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from typing import cast

from cursor_byok.agent.chain import FALLBACK_KINDS
from cursor_byok.agent.chain import Chain
from cursor_byok.agent.chain import Option
from cursor_byok.agent.chain import request_for
from cursor_byok.agent.error_details import CUSTOM_MESSAGE
from cursor_byok.agent.error_details import ContextOverflow
from cursor_byok.agent.error_details import provider_kind
from cursor_byok.agent.error_details import provider_turn_error
from cursor_byok.agent.error_details import stream_ended_early
from cursor_byok.agent.tool_batch import PendingCall
from cursor_byok.agent.tool_batch import tool_card
from cursor_byok.agent.turn import Turn
from cursor_byok.agent.turn import TurnError
from cursor_byok.conversation.history_format import AssistantHistoryMessage
from cursor_byok.errors import ByokError
from cursor_byok.pb import agent_v1_pb2 as pb
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
from cursor_byok.providers.provider_error import ProviderError
from cursor_byok.providers.retries import stream_with_retries
from cursor_byok.tools.base import Tool
from cursor_byok.tools.task import TaskTool
from cursor_byok.tools.task import running_state

log = logging.getLogger(__name__)

# Tool calls one model answer may run. Models make a few, parallel ones a few dozen; a runaway
# answer made 10,000 (each a card in the chat, an exec on the client, a result in the history).
MAX_TOOL_CALLS = 128


@dataclass(frozen=True, slots=True)
class Caller:
    """Who answers the calls of a turn, and how patiently: the provider, its retry budget and
    the first-token deadline (per provider, overridable per model); with a `chain`, the model's
    key pool and fallbacks (`agent/chain.py`) instead of the one provider."""

    provider: Provider
    max_retries: int
    first_token_timeout: float | None = None
    chain: Chain | None = None

    def options(self) -> Iterator[Option | None]:
        """Where the call may go, in order; None: the one provider, as it is."""
        if self.chain is None:
            yield None
            return
        yield from self.chain.options()


class Unserved(ByokError):
    """A call failed before any of its output reached Cursor, in a way another option may not
    (never leaves `stream_answer`: the next option is tried, or the turn's error is raised)."""

    def __init__(self, error: ProviderError, kind: str) -> None:
        super().__init__(str(error))
        self.error = error
        self.kind = kind


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
    """Send `request` and show its answer as it streams; see the module doc. With a chain, a
    call that fails before any output reached Cursor goes to the next option (`chain.py`)."""
    chain = caller.chain
    last: Unserved | None = None
    for option in caller.options():
        if option is None:
            return await _stream_one(turn, caller, request, tools, model_call_id, None)
        assert chain is not None
        sent = request_for(request, option.model, chain.config)
        try:
            answer = await _stream_one(turn, caller, sent, tools, model_call_id, option)
        except Unserved as exc:
            chain.failed(option, exc.error, exc.kind)
            log.warning(
                "turn %s: %s%s failed before any output (%s); trying the next option",
                turn.request_id,
                option.model.name,
                f" (key from {option.key_label})" if option.key_label else "",
                exc.error,
            )
            last = exc
            continue
        chain.served(option)
        _note_served(turn, chain, option)
        return answer
    assert chain is not None
    raise _exhausted(chain, last)


def _note_served(turn: Turn, chain: Chain, option: Option) -> None:
    """The turn's model is the one that served (usage prices it, the status shows it)."""
    if option.model.name == turn.status.model:
        return
    fallback_from = chain.primary.name if option.model.name != chain.primary.name else None
    if fallback_from is not None:
        log.info(
            "turn %s: served by %s (fallback for %s)",
            turn.request_id,
            option.model.name,
            fallback_from,
        )
    turn.status.serve(option.model.name, fallback_from)


def _exhausted(chain: Chain, last: Unserved | None) -> TurnError:
    """No option served: the last provider failure as Cursor shows it, naming what was tried."""
    tried = ", ".join(m.name for m in chain.models())
    if last is None:
        return TurnError(
            "resource_exhausted",
            "; ".join(chain.problems) or f"no usable provider for {tried}",
            title="No provider key available",
            error=CUSTOM_MESSAGE,
        )
    error = provider_turn_error(last.error)
    if chain.has_fallbacks():
        notes = "; ".join(chain.problems)
        return error.noted(f"tried: {tried}{'; ' + notes if notes else ''}")
    return error


async def _stream_one(
    turn: Turn,
    caller: Caller,
    request: ModelRequest,
    tools: dict[str, Tool],
    model_call_id: str,
    option: Option | None,
) -> Answer:
    """One option's call, shown as it streams; raises `Unserved` for a failure that may go
    to the next option (nothing reached Cursor yet)."""

    async def on_retry(attempt: int, error: ProviderError, delay: float) -> None:
        log.info("provider %s, retry %d in %.1fs: %s", error.kind, attempt, delay, error)

    provider = caller.provider if option is None else option.provider
    shown = _Shown(turn, tools, model_call_id)
    try:
        async for event in stream_with_retries(
            provider,
            request,
            max_retries=caller.max_retries if option is None else option.max_retries,
            on_retry=on_retry,
            first_token_timeout=(
                caller.first_token_timeout if option is None else option.first_token_timeout
            ),
            retry_if=_not_rate_limit if option is not None and option.pooled else None,
        ):
            answer = shown.take(event)
            if answer is not None:
                return answer
    except ProviderError as exc:
        raise _call_failed(exc, shown, caller, option) from None
    raise stream_ended_early()


class _Shown:
    """One call's answer as it streams into Cursor: the updates each event makes, and what the
    call made so far (its tool calls in order, the usage it reported last)."""

    def __init__(self, turn: Turn, tools: dict[str, Tool], model_call_id: str) -> None:
        self.turn = turn
        self.tools = tools
        self.model_call_id = model_call_id
        self.calls: dict[str, PendingCall] = {}
        self.order: list[str] = []
        self.server_calls: dict[str, pb.ToolCall] = {}  # provider-run searches awaiting results
        self.thinking_since: float | None = None
        self.last_usage: Usage | None = None
        self.over: set[str] = set()  # calls past MAX_TOOL_CALLS
        self.text = False  # text visible to the user (an overflow then cannot be retried cleanly)
        self.emitted = False  # any event that shows in Cursor (usage alone does not)

    def take(self, event: object) -> Answer | None:
        """Show one provider event; the `Answer` once the call finished."""
        self.emitted = self.emitted or not isinstance(event, Usage)
        match event:
            case ReasoningDelta(text, source, end):
                if self.thinking_since is None:
                    self.thinking_since = time.monotonic()
                self.turn.thinking(text, source, end)
            case TextDelta(text, source, end):
                self._end_thinking()
                self.text = True
                self.turn.text(text, source, end)
            case ToolCallStart(call_id, name):
                self._end_thinking()
                self._started(call_id, name)
            case ToolCallArgsDelta(call_id, fragment):
                call = self.calls.get(call_id)
                if call is not None:
                    self._partial(call, fragment)
            case ToolCallEnd(call_id, name, args, _raw, error):
                self._end_thinking()
                self._ended(call_id, name, args, error)
            case ServerToolCall(call_id, _name, args):
                self._end_thinking()
                self._server_call(call_id, args)
            case ServerToolResult(call_id, _name, references, error):
                card = self.server_calls.pop(call_id, None) or _server_search_card(call_id, {})
                _show_search_result(self.turn, call_id, card, references, error, self.model_call_id)
            case Usage() as usage:
                self.last_usage = usage
                _count_usage(self.turn, usage)
            case Finish(reason, message):
                self._end_thinking()
                return self._finish(reason, cast(AssistantHistoryMessage, message))
        return None

    def _end_thinking(self) -> None:
        if self.thinking_since is not None:
            ms = max(1, int((time.monotonic() - self.thinking_since) * 1000))
            self.turn.update(thinking_completed=pb.ThinkingCompletedUpdate(thinking_duration_ms=ms))
            self.thinking_since = None

    def _started(self, call_id: str, name: str) -> None:
        if len(self.order) >= MAX_TOOL_CALLS:
            self.over.add(call_id)  # not shown, not run: see `_cap_calls`
            return
        call = self._add(call_id, name)
        self._partial(call, "")

    def _add(self, call_id: str, name: str) -> PendingCall:
        call = PendingCall(call_id, name, self.tools.get(name))
        self.calls[call_id] = call
        self.order.append(call_id)
        return call

    def _partial(self, call: PendingCall, fragment: str) -> None:
        """The call's card while its arguments stream (`fragment`: the latest of them)."""
        update = pb.PartialToolCallUpdate(
            call_id=call.call_id, tool_call=tool_card(call, {}), model_call_id=self.model_call_id
        )
        if fragment:
            update.args_text_delta = fragment
        self.turn.update(partial_tool_call=update)

    def _ended(self, call_id: str, name: str, args: dict | None, error: str | None) -> None:
        call = self.calls.get(call_id)
        if call is None and (call_id in self.over or len(self.order) >= MAX_TOOL_CALLS):
            self.over.add(call_id)
            return
        if call is None:
            call = self._add(call_id, name)
        _complete_call(self.turn, call, name, args, error, self.tools, self.model_call_id)

    def _server_call(self, call_id: str, args: dict) -> None:
        self.server_calls[call_id] = _server_search_card(call_id, args)
        self.turn.update(
            tool_call_started=pb.ToolCallStartedUpdate(
                call_id=call_id,
                tool_call=self.server_calls[call_id],
                model_call_id=self.model_call_id,
            )
        )

    def _finish(self, reason: str, answer: AssistantHistoryMessage) -> Answer:
        """The call's end: its answer and calls (an overflow before anything showed is raised,
        for the step loop to compact and call again)."""
        if reason == "context_length" and not self.order and not self.text:
            raise ContextOverflow(None, "the model stopped: context window exceeded")
        # the adapters build the message (`MessageBuilder`); `Finish` types it as a dict
        pending = [self.calls[c] for c in self.order]
        capped = _cap_calls(answer, self.calls, self.over, self.tools) if self.over else None
        if capped is not None:
            pending.append(capped)
        return Answer(answer, pending, reason, self.last_usage)


def _call_failed(
    exc: ProviderError, shown: _Shown, caller: Caller, option: Option | None
) -> Exception:
    """What a provider failure raises: an overflow the step loop may compact for, `Unserved`
    when the next option may take the call, else the turn's error."""
    if exc.kind == "context_length" and not shown.text:
        return ContextOverflow(exc, str(exc))
    kind = provider_kind(exc)
    if option is not None and not shown.emitted and kind in FALLBACK_KINDS:
        return Unserved(exc, kind)
    failure = provider_turn_error(exc)
    if shown.emitted and caller.chain is not None and caller.chain.has_fallbacks():
        return failure.noted("the answer had begun, so no fallback was tried")
    return failure


def _not_rate_limit(error: ProviderError) -> bool:
    """A pooled key's 429 is not waited out: the next key takes the call."""
    return error.kind != "rate_limit"


def _cap_calls(
    message: AssistantHistoryMessage,
    calls: dict[str, PendingCall],
    over: set[str],
    tools: dict[str, Tool],
) -> PendingCall | None:
    """An answer made more than MAX_TOOL_CALLS calls (one model made 10,000): the first
    MAX_TOOL_CALLS run; the first call past them stays in the history with an error result
    that says so, and the rest leave the history, so the next request stays small and every
    call the model sees has its result."""
    first: dict | None = None
    kept: list = []
    for part in message.get("content") or []:
        if part.get("type") == "tool-call" and part.get("toolCallId") not in calls:
            if first is not None:
                continue
            first = cast(dict, part)
        kept.append(part)
    message["content"] = kept
    if first is None:
        return None
    name = str(first.get("toolName") or "")
    call = PendingCall(str(first.get("toolCallId")), name, tools.get(name))
    call.args = first.get("args") if isinstance(first.get("args"), dict) else {}
    call.error = (
        f"Not run: your answer made {MAX_TOOL_CALLS + len(over)} tool calls and at most "
        f"{MAX_TOOL_CALLS} run per answer. The first {MAX_TOOL_CALLS} ran; this call and the "
        f"{len(over) - 1} after it did not (they were dropped). Make the remaining calls in "
        f"your next answers, at most {MAX_TOOL_CALLS} at a time."
    )
    log.warning(
        "model answer made %d tool calls; ran the first %d",
        MAX_TOOL_CALLS + len(over),
        MAX_TOOL_CALLS,
    )
    return call


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
        turn.transcript.set_subagent_runs({call.call_id: running_state(call.call_id, args or {})})
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
