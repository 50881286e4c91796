"""`prompt_size.measure`: a request's total and per-category bytes in one pass over the history,
the same figures as `request_bytes` and the categories measured one by one."""

from __future__ import annotations

import json

from cursor_byok.agent import context as prompts
from cursor_byok.agent.compaction import summary_message
from cursor_byok.agent.prompt_size import category_bytes
from cursor_byok.agent.prompt_size import grown
from cursor_byok.agent.prompt_size import measure
from cursor_byok.agent.prompt_size import request_bytes
from cursor_byok.agent.prompt_size import unchanged
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.providers import ModelRequest
from cursor_byok.providers import ToolSpec
from cursor_byok.tools.registry import tools_for


def _size(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def test_one_pass_gives_the_total_and_every_category() -> None:
    mode = pb.AGENT_MODE_AGENT
    context = pb.RequestContext()
    tools = {tool.name: tool for tool in tools_for(mode, pb.AgentRunRequest())}
    specs = [ToolSpec(t.name, t.description, t.parameters) for t in tools.values()]
    system = prompts.system_prompt(mode, context, list(tools))
    summary = summary_message("what came before: ünïcode")
    said = {"role": "user", "content": [{"type": "text", "text": "héllo"}]}
    answer = {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}
    request = ModelRequest("m", system, [dict(summary), said, answer], specs)

    total, sizes = measure(request, mode, context, tools)

    assert total == request_bytes(request)
    assert total == len(system.encode()) + sum(
        _size({"name": s.name, "description": s.description, "parameters": s.parameters})
        for s in specs
    ) + _size(summary) + _size(said) + _size(answer)
    assert sizes["summarized_conversation"] == _size(summary)
    assert sizes["conversation"] == _size(said) + _size(answer)
    assert sizes["tools"] + sizes.get("mcp", 0) == total - len(system.encode()) - _size(
        summary
    ) - _size(said) - _size(answer)
    parts = prompts.prompt_parts(mode, context, [s.name for s in specs])
    assert sizes["system_prompt"] == sum(len(t.encode()) for c, t in parts if c == "system_prompt")
    assert category_bytes(request, mode, context, tools) == sizes


def test_the_request_after_an_answer_is_measured_from_the_one_sent() -> None:
    """The request after an answer is the one sent plus the answer: its sizes are the sent
    request's plus the answer's, equal to measuring it whole; anything else is measured whole."""
    mode = pb.AGENT_MODE_AGENT
    context = pb.RequestContext()
    tools = {tool.name: tool for tool in tools_for(mode, pb.AgentRunRequest())}
    specs = [ToolSpec(t.name, t.description, t.parameters) for t in tools.values()]
    system = prompts.system_prompt(mode, context, list(tools))
    history = [dict(summary_message("before")), {"role": "user", "content": "q"}]
    sent = ModelRequest("m", system, list(history), specs)
    measured = measure(sent, mode, context, tools)
    answer = {"role": "assistant", "content": [{"type": "text", "text": "ä" * 40}]}
    following = ModelRequest("m", system, [*history, answer], specs)

    assert grown(sent, measured, following, _size(answer)) == measure(
        following, mode, context, tools
    )
    assert measured == measure(sent, mode, context, tools)  # the sent request's sizes kept
    copied = ModelRequest("m", system, [dict(history[0]), history[1], answer], specs)
    two_more = ModelRequest("m", system, [*history, answer, answer], specs)
    other_tools = ModelRequest("m", system, [*history, answer], list(specs))
    for changed in (copied, two_more, other_tools):
        assert grown(sent, measured, changed, _size(answer)) is None


def test_a_request_is_unchanged_only_with_the_same_objects() -> None:
    """The turn's first call reuses the start's measure only for the very same request: the
    same system prompt, tools and message objects, no more and no fewer."""
    specs = [ToolSpec("Read", "reads", {"type": "object"})]
    said = {"role": "user", "content": "q"}
    measured = ModelRequest("m", "system", [said], specs)
    assert unchanged(measured, ModelRequest("m", measured.system, [said], specs))
    for other in (
        ModelRequest("m", measured.system, [dict(said)], specs),  # an equal copy
        ModelRequest("m", measured.system, [said, said], specs),
        ModelRequest("m", measured.system, [], specs),
        ModelRequest("m", measured.system, [said], list(specs)),
        ModelRequest("m", "".join(["sys", "tem"]), [said], specs),
    ):
        assert not unchanged(measured, other)
