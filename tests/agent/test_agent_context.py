"""What the model is told: system prompt per mode and context, user content, context parts."""

from __future__ import annotations

import asyncio
import hashlib

from cursor_byok.agent import context as prompts
from cursor_byok.agent.turn import TurnError
from cursor_byok.pb import agent_v1_pb2 as pb


def test_system_prompt_carries_mode_env_rules_skills_and_mcp() -> None:
    ctx = pb.RequestContext()
    ctx.env.os_version = "darwin 24"
    ctx.env.workspace_paths.append("/work/app")
    ctx.rules.add(full_path=".cursor/rules/a.mdc", content="Use tabs.")
    ctx.agent_skills.add(full_path="/skills/x/SKILL.md", description="Make slides")
    ctx.mcp_instructions.add(server_name="db", instructions="Read-only SQL.")
    ctx.git_repos.add(path="/work/app", branch_name="main")
    text = prompts.system_prompt(prompts.ASK, ctx, ["Read", "Grep"])
    for needle in (
        "Ask mode",
        "darwin 24",
        "/work/app",
        "Use tabs.",
        "Make slides",
        "Read-only SQL.",
        "branch: main",
        "Available tools: Grep, Read.",
    ):
        assert needle in text
    assert prompts.system_prompt(prompts.ASK, ctx, ["Read"]) == prompts.system_prompt(
        prompts.ASK, ctx, ["Read"]
    )  # byte-stable for caches


def test_user_content_with_selection_and_images() -> None:
    message = pb.UserMessage(text="fix this")
    message.selected_context.code_selections.add(path="/a.py", content="x = 1")
    image = message.selected_context.selected_images.add(mime_type="image/jpeg")
    image.data = b"\xff\xd8jpeg"
    with_images = prompts.user_content(message, images=True)
    assert with_images[0] == {"type": "text", "text": "fix this"}
    assert "x = 1" in with_images[1]["text"] and "/a.py" in with_images[1]["text"]
    assert with_images[2]["type"] == "image" and with_images[2]["mediaType"] == "image/jpeg"
    assert all(p["type"] != "image" for p in prompts.user_content(message, images=False))


def test_mode_ids() -> None:
    assert prompts.mode_id("Plan") == prompts.PLAN
    assert prompts.mode_id("nonsense") is None


async def test_request_context_from_parts_skips_what_the_client_lacks() -> None:
    rules = pb.RequestContext(rules=[pb.CursorRule(content="R")]).SerializeToString()
    skills_id = hashlib.sha256(b"missing").digest()
    request = pb.AgentRunRequest()
    parts = request.action.request_context_parts
    parts.rules_blob_id = hashlib.sha256(rules).digest()
    parts.skills_blob_id = skills_id
    parts.dynamic_context.env.shell = "zsh"

    async def read(ident: bytes) -> bytes:
        if ident == skills_id:
            raise TurnError("not_found", "no blob")
        return rules

    ctx = await prompts.request_context(request, read)
    assert [r.content for r in ctx.rules] == ["R"]
    assert ctx.env.shell == "zsh"


async def test_inline_context_wins() -> None:
    request = pb.AgentRunRequest()
    request.action.user_message_action.request_context.env.shell = "fish"

    async def read(ident: bytes) -> bytes:
        raise AssertionError("no blob read needed")

    assert (await prompts.request_context(request, read)).env.shell == "fish"


def test_debug_mode_config_reaches_the_system_prompt() -> None:
    from cursor_byok.agent.context import system_prompt

    context = pb.RequestContext()
    context.debug_mode_config.log_path = "/ws/.cursor/debug.log"
    context.debug_mode_config.server_endpoint = "http://127.0.0.1:7777/ingest"
    context.debug_mode_config.session_id = "dbg-42"
    prompt = system_prompt(4, context, ["Read"])
    assert "Debug mode" in prompt
    assert "/ws/.cursor/debug.log" in prompt and "http://127.0.0.1:7777/ingest" in prompt
    assert "dbg-42" in prompt


def test_modes_without_instructions_are_named_truthfully() -> None:
    from cursor_byok.agent.context import system_prompt

    prompt = system_prompt(7, pb.RequestContext(), ["Read"])
    assert "Multitask mode" in prompt and "Agent mode" not in prompt


class _AskingTurn:
    """A turn whose client answers the request_context_args exec with `reply` (None: never)."""

    def __init__(self, reply: pb.ExecClientMessage | None) -> None:
        self.reply = reply
        self.asked: list[pb.ExecServerMessage] = []
        self.aborted = 0
        self.request_id = "r1"
        self.live = self

    async def exec(self, message: pb.ExecServerMessage) -> pb.ExecClientMessage:
        self.asked.append(message)
        if self.reply is None:
            await asyncio.Event().wait()  # the client never answers
        assert self.reply is not None
        return self.reply

    def abort_pending(self) -> None:
        self.aborted += 1


def _context_reply(**result) -> pb.ExecClientMessage:
    return pb.ExecClientMessage(request_context_result=pb.RequestContextResult(**result))


async def test_a_run_request_without_context_asks_the_client() -> None:
    given = pb.RequestContext(rules=[pb.CursorRule(full_path="AGENTS.md", content="Be brief.")])
    given.env.workspace_paths.append("/ws")
    turn = _AskingTurn(_context_reply(success=pb.RequestContextSuccess(request_context=given)))
    request = pb.AgentRunRequest()
    request.action.user_message_action.user_message.text = "hi"  # no request_context
    context = await prompts.request_context(
        request, _no_blobs, lambda: prompts.client_context(turn)
    )
    assert context == given
    [asked] = turn.asked
    assert asked.WhichOneof("message") == "request_context_args"


async def test_an_embedded_context_is_not_asked_for() -> None:
    turn = _AskingTurn(None)
    request = pb.AgentRunRequest()
    action = request.action.user_message_action
    action.user_message.text = "hi"
    action.request_context.env.shell = "zsh"
    context = await prompts.request_context(
        request, _no_blobs, lambda: prompts.client_context(turn)
    )
    assert context.env.shell == "zsh" and not turn.asked


async def test_a_refused_or_failed_context_leaves_the_turn_without_one() -> None:
    for reply in (
        _context_reply(rejected=pb.RequestContextRejected(reason="no")),
        _context_reply(error=pb.RequestContextError(error="boom")),
        pb.ExecClientMessage(read_result=pb.ReadResult()),  # a client that does not know it
    ):
        assert await prompts.client_context(_AskingTurn(reply)) == pb.RequestContext()


async def test_a_client_that_never_answers_is_given_up_on_and_aborted() -> None:
    turn = _AskingTurn(None)
    assert await prompts.client_context(turn, timeout=0.05) == pb.RequestContext()
    assert turn.aborted == 1


async def _no_blobs(ident: bytes) -> bytes:
    raise AssertionError("no blob should be read")
