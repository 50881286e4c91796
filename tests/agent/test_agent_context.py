"""What the model is told: system prompt per mode and context, user content, context parts."""

from __future__ import annotations

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
