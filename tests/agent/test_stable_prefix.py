"""The start of every request (tools, system prompt) is byte-identical between builds."""

from __future__ import annotations

import json
from types import SimpleNamespace

from cursor_byok.agent.context import AGENT
from cursor_byok.agent.context import system_prompt
from cursor_byok.agent.toolset import toolset_for
from cursor_byok.config import parse_config
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.providers.base import ModelRequest
from cursor_byok.providers.base import ProviderSettings
from cursor_byok.providers.openai_chat import build_body


def _context() -> pb.RequestContext:
    context = pb.RequestContext()
    context.env.os_version = "linux"
    context.env.workspace_paths.append("/w")
    context.rules.add(full_path="/w/.cursor/rules/a.mdc", content="Use tabs.")
    return context


def test_tools_are_sorted_and_the_prefix_is_byte_stable() -> None:
    turn = SimpleNamespace(
        run_request=pb.AgentRunRequest(),
        status=SimpleNamespace(model="m"),
        options=SimpleNamespace(tool_choice=None),
        instruction=SimpleNamespace(user_message=pb.UserMessage()),
        transcript=SimpleNamespace(messages=list),
    )
    config = parse_config(
        {
            "providers": {"p": {"kind": "openai-chat", "base_url": "http://127.0.0.1:1/v1"}},
            "models": [{"name": "m", "provider": "p", "model": "m"}],
        }
    )
    first_set = toolset_for(config, turn, AGENT, _context())
    later_set = toolset_for(config, turn, AGENT, _context())
    specs_a, system_a = first_set.specs, first_set.system
    specs_b, system_b = later_set.specs, later_set.system
    names = [s.name for s in specs_a]
    assert names == sorted(names)
    assert system_a == system_b == system_prompt(AGENT, _context(), names)
    settings = ProviderSettings(kind="openai-chat", base_url="http://127.0.0.1:1/v1")
    first = ModelRequest(
        model="m",
        system=system_a,
        messages=[{"role": "user", "content": "a"}],
        tools=specs_a,
        cache_key="conv",
    )
    later = ModelRequest(
        model="m",
        system=system_b,
        messages=[
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": [{"type": "text", "text": "b"}]},
            {"role": "user", "content": "c"},
        ],
        tools=specs_b,
        cache_key="conv",
    )
    a = json.dumps(build_body(first, settings), separators=(",", ":"))
    b = json.dumps(build_body(later, settings), separators=(",", ":"))
    # everything up to the end of the first request's messages is repeated
    head = a[: a.index('"content":"a"}') + len('"content":"a"}')]
    assert b.startswith(head)
    assert build_body(later, settings)["prompt_cache_key"] == "conv"
