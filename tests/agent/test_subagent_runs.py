"""Child runs: the `subagent_model` option, routing, cancelling by id, checkpoint records."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from cursor_byok.agent import subagents
from cursor_byok.agent.loop import ProviderAgent
from cursor_byok.agent.turn import TurnCancelled
from cursor_byok.config import ConfigError
from cursor_byok.config import parse_config
from cursor_byok.cursor.checkpoint import Transcript
from cursor_byok.pb import agent_v1_pb2 as pb

RAW = {
    "providers": {"p": {"kind": "openai-chat", "base_url": "http://127.0.0.1:1/v1"}},
    "models": [
        {"name": "Big", "provider": "p", "model": "big-1"},
        {"name": "Small", "provider": "p", "model": "small-1"},
    ],
}


def test_subagent_model_must_be_a_configured_model() -> None:
    assert parse_config(RAW).subagent_model is None
    assert parse_config({**RAW, "subagent_model": "Small"}).subagent_model == "Small"
    with pytest.raises(ConfigError, match="subagent_model"):
        parse_config({**RAW, "subagent_model": "Nope"})


def test_child_runs_use_the_subagent_model() -> None:
    request = pb.AgentRunRequest()
    request.requested_model.model_id = "Big"
    plain = ProviderAgent(parse_config(RAW))
    configured = ProviderAgent(parse_config({**RAW, "subagent_model": "Small"}))
    assert configured.route(request).name == "Big"  # a parent run: what Cursor asked for
    request.subagent_type_name = "explore"
    assert configured.route(request).name == "Small"
    assert plain.route(request).name == "Big"  # default: the parent's model


class _Live:
    def __init__(self) -> None:
        self.interrupted: list[BaseException] = []

    def interrupt(self, exc: BaseException) -> None:
        self.interrupted.append(exc)


class _Turn:
    def __init__(self, conversation: str) -> None:
        self.run_request = pb.AgentRunRequest(conversation_id=conversation)
        self.live = _Live()


def test_cancel_stops_only_the_named_child() -> None:
    one, two = _Turn("child-a"), _Turn("child-b")
    subagents.register(one)
    subagents.register(two)
    try:
        assert subagents.cancel("child-a")
        assert not subagents.cancel("child-c")
        assert isinstance(one.live.interrupted[0], TurnCancelled)
        assert two.live.interrupted == []
    finally:
        subagents.unregister(one)
        subagents.unregister(two)
    assert not subagents.cancel("child-a")
    assert "child-b" not in subagents.running()


def test_checkpoint_records_shell_turn_and_task_cards() -> None:
    transcript = Transcript(pb.ConversationStateStructure(), [], "req")
    transcript.shell_turn = ("ls", "a\nb\n")
    transcript.subagent_runs["call_t"] = pb.SubagentRunState(
        parent_tool_call_id="call_t", status=pb.SUBAGENT_RUN_STATUS_RUNNING, title="T"
    )
    state, blobs = transcript.checkpoint()
    [turn_id] = state.turns
    turn = pb.ConversationTurnStructure.FromString(blobs[turn_id])
    shell = turn.shell_conversation_turn
    assert pb.ShellCommand.FromString(blobs[shell.shell_command]).command == "ls"
    assert blobs[shell.shell_output] == b"a\nb\n"
    run = state.subagent_runs_by_parent_tool_call_id["call_t"]
    assert run.status == pb.SUBAGENT_RUN_STATUS_RUNNING and run.title == "T"


class _ChildTurn(_Turn):
    def __init__(self, conversation: str, prompt: str) -> None:
        super().__init__(conversation)
        self.instruction = SimpleNamespace(user_message=pb.UserMessage(text=prompt))
        self.mirror = None

    def mirror_to(self, mirror) -> None:
        self.mirror = mirror


def test_child_progress_reaches_the_waiting_task_only() -> None:
    got: dict[str, list] = {"a": [], "b": []}
    with (
        subagents.awaiting_child("call_a", "Do A.", got["a"].append),
        subagents.awaiting_child("call_b", "Do B.", got["b"].append),
    ):
        child = _ChildTurn("child-b", " Do B. ")
        assert subagents.attach(child)
        child.mirror(pb.InteractionUpdate(text_delta=pb.TextDeltaUpdate(text="hi")))
        child.mirror(pb.InteractionUpdate(heartbeat=pb.HeartbeatUpdate()))  # not relayed
        assert len(got["b"]) == 1 and got["a"] == []
        assert not subagents.attach(_ChildTurn("child-x", "Do B."))  # already linked
        assert not subagents.attach(_ChildTurn("child-y", "unknown prompt"))
        by_id = _ChildTurn("child-a", "whatever")
        assert subagents.attach(by_id, parent_tool_call_id="call_a")
    assert child.mirror is None and by_id.mirror is None  # unlinked when the Task ends


def test_same_prompt_twice_is_not_guessed() -> None:
    with (
        subagents.awaiting_child("c1", "Same.", lambda u: None),
        subagents.awaiting_child("c2", "Same.", lambda u: None),
    ):
        assert not subagents.attach(_ChildTurn("k", "Same."))
