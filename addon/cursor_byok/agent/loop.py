"""The agent loop: the user's model, streaming, calling Cursor's own tools through the turn.

`ProviderAgent` is the orchestrator. It reads what the run asks for (a message, Plan → Build, a
resume, /summarize, the user's own shell command, …), picks the configured model and provider,
and hands the model's part to the phases, one module each:

- `toolset`     what the model is offered in a mode (tools, system prompt);
- `steps`       the step loop: compaction around each call, mode switches, `max_steps`;
- `model_call`  one streamed call, shown in Cursor as it arrives;
- `tool_batch`  the tool calls of one answer, run on the client, results recorded;
- `prompt_size` what a request weighs, for compaction and Cursor's context meter;
- `errors`      how a failure ends the turn in Cursor.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable
from collections.abc import Callable

from cursor_byok.agent import context as prompts
from cursor_byok.agent import subagents
from cursor_byok.agent import user_shell
from cursor_byok.agent.chain import Chain
from cursor_byok.agent.compaction import Compactor
from cursor_byok.agent.compaction import SummaryModel
from cursor_byok.agent.error_details import CUSTOM_MESSAGE
from cursor_byok.agent.error_details import configuration_error
from cursor_byok.agent.error_details import unknown_model
from cursor_byok.agent.error_details import unsupported_action
from cursor_byok.agent.images import image_parts
from cursor_byok.agent.model_call import Caller
from cursor_byok.agent.spend import turn_budget
from cursor_byok.agent.steps import StepLoop
from cursor_byok.agent.steps import call_metadata
from cursor_byok.agent.tokens import TokenMeter
from cursor_byok.agent.tool_batch import CallContext
from cursor_byok.agent.tool_batch import PendingCall
from cursor_byok.agent.tool_batch import awaits_answer
from cursor_byok.agent.tool_batch import pending_batch
from cursor_byok.agent.toolset import native_search
from cursor_byok.agent.toolset import toolset_for
from cursor_byok.agent.turn import Turn
from cursor_byok.agent.turn import TurnError
from cursor_byok.config import Config
from cursor_byok.config import ConfigError
from cursor_byok.config import ModelConfig
from cursor_byok.config.routes import compaction_model
from cursor_byok.config.routes import model_for_run
from cursor_byok.conversation.history_format import AssistantHistoryMessage
from cursor_byok.conversation.history_format import UserPart
from cursor_byok.cursor import actions
from cursor_byok.cursor.actions import Instruction
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.providers import Provider
from cursor_byok.providers import make_provider
from cursor_byok.providers.keys import KeyPools
from cursor_byok.providers.pool import ProviderPool
from cursor_byok.tools import hooks

log = logging.getLogger(__name__)

__all__ = ["CUSTOM_MESSAGE", "ProviderAgent", "ProviderFactory"]

ProviderFactory = Callable[[ModelConfig], Provider]


class ProviderAgent:
    """Runs turns against the configured provider of the model Cursor asked for."""

    name = "provider"

    def __init__(
        self,
        config: Config,
        provider_factory: ProviderFactory | None = None,
        wrap_provider: Callable[[Provider, str], Provider] | None = None,
        pool: ProviderPool | None = None,
        keys: KeyPools | None = None,
    ) -> None:
        self.config = config
        self._keys = keys  # key pools' state, kept across turns (agent/chain.py)
        self._factory = provider_factory or self._make_provider
        self._pool = pool  # shared provider clients; without one, each turn owns its client
        self._owns_provider = pool is None or provider_factory is not None
        self._wrap = wrap_provider  # e.g. the capture recorder, given the request id

    def _make_provider(self, model: ModelConfig) -> Provider:
        try:
            return self._build(model, None)
        except ConfigError as exc:
            raise configuration_error(exc) from None

    def _build(self, model: ModelConfig, api_key: str | None) -> Provider:
        """A client for `model`'s provider (with `api_key`, one key of its pool); raises
        ConfigError for a key that cannot be read."""
        settings = self.config.providers[model.provider].settings(api_key)
        return self._pool.get(settings) if self._pool is not None else make_provider(settings)

    def _chain(
        self, turn: Turn, model: ModelConfig, provider: Provider, extra: list[Provider]
    ) -> Chain:
        """Where the turn's calls may go: `model` (its key pool), then its fallbacks."""

        def make(other: ModelConfig, api_key: str | None) -> Provider:
            if other is model and api_key is None:
                return provider
            made = self._factory(other) if api_key is None else self._build(other, api_key)
            if self._wrap is not None:
                made = self._wrap(made, turn.request_id)
            extra.append(made)
            return made

        return Chain(self.config, model, make, self._keys)

    def route(self, run_request: pb.AgentRunRequest) -> ModelConfig:
        """The configured model (config/routes.py): the BYOK model Cursor's picker named, the
        `[routes]` entry of the run's mode when it named none of ours, the subagent route for
        child runs."""
        requested = run_request.requested_model.model_id or run_request.model_details.model_id
        model = model_for_run(
            self.config,
            requested,
            actions.resolve(run_request).mode,
            subagent=bool(run_request.subagent_type_name),
        )
        if model is None:
            raise unknown_model(requested, self.config.model_names())
        return model

    async def run(self, turn: Turn) -> None:
        instruction = turn.instruction
        kind = instruction.kind
        if kind == actions.UNSUPPORTED:
            raise unsupported_action(instruction.error_text())
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
            await self._run_user_shell(turn, instruction)
            return
        await self._run_model(turn, instruction)

    async def _run_user_shell(self, turn: Turn, instruction: Instruction) -> None:
        """The user's own command from the chat: run like the Shell tool, no model call."""
        context = await prompts.request_context(
            turn.run_request, turn.blob, lambda: prompts.client_context(turn)
        )
        mode = turn.mode or prompts.AGENT

        def make_ctx(call_id: str, model_call_id: str) -> CallContext:
            return CallContext(
                turn, PendingCall(call_id, "Shell", None), model_call_id, mode, context
            )

        await user_shell.run(turn, instruction.shell_command, make_ctx)

    async def _run_model(self, turn: Turn, instruction: Instruction) -> None:
        """A turn the model answers: set the conversation up for what the run asks, then run
        the steps (or only the compaction, for /summarize), and always release the providers."""
        kind = instruction.kind
        model = self.route(turn.run_request)
        turn.status.serve(model.name)
        budget = await turn_budget(turn, self.config)  # a cap reached: no model call at all
        # The provider's model behind the BYOK name (InteractionUpdate.routed_model, [inf]).
        turn.update(routed_model=pb.RoutedModelUpdate(display_name=routed_name(model)))
        mode = turn.mode or prompts.AGENT
        context = await prompts.request_context(
            turn.run_request, turn.blob, lambda: prompts.client_context(turn)
        )
        toolset = toolset_for(self.config, turn, mode, context)
        search = native_search(self.config, turn, context)
        turn.transcript.context_window = model.context_window
        go, resumed = _conversation_for(turn, kind)
        if not go:
            return
        extra: list[Provider] = []
        images_for = self._images_for(turn, model, extra)
        try:
            if kind not in (actions.SUMMARIZE, actions.RESUME):
                await _add_user_turn(turn, instruction, images_for)
            provider = self._factory(model)
        except BaseException:
            await self._release(extra)
            raise
        if self._wrap is not None:
            provider = self._wrap(provider, turn.request_id)
        child = bool(turn.run_request.subagent_type_name or turn.options.parent_tool_call_id)
        try:
            if child:
                subagents.register(turn)
                subagents.attach(turn, turn.options.parent_tool_call_id or None)
            steps = StepLoop(
                turn=turn,
                config=self.config,
                model=model,
                caller=self._caller(turn, model, provider, extra),
                context=context,
                toolset=toolset,
                native_search=search,
                compactor=self._compactor(turn, model, provider, extra, context),
                meter=TokenMeter(),
                budget=budget,
            )
            await _run_steps(turn, steps, kind, resumed, images_for, self.config.max_steps)
        finally:
            if child:
                subagents.unregister(turn)
            if self._owns_provider:
                await provider.aclose()
            await self._release(extra)

    def _images_for(
        self, turn: Turn, model: ModelConfig, extra: list[Provider]
    ) -> Callable[[pb.UserMessage], Awaitable[list[UserPart]]]:
        """What the model gets for a message's images (`images.py`; a vision model's provider
        joins `extra`)."""

        async def images_for(message: pb.UserMessage) -> list[UserPart]:
            return await image_parts(
                turn,
                self.config,
                model,
                message,
                lambda other: self._extra_provider(other, turn, extra),
            )

        return images_for

    def _caller(
        self, turn: Turn, model: ModelConfig, provider: Provider, extra: list[Provider]
    ) -> Caller:
        """Who answers the turn's calls: `provider` with its retry budget and first-token
        deadline, and the model's key pool and fallbacks (`_chain`)."""
        provider_config = self.config.providers[model.provider]
        return Caller(
            provider,
            provider_config.max_retries,
            model.first_token_timeout or provider_config.first_token_timeout,
            self._chain(turn, model, provider, extra),
        )

    def _extra_provider(self, model: ModelConfig, turn: Turn, extra: list[Provider]) -> Provider:
        """A provider for a helper model of the turn (the vision model), released with the
        turn's own."""
        provider = self._factory(model)
        if self._wrap is not None:
            provider = self._wrap(provider, turn.request_id)
        extra.append(provider)
        return provider

    async def _release(self, extra: list[Provider]) -> None:
        if self._owns_provider:
            for other in extra:
                await other.aclose()
        extra.clear()

    def _compactor(
        self,
        turn: Turn,
        model: ModelConfig,
        provider: Provider,
        extra: list[Provider],
        context: pb.RequestContext,
    ) -> Compactor:
        """The turn's compactor; summaries come from `compaction_model` when one is set, and
        it fires the preCompact hooks the request context configures."""
        summary_model = model
        summary_provider = provider
        other = compaction_model(self.config, model)
        if other is not None and other.name != model.name:
            try:
                made: Provider | None = self._factory(other)
            except TurnError as exc:  # e.g. its key is missing: summarise with the main model
                log.warning("compaction model %s unusable: %s", other.name, exc)
                made = None
            if made is not None:
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
                metadata=call_metadata(turn, "compaction"),
            ),
            context_window=model.context_window,
            compact_at=model.compact_at,
            hook_steps=hooks.configured_steps(context),
        )


def _conversation_for(turn: Turn, kind: str) -> tuple[bool, AssistantHistoryMessage | None]:
    """Whether the model has anything to answer, and the tool batch a resume finishes: neither
    /summarize nor a resume adds a user turn of its own to the checkpoint."""
    if kind == actions.SUMMARIZE:
        turn.transcript.user_message = None  # /summarize adds no user turn
        return True, None
    if kind != actions.RESUME:
        return True, None
    turn.transcript.user_message = None  # the resumed turn's steps are already shown
    resumed = pending_batch(turn.run_request.conversation_state)
    queued = turn.messages.before()
    if resumed is None and not queued and not awaits_answer(turn.transcript.messages()):
        log.info("turn %s: resume with nothing pending", turn.request_id)
        return False, None
    return True, resumed


async def _run_steps(
    turn: Turn,
    steps: StepLoop,
    kind: str,
    resumed: AssistantHistoryMessage | None,
    images_for: Callable[[pb.UserMessage], Awaitable[list[UserPart]]],
    max_steps: int,
) -> None:
    """The model's part: only the compaction for /summarize; else a resumed batch first, the
    messages queued while the turn was down (once each), then the step loop."""
    steps.seed_meter()
    if kind == actions.SUMMARIZE:
        await steps.summarize()
        return
    if resumed is not None:
        await steps.resume(resumed)
    if kind == actions.RESUME:  # messages queued while the turn was down: once each
        for message in turn.messages.before():
            await prompts.add_user_message(turn, message, images=await images_for(message))
    await steps.run(max_steps)


async def _add_user_turn(
    turn: Turn,
    instruction: Instruction,
    images_for: Callable[[pb.UserMessage], Awaitable[list[UserPart]]],
) -> None:
    """A message (or Build, or background completions): what it brings into the conversation,
    then the user message the model answers, with the context Cursor uploaded for it (blobs
    `UploadConversationBlobs` put in our store; else pre-fetched or from the client's KV) and
    what the model gets for its images (`images_for`, `images.py`)."""
    if instruction.todos:  # Build: the plan's todos become the conversation's
        turn.transcript.set_todos(instruction.todos)
    if instruction.completions:  # background subagents: their Task cards end
        turn.transcript.set_subagent_runs(
            actions.finished_subagent_runs(
                turn.run_request.conversation_state,
                instruction.completions,
                now_ms=int(time.time() * 1000),
            )
        )

    for queued in turn.messages.before(instruction.user_message):
        await prompts.add_user_message(turn, queued, images=await images_for(queued))
    message = instruction.user_message
    await prompts.add_user_message(turn, message, images=await images_for(message))


def routed_name(model: ModelConfig) -> str:
    """What the client shows as the model a turn runs on: the provider's model id and the
    provider it is reached through (`claude-sonnet-4-5 via anthropic`)."""
    return f"{model.model or model.name} via {model.provider}"
