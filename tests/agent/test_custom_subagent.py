"""A child run of a user-defined subagent type gets that definition's prompt and tools."""

from __future__ import annotations

from cursor_byok.agent.toolset import custom_subagent
from cursor_byok.pb import agent_v1_pb2 as pb


def test_the_child_run_finds_its_definition_by_name() -> None:
    context = pb.RequestContext(
        custom_subagents=[
            pb.CustomSubagent(name="reviewer", prompt="Review.", tools=["Read"]),
            pb.CustomSubagent(name="writer", prompt="Write."),
        ]
    )
    child = pb.AgentRunRequest(subagent_type_name="reviewer")
    found = custom_subagent(child, context)
    assert found is not None and found.prompt == "Review." and list(found.tools) == ["Read"]
    assert custom_subagent(pb.AgentRunRequest(subagent_type_name="explore"), context) is None
    assert custom_subagent(pb.AgentRunRequest(), context) is None  # not a child run
