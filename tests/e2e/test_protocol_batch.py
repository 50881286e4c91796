"""Issue 37's protocol batch, driven by our own Cursor-like client (the official SDK sends none
of these): a custom mode's instructions, an imported history."""

from __future__ import annotations

import json
import uuid

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from mitm import start_mitmdump
from provider_config import MODEL
from provider_config import write_config

from cursor_byok.pb import agent_v1_pb2 as pb

pytestmark = pytest.mark.timeout(90)

SKILL_PATH = "/home/u/.cursor/skills/reviewer/SKILL.md"
SKILL_TEXT = "Answer only as a strict code reviewer; number every finding."


class Session:
    def __init__(self, tmp_path, workspace, fp: FakeProvider) -> None:
        self.proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=write_config(tmp_path, fp, "openai-chat"),
            env={"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"},
        )
        self.client = CursorLikeClient.through(self.proxy, workspace)
        self.workspace = workspace
        self.conversation = str(uuid.uuid4())

    def request(self, text: str, state=None, mode: int = pb.AGENT_MODE_AGENT):
        message = self.client.run_request(
            text,
            conversation_id=self.conversation,
            model=MODEL,
            workspace=self.workspace,
            state=state,
            mode=mode,
        )
        context = message.run_request.action.user_message_action.request_context
        context.agent_skills.add(full_path=SKILL_PATH, content=SKILL_TEXT, description="review")
        return message

    async def close(self) -> None:
        await self.client.aclose()
        self.proxy.stop()


def system_of(request) -> str:
    [system] = [m["content"] for m in request.json["messages"] if m["role"] == "system"]
    return system if isinstance(system, str) else json.dumps(system)


async def test_a_custom_mode_puts_its_skill_in_the_system_prompt_until_left(
    tmp_path, workspace
) -> None:
    async with FakeProvider() as fp:
        for answer in ("1. fine", "2. fine", "ok"):
            fp.script.text(answer)
        session = Session(tmp_path, workspace, fp)
        try:
            enter = session.request("review this", mode=pb.AGENT_MODE_CUSTOM)
            intent = enter.run_request.action.user_message_action.user_message.custom_mode_intent
            intent.enter.id = "reviewer"
            intent.enter.label = "Reviewer"
            intent.enter.source_path = SKILL_PATH
            one = await session.client.turn(enter)
            assert one.end.ok, one.end.error
            # the next message in the mode carries no intent: the mode is remembered
            two = await session.client.turn(
                session.request("and now?", one.checkpoints[-1], mode=pb.AGENT_MODE_CUSTOM)
            )
            assert two.end.ok, two.end.error
            leave = session.request("thanks", two.checkpoints[-1], mode=pb.AGENT_MODE_AGENT)
            leave_intent = leave.run_request.action.user_message_action.user_message
            leave_intent.custom_mode_intent.exit.next_mode = pb.AGENT_MODE_AGENT
            leave_intent.custom_mode_intent.exit.exited_mode.label = "Reviewer"
            three = await session.client.turn(leave)
            assert three.end.ok, three.end.error
        finally:
            await session.close()
    first, second, third = fp.requests
    for request in (first, second):
        assert SKILL_TEXT in system_of(request)
        assert "custom mode 'Reviewer'" in system_of(request)
    assert SKILL_TEXT not in system_of(third)
    # the custom mode gets the Agent tools, not a fallback with a warning
    assert "Shell" in [t["function"]["name"] for t in first.json["tools"]]


def _imported() -> pb.ConversationHistory:
    history = pb.ConversationHistory()
    user = history.messages.add().user
    user.content.add().text.text = "My project is called Zephyr."
    assistant = history.messages.add().assistant
    assistant.content.add().text.text = "Noted: Zephyr. Let me look at it."
    call = assistant.content.add().tool_call
    call.tool_call_id = "imp_1"
    call.tool_name = "ls"
    call.args_json = '{"path": "."}'
    tool = history.messages.add().tool
    tool.tool_call_id = "imp_1"
    tool.tool_name = "ls"
    tool.content.add().text.text = "zephyr.toml"
    history.messages.add().assistant.content.add().text.text = "It has a zephyr.toml."
    return history


async def test_an_imported_history_is_read_before_the_message_and_kept(tmp_path, workspace) -> None:
    async with FakeProvider() as fp:
        fp.script.text("Zephyr.")
        fp.script.text("Still Zephyr.")
        session = Session(tmp_path, workspace, fp)
        try:
            first = session.request("What is my project called?")
            first.run_request.action.user_message_action.conversation_history.CopyFrom(_imported())
            one = await session.client.turn(first)
            assert one.end.ok, one.end.error
            two = await session.client.turn(session.request("Again?", one.checkpoints[-1]))
            assert two.end.ok, two.end.error
        finally:
            await session.close()
    for request in fp.requests:
        messages = [m for m in request.json["messages"] if m["role"] != "system"]
        roles = [m["role"] for m in messages[:5]]
        assert roles == ["user", "assistant", "tool", "assistant", "user"]
        assert "Zephyr." in json.dumps(messages[0])
        assert messages[1]["tool_calls"][0]["function"]["name"] == "ls"
        assert messages[2]["tool_call_id"] == "imp_1" and "zephyr.toml" in messages[2]["content"]
        assert "What is my project called?" in json.dumps(messages[4])
    # imported once: the second turn inherits it from the checkpoint, not from a new import
    assert json.dumps(fp.requests[1].json["messages"]).count("My project is called Zephyr") == 1


def tool_names(request) -> list[str]:
    return [t["function"]["name"] for t in request.json.get("tools", [])]


async def test_a_goal_is_set_kept_continued_and_completed(tmp_path, workspace) -> None:
    async with FakeProvider() as fp:
        fp.script.tool_calls([("call_g", "CreateGoal", {"objective": "Port the parser to Rust."})])
        fp.script.text("Started.")
        fp.script.tool_calls([("call_u", "UpdateGoal", {"status": "complete"})])
        fp.script.text("Done.")
        session = Session(tmp_path, workspace, fp)
        try:
            one = await session.client.turn(session.request("Port the parser, take your time."))
            assert one.end.ok, one.end.error
            state = one.checkpoints[-1]
            # the client asks the agent to go on with its goal: a run of its own
            again = session.request("", state)
            run = again.run_request
            context = pb.RequestContext()
            context.CopyFrom(run.action.user_message_action.request_context)
            run.action.Clear()
            run.action.goal_continuation_action.SetInParent()
            run.action.request_context_parts.dynamic_context.CopyFrom(context)
            two = await session.client.turn(again)
            assert two.end.ok, two.end.error
        finally:
            await session.close()
    goal = state.goal_state
    assert goal.status == pb.GOAL_STATUS_ACTIVE and goal.objective == "Port the parser to Rust."
    assert goal.conversation_id == session.conversation and goal.goal_id
    [card] = [u.tool_call for u in one.updates("tool_call_completed")]
    assert card.create_goal_tool_call.args.objective == "Port the parser to Rust."
    assert card.create_goal_tool_call.result.HasField("success")
    first, _, third, _ = fp.requests
    assert "CreateGoal" in tool_names(first) and "UpdateGoal" not in tool_names(first)
    assert "UpdateGoal" in tool_names(third)
    assert "Continue working toward the goal: Port the parser to Rust." in json.dumps(
        third.json["messages"]
    )
    [done] = [u.tool_call for u in two.updates("tool_call_completed")]
    assert done.update_goal_tool_call.result.success.status == pb.GOAL_STATUS_COMPLETE
    final = two.checkpoints[-1].goal_state
    assert final.status == pb.GOAL_STATUS_COMPLETE and final.goal_id == goal.goal_id
    # one continuation, and not idle: the model called a tool in it
    assert final.continuation_count == 1 and final.idle_continuations_without_tool_calls == 0


async def test_an_mcp_server_that_needs_sign_in_is_authorised_from_the_turn(
    tmp_path, workspace
) -> None:
    queries: list[pb.InteractionQuery] = []

    def approve(query: pb.InteractionQuery) -> pb.InteractionResponse:
        queries.append(query)
        response = pb.InteractionResponse()
        response.mcp_auth_request_response.approved.SetInParent()
        return response

    async with FakeProvider() as fp:
        fp.script.tool_calls([("call_auth", "McpAuth", {"server": "sleepy"})])
        fp.script.text("Signed in.")
        fp.script.text("Hello.")
        session = Session(tmp_path, workspace, fp)
        session.client.answers["mcp_auth_request_query"] = approve
        try:
            message = session.request("Use the sleepy server.")
            context = message.run_request.action.user_message_action.request_context
            context.supports_mcp_auth = True
            context.mcp_instructions.add(server_name="sleepy", server_identifier="user-sleepy")
            result = await session.client.turn(message)
            assert result.end.ok, result.end.error
            # a client that cannot sign in (Cursor's SDK) is not offered the tool
            plain = await session.client.turn(session.request("hi", result.checkpoints[-1]))
            assert plain.end.ok, plain.end.error
        finally:
            await session.close()
    [query] = queries
    assert query.mcp_auth_request_query.args.server_identifier == "user-sleepy"
    assert query.mcp_auth_request_query.args.tool_call_id == "call_auth"
    [card] = [u.tool_call for u in result.updates("tool_call_completed")]
    assert card.mcp_auth_tool_call.result.success.server_identifier == "user-sleepy"
    first, second, third = fp.requests
    assert "McpAuth" in tool_names(first) and "McpAuth" not in tool_names(third)
    tool = [m for m in second.json["messages"] if m["role"] == "tool"][-1]["content"]
    assert "authorised the MCP server 'sleepy'" in tool and "needsAuth" in tool
