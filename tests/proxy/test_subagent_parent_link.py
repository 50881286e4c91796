"""A subagent's parent link (issue 32 item 6): the (parent request, Task tool call) its run
request's headers name reaches its turn by one explicit path: `RunRegistry.receive(parent=...)`
→ `LiveRun.parent` → `TurnOptions.parent_tool_call_id`; nothing is left behind in the registry."""

from __future__ import annotations

import asyncio

from cursor_byok.core.runs import RunConfig
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.proxy.run_registry import RunRegistry


def _run_request(conversation: str) -> pb.AgentClientMessage:
    message = pb.AgentClientMessage()
    message.run_request.conversation_id = conversation
    message.run_request.action.user_message_action.user_message.text = "go"
    message.run_request.conversation_state.SetInParent()
    return message


async def test_the_parent_link_reaches_only_the_run_it_names() -> None:
    started: dict[str, tuple[str, str] | None] = {}
    done = asyncio.Event()

    async def runner(live, request) -> None:
        started[live.request_id] = live.parent
        if len(started) == 2:
            done.set()
        live.finish()

    registry = RunRegistry(runner, config=RunConfig())
    registry.start()
    try:
        child = _run_request("child")
        registry.receive("child-1", 0, child, raw=child.SerializeToString(), owner=b"o",
                         parent=("parent-1", "call_t"))  # fmt: skip
        plain = _run_request("plain")
        registry.receive("plain-1", 0, plain, raw=plain.SerializeToString(), owner=b"o")
        await asyncio.wait_for(done.wait(), 10)
    finally:
        await registry.stop()
    assert started == {"child-1": ("parent-1", "call_t"), "plain-1": None}
    assert not hasattr(registry, "parents")  # no set-and-pop table around `receive`
