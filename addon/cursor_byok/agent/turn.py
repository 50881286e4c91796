"""One agent turn from the transport's point of view: what an agent may do, and how a turn closes.

`Turn` is the seam between transport and agent. An agent (the scripted stand-in, or the real loop
over a provider) only calls `Turn` methods: emit UI updates, run execs on the client, read blobs,
append to the transcript. `run_turn` owns everything around it: loading history from the
checkpoint, context parts by KV GET, the close sequence (blob SETs acknowledged, `turn_ended`,
staged and settled checkpoints, end-stream), cancellation and errors Cursor can show.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Protocol

from cursor_byok.agent.history_restore import load_transcript
from cursor_byok.agent.steering import Steering
from cursor_byok.agent.tool_choice import ToolChoice
from cursor_byok.agent.turn_endings import TurnCancelled
from cursor_byok.agent.turn_endings import TurnError
from cursor_byok.agent.turn_endings import TurnFailed
from cursor_byok.agent.turn_endings import disk_full_error
from cursor_byok.conversation.history_format import AssistantHistoryMessage
from cursor_byok.conversation.text import TextParts
from cursor_byok.cursor.actions import Instruction
from cursor_byok.cursor.actions import resolve as resolve_action
from cursor_byok.cursor.checkpoint import Transcript
from cursor_byok.cursor.checkpoint import referenced_blobs
from cursor_byok.cursor.checkpoint import timeless
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.store.blobs import BlobStore
from cursor_byok.store.usage import record_turn
from cursor_byok.wire.blob_ids import BlobMismatch
from cursor_byok.wire.blob_ids import verify
from cursor_byok.wire.connect import EndStreamError

log = logging.getLogger(__name__)

ACK_TIMEOUT = 300.0  # longest wait for blob acknowledgements while the client is alive
# How long a model call may go on while no stream reads the run (the SDK's cancel, a dropped
# connection); then it is aborted and made again when the client reconnects (agent/attended.py).
# Under a second: a cancel stops the provider within one (issue 37); a client's streams reach the
# proxy on the same machine, so one that goes away was closed by the client, and a reconnect
# (a new attempt of the run) comes at once when one comes.
DETACHED_CALL_LIMIT = 0.75
CLIENT_SILENCE = 30.0  # the client counts as gone after this long without any message


@dataclass
class UsageTally:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    reported: set[str] = field(default_factory=set)
    # Characters of text and thinking shown since the provider last reported output tokens
    # (most report them at the end of a call): the live status's rate while a call streams.
    streaming_chars: int = 0

    def add(self, **counts: int | None) -> None:
        for name, value in counts.items():
            if value is not None:
                setattr(self, name, getattr(self, name) + value)
                self.reported.add(name)
        if counts.get("output_tokens") is not None:
            self.streaming_chars = 0

    def live_output_tokens(self) -> int:
        """Output tokens so far: those reported, and ~4 characters a token of what streamed
        since."""
        return self.output_tokens + self.streaming_chars // 4

    def turn_ended(self) -> pb.TurnEndedUpdate:
        update = pb.TurnEndedUpdate()
        for name in sorted(self.reported):
            if hasattr(update, name):
                setattr(update, name, getattr(self, name))
        return update


class RunChannel(Protocol):
    """What a turn needs from the run it serves; the proxy's shell implements it.

    The agent talks to its client only through this: it never sees attempts, streams or the
    transport that carries them."""

    turn: Turn | None  # the running turn, for the status display

    @property
    def request_id(self) -> str:
        """The name logs and captures use for the run."""
        ...

    def clock(self) -> float: ...

    @property
    def client_last_seen(self) -> float:
        """When the client last sent anything (heartbeats included), on `clock()`."""
        ...

    @property
    def finished(self) -> bool: ...

    @property
    def has_streams(self) -> bool: ...

    @property
    def detached_since(self) -> float | None:
        """Since when no stream reads the run (None while one does), on `clock()`."""
        ...

    def watch_streams(self) -> asyncio.Future[None]:
        """Completes the next time `detached_since` changes."""
        ...

    def emit(self, message: pb.AgentServerMessage) -> None: ...

    def finish(self, error: EndStreamError | None = None) -> None: ...

    async def exec(
        self,
        message: pb.ExecServerMessage,
        on_event: Callable[[pb.ExecClientMessage], None] | None = None,
    ) -> pb.ExecClientMessage: ...

    async def interact(self, query: pb.InteractionQuery) -> pb.InteractionResponse: ...

    async def kv(self, message: pb.KvServerMessage) -> pb.KvClientMessage: ...

    def open_kv(self, message: pb.KvServerMessage) -> tuple[Any, Awaitable[Any]]: ...

    # open_kv of a SetBlobArgs, without a protobuf message holding the blob
    def open_set_blob(self, blob_id: bytes, data: bytes) -> tuple[Any, Awaitable[Any]]: ...

    def describe_pending(self, keys: Sequence[Any]) -> str: ...

    def abort_pending(self) -> None: ...

    def interrupt(self, exc: BaseException) -> None: ...

    def take_interrupt(self) -> BaseException | None: ...


class Turn:
    """What an agent may do during one turn."""

    def __init__(
        self,
        live: RunChannel,
        run_request: pb.AgentRunRequest,
        blobs: BlobStore,
        transcript: Transcript,
        client_blobs: set[bytes],
    ) -> None:
        self.live = live
        self.run_request = run_request
        self.blobs = blobs
        self.transcript = transcript
        self.client_blobs = client_blobs  # ids the client is known to hold
        # ids of this turn's blobs on disk and acknowledged by the client: checkpoints name
        # them without making their bytes again (`Transcript.checkpoint(have=...)`)
        self.settled_blobs: set[bytes] = set()
        self.ack_timeout = ACK_TIMEOUT
        self.detached_call_limit = DETACHED_CALL_LIMIT
        self.tool_choice: ToolChoice | None = None  # the client's limits on the model's tools
        self.usage = UsageTally()
        self.started = time.monotonic()
        self._step_id = 0
        self._step_started: float | None = None
        # for the live status display
        self.model = run_request.requested_model.model_id or run_request.model_details.model_id
        self.fallback_from: str | None = None  # the model a fallback served for (agent/chain.py)
        self.current_tool: str | None = None  # the latest tool still running (or being written)
        self._running_tools: dict[str, str] = {}  # call id -> tool, in start order
        self.outcome: str | None = None
        self.ended: float | None = None  # monotonic time the turn ended (its rate freezes)
        self._mode: int | None = None
        self._instruction: Instruction | None = None
        self.mirror: Callable[[pb.InteractionUpdate], None] | None = None
        # the census: (kind, id) of an id nothing could resolve (a blob nobody has)
        self.on_unresolved: Callable[[str, str], None] | None = None
        # messages sent while the model answers (steering), and those queued for this turn
        self.steering = Steering(self.update, lambda: live.finished, live.request_id)
        self.queued: list[pb.UserMessage] = []
        self.parent_tool_call_id = ""  # a subagent's Task call in its parent (from headers)
        # What the UI was shown, folded into ConversationSteps for the checkpoint's turn blob.
        self._text = TextParts()
        self._thinking = TextParts()
        self._step_shapes: dict[bytes, pb.ConversationStep | bytes] = {}  # digest: see _add_step
        # A blob write to the data dir failed (a full disk): the turn keeps going to the next
        # checkpoint Cursor gets (it stores the blobs too), then ends with this error.
        self.disk_error: TurnError | None = None
        self.ending = False  # run_turn's closing checkpoints: they all go out, then the error
        live.turn = self

    @property
    def request_id(self) -> str:
        return self.live.request_id

    @property
    def user_message(self) -> pb.UserMessage:
        """The user message this run puts to the model (real or synthesised by the action)."""
        return self.instruction.user_message

    @property
    def instruction(self) -> Instruction:
        """What the run's ConversationAction asks for (agent/actions.py), resolved once."""
        if self._instruction is None:
            self._instruction = resolve_action(self.run_request)
        return self._instruction

    # --- UI updates --------------------------------------------------------------------------

    def emit(self, message: pb.AgentServerMessage) -> None:
        self.live.emit(message)

    def update(self, **variant) -> None:
        """Emit one `interaction_update` variant: `update(text_delta=pb.TextDeltaUpdate(...))`."""
        delta = variant.get("text_delta") or variant.get("thinking_delta")
        if delta is not None:
            self.usage.streaming_chars += len(delta.text)
        self._track_tools(variant)
        self._record_step(variant)
        self._send_update(variant)

    def _send_update(self, variant: dict) -> None:
        update = pb.InteractionUpdate(**variant)
        self.emit(pb.AgentServerMessage(interaction_update=update))
        if self.mirror is not None:  # a subagent's progress, shown on the parent's Task card
            self.mirror(update)

    def _track_tools(self, variant: dict) -> None:
        """Which tool the status shows: the latest one started and not completed (a batch runs
        several; the first to finish must not blank the column), or one whose arguments the
        model is still writing (`Name…`)."""
        running = self._running_tools
        if "tool_call_started" in variant:
            started = variant["tool_call_started"]
            running.pop(started.call_id, None)
            running[started.call_id] = started.tool_call.WhichOneof("tool") or "tool"
        elif "partial_tool_call" in variant:
            partial = variant["partial_tool_call"]
            if partial.call_id not in running:
                running[partial.call_id] = (partial.tool_call.WhichOneof("tool") or "tool") + "…"
        elif "tool_call_completed" in variant:
            running.pop(variant["tool_call_completed"].call_id, None)
        elif "step_completed" in variant or "turn_ended" in variant:
            for call_id in [c for c, tool in running.items() if tool.endswith("…")]:
                del running[call_id]  # written, never started (a refused call)
            if "turn_ended" in variant:
                self.ended = time.monotonic()  # the answer is complete; acks may follow
        else:
            return
        self.current_tool = next(reversed(running.values()), None)

    def _record_step(self, variant: dict) -> None:
        """Fold UI updates into the turn's steps: thinking, assistant text, completed tools."""
        if "thinking_delta" in variant:
            self._thinking.append(variant["thinking_delta"].text)
        elif "thinking_completed" in variant:
            self._flush_thinking(variant["thinking_completed"].thinking_duration_ms)
        elif "text_delta" in variant:
            self._flush_thinking()
            self._text.append(variant["text_delta"].text)
        elif "tool_call_completed" in variant:
            self.flush_steps()
            step = pb.ConversationStep(tool_call=variant["tool_call_completed"].tool_call)
            self._add_step(step)

    def _flush_thinking(self, duration_ms: int = 0) -> None:
        if self._thinking:
            step = pb.ConversationStep()  # filled in place: a message passed in is copied
            step.thinking_message.text = self._thinking.take()
            step.thinking_message.duration_ms = max(duration_ms, 0)
            self._add_step(step)

    def ui_mark(self) -> tuple[int, int]:
        """Where the thinking and text gathered for the next steps stand now (`ui_rewind`)."""
        return self._thinking.chars, self._text.chars

    def ui_rewind(self, mark: tuple[int, int]) -> None:
        """Forget the thinking and text shown since `mark`: an abandoned model call's, which
        the conversation (history and checkpoint steps) must not keep."""
        self._thinking.truncate(mark[0])
        self._text.truncate(mark[1])

    def flush_steps(self) -> None:
        """Close the thinking and text gathered so far into steps (before a checkpoint)."""
        self._flush_thinking()
        if self._text:
            step = pb.ConversationStep()
            step.assistant_message.text = self._text.take()
            self._add_step(step)

    def _add_step(self, step: pb.ConversationStep) -> None:
        """Add a step; one that differs from an earlier step of this turn only in timings
        (`checkpoint.timeless`) reuses that step's bytes.

        Steps are content-addressed blobs, so equal bytes are SET once. Without this, whether two
        such steps (the same thinking text in two model calls) are one blob or two would depend on
        whether their measured durations happen to be equal, and the turn's frames (how many
        blob SETs, hence every later KV id) on the clock: replay could not reproduce them.
        """
        shape = hashlib.sha256(timeless(step)).digest()  # not the bytes: a copy of the text
        self.transcript.add_step(self._step_shapes.setdefault(shape, step))

    def checkpoint(
        self,
        *,
        pending: AssistantHistoryMessage | None = None,
        into: pb.ConversationStateStructure | None = None,
    ) -> tuple[pb.ConversationStateStructure, dict[bytes, bytes]]:
        """The checkpoint as of now, with the steps shown so far (made in `into` if given)."""
        self.flush_steps()
        return self.transcript.checkpoint(
            pending=pending, mode=self.mode, into=into, have=self.settled_blobs
        )

    def text(self, text: str) -> None:
        # the caller's string, not a copy read back from the message (the history has it too)
        self._flush_thinking()
        self._text.append(text)
        self.usage.streaming_chars += len(text)
        self._send_update({"text_delta": pb.TextDeltaUpdate(text=text)})

    def thinking(self, text: str) -> None:
        self._thinking.append(text)
        self.usage.streaming_chars += len(text)
        delta = pb.ThinkingDeltaUpdate(text=text, thinking_style=pb.THINKING_STYLE_DEFAULT)
        self._send_update({"thinking_delta": delta})

    def step_started(self) -> int:
        self._step_id += 1
        self._step_started = time.monotonic()
        self.update(step_started=pb.StepStartedUpdate(step_id=self._step_id))
        return self._step_id

    def step_completed(self) -> None:
        if self._step_started is None:
            return
        ms = int((time.monotonic() - self._step_started) * 1000)
        self.update(
            step_completed=pb.StepCompletedUpdate(step_id=self._step_id, step_duration_ms=ms)
        )
        self._step_started = None

    # --- client round trips ------------------------------------------------------------------

    async def exec(
        self,
        message: pb.ExecServerMessage,
        on_event: Callable[[pb.ExecClientMessage], None] | None = None,
    ) -> pb.ExecClientMessage:
        return await self.live.exec(message, on_event)

    async def interact(self, query: pb.InteractionQuery) -> pb.InteractionResponse:
        return await self.live.interact(query)

    async def blob(self, ident: bytes) -> bytes:
        """A blob by id: our store, the run request's pre-fetched blobs, else a KV GET."""
        data = self.blobs.get(ident)
        if data is not None:
            return data
        for pre in self.run_request.pre_fetched_blobs:
            if pre.id == ident:
                return await self._accept(ident, pre.value)
        reply = await self.live.kv(pb.KvServerMessage(get_blob_args=pb.GetBlobArgs(blob_id=ident)))
        result = reply.get_blob_result
        if not result.HasField("blob_data"):
            why = f" ({result.error.message})" if result.error.message else ""
            if self.on_unresolved is not None:
                self.on_unresolved("blob id", ident.hex())
            raise TurnError("not_found", f"the client has no blob {ident.hex()}{why}")
        return await self._accept(ident, result.blob_data)

    async def _accept(self, ident: bytes, data: bytes) -> bytes:
        try:
            verify(ident, data)
        except BlobMismatch as exc:
            raise TurnError("invalid_argument", f"protocol error: {exc}") from None
        await self._write_blobs(self.blobs.put, data)
        self.client_blobs.add(ident)
        return data

    async def _write_blobs(self, write: Callable[[Any], object], blobs: Any) -> bool:
        """Write blobs to the data dir in a worker thread; a failure (a full disk) is kept for
        the end of the turn: the blobs still go to Cursor, which keeps its copy of them."""
        try:
            await asyncio.to_thread(write, blobs)
            return True
        except OSError as exc:
            if self.disk_error is None:
                self.disk_error = disk_full_error(self.blobs.root.parent, exc)
            return False

    async def store_on_client(self, blobs: dict[bytes, bytes]) -> None:
        """SET every blob the client lacks and wait for all acknowledgements (the ack barrier)."""
        missing = {i: d for i, d in blobs.items() if i not in self.client_blobs}
        # on disk before the checkpoint that refers to them goes out; off the event loop
        on_disk = await self._write_blobs(self.blobs.put_all, blobs)
        if on_disk:
            self.settled_blobs.update(i for i in blobs if i not in missing)
        blobs.clear()  # from here on each blob is held once: by `missing`, then by its frame
        if not missing:
            self._settle_steps()
            return

        async def set_one(key, answer, ident: bytes) -> None:
            reply = await answer
            if reply.set_blob_result.HasField("error"):
                message = reply.set_blob_result.error.message
                raise TurnError("internal", f"the client could not store a blob: {message}")
            self.client_blobs.add(ident)
            if on_disk:
                self.settled_blobs.add(ident)
            waiting.discard(key)

        waiting = set()
        tasks = []
        for ident in list(missing):  # in order: the KV ids and frames are the recorded ones
            data = missing.pop(ident)
            key, answer = self.live.open_set_blob(ident, data)
            del data
            waiting.add(key)
            tasks.append(asyncio.ensure_future(set_one(key, answer, ident)))
        await self._ack_barrier(tasks, waiting)
        self._settle_steps()

    def _settle_steps(self) -> None:
        """Let go of the steps the client and the data dir now hold: their SET frames are the
        turn's one copy of their text (for replays), the step messages a second one."""
        settled = self.transcript.settle_steps(self.settled_blobs)
        if settled:
            shapes = self._step_shapes
            for shape, step in shapes.items():
                if not isinstance(step, bytes) and id(step) in settled:
                    shapes[shape] = settled[id(step)]

    async def _ack_barrier(self, tasks: Sequence[asyncio.Future], waiting: set) -> None:
        """Wait for every acknowledgement while the client shows it is alive (any message,
        heartbeats included), up to `ack_timeout`; the error names what is missing."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.ack_timeout
        try:
            while True:
                now = loop.time()
                silent_for = self.live.clock() - self.live.client_last_seen
                if silent_for >= CLIENT_SILENCE or now >= deadline:
                    missing = self.live.describe_pending(sorted(waiting, key=str))
                    why = (
                        f"the client sent nothing for {silent_for:.0f} s"
                        if silent_for >= CLIENT_SILENCE
                        else f"still missing after {self.ack_timeout:.0f} s"
                    )
                    raise TurnError(
                        "deadline_exceeded",
                        f"the client did not acknowledge stored blobs ({why}): {missing}",
                    )
                wait = min(deadline - now, CLIENT_SILENCE - silent_for)
                done, _ = await asyncio.wait(tasks, timeout=wait)
                for task in done:
                    task.result()  # raise the first failure
                if len(done) == len(tasks):
                    return
                tasks = [t for t in tasks if not t.done()]
        finally:
            for task in tasks:
                task.cancel()

    async def publish_checkpoint(self, *, pending: AssistantHistoryMessage | None = None) -> None:
        message = pb.AgentServerMessage()  # the state made in it, not copied into it
        _, blobs = self.checkpoint(pending=pending, into=message.conversation_checkpoint_update)
        await self.store_on_client(blobs)
        self.emit(message)
        if self.disk_error is not None and not self.ending:
            raise self.disk_error  # what this checkpoint holds is kept; no more model calls

    def forget_content(self) -> None:
        """After the turn: drop the conversation and its steps (the run keeps its frames)."""
        light = Transcript(pb.ConversationStateStructure(), [], self.request_id)
        light.used_tokens = self.transcript.used_tokens
        light.context_window = self.transcript.context_window
        light.category_bytes = self.transcript.category_bytes  # the context meter (turns.py)
        self.transcript = light
        self._step_shapes.clear()
        self.settled_blobs.clear()

    @property
    def mode(self) -> int:
        if self._mode is not None:
            return self._mode
        return self.instruction.mode

    def switch_mode(self, mode: int) -> int:
        """The user approved a mode switch: later model calls and checkpoints use it."""
        self._mode = mode
        return mode


class Agent(Protocol):
    async def run(self, turn: Turn) -> None: ...


async def run_turn(
    live: RunChannel,
    run_request: pb.AgentRunRequest,
    *,
    blobs: BlobStore,
    agent: Agent,
    ack_timeout: float = ACK_TIMEOUT,
    on_unresolved: Callable[[str, str], None] | None = None,
    queued: Sequence[pb.UserMessage] = (),
    parent_tool_call_id: str = "",
    detached_call_limit: float = DETACHED_CALL_LIMIT,
    tool_choice: ToolChoice | None = None,
) -> None:
    """Run one turn end to end and always leave the stream ended (`queued`: user messages that
    came for this turn before it started, e.g. before a resume; the model gets each once)."""
    started = time.monotonic()
    client_blobs = referenced_blobs(run_request.conversation_state)
    turn = Turn(
        live, run_request, blobs, Transcript(run_request.conversation_state, [], ""), client_blobs
    )
    turn.ack_timeout = ack_timeout
    turn.on_unresolved = on_unresolved
    turn.queued = list(queued)
    turn.parent_tool_call_id = parent_tool_call_id
    turn.detached_call_limit = detached_call_limit
    turn.tool_choice = tool_choice
    outcome = "ok"
    try:
        turn.transcript = await load_transcript(turn.blob, run_request, live.request_id)
        turn.transcript.user_message = turn.user_message
        await agent.run(turn)
        turn.steering.close()  # what still waits is the next turn's (the client re-sends it)
        turn.ending = True
        await turn.store_on_client(turn.checkpoint()[1])
        turn.update(turn_ended=turn.usage.turn_ended())
        last = turn.transcript.new_messages[-1] if turn.transcript.new_messages else None
        if last is not None and last["role"] == "assistant":
            await turn.publish_checkpoint(pending=last)
        await turn.publish_checkpoint()
        await turn.publish_checkpoint()
        if turn.disk_error is not None:
            raise turn.disk_error  # everything went out to Cursor: now say what failed
        live.finish()
    except asyncio.CancelledError:
        reason = live.take_interrupt()
        if reason is None:
            raise
        outcome = await _close_interrupted(turn, reason)
    except TurnError as exc:
        outcome = f"error {exc.code}: {exc}"
        turn.steering.close()
        live.abort_pending()
        live.finish(exc.end_stream())
    finally:
        if turn.fallback_from:
            outcome = f"{outcome} (fallback for {turn.fallback_from})"
        turn.outcome = outcome
        if turn.ended is None:
            turn.ended = time.monotonic()
        if not live.finished:
            live.finish(EndStreamError("internal", "the turn ended without closing"))
        log.info(
            "turn %s conversation %s: %s in %.1fs (model %s; in %d = %d cached + %d uncached, "
            "out %d tokens; context %d/%d)",
            live.request_id,
            run_request.conversation_id,
            outcome,
            time.monotonic() - started,
            turn.model or "?",
            turn.usage.input_tokens,
            turn.usage.cache_read_tokens,
            max(0, turn.usage.input_tokens - turn.usage.cache_read_tokens),
            turn.usage.output_tokens,
            turn.transcript.used_tokens,
            turn.transcript.context_window,
        )
        # The usage database sits beside the blobs in the data dir; never raises.
        record_turn(blobs.root.parent, turn, outcome=outcome, duration=time.monotonic() - started)
        turn.forget_content()


async def _close_interrupted(turn: Turn, reason: BaseException) -> str:
    live = turn.live
    turn.steering.close()
    live.abort_pending()
    if isinstance(reason, TurnFailed):
        live.finish(EndStreamError(reason.code, str(reason)))
        return f"failed: {reason}"
    message = reason.reason if isinstance(reason, TurnCancelled) else str(reason)
    if live.has_streams:
        try:  # keep what completed, so the user can continue the conversation
            await turn.publish_checkpoint()
        except (TurnError, asyncio.CancelledError) as exc:
            log.info("request %s: no checkpoint after cancel: %s", live.request_id, exc)
    if isinstance(reason, TurnCancelled):
        live.finish(reason.end_stream())
    else:
        live.finish(EndStreamError("canceled", message))
    return f"cancelled ({message})"
