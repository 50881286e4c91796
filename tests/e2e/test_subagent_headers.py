"""Subagents linked by headers (issue 25 item 7): a child run that carries `x-parent-request-id`
and `x-parent-agent-tool-call-id` takes its parent's route and model, and its progress and result
go to the right Task call even when two Task calls have the same prompt (where linking by the
prompt, the fallback, cannot tell them apart). mitmdump, the Cursor-like client, the fake
provider."""

from __future__ import annotations

import json
import uuid

import pytest
from cursor_client import CursorLikeClient
from cursor_client import CursorTurn
from fakes.fake_provider import FakeProvider
from fakes.script import Step
from mitm import start_mitmdump
from provider_config import MODEL
from provider_config import write_config

from cursor_byok.pb import agent_v1_pb2 as pb

pytestmark = pytest.mark.timeout(120)
PROMPT = "Look around the workspace."
CURSOR_MODEL = "composer-1"


def responder(request) -> Step:
    """The parent asks for two Tasks with one prompt; each child reports the marker its run
    request carries; the parent then sums up."""
    body = json.dumps(request.json["messages"])
    tools = [t["function"]["name"] for t in request.json.get("tools", [])]
    if "Task" not in tools:  # a child (the subagent tool set has no Task)
        marker = "CHILD-OF-call_a" if "CHILD-OF-call_a" in body else "CHILD-OF-call_b"
        return Step("reply", text=f"REPORT {marker}")
    if '"role": "tool"' in body:
        return Step("reply", text="both looked")
    calls = [
        (
            call,
            "Task",
            {"description": f"look {call}", "prompt": PROMPT, "subagent_type": "explore"},
        )
        for call in ("call_a", "call_b")
    ]
    return Step("reply", tool_calls=calls)


def driver(client: CursorLikeClient, workspace, children: list, *, headers: bool, model: str):
    """Answer each `subagent_args` exec by running the child as a run of its own, as Cursor's
    client does: same prompt for both, the parent's ids in headers (or not), on `model`."""

    def install(run: CursorTurn) -> None:
        run.on_exec("subagent_args", lambda request: serve(run, request))

    async def serve(run: CursorTurn, request: pb.ExecServerMessage) -> None:
        args = request.subagent_args
        child = client.run_request(
            args.prompt, conversation_id=str(uuid.uuid4()), model=model, workspace=workspace
        )
        child.run_request.subagent_type_name = args.subagent_type
        user = child.run_request.action.user_message_action.user_message
        user.selected_context.extra_context.append(f"CHILD-OF-{args.tool_call_id}")

        def link(child_run: CursorTurn) -> None:
            if headers:
                child_run.headers_extra["x-parent-request-id"] = run.request_id
                child_run.headers_extra["x-parent-agent-tool-call-id"] = args.tool_call_id

        result = await client.turn(child, during=link)
        children.append((args.tool_call_id, result))
        reply = pb.ExecClientMessage(id=request.id)
        reply.subagent_result.success.agent_id = child.run_request.conversation_id
        reply.subagent_result.success.final_message = result.text
        await run.append(pb.AgentClientMessage(exec_client_message=reply))

    return install


def relayed_text(parent, call_id: str) -> str:
    return "".join(
        d.tool_call_delta.task_tool_call_delta.interaction_update.text_delta.text
        for d in parent.updates("tool_call_delta")
        if d.call_id == call_id and d.tool_call_delta.HasField("task_tool_call_delta")
    )


async def two_looks(tmp_path, workspace, *, headers: bool, model: str):
    """A parent turn whose model starts two Task children with one prompt; the children are
    sent with or without the parent headers. Returns the parent, the children, the provider's
    requests and the proxy log."""
    async with FakeProvider(responder=responder) as fp:
        proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=write_config(tmp_path, fp, "openai-chat"),
            env={"FAKE_PROVIDER_KEY": "sk-test"},
        )
        client = CursorLikeClient.through(proxy, workspace)
        children: list = []
        try:
            parent = await client.turn(
                client.run_request(
                    "two looks", conversation_id=str(uuid.uuid4()), model=MODEL, workspace=workspace
                ),
                during=driver(client, workspace, children, headers=headers, model=model),
            )
        finally:
            await client.aclose()
            proxy.stop()
        return parent, children, list(fp.requests), proxy.log()


async def test_children_linked_by_headers_get_the_parents_route_and_their_own_card(
    tmp_path, workspace
) -> None:
    # Cursor's model for the children: only the parent's route keeps them here
    parent, children, requests, log = await two_looks(
        tmp_path, workspace, headers=True, model=CURSOR_MODEL
    )
    assert parent.end.ok, parent.end.error
    assert sorted(call for call, _ in children) == ["call_a", "call_b"]
    for call, child in children:
        assert child.end.ok, child.end.error  # served here: the parent's route, not Cursor's
        assert child.text == f"REPORT CHILD-OF-{call}"
        # progress on the parent's card of exactly this call
        assert relayed_text(parent, call) == f"REPORT CHILD-OF-{call}"
    assert all(r.json["model"] == "fake-upstream-1" for r in requests)  # the parent's model
    assert f"model '{CURSOR_MODEL}' → served here" in log
    assert "subagent of run" in log and "parent's model 'Fake Model'" in log
    assert parent.text == "both looked"


async def test_without_headers_two_same_prompts_cannot_be_linked(tmp_path, workspace) -> None:
    """The fallback, for contrast: linked by prompt, two children with one prompt are ambiguous,
    so neither card gets its child's progress (the children still run and answer)."""
    parent, children, _requests, _log = await two_looks(
        tmp_path, workspace, headers=False, model=MODEL
    )
    assert parent.end.ok and len(children) == 2
    for call, child in children:
        assert child.end.ok and child.text == f"REPORT CHILD-OF-{call}"
        assert relayed_text(parent, call) == ""  # not linked: which card would it be?
