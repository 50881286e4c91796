"""The agent loop: the user's model, streaming, calling Cursor's own tools through the turn.

One model call per step. Provider events become Cursor UI updates as they arrive; complete tool
calls are executed on the client (read-only ones concurrently, mutating ones in call order) and
all their results go back to the model in the next call. Checkpoints are published around each
tool batch (staged while it runs, settled once every result is in), so the conversation survives
a cancel or a crash at any point.
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
from dataclasses import field
from typing import Any

from cursor_byok.agent import context as prompts
from cursor_byok.agent import subagents
from cursor_byok.agent import user_shell
from cursor_byok.agent.compaction import KEEP_SHARE
from cursor_byok.agent.compaction import TOO_LARGE_TITLE
from cursor_byok.agent.compaction import CompactionFailed
from cursor_byok.agent.compaction import Compactor
from cursor_byok.agent.compaction import SummaryModel
from cursor_byok.agent.compaction import is_summary
from cursor_byok.agent.compaction import summarize_conversation
from cursor_byok.agent.tokens import TokenMeter
from cursor_byok.agent.tokens import json_bytes
from cursor_byok.agent.tokens import messages_bytes
from cursor_byok.agent.turn import Turn
from cursor_byok.agent.turn import TurnError
from cursor_byok.config import Config
from cursor_byok.config import ConfigError
from cursor_byok.config import ModelConfig
from cursor_byok.config.catalog import find_model
from cursor_byok.errors import ByokError
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.protocol import actions
from cursor_byok.providers.base import Finish
from cursor_byok.providers.base import ModelRequest
from cursor_byok.providers.base import Provider
from cursor_byok.providers.base import ProviderError
from cursor_byok.providers.base import ReasoningDelta
from cursor_byok.providers.base import ServerToolCall
from cursor_byok.providers.base import ServerToolResult
from cursor_byok.providers.base import TextDelta
from cursor_byok.providers.base import ToolCallArgsDelta
from cursor_byok.providers.base import ToolCallEnd
from cursor_byok.providers.base import ToolCallStart
from cursor_byok.providers.base import ToolSpec
from cursor_byok.providers.base import Usage
from cursor_byok.providers.base import make_provider
from cursor_byok.providers.base import stream_with_retries
from cursor_byok.providers.pool import ProviderPool
from cursor_byok.tools.base import Tool
from cursor_byok.tools.base import ToolOutcome
from cursor_byok.tools.registry import tools_for
from cursor_byok.tools.task import TaskTool
from cursor_byok.tools.task import running_state

log = logging.getLogger(__name__)

PROVIDER_ERROR = aipb.ErrorDetails.ERROR_PROVIDER_ERROR  # 57
CUSTOM_MESSAGE = aipb.ErrorDetails.ERROR_CUSTOM_MESSAGE  # 29
BAD_MODEL_NAME = aipb.ErrorDetails.ERROR_BAD_MODEL_NAME  # 5
_TITLES = {
    "auth": "Provider rejected the API key",
    "rate_limit": "Provider rate limit",
    "quota": "Provider quota or billing limit",
    "context_length": "Context too long for the model",
    "invalid_request": "Provider rejected the request",
    "server": "Provider server error",
    "network": "Cannot reach the provider",
    "timeout": "Provider timed out",
    "protocol": "Provider stream broke off",
}

ProviderFactory = Callable[[ModelConfig], Provider]


@dataclass
class _Call:
    """One tool call of the current model response, in the order the model made it."""

    call_id: str
    name: str
    tool: Tool | None
    args: dict[str, Any] | None = None
    error: str | None = None
    started: bool = False
    started_at_ms: int = 0


@dataclass
class _StepOutput:
    message: dict
    calls: list[_Call] = field(default_factory=list)
    reason: str = "stop"
    usage: Usage | None = None


class _Overflow(ByokError):
    """The provider said the prompt does not fit its context window."""

    def __init__(self, error: ProviderError | None, detail: str) -> None:
        super().__init__(detail)
        self.error = error


def too_large(detail: str) -> TurnError:
    """protocol.md §2.8: the context still does not fit after compaction."""
    return TurnError("invalid_argument", detail, title=TOO_LARGE_TITLE, error=CUSTOM_MESSAGE)


def request_bytes(request: ModelRequest) -> int:
    """Size of what a call sends: system prompt, tool schemas, history (neutral form)."""
    tools = sum(_tool_bytes(t) for t in request.tools)
    return len(request.system.encode()) + tools + messages_bytes(request.messages)


_TOOL_BYTES: dict[tuple[str, str, int], tuple[dict, int]] = {}
_TOOL_BYTES_MAX = 1024


def _tool_bytes(tool: ToolSpec) -> int:
    """A tool schema's JSON size, measured once: the same ~40 schemas go with every call of
    every turn, and serialising them each time was a visible share of a turn's fixed cost.
    Keyed by the schema object (kept alive in the entry, so its id is not reused)."""
    key = (tool.name, tool.description, id(tool.parameters))
    hit = _TOOL_BYTES.get(key)
    if hit is not None and hit[0] is tool.parameters:
        return hit[1]
    size = json_bytes(
        {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    )
    if len(_TOOL_BYTES) >= _TOOL_BYTES_MAX:
        _TOOL_BYTES.clear()
    _TOOL_BYTES[key] = (tool.parameters, size)
    return size


class _ToolContext:
    """`ToolContext` for one call, backed by the live turn."""

    def __init__(self, turn: Turn, call: _Call, model_call_id: str, mode: int, ctx) -> None:
        self._turn = turn
        self.call_id = call.call_id
        self.model_call_id = model_call_id
        self.mode = mode
        self.request_context = ctx
        self.todos = turn.transcript.todos
        self.run_request = turn.run_request  # for tools that act on the run (Task)
        self.subagent_runs = turn.transcript.subagent_runs
        self.model_name = turn.model

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


class ProviderAgent:
    """Runs turns against the configured provider of the model Cursor asked for."""

    name = "provider"

    def __init__(
        self,
        config: Config,
        provider_factory: ProviderFactory | None = None,
        wrap_provider: Callable[[Provider, str], Provider] | None = None,
        pool: ProviderPool | None = None,
    ) -> None:
        self.config = config
        self._factory = provider_factory or self._make_provider
        self._pool = pool  # shared provider clients; without one, each turn owns its client
        self._owns_provider = pool is None or provider_factory is not None
        self._wrap = wrap_provider  # e.g. the capture recorder, given the request id

    def _make_provider(self, model: ModelConfig) -> Provider:
        try:
            settings = self.config.providers[model.provider].settings()
        except ConfigError as exc:
            raise TurnError(
                "failed_precondition",
                str(exc),
                title="cursor-byok configuration",
                error=CUSTOM_MESSAGE,
            ) from None
        return self._pool.get(settings) if self._pool is not None else make_provider(settings)

    def _route_requested(self, run_request: pb.AgentRunRequest) -> ModelConfig:
        requested = run_request.requested_model.model_id or run_request.model_details.model_id
        model = find_model(self.config, requested)
        if model is None:
            names = ", ".join(self.config.model_names())
            raise TurnError(
                "invalid_argument",
                f"Model {requested!r} is not configured in cursor-byok. Configured models: {names}",
                title="Unknown model",
                error=BAD_MODEL_NAME,
            )
        return model

    def route(self, run_request: pb.AgentRunRequest) -> ModelConfig:
        """The configured model: the one Cursor asked for, or `subagent_model` for child runs."""
        if run_request.subagent_type_name and self.config.subagent_model:
            model = find_model(self.config, self.config.subagent_model)
            if model is not None:
                return model
        return self._route_requested(run_request)

    async def run(self, turn: Turn) -> None:
        instruction = turn.instruction
        kind = instruction.kind
        if kind == actions.UNSUPPORTED:
            raise TurnError(
                "unimplemented",
                instruction.error_text(),
                title="Action not supported by cursor-byok",
                error=CUSTOM_MESSAGE,
            )
        if kind != actions.MESSAGE and kind != actions.RESUME:
            turn.transcript.user_message = None  # no agent turn of its own in the checkpoint
        if kind == actions.NOTHING:
            log.info(
                "turn %s: %s: nothing to do (%s)",
                turn.request_id,
                instruction.action,
                instruction.reason,
            )
            return
        if kind == actions.CANCEL_SUBAGENT:
            stopped = subagents.cancel(instruction.subagent_id)
            log.info(
                "turn %s: cancel subagent %s: %s",
                turn.request_id,
                instruction.subagent_id,
                "stopped" if stopped else "not running here",
            )
            return
        if kind == actions.SHELL:
            context = await prompts.request_context(turn.run_request, turn.blob)
            mode = turn.mode or prompts.AGENT

            def make_ctx(call_id: str, model_call_id: str) -> _ToolContext:
                return _ToolContext(
                    turn, _Call(call_id, "Shell", None), model_call_id, mode, context
                )

            await user_shell.run(turn, instruction.shell_command, make_ctx)
            return
        model = self.route(turn.run_request)
        turn.model = model.name
        mode = turn.mode or prompts.AGENT
        context = await prompts.request_context(turn.run_request, turn.blob)
        by_name, specs, system = self._toolset(turn, mode, context)
        native_search = self._native_search(turn, context)
        turn.transcript.context_window = model.context_window
        summarize = kind == actions.SUMMARIZE
        resumed: dict | None = None
        if summarize:
            turn.transcript.user_message = None  # /summarize adds no user turn
        elif kind == actions.RESUME:
            turn.transcript.user_message = None  # the resumed turn's steps are already shown
            resumed = pending_batch(turn.run_request.conversation_state)
            if resumed is None and not _awaits_answer(turn.transcript.messages()):
                log.info("turn %s: resume with nothing pending", turn.request_id)
                return
        else:
            if instruction.todos:  # Build: the plan's todos become the conversation's
                turn.transcript.todos[:] = instruction.todos
            if instruction.completions:  # background subagents: their Task cards end
                turn.transcript.subagent_runs.update(
                    actions.finished_subagent_runs(
                        turn.run_request.conversation_state, instruction.completions
                    )
                )
            turn.transcript.append(
                {
                    "role": "user",
                    "content": prompts.user_content(
                        instruction.user_message, images=model.supports_images
                    ),
                }
            )
        provider = self._factory(model)
        provider_config = self.config.providers[model.provider]
        retries = provider_config.max_retries
        ttft = model.first_token_timeout or provider_config.first_token_timeout
        if self._wrap is not None:
            provider = self._wrap(provider, turn.request_id)
        if turn.run_request.subagent_type_name:
            subagents.register(turn)
            subagents.attach(turn)
        extra: list[Provider] = []
        compactor = self._compactor(turn, model, provider, extra)
        meter = TokenMeter()

        def build() -> ModelRequest:
            return ModelRequest(
                model=model.model,
                system=system,
                messages=turn.transcript.messages(),
                tools=specs,
                max_output_tokens=model.max_output_tokens,
                params=dict(model.params),
                cache_key=turn.run_request.conversation_id or None,
                reasoning=model.thinking,
                web_search=native_search,
            )

        base_used = turn.run_request.conversation_state.token_details.used_tokens
        meter.seed(base_used, request_bytes(build()))
        try:
            if summarize:
                await summarize_conversation(turn, compactor, meter)
                self._account(turn, meter, build(), mode, context, by_name)
                return
            if resumed is not None:
                mode, by_name, specs, system = await self._rerun_batch(
                    turn, resumed, by_name, mode, context, specs, system
                )
            for _ in range(self.config.max_steps):
                turn.step_started()
                step, model_call_id = await self._call(
                    turn, provider, build, compactor, meter, by_name, retries, ttft, mode, context
                )
                if not step.calls:
                    turn.step_completed()
                    if step.reason == "pause_turn":  # a long server-side search: go on
                        continue
                    if step.reason == "length":
                        turn.text("\n\n_(The model stopped at its output token limit.)_")
                    return
                await turn.publish_checkpoint(pending=step.message)
                mode, by_name, specs, system = await self._settle_batch(
                    turn,
                    step.message,
                    step.calls,
                    model_call_id,
                    mode,
                    context,
                    (by_name, specs, system),
                    account=lambda m, tools: self._account(turn, meter, build(), m, context, tools),
                )
                turn.step_completed()
            turn.text(
                f"\n\n_Stopped after {self.config.max_steps} steps (the max_steps limit in the "
                "cursor-byok config). Send a message to continue._"
            )
        finally:
            if turn.run_request.subagent_type_name:
                subagents.unregister(turn)
            if self._owns_provider:
                await provider.aclose()
                for other in extra:
                    await other.aclose()

    def _compactor(
        self, turn: Turn, model: ModelConfig, provider: Provider, extra: list[Provider]
    ) -> Compactor:
        """The turn's compactor; summaries come from `compaction_model` when one is set."""
        summary_model = model
        summary_provider = provider
        if model.compaction_model and model.compaction_model != model.name:
            other = find_model(self.config, model.compaction_model)
            try:
                made = self._factory(other) if other is not None else None
            except TurnError as exc:  # e.g. its key is missing: summarise with the main model
                log.warning("compaction_model %s unusable: %s", model.compaction_model, exc)
                made = None
            if other is not None and made is not None:
                summary_model = other
                summary_provider = made
                if self._wrap is not None:
                    summary_provider = self._wrap(summary_provider, turn.request_id)
                extra.append(summary_provider)
        provider_config = self.config.providers[summary_model.provider]
        return Compactor(
            SummaryModel(
                provider=summary_provider,
                model=summary_model.model,
                context_window=summary_model.context_window,
                max_retries=provider_config.max_retries,
                first_token_timeout=summary_model.first_token_timeout
                or provider_config.first_token_timeout,
            ),
            context_window=model.context_window,
            compact_at=model.compact_at,
        )

    async def _call(
        self,
        turn: Turn,
        provider: Provider,
        build: Callable[[], ModelRequest],
        compactor: Compactor,
        meter: TokenMeter,
        tools: dict[str, Tool],
        retries: int,
        ttft: float | None,
        mode: int,
        context: pb.RequestContext,
    ) -> tuple[_StepOutput, str]:
        """One model call, compacting first when the prompt nears the window and once more
        (then retrying once) when the provider reports a context overflow."""
        request = build()
        size = request_bytes(request)
        if compactor.needed(meter.estimate(size)):
            try:
                await compactor.compact(turn, reason="threshold", bytes_per_token=1 / meter.ratio)
            except CompactionFailed as exc:
                log.warning("turn %s: compaction skipped: %s", turn.request_id, exc)
            else:
                meter.reset_report()
                self._account(turn, meter, build(), mode, context, tools)
                await turn.publish_checkpoint()
                request = build()
                size = request_bytes(request)
                compactor.compacted(meter.estimate(size))
        overflowed = False
        while True:
            self._account(turn, meter, request, mode, context, tools)
            model_call_id = str(uuid.uuid4())
            try:
                step = await self._model_call(
                    turn, provider, request, tools, model_call_id, retries, ttft
                )
            except _Overflow as exc:
                if overflowed:
                    raise too_large(
                        f"The conversation still exceeds the model's context window after "
                        f"compaction: {exc}"
                    ) from None
                overflowed = True
                log.info("turn %s: context overflow, compacting: %s", turn.request_id, exc)
                try:
                    await compactor.compact(
                        turn,
                        reason="context_length_exceeded",
                        bytes_per_token=1 / meter.ratio,
                        keep_share=KEEP_SHARE / 2,  # the real window is smaller than configured
                    )
                except CompactionFailed as failed:
                    raise too_large(f"{exc}; compaction was not possible: {failed}") from None
                meter.reset_report()
                self._account(turn, meter, build(), mode, context, tools)
                await turn.publish_checkpoint()
                request = build()
                size = request_bytes(request)
                compactor.compacted(meter.estimate(size))
                continue
            turn.transcript.append(step.message)
            if step.usage is not None:
                meter.observe(
                    size,
                    step.usage.input_tokens,
                    step.usage.output_tokens,
                    answer_bytes=json_bytes(step.message),
                )
            self._account(turn, meter, build(), mode, context, tools)
            return step, model_call_id

    def _account(
        self,
        turn: Turn,
        meter: TokenMeter,
        request: ModelRequest,
        mode: int,
        context: pb.RequestContext,
        tools: dict[str, Tool],
    ) -> None:
        """Context meter for the next checkpoint: tokens in use and their categories."""
        size = request_bytes(request)
        turn.transcript.used_tokens = meter.used(size)
        sizes: dict[str, int] = {}
        for category, text in prompts.prompt_parts(mode, context, [t.name for t in request.tools]):
            sizes[category] = sizes.get(category, 0) + len(text.encode())
        for spec in request.tools:
            tool = tools.get(spec.name)
            category = "mcp" if tool is not None and _is_mcp(tool) else "tools"
            sizes[category] = sizes.get(category, 0) + _tool_bytes(spec)
        for message in request.messages:
            category = "summarized_conversation" if is_summary(message) else "conversation"
            sizes[category] = sizes.get(category, 0) + json_bytes(message)
        turn.transcript.category_bytes = sizes

    async def _settle_batch(
        self,
        turn: Turn,
        message: dict,
        calls: list[_Call],
        model_call_id: str,
        mode: int,
        context: pb.RequestContext,
        toolset: tuple[dict[str, Tool], list[ToolSpec], str],
        account: Callable[[int, dict[str, Tool]], None] | None = None,
    ) -> tuple[int, dict[str, Tool], list[ToolSpec], str]:
        """Run one tool batch, append its results, switch mode if approved, update the context
        meter (`account`), publish the settled checkpoint."""
        by_name, specs, system = toolset
        turn.transcript.pending_message = message
        try:
            results, switched = await self._run_tools(turn, calls, model_call_id, mode, context)
        finally:
            turn.transcript.pending_message = None
        turn.transcript.append({"role": "tool", "content": results})
        if switched is not None and switched != mode:
            log.info("turn %s: mode %s → %s", turn.request_id, mode, switched)
            mode = turn.switch_mode(switched)
            by_name, specs, system = self._toolset(turn, mode, context)
        if account is not None:
            account(mode, by_name)
        await turn.publish_checkpoint()
        return mode, by_name, specs, system

    async def _rerun_batch(
        self,
        turn: Turn,
        message: dict,
        by_name: dict[str, Tool],
        mode: int,
        context: pb.RequestContext,
        specs: list[ToolSpec],
        system: str,
    ) -> tuple[int, dict[str, Tool], list[ToolSpec], str]:
        """Resume (protocol.md §10.4): the checkpoint's unsettled batch runs again, with new
        exec ids, before the next model call."""
        model_call_id = str(uuid.uuid4())
        calls = []
        for part in message.get("content") or []:
            if not isinstance(part, dict) or part.get("type") != "tool-call":
                continue
            name = str(part.get("toolName") or "")
            call = _Call(str(part.get("toolCallId") or uuid.uuid4()), name, by_name.get(name))
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
                call.started = True
                call.started_at_ms = int(time.time() * 1000)
                turn.update(
                    tool_call_started=pb.ToolCallStartedUpdate(
                        call_id=call.call_id,
                        tool_call=self._ui(call, call.args or {}),
                        model_call_id=model_call_id,
                    )
                )
        result = await self._settle_batch(
            turn, message, calls, model_call_id, mode, context, (by_name, specs, system)
        )
        turn.step_completed()
        return result

    def _native_search(self, turn: Turn, context: pb.RequestContext) -> bool:
        """The model searches the web itself (model `web_search = true`, client allows it)."""
        model = find_model(self.config, turn.model)
        allowed = context.HasField("web_search_enabled") and context.web_search_enabled
        return bool(model is not None and model.web_search and allowed)

    def _toolset(self, turn: Turn, mode: int, context: pb.RequestContext):
        """Tools by name, provider specs and system prompt for one mode.

        Tools are sorted by name so the tool list (the start of every provider's cached
        prefix) is byte-identical on every call of a conversation."""
        tools = sorted(
            tools_for(
                mode,
                turn.run_request,
                request_context=context,
                web_search=None if self._native_search(turn, context) else self.config.web_search,
                image_generation=self.config.image_generation,
            ),
            key=lambda t: t.name,
        )
        by_name = {tool.name: tool for tool in tools}
        specs = [ToolSpec(t.name, t.description, t.parameters) for t in tools]
        return by_name, specs, prompts.system_prompt(mode, context, list(by_name))

    # --- one model call ------------------------------------------------------------------

    async def _model_call(
        self,
        turn: Turn,
        provider: Provider,
        request: ModelRequest,
        tools: dict[str, Tool],
        model_call_id: str,
        retries: int,
        first_token_timeout: float | None = None,
    ) -> _StepOutput:
        calls: dict[str, _Call] = {}
        order: list[str] = []
        server_calls: dict[str, pb.ToolCall] = {}  # provider-run searches awaiting results
        thinking_since: float | None = None
        last_usage: Usage | None = None
        call: _Call | None
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
                provider,
                request,
                max_retries=retries,
                on_retry=on_retry,
                first_token_timeout=first_token_timeout,
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
                        call = _Call(call_id, name, tools.get(name))
                        calls[call_id] = call
                        order.append(call_id)
                        turn.update(
                            partial_tool_call=pb.PartialToolCallUpdate(
                                call_id=call_id,
                                tool_call=self._ui(call, {}),
                                model_call_id=model_call_id,
                            )
                        )
                    case ToolCallArgsDelta(call_id, fragment):
                        call = calls.get(call_id)
                        if call is not None:
                            turn.update(
                                partial_tool_call=pb.PartialToolCallUpdate(
                                    call_id=call_id,
                                    tool_call=self._ui(call, {}),
                                    args_text_delta=fragment,
                                    model_call_id=model_call_id,
                                )
                            )
                    case ToolCallEnd(call_id, name, args, _raw, error):
                        end_thinking()
                        call = calls.get(call_id)
                        if call is None:
                            call = _Call(call_id, name, tools.get(name))
                            calls[call_id] = call
                            order.append(call_id)
                        call.args, call.error = args, error
                        if call.tool is None:
                            call.error = (
                                f"Tool {name!r} is not available in this mode. "
                                f"Available tools: {', '.join(tools)}"
                            )
                        if call.error is None:
                            if isinstance(call.tool, TaskTool):  # in the staged checkpoint too
                                turn.transcript.subagent_runs[call_id] = running_state(
                                    call_id, args or {}
                                )
                            call.started = True
                            call.started_at_ms = int(time.time() * 1000)
                            turn.update(
                                tool_call_started=pb.ToolCallStartedUpdate(
                                    call_id=call_id,
                                    tool_call=self._ui(call, args or {}),
                                    model_call_id=model_call_id,
                                )
                            )
                    case ServerToolCall(call_id, _name, args):
                        end_thinking()
                        server_calls[call_id] = _server_search_call(call_id, args)
                        turn.update(
                            tool_call_started=pb.ToolCallStartedUpdate(
                                call_id=call_id,
                                tool_call=server_calls[call_id],
                                model_call_id=model_call_id,
                            )
                        )
                    case ServerToolResult(call_id, _name, references, error):
                        ui = server_calls.pop(call_id, None) or _server_search_call(call_id, {})
                        result = ui.web_search_tool_call.result
                        if error is not None:
                            result.error.error = f"web search failed: {error}"
                        else:
                            result.success.SetInParent()
                            for title, url in references:
                                result.success.references.add(title=title, url=url)
                        ui.completed_at_ms = int(time.time() * 1000)
                        turn.update(
                            tool_call_completed=pb.ToolCallCompletedUpdate(
                                call_id=call_id, tool_call=ui, model_call_id=model_call_id
                            )
                        )
                    case Usage() as usage:
                        last_usage = usage
                        turn.usage.add(
                            input_tokens=usage.input_tokens,
                            output_tokens=usage.output_tokens,
                            cache_read_tokens=usage.cache_read_tokens,
                            cache_write_tokens=usage.cache_write_tokens,
                            reasoning_tokens=usage.reasoning_tokens,
                        )
                        if usage.input_tokens is not None:
                            turn.transcript.used_tokens = usage.input_tokens + (
                                usage.output_tokens or 0
                            )
                        if usage.output_tokens:
                            turn.update(token_delta=pb.TokenDeltaUpdate(tokens=usage.output_tokens))
                    case Finish(reason, message):
                        end_thinking()
                        if reason == "context_length" and not order and not shown:
                            raise _Overflow(None, "the model stopped: context window exceeded")
                        return _StepOutput(message, [calls[c] for c in order], reason, last_usage)
        except ProviderError as exc:
            if exc.kind == "context_length" and not shown:
                raise _Overflow(exc, str(exc)) from None
            raise provider_turn_error(exc) from None
        raise TurnError(
            "unavailable",
            "The provider stream ended without a final event.",
            title=_TITLES["protocol"],
            error=PROVIDER_ERROR,
        )

    @staticmethod
    def _ui(call: _Call, args: dict) -> pb.ToolCall:
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

    # --- tools ---------------------------------------------------------------------------

    async def _run_tools(
        self, turn: Turn, calls: list[_Call], model_call_id: str, mode: int, context
    ) -> tuple[list[dict], int | None]:
        """Execute one batch: read-only calls concurrently, mutating calls one at a time in
        call order (each waits for everything the model asked for before it)."""
        outcomes: dict[str, ToolOutcome | str] = {}
        running: list[asyncio.Task] = []

        async def run_one(call: _Call) -> None:
            outcomes[call.call_id] = await self._run_call(turn, call, model_call_id, mode, context)

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
        results = []
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
        self, turn: Turn, call: _Call, model_call_id: str, mode: int, context
    ) -> ToolOutcome:
        assert call.tool is not None
        ctx = _ToolContext(turn, call, model_call_id, mode, context)
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
            if isinstance(path, str) and path not in turn.transcript.read_paths:
                turn.transcript.read_paths.append(path)
        return outcome


def _server_search_call(call_id: str, args: dict) -> pb.ToolCall:
    """The WebSearch card of a search the provider ran itself."""
    query = args.get("query") if isinstance(args, dict) else None
    search = pb.WebSearchArgs(search_term=str(query or ""), tool_call_id=call_id)
    return pb.ToolCall(
        web_search_tool_call=pb.WebSearchToolCall(args=search),
        tool_call_id=call_id,
        started_at_ms=int(time.time() * 1000),
    )


def _is_mcp(tool: Tool) -> bool:
    """MCP tools count as "MCP & dynamic tools" on Cursor's meter."""
    return type(tool).__module__.endswith(".mcp")


def provider_turn_error(exc: ProviderError) -> TurnError:
    """A provider failure as the error Cursor shows: title, provider's message, retryable."""
    title = _TITLES.get(exc.kind, "Provider error")
    if exc.status:
        title = f"{title} (HTTP {exc.status})"
    if exc.kind == "context_length":
        return TurnError("invalid_argument", exc.message, title=title, error=CUSTOM_MESSAGE)
    return TurnError(
        "unavailable",
        f"{exc.provider}: {exc.message}" if exc.provider else exc.message,
        title=title,
        error=PROVIDER_ERROR,
        retryable=exc.retryable,
    )


def pending_batch(state: pb.ConversationStateStructure) -> dict | None:
    """The unsettled assistant message of a checkpoint (§10.4), if it has tool calls."""
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
            return message
    return None


def _awaits_answer(messages: list[dict]) -> bool:
    """The history ends with a user message or tool results the model has not answered."""
    return bool(messages) and messages[-1].get("role") in ("user", "tool")
