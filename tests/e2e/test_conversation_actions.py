"""Every ConversationAction Cursor sends, end to end: mitmdump, the Cursor-like client, the
fake provider (agent/actions.py, issue 11)."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest
from cursor_client import CursorLikeClient
from cursor_client import CursorTurn
from fakes.anthropic_search import RESULTS
from fakes.anthropic_search import anthropic_search_stream
from fakes.fake_provider import FakeProvider
from mitm import start_mitmdump
from provider_config import MODEL
from provider_config import write_config

from cursor_byok.pb import agent_v1_pb2 as pb

pytestmark = pytest.mark.timeout(120)

PLAN = """---
name: Greeting
overview: Add a greeting file
todos:
  - id: write
    content: Write hello.txt
    status: pending
  - id: check
    content: "Check it with cat"
    status: pending
---
# Greeting

1. Write hello.txt containing "hello".
2. Check it.
"""


class Setup:
    def __init__(self, tmp_path: Path, workspace: Path, fp: FakeProvider, **client) -> None:
        self.proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=write_config(tmp_path, fp, "openai-chat"),
            env={"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"},
        )
        self.client = CursorLikeClient.through(self.proxy, workspace, **client)
        self.workspace = workspace

    def request(self, text: str, conversation: str, **kwargs) -> pb.AgentClientMessage:
        return self.client.run_request(
            text, conversation_id=conversation, model=MODEL, workspace=self.workspace, **kwargs
        )

    def action(
        self, conversation: str, state: pb.ConversationStateStructure | None = None, **action
    ) -> pb.AgentClientMessage:
        """A later-turn run request carrying `action` (context as a dynamic part, like Cursor)."""
        message = self.request("", conversation, state=state)
        run = message.run_request
        context = pb.RequestContext()
        context.CopyFrom(run.action.user_message_action.request_context)
        run.action.Clear()
        run.action.request_context_parts.dynamic_context.CopyFrom(context)
        for name, value in action.items():
            getattr(run.action, name).CopyFrom(value)
        return message

    async def close(self) -> None:
        await self.client.aclose()
        self.proxy.stop()


def tool_names(request) -> list[str]:
    return [t["function"]["name"] for t in request.json.get("tools", [])]


def texts(request) -> str:
    return json.dumps(request.json["messages"])


def plan_answer(query: pb.InteractionQuery) -> pb.InteractionResponse:
    response = pb.InteractionResponse()
    response.create_plan_request_response.result.plan_uri = "file:///plans/greeting.plan.md"
    response.create_plan_request_response.result.success.SetInParent()
    return response


async def test_start_plan_then_build_executes_the_plan(tmp_path, workspace) -> None:
    hello = str(workspace / "hello.txt")
    async with FakeProvider() as fp:
        fp.script.tool_calls(
            [("call_plan", "CreatePlan", {"plan": "# Greeting\n1. Write hello.txt", "name": "g"})]
        )
        fp.script.text("The plan is ready.")
        fp.script.tool_calls([("call_w", "Write", {"path": hello, "contents": "hello\n"})])
        fp.script.text("Built.")
        setup = Setup(tmp_path, workspace, fp, answers={"create_plan_request_query": plan_answer})
        conversation = str(uuid.uuid4())
        try:
            start = pb.StartPlanAction()
            start.user_message.text = "plan a greeting file"
            start.user_message.message_id = "m1"
            first = setup.request("", conversation)
            first.run_request.action.user_message_action.request_context.env.workspace_paths[:] = [
                str(workspace)
            ]
            start.request_context.CopyFrom(
                first.run_request.action.user_message_action.request_context
            )
            first.run_request.action.ClearField("user_message_action")
            first.run_request.action.start_plan_action.CopyFrom(start)
            one = await setup.client.turn(first)
            build = pb.ExecutePlanAction(
                plan_file_content=PLAN,
                plan_file_path="/plans/greeting.plan.md",
                execution_mode=pb.AGENT_MODE_AGENT,
            )
            two = await setup.client.turn(
                setup.action(conversation, one.checkpoints[-1], execute_plan_action=build)
            )
        finally:
            await setup.close()
        requests = list(fp.requests)
    assert one.end.ok, one.end.error
    assert two.end.ok, two.end.error
    # Plan turn: the message reached the model, in Plan mode (CreatePlan, no edits)
    assert "plan a greeting file" in texts(requests[0])
    assert "CreatePlan" in tool_names(requests[0]) and "Write" not in tool_names(requests[0])
    assert one.checkpoints[-1].mode == pb.AGENT_MODE_PLAN
    # Build turn: plan text and the execution mode's tools
    assert "Write hello.txt containing" in texts(requests[2])
    assert "/plans/greeting.plan.md" in texts(requests[2])
    assert "Write" in tool_names(requests[2]) and "CreatePlan" not in tool_names(requests[2])
    assert (workspace / "hello.txt").read_text() == "hello\n"
    assert two.text == "Built."
    last = two.checkpoints[-1]
    assert last.mode == pb.AGENT_MODE_AGENT
    todos = [json.loads(setup.client.blobs[i]) for i in last.todos]
    assert [t["content"] for t in todos] == ["Write hello.txt", "Check it with cat"]


async def test_resume_reruns_the_pending_batch_then_calls_the_model(tmp_path, workspace) -> None:
    log = workspace / "log.txt"
    async with FakeProvider() as fp:
        fp.script.tool_calls([("call_sh", "Shell", {"command": "echo ran >> log.txt"})])
        fp.script.text("First done.")
        fp.script.text("Resumed and done.")
        setup = Setup(tmp_path, workspace, fp)
        conversation = str(uuid.uuid4())
        try:
            one = await setup.client.turn(setup.request("log it", conversation))
            staged = next(c for c in one.checkpoints if c.pending_tool_calls)
            assert log.read_text() == "ran\n"
            execs_before = len(setup.client.exec_log)
            resume = pb.ResumeAction()
            two = await setup.client.turn(setup.action(conversation, staged, resume_action=resume))
            execs = setup.client.exec_log[execs_before:]
            # an empty resume: nothing pending, the last message answered → no model call
            calls_before = len(fp.requests)
            three = await setup.client.turn(
                setup.action(conversation, two.checkpoints[-1], resume_action=resume)
            )
            calls_after = len(fp.requests)
        finally:
            await setup.close()
        requests = list(fp.requests)
    assert one.end.ok and two.end.ok, two.end.error
    assert log.read_text() == "ran\nran\n"  # re-run exactly once
    assert [e.WhichOneof("message") for e in execs] == ["shell_stream_args"]
    assert len(requests) == 3
    resumed_request = requests[2].json["messages"]
    assert resumed_request[-1]["role"] == "tool" and "call_sh" in json.dumps(resumed_request[-1])
    assert two.text == "Resumed and done."
    assert [c.tool_call.WhichOneof("tool") for c in two.updates("tool_call_completed")] == [
        "shell_tool_call"
    ]
    assert not two.checkpoints[-1].pending_tool_calls
    assert three.end.ok, three.end.error
    assert calls_after == calls_before
    assert three.text == "" and not three.updates("tool_call_started")


async def test_user_shell_command_then_the_model_sees_it(tmp_path, workspace) -> None:
    async with FakeProvider() as fp:
        fp.script.text("I see you printed the notes.")
        setup = Setup(tmp_path, workspace, fp)
        conversation = str(uuid.uuid4())
        try:
            shell = pb.ShellCommandAction(exec_id="user-exec-1")
            shell.shell_command.command = "cat notes.txt"
            one = await setup.client.turn(
                setup.action(
                    conversation, pb.ConversationStateStructure(), shell_command_action=shell
                )
            )
            requests_after_shell = len(fp.requests)
            two = await setup.client.turn(
                setup.request("what did my command print?", conversation, state=one.checkpoints[-1])
            )
        finally:
            await setup.close()
        requests = list(fp.requests)
    assert one.end.ok, one.end.error
    assert requests_after_shell == 0  # no model call for the user's command
    [done] = one.updates("tool_call_completed")
    card = done.tool_call.shell_tool_call
    assert card.args.command == "cat notes.txt"
    assert card.result.WhichOneof("result") == "success"
    assert "beta" in card.result.success.stdout
    state = one.checkpoints[-1]
    [turn_id] = state.turns
    turn = pb.ConversationTurnStructure.FromString(setup.client.blobs[turn_id])
    assert turn.WhichOneof("turn") == "shell_conversation_turn"
    assert two.end.ok, two.end.error
    history = texts(requests[0])
    assert "cat notes.txt" in history and "alpha" in history and "beta" in history
    assert "what did my command print?" in history


async def test_background_completion_reaches_the_model_bounded(tmp_path, workspace) -> None:
    async with FakeProvider() as fp:
        fp.script.text("Hello.")
        fp.script.text("The tests passed.")
        setup = Setup(tmp_path, workspace, fp)
        conversation = str(uuid.uuid4())
        try:
            one = await setup.client.turn(setup.request("start the tests", conversation))
            done = pb.BackgroundTaskCompletionAction()
            done.completions.add(
                task_id="shell-7",
                kind=pb.BACKGROUND_TASK_KIND_SHELL,
                status=pb.BACKGROUND_TASK_STATUS_SUCCESS,
                title="pytest -q",
                detail="5 passed\n" + "x" * 50_000 + "TAIL-MARKER",
                output_path="/tmp/terminals/7.txt",
            )
            done.completions.add(
                kind=pb.BACKGROUND_TASK_KIND_SUBAGENT,
                status=pb.BACKGROUND_TASK_STATUS_SUCCESS,
                title="Docs review",
                tool_call_id="call_bg_task",
                subagent_id="agent-bg",
            )
            two = await setup.client.turn(
                setup.action(
                    conversation, one.checkpoints[-1], background_task_completion_action=done
                )
            )
        finally:
            await setup.close()
        requests = list(fp.requests)
    assert two.end.ok, two.end.error
    history = texts(requests[1])
    assert "pytest -q" in history and "5 passed" in history and "/tmp/terminals/7.txt" in history
    assert "TAIL-MARKER" not in history and len(history) < 20_000  # capped
    assert "Docs review" in history and "agent-bg" in history
    assert two.text == "The tests passed."
    card = two.checkpoints[-1].subagent_runs_by_parent_tool_call_id["call_bg_task"]
    assert card.status == pb.SUBAGENT_RUN_STATUS_SUCCESS and card.subagent_id == "agent-bg"


def subagent_driver(setup: Setup, children: list, started: list | None = None):
    """Install on a parent turn: answer `subagent_args` by running the child as a new run (as
    Cursor's client does) and returning its result; `children` collects the child results,
    `started` the child conversation ids as they start."""
    started = started if started is not None else []

    def install(run: CursorTurn) -> None:
        run.on_exec("subagent_args", lambda request: serve_child(run, request))

    async def serve_child(run: CursorTurn, request: pb.ExecServerMessage) -> None:
        args = request.subagent_args
        child_id = str(uuid.uuid4())
        child = setup.request(args.prompt, child_id)
        child.run_request.subagent_type_name = args.subagent_type
        child.run_request.requested_model.model_id = args.model_id
        started.append(child_id)
        result = await setup.client.turn(child)
        children.append((child_id, args, result))
        reply = pb.ExecClientMessage(id=request.id)
        if result.end.ok:
            reply.subagent_result.success.agent_id = child_id
            reply.subagent_result.success.final_message = result.text
            reply.subagent_result.success.tool_call_count = len(
                result.updates("tool_call_completed")
            )
        else:
            reply.subagent_result.error.agent_id = child_id
            reply.subagent_result.error.error = f"aborted: {result.end.error.message}"
        await run.append(pb.AgentClientMessage(exec_client_message=reply))

    return install


async def test_task_runs_a_child_and_returns_its_result(tmp_path, workspace) -> None:
    async with FakeProvider() as fp:
        fp.script.tool_calls(
            [
                (
                    "call_task",
                    "Task",
                    {
                        "description": "Count files",
                        "prompt": "Count the files in the workspace.",
                        "subagent_type": "explore",
                    },
                )
            ]
        )
        fp.script.tool_calls([("call_child_glob", "Glob", {"glob_pattern": "*"})])
        fp.script.text("CHILD: there are 2 files.")
        fp.script.text("The subagent found 2 files.")
        setup = Setup(tmp_path, workspace, fp)
        children: list = []
        try:
            parent = await setup.client.turn(
                setup.request("how many files?", str(uuid.uuid4())),
                during=subagent_driver(setup, children),
            )
        finally:
            await setup.close()
        requests = list(fp.requests)
    assert parent.end.ok, parent.end.error
    [(child_id, args, child)] = children
    assert child.end.ok, child.end.error
    assert args.subagent_type == "explore" and args.model_id == MODEL
    assert args.tool_call_id == "call_task" and args.parent_conversation_id
    # the child ran with the subagent tool set: no Task (no nesting), no AskQuestion
    child_tools = tool_names(requests[1])
    assert "Task" not in child_tools and "AskQuestion" not in child_tools
    assert "UpdateCurrentStep" in child_tools
    assert "Count the files in the workspace." in texts(requests[1])
    assert "Task" in tool_names(requests[0])
    # the result went back to the parent's model
    assert "CHILD: there are 2 files." in texts(requests[3])
    assert child_id in texts(requests[3])
    # the child's progress showed on the parent's Task card
    relayed = [
        d.tool_call_delta.task_tool_call_delta.interaction_update
        for d in parent.updates("tool_call_delta")
        if d.call_id == "call_task" and d.tool_call_delta.HasField("task_tool_call_delta")
    ]
    kinds = [u.WhichOneof("message") for u in relayed]
    assert "tool_call_started" in kinds and "tool_call_completed" in kinds
    assert "CHILD: there are 2 files." in "".join(u.text_delta.text for u in relayed)
    assert parent.text == "The subagent found 2 files."
    [done] = parent.updates("tool_call_completed")
    task = done.tool_call.task_tool_call
    assert task.args.description == "Count files" and task.args.subagent_type.HasField("explore")
    assert task.result.success.agent_id == child_id
    statuses = [
        c.subagent_runs_by_parent_tool_call_id["call_task"].status
        for c in parent.checkpoints
        if "call_task" in c.subagent_runs_by_parent_tool_call_id
    ]
    assert statuses[0] == pb.SUBAGENT_RUN_STATUS_RUNNING
    staged = parent.checkpoints[0]  # the staged checkpoint of the batch already has the card
    assert staged.pending_tool_calls
    runs = staged.subagent_runs_by_parent_tool_call_id
    assert runs["call_task"].status == pb.SUBAGENT_RUN_STATUS_RUNNING
    assert statuses[-1] == pb.SUBAGENT_RUN_STATUS_SUCCESS
    assert parent.checkpoints[-1].subagent_runs_by_parent_tool_call_id["call_task"].subagent_id == (
        child_id
    )


async def test_cancel_subagent_stops_one_child(tmp_path, workspace) -> None:
    async with FakeProvider() as fp:
        fp.script.tool_calls(
            [("call_task", "Task", {"description": "Slow", "prompt": "Work slowly."})]
        )
        fp.script.hang(text="working")
        fp.script.text("The subagent was stopped.")
        setup = Setup(tmp_path, workspace, fp)
        children: list = []
        started: list = []
        conversation = str(uuid.uuid4())
        try:
            parent_task = asyncio.ensure_future(
                setup.client.turn(
                    setup.request("do it slowly", conversation),
                    during=subagent_driver(setup, children, started),
                )
            )
            await fp.wait_for_requests(2, timeout=30)
            execs = [e for e in setup.client.exec_log if e.WhichOneof("message") == "subagent_args"]
            assert len(execs) == 1
            [cancel_target] = started
            # A run on the parent's own conversation supersedes the parent in addon.py today;
            # `actions.supersedes()` says it must not (wiring for the lead, see the report).
            cancel = await setup.client.turn(
                setup.action(
                    str(uuid.uuid4()),
                    pb.ConversationStateStructure(),
                    cancel_subagent_action=pb.CancelSubagentAction(subagent_id=cancel_target),
                )
            )
            parent = await asyncio.wait_for(parent_task, 60)
        finally:
            await setup.close()
    assert cancel.end.ok, cancel.end.error
    [(child_id, _args, child)] = children
    assert child_id == cancel_target
    assert not child.end.ok and child.end.error.code == "canceled"
    assert parent.end.ok, parent.end.error
    [done] = parent.updates("tool_call_completed")
    assert done.tool_call.task_tool_call.result.WhichOneof("result") == "error"
    assert parent.text == "The subagent was stopped."
    final = parent.checkpoints[-1].subagent_runs_by_parent_tool_call_id["call_task"]
    assert final.status == pb.SUBAGENT_RUN_STATUS_ERROR


@pytest.mark.parametrize("variant", ["subscription_notification_action", None])
async def test_unsupported_action_ends_with_a_visible_error(tmp_path, workspace, variant) -> None:
    async with FakeProvider() as fp:
        setup = Setup(tmp_path, workspace, fp)
        try:
            message = setup.action(str(uuid.uuid4()))
            if variant is not None:
                getattr(message.run_request.action, variant).SetInParent()
            result = await setup.client.turn(message)
        finally:
            await setup.close()
        assert not fp.requests
    assert not result.end.ok
    assert result.end.error.code == "unimplemented"
    assert (variant or "(no action)") in result.end.error.message


async def test_late_ask_question_answer_reaches_the_model(tmp_path, workspace) -> None:
    async with FakeProvider() as fp:
        fp.script.text("Using SQLite then.")
        setup = Setup(tmp_path, workspace, fp)
        try:
            late = pb.AsyncAskQuestionCompletionAction(original_tool_call_id="call_q")
            question = late.original_args.questions.add(id="db", prompt="Which database?")
            question.options.add(id="pg", label="Postgres")
            question.options.add(id="lite", label="SQLite")
            late.result.success.answers.add(question_id="db", selected_option_ids=["lite"])
            result = await setup.client.turn(
                setup.action(str(uuid.uuid4()), async_ask_question_completion_action=late)
            )
        finally:
            await setup.close()
        requests = list(fp.requests)
    assert result.end.ok, result.end.error
    assert "Which database?: SQLite" in texts(requests[0])
    assert result.text == "Using SQLite then."


async def test_background_request_without_a_running_turn_ends_cleanly(tmp_path, workspace) -> None:
    async with FakeProvider() as fp:
        setup = Setup(tmp_path, workspace, fp)
        try:
            result = await setup.client.turn(
                setup.action(
                    str(uuid.uuid4()),
                    background_shell_action=pb.BackgroundShellAction(tool_call_id="call_sh"),
                )
            )
        finally:
            await setup.close()
        assert not fp.requests
    assert result.end.ok, result.end.error
    assert not result.updates("tool_call_started")


async def test_web_search_through_the_configured_endpoint(tmp_path, workspace) -> None:
    seen: list[str] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        seen.append(head.split(b" ")[1].decode())
        body = json.dumps(
            {"results": [{"title": "Result A", "url": "https://a.test", "content": "alpha"}]}
        ).encode()
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            + f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]

    def approve(query: pb.InteractionQuery) -> pb.InteractionResponse:
        response = pb.InteractionResponse()
        response.web_search_request_response.approved.SetInParent()
        return response

    try:
        async with FakeProvider() as fp:
            fp.script.tool_calls([("call_ws", "WebSearch", {"search_term": "alpha beta"})])
            fp.script.text("Found Result A.")
            config = write_config(tmp_path, fp, "openai-chat")
            with config.open("a") as out:
                out.write(f'\n[web_search]\nurl = "http://127.0.0.1:{port}/s?q={{query}}"\n')
            proxy = start_mitmdump(
                tmp_path / "proxy",
                agent="provider",
                config=config,
                env={"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"},
            )
            client = CursorLikeClient.through(
                proxy, workspace, answers={"web_search_request_query": approve}
            )
            try:
                message = client.run_request(
                    "search it", conversation_id=str(uuid.uuid4()), model=MODEL, workspace=workspace
                )
                action = message.run_request.action.user_message_action
                action.request_context.web_search_enabled = True
                result = await client.turn(message)
            finally:
                await client.aclose()
                proxy.stop()
            requests = list(fp.requests)
    finally:
        server.close()
    assert result.end.ok, result.end.error
    assert "WebSearch" in tool_names(requests[0])
    assert seen == ["/s?q=alpha+beta"]
    [done] = result.updates("tool_call_completed")
    refs = done.tool_call.web_search_tool_call.result.success.references
    assert [r.url for r in refs] == ["https://a.test"]
    assert "alpha" in texts(requests[1]) and "https://a.test" in texts(requests[1])


async def test_resume_of_an_unanswered_message_calls_the_model(tmp_path, workspace) -> None:
    """A checkpoint whose last settled message is the user's (the answer never settled):
    resume asks the model again instead of ending empty."""
    async with FakeProvider() as fp:
        fp.script.text("First answer (lost).")
        fp.script.text("Answer after resume.")
        setup = Setup(tmp_path, workspace, fp)
        conversation = str(uuid.uuid4())
        try:
            one = await setup.client.turn(setup.request("hello?", conversation))
            staged = next(c for c in one.checkpoints if c.pending_tool_calls)
            two = await setup.client.turn(
                setup.action(conversation, staged, resume_action=pb.ResumeAction())
            )
        finally:
            await setup.close()
        requests = list(fp.requests)
    assert two.end.ok, two.end.error
    assert len(requests) == 2 and "hello?" in texts(requests[1])
    assert "First answer (lost)." not in texts(requests[1])
    assert two.text == "Answer after resume."


async def test_anthropic_native_web_search_shows_its_card(tmp_path, workspace) -> None:
    async with FakeProvider() as fp:
        fp.script.raw(
            [anthropic_search_stream("rust 1.90", RESULTS, "Rust 1.90 is out.")],
            headers={"content-type": "text/event-stream"},
        )
        config = write_config(tmp_path, fp, "anthropic")
        with config.open("a") as out:
            out.write("web_search = true\n")  # the [[models]] entry: Anthropic's own search
        proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=config,
            env={"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"},
        )
        client = CursorLikeClient.through(proxy, workspace)
        try:
            message = client.run_request(
                "what's new in rust?", conversation_id=str(uuid.uuid4()), model=MODEL,
                workspace=workspace,
            )  # fmt: skip
            action = message.run_request.action.user_message_action
            action.request_context.web_search_enabled = True
            result = await client.turn(message)
        finally:
            await client.aclose()
            proxy.stop()
        requests = list(fp.requests)
    assert result.end.ok, result.end.error
    tools = requests[0].json["tools"]
    assert {"type": "web_search_20250305", "name": "web_search", "max_uses": 5} in tools
    assert "WebSearch" not in [t.get("name") for t in tools]
    [started] = result.updates("tool_call_started")
    assert started.tool_call.web_search_tool_call.args.search_term == "rust 1.90"
    [done] = result.updates("tool_call_completed")
    refs = done.tool_call.web_search_tool_call.result.success.references
    assert [r.url for r in refs] == ["https://ex.test/rel", "https://ex.test/2"]
    assert result.text == "Rust 1.90 is out."
    assert len(requests) == 1  # no client tool call: one model call
