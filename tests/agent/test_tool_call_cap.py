"""Issue 33 item 7: one model answer runs at most MAX_TOOL_CALLS tool calls, and the model is
told, in the result of the first call past the cap, what happened to the rest."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from cursor_byok.agent.model_call import MAX_TOOL_CALLS
from cursor_byok.agent.model_call import Caller
from cursor_byok.agent.model_call import stream_answer
from cursor_byok.agent.turn import Turn
from cursor_byok.cursor.checkpoint import Transcript
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.providers import Finish
from cursor_byok.providers import ModelRequest
from cursor_byok.providers import ToolCallEnd
from cursor_byok.providers import ToolCallStart
from cursor_byok.providers.base import ProviderEvent
from cursor_byok.providers.history_projection import MessageBuilder
from cursor_byok.store.blobs import BlobStore

CALLS = 10_000


class _Live:
    request_id = "req-1"

    def __init__(self) -> None:
        self.turn = None
        self.emitted: list[pb.AgentServerMessage] = []

    def emit(self, message: pb.AgentServerMessage) -> None:
        self.emitted.append(message)


class _Runaway:
    """A provider whose one answer makes CALLS tool calls."""

    label = "runaway"

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ProviderEvent]:
        builder = MessageBuilder("openai-chat", "runaway", request.model)
        for i in range(CALLS):
            call_id = f"call_{i}"
            yield ToolCallStart(call_id, "Read")
            builder.add_tool_call(call_id, "Read", {"path": f"f{i}"})
            yield ToolCallEnd(call_id, "Read", {"path": f"f{i}"}, "{}", None)
        yield Finish("tool_calls", builder.build())

    async def aclose(self) -> None:
        return None


async def test_a_runaway_answer_runs_the_cap_and_tells_the_model(tmp_path) -> None:
    live = _Live()
    run = pb.AgentRunRequest(conversation_id="c")
    transcript = Transcript(pb.ConversationStateStructure(), [], "req-1")
    turn = Turn(live, run, BlobStore(tmp_path / "blobs"), transcript, set())  # type: ignore[arg-type]
    caller = Caller(_Runaway(), max_retries=0)
    answer = await stream_answer(
        turn, caller, ModelRequest(model="m", system="", messages=[]), {}, "mc"
    )

    assert len(answer.calls) == MAX_TOOL_CALLS + 1
    assert [c.call_id for c in answer.calls[:MAX_TOOL_CALLS]] == [
        f"call_{i}" for i in range(MAX_TOOL_CALLS)
    ]
    told = answer.calls[-1]
    assert told.call_id == f"call_{MAX_TOOL_CALLS}"
    assert told.error is not None
    assert f"made {CALLS} tool calls" in told.error
    assert f"at most {MAX_TOOL_CALLS}" in told.error
    # the history keeps only the calls that get a result
    parts = [p for p in answer.message["content"] if p["type"] == "tool-call"]
    assert [p["toolCallId"] for p in parts] == [c.call_id for c in answer.calls]
    # the chat showed no card for a call past the cap
    shown = {
        m.interaction_update.partial_tool_call.call_id
        for m in live.emitted
        if m.interaction_update.HasField("partial_tool_call")
    }
    assert len(shown) <= MAX_TOOL_CALLS
