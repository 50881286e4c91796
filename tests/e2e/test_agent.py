"""The real agent loop end to end: mitmdump, the Cursor-like client, a fake provider."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from mitm import start_mitmdump
from provider_config import MODEL
from provider_config import write_config

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.pb import aiserver_v1_pb2 as aipb

pytestmark = pytest.mark.timeout(120)
KINDS = ["openai-chat", "anthropic", "openai-responses"]
# Every provider wire format on both transports (the transport is independent of the provider).
KIND_TRANSPORTS = [(kind, transport) for transport in ("bidi", "run") for kind in KINDS]


class Setup:
    def __init__(
        self,
        tmp_path: Path,
        workspace: Path,
        fp: FakeProvider,
        kind: str,
        transport: str = "bidi",
        route_other_models: str = "",
    ) -> None:
        config = write_config(tmp_path, fp, kind)
        if route_other_models:  # top-level keys go before the tables
            config.write_text(f'route_other_models = "{route_other_models}"\n' + config.read_text())
        self.proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=config,
            env={"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"},
        )
        self.client = CursorLikeClient.through(self.proxy, workspace, transport=transport)
        self.workspace = workspace

    def request(self, text: str, conversation: str, **kwargs) -> pb.AgentClientMessage:
        return self.client.run_request(
            text, conversation_id=conversation, model=MODEL, workspace=self.workspace, **kwargs
        )

    async def close(self) -> None:
        await self.client.aclose()
        self.proxy.stop()


def error_details(end) -> aipb.ErrorDetails:
    [detail] = end.error.details
    assert detail.type == "aiserver.v1.ErrorDetails"
    return aipb.ErrorDetails.FromString(detail.value)


@pytest.mark.parametrize("kind,transport", KIND_TRANSPORTS)
async def test_multi_step_turn_read_edit_shell_answer(tmp_path, workspace, kind, transport) -> None:
    notes = str(workspace / "notes.txt")
    async with FakeProvider() as fp:
        fp.script.tool_calls([("call_read", "Read", {"path": notes})], reasoning="Look first.")
        fp.script.tool_calls(
            [
                (
                    "call_edit",
                    "StrReplace",
                    {"path": notes, "old_string": "beta", "new_string": "gamma"},
                )
            ]
        )
        fp.script.tool_calls([("call_sh", "Shell", {"command": "cat notes.txt"})])
        fp.script.text("Done: beta is now gamma.")
        setup = Setup(tmp_path, workspace, fp, kind, transport)
        try:
            result = await setup.client.turn(setup.request("rename beta", str(uuid.uuid4())))
        finally:
            await setup.close()
        requests = list(fp.requests)
    assert result.end.ok, result.end.error
    assert (workspace / "notes.txt").read_text() == "alpha\ngamma\n"
    assert result.text.endswith("Done: beta is now gamma.")
    assert "Look first." in "".join(u.text for u in result.updates("thinking_delta"))
    completed = result.updates("tool_call_completed")
    assert [c.tool_call.WhichOneof("tool") for c in completed] == [
        "read_tool_call",
        "edit_tool_call",
        "shell_tool_call",
    ]
    shell = completed[2].tool_call.shell_tool_call
    assert shell.result.WhichOneof("result") == "success"
    assert len(requests) == 4
    kinds = result.kinds()
    assert kinds.index("exec:shell_stream_args") < kinds.index("turn_ended")
    assert [u.step_id for u in result.updates("step_started")] == [1, 2, 3, 4]
    ended = result.updates("turn_ended")[0]
    assert ended.input_tokens == 400 and ended.output_tokens == 80
    # staged (pending batch) then settled checkpoints around each tool batch
    pending = [len(c.pending_tool_calls) for c in result.checkpoints]
    assert pending[:2] == [1, 0]
    # the close: staged, settled, then the same settled checkpoint again (protocol.md §4.5)
    assert pending[-3:] == [1, 0, 0]
    assert result.checkpoints[-1].SerializeToString() == result.checkpoints[-2].SerializeToString()
    last = requests[-1].json
    assert "gamma" in str(last)  # the shell output went back to the model


@pytest.mark.parametrize("kind", ["openai-chat", "anthropic"])
async def test_second_turn_sends_first_turns_history(tmp_path, workspace, transport, kind) -> None:
    async with FakeProvider() as fp:
        fp.script.text("The answer is 42.", reasoning="Think about it.")
        fp.script.text("You asked about the answer.")
        setup = Setup(tmp_path, workspace, fp, kind, transport)
        conversation = str(uuid.uuid4())
        try:
            one = await setup.client.turn(setup.request("what is the answer?", conversation))
            two = await setup.client.turn(
                setup.request("what did I ask?", conversation, state=one.checkpoints[-1])
            )
        finally:
            await setup.close()
        second = fp.requests[1].json
    assert one.end.ok and two.end.ok
    text = str(second)
    assert "what is the answer?" in text and "The answer is 42." in text
    assert "what did I ask?" in text
    assert two.text == "You asked about the answer."


async def test_ask_mode_refuses_to_write(tmp_path, workspace, transport) -> None:
    target = str(workspace / "new.txt")
    async with FakeProvider() as fp:
        fp.script.tool_calls([("call_w", "Write", {"path": target, "contents": "x"})])
        fp.script.text("I cannot write in Ask mode.")
        setup = Setup(tmp_path, workspace, fp, "openai-chat", transport)
        try:
            result = await setup.client.turn(
                setup.request("create new.txt", str(uuid.uuid4()), mode=2)
            )
        finally:
            await setup.close()
        first, second = fp.requests[0].json, fp.requests[1].json
    assert result.end.ok
    assert not (workspace / "new.txt").exists()
    offered = {t["function"]["name"] for t in first["tools"]}
    assert "Write" not in offered and "StrReplace" not in offered and "Read" in offered
    tool_message = next(m for m in second["messages"] if m["role"] == "tool")
    assert "not available" in tool_message["content"]
    assert not [e for e in setup.client.exec_log if e.WhichOneof("message") == "write_args"]


async def test_rate_limit_is_retried_then_succeeds(tmp_path, workspace, transport) -> None:
    async with FakeProvider() as fp:
        fp.script.error(429, retry_after=0, message="slow down")
        fp.script.text("made it")
        setup = Setup(tmp_path, workspace, fp, "anthropic", transport)
        try:
            result = await setup.client.turn(setup.request("hi", str(uuid.uuid4())))
        finally:
            await setup.close()
        assert len(fp.requests) == 2
    assert result.end.ok
    assert result.text == "made it"


async def test_auth_failure_is_an_error_cursor_shows(tmp_path, workspace, transport) -> None:
    async with FakeProvider() as fp:
        fp.script.error(401, message="Incorrect API key provided")
        setup = Setup(tmp_path, workspace, fp, "openai-chat", transport)
        try:
            result = await setup.client.turn(setup.request("hi", str(uuid.uuid4())))
        finally:
            await setup.close()
        assert len(fp.requests) == 1  # never retried
    assert result.end.error.code == "unauthenticated"  # not "unavailable": a retry cannot help
    details = error_details(result.end)
    assert details.error == aipb.ErrorDetails.ERROR_PROVIDER_ERROR
    assert "API key" in details.details.title and "401" in details.details.title
    assert "Incorrect API key provided" in details.details.detail
    assert "sk-test-not-a-real-key" not in result.end.error.message + details.details.detail
    assert result.text == ""  # errors are never assistant text
    assert "sk-test-not-a-real-key" not in setup.proxy.log()


# (status, provider message, Connect code, words of the title Cursor shows)
PROVIDER_FAILURES = [
    (403, "Your key has no access to this model", "permission_denied", "refused access"),
    (404, "The model `fake-upstream-1` does not exist", "not_found", "does not know this model"),
    (429, "Rate limit reached for requests", "resource_exhausted", "rate limit"),
]


@pytest.mark.parametrize("status,message,code,title", PROVIDER_FAILURES)
@pytest.mark.parametrize("kind", ["openai-chat", "anthropic"])
async def test_provider_failures_reach_cursor_with_the_code_that_says_what_happened(
    tmp_path, workspace, kind, status, message, code, title
) -> None:
    async with FakeProvider() as fp:
        for _ in range(3 if status == 429 else 1):  # 429 is retried (max_retries = 2)
            fp.script.error(status, message=message, retry_after=0 if status == 429 else None)
        setup = Setup(tmp_path, workspace, fp, kind)
        try:
            result = await setup.client.turn(setup.request("hi", str(uuid.uuid4())))
        finally:
            await setup.close()
    assert result.end.error.code == code
    assert message in result.end.error.message
    details = error_details(result.end)  # what Cursor shows: title and the provider's message
    assert details.error == aipb.ErrorDetails.ERROR_PROVIDER_ERROR
    assert title in details.details.title.lower() and f"HTTP {status}" in details.details.title
    assert message in details.details.detail
    assert result.text == ""


async def test_unknown_model_lists_the_configured_ones(tmp_path, workspace) -> None:
    async with FakeProvider() as fp:
        # "error": a model we do not serve is refused here instead of going to Cursor
        setup = Setup(tmp_path, workspace, fp, "openai-chat", route_other_models="error")
        try:
            message = setup.client.run_request("hi", conversation_id="c", model="gpt-nope")
            result = await setup.client.turn(message)
        finally:
            await setup.close()
    assert result.end.error.code == "invalid_argument"
    assert MODEL in error_details(result.end).details.detail


async def test_cancel_mid_stream_aborts_the_provider_request(
    tmp_path, workspace, transport
) -> None:
    async with FakeProvider() as fp:
        fp.script.hang(text="thinking out loud")
        setup = Setup(tmp_path, workspace, fp, "openai-chat", transport)

        def cancel_on_text(run) -> None:
            def on_message(message: pb.AgentServerMessage) -> None:
                update = message.interaction_update
                if update.WhichOneof("message") == "text_delta":
                    action = pb.AgentClientMessage()
                    action.conversation_action.cancel_action.reason = "stop"
                    run.spawn(run.append(action))

            run.on_message = on_message

        try:
            result = await setup.client.turn(
                setup.request("write a novel", str(uuid.uuid4())), during=cancel_on_text
            )
            await asyncio.wait_for(fp.wait_for_disconnect(0), 10)
        finally:
            await setup.close()
    assert result.end.error.code == "canceled"
    assert result.text and "thinking out loud".startswith(result.text)


async def test_missing_config_is_an_error_in_cursor_not_a_dead_proxy(tmp_path, workspace) -> None:
    proxy = start_mitmdump(tmp_path / "p", agent="provider", config=tmp_path / "absent.toml")
    client = CursorLikeClient.through(proxy, workspace)
    try:
        result = await client.turn(client.run_request("hi", conversation_id="c"))
    finally:
        await client.aclose()
        proxy.stop()
    assert result.end.error.code == "failed_precondition"
    assert "absent.toml: no such file" in error_details(result.end).details.detail


async def test_context_parts_are_fetched_by_kv_get_into_the_prompt(tmp_path, workspace) -> None:
    import hashlib

    rules = pb.RequestContext(
        rules=[pb.CursorRule(full_path=".cursor/rules/style.mdc", content="Answer in haiku.")]
    ).SerializeToString()
    rules_id = hashlib.sha256(rules).digest()
    async with FakeProvider() as fp:
        fp.script.text("Five seven five")
        setup = Setup(tmp_path, workspace, fp, "anthropic")
        setup.client.blobs[rules_id] = rules
        message = setup.request("hello", str(uuid.uuid4()))
        action = message.run_request.action
        action.user_message_action.ClearField("request_context")
        action.request_context_parts.rules_blob_id = rules_id
        action.request_context_parts.rules_byte_length = len(rules)
        action.request_context_parts.dynamic_context.env.workspace_paths.append(str(workspace))
        try:
            result = await setup.client.turn(message)
        finally:
            await setup.close()
        system = str(fp.requests[0].json["system"])
    assert result.end.ok
    assert "kv:get_blob_args" in result.kinds()
    assert "Answer in haiku." in system and str(workspace) in system


async def test_parallel_tool_calls_answer_in_one_message(tmp_path, workspace, transport) -> None:
    notes, readme = str(workspace / "notes.txt"), str(workspace / "README.md")
    async with FakeProvider() as fp:
        fp.script.tool_calls(
            [
                ("call_a", "Read", {"path": notes}),
                ("call_b", "Read", {"path": readme}),
                ("call_c", "StrReplace", {"path": notes, "old_string": "alpha", "new_string": "A"}),
                ("call_d", "StrReplace", {"path": notes, "old_string": "A", "new_string": "B"}),
            ]
        )
        fp.script.text("done")
        setup = Setup(tmp_path, workspace, fp, "openai-chat", transport)
        try:
            result = await setup.client.turn(setup.request("go", str(uuid.uuid4())))
        finally:
            await setup.close()
        second = fp.requests[1].json["messages"]
    assert result.end.ok
    assert (workspace / "notes.txt").read_text() == "B\nbeta\n"  # edits applied in call order
    tool_messages = [m for m in second if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_a", "call_b", "call_c", "call_d"]
    assert "alpha" in tool_messages[0]["content"]  # read before the edits
    assert len(result.updates("tool_call_completed")) == 4
