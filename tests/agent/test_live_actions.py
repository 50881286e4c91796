"""Mid-run ConversationActions: stop one subagent, send a shell or subagent to the background."""

from __future__ import annotations

from cursor_byok.agent import live_actions
from cursor_byok.agent import subagents
from cursor_byok.agent.turn import TurnCancelled
from cursor_byok.pb import agent_v1_pb2 as pb


class _Live:
    def __init__(self) -> None:
        self.interrupted: list[BaseException] = []

    def interrupt(self, exc: BaseException) -> None:
        self.interrupted.append(exc)


class _Turn:
    def __init__(self, conversation: str = "c") -> None:
        self.run_request = pb.AgentRunRequest(conversation_id=conversation)
        self.live = _Live()
        self.execs: list[pb.ExecServerMessage] = []

    async def exec(self, message: pb.ExecServerMessage) -> pb.ExecClientMessage:
        self.execs.append(message)
        reply = pb.ExecClientMessage()
        if message.HasField("force_background_shell_args"):
            reply.force_background_shell_result.status = pb.FORCE_BACKGROUND_SHELL_STATUS_ACCEPTED
        else:
            reply.force_background_subagent_result.status = (
                pb.FORCE_BACKGROUND_SUBAGENT_STATUS_NOT_FOUND
            )
        return reply


async def test_cancel_subagent_mid_run() -> None:
    child = _Turn("child-m")
    subagents.register(child)
    try:
        action = pb.ConversationAction(
            cancel_subagent_action=pb.CancelSubagentAction(subagent_id="child-m")
        )
        assert live_actions.handles(action)
        assert await live_actions.handle(None, action)
        assert isinstance(child.live.interrupted[0], TurnCancelled)
    finally:
        subagents.unregister(child)


async def test_background_requests_become_force_background_execs() -> None:
    turn = _Turn()
    shell = pb.ConversationAction(
        background_shell_action=pb.BackgroundShellAction(tool_call_id="call_sh")
    )
    agent = pb.ConversationAction(
        background_subagent_action=pb.BackgroundSubagentAction(tool_call_id="call_task")
    )
    assert await live_actions.handle(turn, shell)
    assert await live_actions.handle(turn, agent)
    assert turn.execs[0].force_background_shell_args.tool_call_id == "call_sh"
    assert turn.execs[1].force_background_subagent_args.tool_call_id == "call_task"
    assert await live_actions.handle(None, shell)  # no running turn: nothing to move


async def test_other_actions_are_not_handled_mid_run() -> None:
    resume = pb.ConversationAction(resume_action=pb.ResumeAction())
    assert not live_actions.handles(resume)
    assert not await live_actions.handle(_Turn(), resume)
