"""The step loop of one model turn, and the limits that end it.

A step is one model call and, when the answer has tool calls, their batch. Steps repeat until the
model answers without tools, or `max_steps` ends the turn with a note saying so (a note, not an
error: the conversation is intact and a message continues it). Around every call the context is
kept inside the window: compaction first when the prompt nears `compact_at` of it, and once more,
with a smaller verbatim tail, when the provider reports an overflow anyway (then the call is
retried once; a second overflow is Cursor's "Context Too Large After Compaction").

Checkpoints go out around each batch (staged while it runs, settled once every result is in) and
after each compaction, each with the context meter measured for it, so the conversation survives a
cancel or a crash at any point.
"""

from __future__ import annotations

import functools
import logging
import uuid
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import cast

from cursor_byok.agent.attended import attended
from cursor_byok.agent.compaction import KEEP_SHARE
from cursor_byok.agent.compaction import CompactionFailed
from cursor_byok.agent.compaction import Compactor
from cursor_byok.agent.compaction import summarize_conversation
from cursor_byok.agent.context import add_user_message
from cursor_byok.agent.error_details import ContextOverflow
from cursor_byok.agent.error_details import too_large
from cursor_byok.agent.model_call import Answer
from cursor_byok.agent.model_call import Caller
from cursor_byok.agent.model_call import stream_answer
from cursor_byok.agent.prompt_size import Measured
from cursor_byok.agent.prompt_size import grown
from cursor_byok.agent.prompt_size import measure
from cursor_byok.agent.prompt_size import request_bytes
from cursor_byok.agent.prompt_size import unchanged
from cursor_byok.agent.spend import Budget
from cursor_byok.agent.tokens import TokenMeter
from cursor_byok.agent.tool_batch import PendingCall
from cursor_byok.agent.tool_batch import restart_batch
from cursor_byok.agent.tool_batch import settle_batch
from cursor_byok.agent.toolset import Toolset
from cursor_byok.agent.toolset import toolset_for
from cursor_byok.agent.turn import Turn
from cursor_byok.config import Config
from cursor_byok.config import ModelConfig
from cursor_byok.config.routes import MODE_KEYS
from cursor_byok.conversation.history_format import AssistantHistoryMessage
from cursor_byok.cursor.checkpoint import json_size
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.providers import ModelRequest

log = logging.getLogger(__name__)

LENGTH_NOTE = "\n\n_(The model stopped at its output token limit.)_"


def max_steps_note(max_steps: int) -> str:
    """What the user reads when the turn used up its steps."""
    return (
        f"\n\n_Stopped after {max_steps} steps (the max_steps limit in the "
        "cursor-byok config). Send a message to continue._"
    )


def call_metadata(turn: Turn, kind: str) -> dict[str, str]:
    """Who a model call is for, for a team gateway's records: the conversation, Cursor's mode
    and the kind of call (`agent`, `subagent`, `compaction`; titles say `title`)."""
    subagent = turn.run_request.subagent_type_name or turn.options.parent_tool_call_id
    if kind == "agent" and subagent:
        kind = "subagent"
    metadata = {"kind": kind, "mode": MODE_KEYS.get(turn.mode, "other")}
    if turn.run_request.conversation_id:
        metadata["conversation"] = turn.run_request.conversation_id
    return metadata


@dataclass
class StepLoop:
    """One model turn's steps: what every call of the turn sends, and the loop that sends them.

    `toolset` changes when the user approves a mode switch; everything else is fixed for the
    turn."""

    turn: Turn
    config: Config
    model: ModelConfig
    caller: Caller
    context: pb.RequestContext
    toolset: Toolset
    native_search: bool
    compactor: Compactor
    meter: TokenMeter
    budget: Budget | None = None  # spending caps: checked after each step (agent/spend.py)
    # the request measured last, and its sizes (the next measure of the same request reuses them)
    _measured: tuple[ModelRequest, Measured] | None = field(default=None, init=False, repr=False)

    def request(self) -> ModelRequest:
        """The next call's request: the transcript as of now, behind a byte-stable prefix."""
        model = self.model
        messages = self.turn.transcript.messages()
        carry = self.turn.carry
        if carry is not None and carry.partial:  # a dead attempt's answer, continued
            messages = messages + carry.prompt()
        return ModelRequest(
            model=model.model,
            system=self.toolset.system,
            # history_format messages; `ModelRequest` (providers/base.py) types them as dicts
            messages=cast("list[dict[str, Any]]", messages),
            tools=self.toolset.specs,
            max_output_tokens=model.max_output_tokens,
            params=dict(model.params),
            cache_key=self.turn.run_request.conversation_id or None,
            reasoning=model.thinking,
            web_search=self.native_search,
            metadata=call_metadata(self.turn, "agent"),
        )

    def seed_meter(self) -> None:
        """Start the token meter from the meter of the checkpoint the turn continues."""
        used = self.turn.run_request.conversation_state.token_details.used_tokens
        self.meter.seed(used, self._measure(self.request())[0])

    async def run(self, max_steps: int) -> None:
        """Steps until the model answers without tools, or `max_steps` were used."""
        turn = self.turn
        for _ in range(max_steps):
            step = turn.step_started()
            await self._steered(step)
            answer, model_call_id = await self._call()
            if not answer.calls:
                turn.step_completed()
                if answer.reason == "pause_turn":  # a long server-side search: go on
                    continue
                if turn.messages.pending:  # the user wrote meanwhile: one more call for it
                    continue
                if answer.reason == "length":
                    turn.text(LENGTH_NOTE)
                return
            await turn.publish_checkpoint(pending=answer.message)
            await self._settle(answer.message, answer.calls, model_call_id, account=True)
            turn.step_completed()
            if self.budget is not None:  # a cap reached: this step is complete, stop here
                self.budget.check(turn)
        turn.text(max_steps_note(max_steps))

    async def resume(self, message: AssistantHistoryMessage) -> None:
        """Resume (protocol.md §10.4): the checkpoint's unsettled batch runs again, with new
        exec ids, before the next model call."""
        calls, model_call_id = await restart_batch(self.turn, message, self.toolset.by_name)
        await self._settle(message, calls, model_call_id, account=False)
        self.turn.step_completed()

    async def summarize(self) -> None:
        """`/summarize`: compact now, then measure the meter for the closing checkpoints."""
        await summarize_conversation(self.turn, self.compactor, self.meter)
        self._account(self.request())

    # --- one step's parts -------------------------------------------------------------------

    async def _steered(self, step: int) -> None:
        """Messages the user sent while the model worked (agent/steering.py) join the
        conversation right before this step's model call, each once, confirmed delivered."""
        for injection in self.turn.messages.take(step):
            await add_user_message(
                self.turn, injection.message, inline_images=self.model.supports_images
            )

    async def _call(self) -> tuple[Answer, str]:
        """One model call, compacting first when the prompt nears the window and once more
        (then retrying once) when the provider reports a context overflow."""
        turn, meter, compactor = self.turn, self.meter, self.compactor
        request = self.request()
        first = self._measure(request)
        size = first[0]
        measured: Measured | None = first
        if compactor.needed(meter.estimate(size)):
            try:
                await compactor.compact(turn, reason="threshold", bytes_per_token=1 / meter.ratio)
            except CompactionFailed as exc:
                log.warning("turn %s: compaction skipped: %s", turn.request_id, exc)
            else:
                request, size = await self._compacted()
                measured = None
        overflowed = False
        while True:
            measured = self._account(request, measured)
            model_call_id = str(uuid.uuid4())
            try:
                answer = await attended(
                    turn,
                    functools.partial(
                        stream_answer,
                        turn,
                        self.caller,
                        request,
                        self.toolset.by_name,
                        model_call_id,
                    ),
                )
            except ContextOverflow as exc:
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
                request, size = await self._compacted()
                measured = None
                continue
            self._answered(request, size, measured, answer)
            return answer, model_call_id

    def _answered(self, sent: ModelRequest, size: int, measured: Measured, answer: Answer) -> None:
        """The answer joins the history; the meter learns from its usage report and measures
        the next request (`sent` and its size `measured` plus the answer, when that is all the
        next request adds: the history is not serialised again)."""
        turn = self.turn
        if turn.carry is not None and turn.carry.continuing:
            turn.carry.merge(answer.message)  # one message: the partial and the rest
        turn.transcript.append(answer.message)
        answer_bytes = json_size(answer.message)  # no copy of a long answer's JSON
        if answer.usage is not None:
            self.meter.observe(
                size,
                answer.usage.input_tokens,
                answer.usage.output_tokens,
                answer_bytes=answer_bytes,
            )
        following = self.request()
        self._account(following, grown(sent, measured, following, answer_bytes))

    async def _compacted(self) -> tuple[ModelRequest, int]:
        """After a compaction: the last usage report no longer describes the prompt; publish
        the rewritten checkpoint; the request to send now and its size."""
        self.meter.reset_report()
        self._account(self.request())
        await self.turn.publish_checkpoint()
        request = self.request()
        size = request_bytes(request)
        self.compactor.compacted(self.meter.estimate(size))
        return request, size

    async def _settle(
        self,
        message: AssistantHistoryMessage,
        calls: list[PendingCall],
        model_call_id: str,
        *,
        account: bool,
    ) -> None:
        """Run one tool batch, append its results, switch mode if approved, update the
        context meter (`account`), publish the settled checkpoint."""
        turn = self.turn
        mode = self.toolset.mode
        switched = await settle_batch(turn, message, calls, model_call_id, mode, self.context)
        # Measured with the tools and prompt the batch ran with (the next call measures the
        # new mode's): built before the switch, as it always was.
        request = self.request() if account else None
        if switched is not None and switched != mode:
            log.info("turn %s: mode %s → %s", turn.request_id, mode, switched)
            mode = turn.switch_mode(switched)
            self.toolset = toolset_for(self.config, turn, mode, self.context)
        if request is not None:
            self._account(request)
        await turn.publish_checkpoint()

    def _measure(self, request: ModelRequest) -> Measured:
        """`request`'s bytes, in total and by context-meter category (one pass; none when it
        is the request measured last, unchanged)."""
        last = self._measured
        if last is not None and unchanged(last[0], request):
            return last[1]
        measured = measure(request, self.toolset.mode, self.context, self.toolset.by_name)
        self._measured = (request, measured)
        return measured

    def _account(self, request: ModelRequest, measured: Measured | None = None) -> Measured:
        """Context meter for the next checkpoint: tokens in use and their categories
        (`measured`: `request` measured already, with the toolset in force now); the sizes."""
        if measured is None:
            measured = self._measure(request)
        transcript = self.turn.transcript
        transcript.used_tokens = self.meter.used(measured[0])
        transcript.category_bytes = measured[1]
        return measured
