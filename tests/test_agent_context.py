"""What the model is told: system prompt per mode and context, user content, context parts."""

from __future__ import annotations

import hashlib

from cursor_byok.agent import context as prompts
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.turn import TurnError


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
