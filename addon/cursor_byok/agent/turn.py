"""One agent turn from the transport's point of view: what an agent may do, and how a turn closes.

`Turn` is the seam between transport and agent. An agent (the scripted stand-in, or the real loop
over a provider) only calls `Turn` methods: emit UI updates, run execs on the client, read blobs,
append to the transcript. Its parts: the options it was started with (`TurnOptions`, frozen),
its blob I/O with the client (`ClientBlobs`: reads, SETs, the ack barrier), the record of what
the UI was shown (`StepRecorder`), its state for the status display (`TurnStatus`) and the user
messages queued for it (`MessageQueue`). `run_turn` owns everything around it: loading history
from the checkpoint, context parts by KV GET, the close sequence (blob SETs acknowledged,
`turn_ended`, staged and settled checkpoints, end-stream), cancellation and errors Cursor can
show.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import Protocol

from cursor_byok.agent import continuation
from cursor_byok.agent.client_blobs import ACK_TIMEOUT
from cursor_byok.agent.client_blobs import ClientBlobs
from cursor_byok.agent.history_restore import load_transcript
from cursor_byok.agent.steering import MessageQueue
from cursor_byok.agent.tool_choice import ToolChoice
from cursor_byok.agent.turn_endings import TurnCancelled
from cursor_byok.agent.turn_endings import TurnError
from cursor_byok.agent.turn_endings import TurnFailed
from cursor_byok.agent.turn_status import TurnStatus
from cursor_byok.agent.turn_status import UsageTally
from cursor_byok.agent.ui_steps import StepRecorder
from cursor_byok.conversation.history_format import AssistantHistoryMessage
from cursor_byok.conversation.text import TextParts
from cursor_byok.core.outbox import StoredFrame
from cursor_byok.cursor.actions import resolve as resolve_action
from cursor_byok.cursor.checkpoint import Blob
from cursor_byok.cursor.checkpoint import Transcript
from cursor_byok.cursor.checkpoint import referenced_blobs
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.store.blobs import BlobStore
from cursor_byok.store.usage import TurnUsage
from cursor_byok.store.usage import record_row
from cursor_byok.wire.blob_pieces import BlobPieces
from cursor_byok.wire.connect import EndStreamError

__all__ = [
    "ACK_TIMEOUT",
    "DETACHED_CALL_LIMIT",
    "Agent",
    "RunChannel",
    "Turn",
    "TurnCancelled",
    "TurnError",
    "TurnFailed",
    "TurnOptions",
    "UsageTally",
    "run_turn",
]

log = logging.getLogger(__name__)

# How long a model call may go on while no stream reads the run (the SDK's cancel, a dropped
# connection); then it is aborted and made again when the client reconnects (agent/attended.py).
# Under a second: a cancel stops the provider within one (issue 37); a client's streams reach the
# proxy on the same machine, so one that goes away was closed by the client, and a reconnect
# (a new attempt of the run) comes at once when one comes.
DETACHED_CALL_LIMIT = 0.75


@dataclass(frozen=True, slots=True)
class TurnOptions:
    """How a turn is run, fixed when it starts (the proxy's options and the run's headers)."""

    ack_timeout: float = ACK_TIMEOUT
    detached_call_limit: float = DETACHED_CALL_LIMIT
    tool_choice: ToolChoice | None = None  # the client's limits on the model's tools
    # the census: (kind, id) of an id nothing could resolve (a blob nobody has)
    on_unresolved: Callable[[str, str], None] | None = None
    parent_tool_call_id: str = ""  # a subagent's Task call in its parent (from headers)
    route: str = ""  # how the turn's calls reached the proxy, for its usage row
    journal: bool = False  # journal what it streams, to continue after a crash (continuation)
    # waited on before the turn's set-up and before its close, each a few ms in one step of the
    # loop: the proxy gives one such step per pass, so the streams' deltas go between them
    pace: Callable[[], Awaitable[None]] | None = None


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

    def emit_frame(
        self, frame: bytes | None, *, stored: StoredFrame | None = None, size: int = 0
    ) -> None: ...

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
    def open_set_blob(
        self, blob_id: bytes, data: bytes | BlobPieces, *, stored: BlobStore | None = None
    ) -> tuple[Any, Awaitable[Any]]: ...

    def describe_pending(self, keys: Sequence[Any]) -> str: ...

    def abort_pending(self) -> None: ...

    def interrupt(self, exc: BaseException) -> None: ...

    def take_interrupt(self) -> BaseException | None: ...


class Turn:
    """What an agent may do during one turn."""

    __slots__ = (
        "blobs",
        "carry",
        "instruction",
        "live",
        "messages",
        "mirror",
        "mode",
        "options",
        "run_request",
        "status",
        "transcript",
        "ui",
        "usage",
    )

    def __init__(
        self,
        live: RunChannel,
        run_request: pb.AgentRunRequest,
        blobs: BlobStore,
        transcript: Transcript,
        client_blobs: set[bytes],
        options: TurnOptions | None = None,
        messages: MessageQueue | None = None,
    ) -> None:
        self.live = live
        self.run_request = run_request
        self.options = options if options is not None else TurnOptions()
        self.blobs = ClientBlobs(
            live,
            blobs,
            client_blobs,
            run_request.pre_fetched_blobs,
            ack_timeout=self.options.ack_timeout,
            on_unresolved=self.options.on_unresolved,
        )
        self.transcript = transcript
        # What the UI was shown, folded into ConversationSteps for the checkpoint's turn blob.
        self.ui = StepRecorder(lambda step: self.transcript.add_step(step))
        self.usage = UsageTally()
        requested = run_request.requested_model.model_id or run_request.model_details.model_id
        self.status = TurnStatus(model=requested)  # for the live status display
        # user messages queued for this turn, and those sent while the model answers (steering)
        self.messages = messages if messages is not None else MessageQueue()
        self.messages.bind(self.update, lambda: live.finished, live.request_id)
        # What the run's ConversationAction asks for (cursor/actions.py), resolved once.
        self.instruction = resolve_action(run_request)
        self.mode: int = self.instruction.mode  # a mode switch changes it (`switch_mode`)
        self.mirror: Callable[[pb.InteractionUpdate], None] | None = None  # `mirror_to`
        self.carry: continuation.Carry | None = None  # the run's journal (`continuation`)
        live.turn = self

    @property
    def request_id(self) -> str:
        return self.live.request_id

    async def pace(self) -> None:
        """Wait for the proxy's go-ahead before a step of a few ms (`TurnOptions.pace`)."""
        if self.options.pace is not None:
            await self.options.pace()

    async def load_history(self) -> None:
        """The conversation the run continues, from its checkpoint (blobs read as needed)."""
        self.transcript = await load_transcript(self.blob, self.run_request, self.request_id)
        self.transcript.user_message = self.instruction.user_message

    def mirror_to(self, mirror: Callable[[pb.InteractionUpdate], None] | None) -> None:
        """Show every UI update on `mirror` too (a subagent's progress on its parent's Task
        card; None when that Task ends)."""
        self.mirror = mirror

    # --- UI updates --------------------------------------------------------------------------

    def emit(self, message: pb.AgentServerMessage) -> None:
        self.live.emit(message)

    def update(self, **variant) -> None:
        """Emit one `interaction_update` variant: `update(text_delta=pb.TextDeltaUpdate(...))`."""
        delta = variant.get("text_delta") or variant.get("thinking_delta")
        if delta is not None:
            self.usage.streaming_chars += len(delta.text)
        self.status.track(variant)
        self.ui.record(variant)
        self._send_update(variant)

    def _send_update(self, variant: dict) -> None:
        message = pb.AgentServerMessage()  # each part copied once, into the message sent
        for name, value in variant.items():
            getattr(message.interaction_update, name).CopyFrom(value)
        self._send(message)

    def _send_delta(self, kind: str, text: str) -> None:
        """A text or thinking delta, made in place: a message given to a constructor is
        copied (1.1 µs against 2.9, a delta)."""
        message = pb.AgentServerMessage()
        delta = getattr(message.interaction_update, kind)
        delta.text = text
        if kind == "thinking_delta":
            delta.thinking_style = pb.THINKING_STYLE_DEFAULT
        self._send(message)

    def _send(self, message: pb.AgentServerMessage) -> None:
        self.emit(message)
        if self.mirror is not None:  # a subagent's progress, on the parent's Task card
            update = pb.InteractionUpdate()
            update.CopyFrom(message.interaction_update)  # its own: the run keeps the message
            self.mirror(update)

    def text(self, text: str, source: TextParts | None = None, end: int = 0) -> None:
        """Show answer text (`source`/`end`: where the provider's message part holds it, which
        the UI's record then points into: `TextView`)."""
        self.ui.text(text, source, end)
        self.usage.streaming_chars += len(text)
        if self.carry is not None:
            self.carry.text(text)
        self._send_delta("text_delta", text)

    def thinking(self, text: str, source: TextParts | None = None, end: int = 0) -> None:
        if self.carry is not None and not self.carry.show_thinking(text):
            return  # a continued answer's (agent/continuation.py)
        self.ui.thinking(text, source, end)
        self.usage.streaming_chars += len(text)
        self._send_delta("thinking_delta", text)

    def step_started(self) -> int:
        step_id = self.status.start_step()
        self.update(step_started=pb.StepStartedUpdate(step_id=step_id))
        return step_id

    def step_completed(self) -> None:
        step = self.status.complete_step()
        if step is not None:
            step_id, ms = step
            self.update(step_completed=pb.StepCompletedUpdate(step_id=step_id, step_duration_ms=ms))

    # --- client round trips ------------------------------------------------------------------

    async def exec(
        self,
        message: pb.ExecServerMessage,
        on_event: Callable[[pb.ExecClientMessage], None] | None = None,
    ) -> pb.ExecClientMessage:
        if self.carry is not None:
            self.carry.pause()  # a tool may take long; a reset client may never answer
        return await self.live.exec(message, on_event)

    async def interact(self, query: pb.InteractionQuery) -> pb.InteractionResponse:
        if self.carry is not None:
            self.carry.pause()
        return await self.live.interact(query)

    async def blob(self, ident: bytes) -> bytes:
        """A blob by id: our store, the run request's pre-fetched blobs, else a KV GET."""
        return await self.blobs.get(ident)

    # --- checkpoints -------------------------------------------------------------------------

    def checkpoint(
        self,
        *,
        pending: AssistantHistoryMessage | None = None,
        into: pb.ConversationStateStructure | None = None,
        inline: bool = True,
    ) -> tuple[pb.ConversationStateStructure, dict[bytes, Blob]]:
        """The checkpoint as of now, with the steps shown so far (made in `into` if given;
        `inline=False` leaves a staged message out, for `publish_staged`)."""
        self.ui.flush()
        return self.transcript.checkpoint(
            pending=pending, mode=self.mode, into=into, have=self.blobs.settled, inline=inline
        )

    async def store_on_client(self, blobs: dict[bytes, Blob]) -> None:
        """Store `blobs` (the data dir, and SETs the client acknowledges), then let go of the
        steps both now hold: their SET frames are the turn's one copy of their text (for
        replays), the step messages a second one."""
        await self.blobs.put(blobs)
        self.ui.settled(self.transcript.settle_steps(self.blobs.settled))

    async def publish_checkpoint(
        self,
        *,
        pending: AssistantHistoryMessage | None = None,
        closing: bool = False,
        times: int = 1,
    ) -> None:
        """Store a checkpoint's blobs and send it (`times` times: the close sends the settled
        one twice, made once). A failed blob write ends the turn after it (no more model
        calls), unless the turn is `closing`: its checkpoints all go out first."""
        if pending is None:
            message = pb.AgentServerMessage()  # the state made in it, not copied into it
            _, blobs = self.checkpoint(into=message.conversation_checkpoint_update)
            await self.store_on_client(blobs)
            for _ in range(times):
                self.emit(message)
        else:  # the answer inline: its frame is built around its JSON (one copy, not three)
            state, blobs = self.checkpoint(pending=pending, inline=False)
            await self.store_on_client(blobs)
            await self.blobs.publish_staged(state, pending)  # its JSON on disk first
            del state
        if self.carry is not None:
            self.carry.checkpoint()
        if self.blobs.disk_error is not None and not closing:
            raise self.blobs.disk_error  # what this checkpoint holds is kept

    def forget_content(self) -> None:
        """After the turn: drop the conversation and its steps (the run keeps its frames)."""
        light = Transcript(pb.ConversationStateStructure(), [], self.request_id)
        light.used_tokens = self.transcript.used_tokens
        light.context_window = self.transcript.context_window
        light.category_bytes = self.transcript.category_bytes  # the context meter (turns.py)
        self.transcript = light
        self.ui.clear()
        self.blobs.settled.clear()

    def switch_mode(self, mode: int) -> int:
        """The user approved a mode switch: later model calls and checkpoints use it."""
        self.mode = mode
        return mode


class Agent(Protocol):
    async def run(self, turn: Turn) -> None: ...


async def run_turn(
    live: RunChannel,
    run_request: pb.AgentRunRequest,
    *,
    blobs: BlobStore,
    agent: Agent,
    options: TurnOptions | None = None,
    messages: MessageQueue | None = None,
) -> None:
    """Run one turn end to end and always leave the stream ended (`messages`: the user
    messages that came for this turn before it started, e.g. before a resume; the model gets
    each once)."""
    started = time.monotonic()
    client_blobs = referenced_blobs(run_request.conversation_state)
    transcript = Transcript(run_request.conversation_state, [], "")
    turn = Turn(live, run_request, blobs, transcript, client_blobs, options, messages)
    outcome = "ok"
    try:
        await turn.pace()
        await turn.load_history()
        if turn.options.journal:
            data_dir = blobs.root.parent
            turn.carry = continuation.start(run_request, data_dir, turn.ui, live.request_id)
        await agent.run(turn)
        await _close(turn)
    except asyncio.CancelledError:
        reason = live.take_interrupt()
        if reason is None:
            raise
        outcome = await _close_interrupted(turn, reason)
    except TurnError as exc:
        outcome = f"error {exc.code}: {exc}"
        turn.messages.close()
        live.abort_pending()
        live.finish(exc.end_stream())
    finally:
        _conclude(turn, outcome, time.monotonic() - started)


async def _close(turn: Turn) -> None:
    """The close sequence of a turn the agent finished, in a pass of the loop of its own
    (`Turn.pace`): the last blobs stored, `turn_ended`, the staged and settled checkpoints,
    then the end of the stream."""
    turn.messages.close()  # what still waits is the next turn's (the client re-sends it)
    await turn.pace()
    await turn.store_on_client(turn.checkpoint()[1])
    turn.update(turn_ended=turn.usage.turn_ended())
    new = turn.transcript.new_messages
    last = new[-1] if new else None
    if last is not None and last["role"] == "assistant":
        await turn.publish_checkpoint(pending=last, closing=True)
    # the settled checkpoint, then the same checkpoint again (protocol.md §4.5, as captured)
    await turn.publish_checkpoint(closing=True, times=2)
    if turn.blobs.disk_error is not None:
        raise turn.blobs.disk_error  # everything went out to Cursor: now say what failed
    turn.live.finish()


def _conclude(turn: Turn, outcome: str, duration: float) -> None:
    """After any ending: the status shows the outcome, the stream is ended, the turn is logged
    and its usage recorded, and its content let go."""
    live, status, usage = turn.live, turn.status, turn.usage
    if status.fallback_from:
        outcome = f"{outcome} (fallback for {status.fallback_from})"
    status.end(outcome)
    if turn.carry is not None:  # kept only when the turn did not end its stream (the task died)
        turn.carry.close(keep=not live.finished)
    if not live.finished:
        live.finish(EndStreamError("internal", "the turn ended without closing"))
    log.info(
        "turn %s conversation %s: %s in %.1fs (model %s; in %d = %d cached + %d uncached, "
        "out %d tokens; context %d/%d)",
        live.request_id,
        turn.run_request.conversation_id,
        outcome,
        duration,
        status.model or "?",
        usage.input_tokens,
        usage.cache_read_tokens,
        max(0, usage.input_tokens - usage.cache_read_tokens),
        usage.output_tokens,
        turn.transcript.used_tokens,
        turn.transcript.context_window,
    )
    # The usage database sits beside the blobs in the data dir; never raises.
    record_row(turn.blobs.store.root.parent, usage_row(turn, outcome, duration))
    turn.forget_content()


def usage_row(turn: Turn, outcome: str, duration: float) -> TurnUsage:
    """The turn's row of the usage database."""
    usage = turn.usage
    return TurnUsage(
        started=time.time() - duration,
        duration=duration,
        conversation=turn.run_request.conversation_id or "",
        request=turn.request_id,
        model=turn.status.model or "",
        input_tokens=usage.input_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        output_tokens=usage.output_tokens,
        reasoning_tokens=usage.reasoning_tokens,
        outcome=outcome,
        route=turn.options.route,
        context_used=turn.transcript.used_tokens,
        context_max=turn.transcript.context_window,
    )


async def _close_interrupted(turn: Turn, reason: BaseException) -> str:
    live = turn.live
    turn.messages.close()
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
