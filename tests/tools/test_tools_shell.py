"""Shell and AwaitShell with real subprocesses run by the client emulator."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fake_context import FakeToolContext
from fake_context import thrown

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools.base import MAX_RESULT_LINES
from cursor_byok.tools.shell import AwaitShellTool
from cursor_byok.tools.shell import ShellTool


def _stream(**kwargs) -> pb.ExecClientMessage:
    return pb.ExecClientMessage(shell_stream=pb.ShellStream(**kwargs))


async def test_shell_success_relays_output(ctx: FakeToolContext, workspace: Path):
    out = await ShellTool().run({"command": "echo hello; echo oops >&2", "description": "hi"}, ctx)
    assert not out.is_error, out.text
    assert out.text.startswith("Exit code: 0")
    assert "hello" in out.text and "oops" in out.text
    [request] = ctx.execs
    shell = request.shell_stream_args
    assert shell.tool_call_id == "call-1"
    assert shell.working_directory == str(workspace)
    assert shell.timeout == 30_000
    assert shell.timeout_behavior == pb.TIMEOUT_BEHAVIOR_BACKGROUND
    assert shell.close_stdin and shell.file_output_threshold_bytes == 40_000
    assert not shell.HasField("requested_sandbox_policy")
    # clients up to 1.0.26 refuse a shell exec without the parse (their permission checks read it)
    assert shell.HasField("parsing_result")
    assert [c.name for c in shell.parsing_result.executable_commands] == ["echo", "echo"]
    stdout = "".join(d.shell_tool_call_delta.stdout.content for d in ctx.deltas)
    stderr = "".join(d.shell_tool_call_delta.stderr.content for d in ctx.deltas)
    assert stdout == "hello\n" and stderr == "oops\n"
    card = out.tool_call.shell_tool_call
    assert card.description == "hi"
    assert card.result.success.exit_code == 0 and card.result.success.stdout == "hello\n"
    assert card.args.command == "echo hello; echo oops >&2"


async def test_shell_nonzero_exit_is_an_error(ctx):
    out = await ShellTool().run({"command": "echo bad; exit 3"}, ctx)
    assert out.is_error
    assert out.text.startswith("Exit code: 3") and "bad" in out.text
    assert out.tool_call.shell_tool_call.result.failure.exit_code == 3


async def test_shell_working_directory_and_no_output(ctx, workspace):
    out = await ShellTool().run({"command": "true", "working_directory": "src"}, ctx)
    assert ctx.execs[0].shell_stream_args.working_directory == f"{workspace}/src"
    assert "(no output)" in out.text and not out.is_error


async def test_shell_timeout_moves_to_background_then_await(ctx, workspace):
    out = await ShellTool().run(
        {"command": "echo started; sleep 0.6; echo finished", "block_until_ms": 150}, ctx
    )
    assert not out.is_error, out.text
    card = out.tool_call.shell_tool_call.result
    assert card.is_background and card.success.shell_id >= 1
    assert card.terminals_folder == ctx.request_context.env.terminals_folder
    shell_id = card.success.shell_id
    assert f"shell id {shell_id}" in out.text and "AwaitShell" in out.text
    waited = await AwaitShellTool().run({"shell_id": str(shell_id), "block_until_ms": 10_000}, ctx)
    assert not waited.is_error, waited.text
    assert f"Shell {shell_id} finished with exit code 0" in waited.text
    assert "finished" in waited.text
    complete = waited.tool_call.await_tool_call.result.success.complete
    assert complete.exit_code == 0 and complete.task_id == str(shell_id)


async def test_await_pattern_and_still_running(ctx):
    out = await ShellTool().run(
        {"command": "echo ready; sleep 2", "block_until_ms": 0, "description": "server"}, ctx
    )
    assert ctx.execs[0].shell_stream_args.is_background
    shell_id = str(out.tool_call.shell_tool_call.result.success.shell_id)
    waited = await AwaitShellTool().run(
        {"shell_id": shell_id, "pattern": "ready", "block_until_ms": 5000}, ctx
    )
    assert "still running; its output matched 'ready'" in waited.text
    still = waited.tool_call.await_tool_call.result.success.still_running
    assert still.regex_match == "ready"
    check = await AwaitShellTool().run({"shell_id": shell_id, "block_until_ms": 0}, ctx)
    assert "still running" in check.text


async def test_await_errors(ctx):
    out = await AwaitShellTool().run({"shell_id": "999", "block_until_ms": 0}, ctx)
    assert out.is_error and "No background shell with id 999" in out.text
    out = await AwaitShellTool().run({"shell_id": "1", "pattern": "("}, ctx)
    assert out.is_error and "regular expression" in out.text and len(ctx.execs) == 1


async def test_await_without_shell_id_just_waits(ctx):
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)

    out = await AwaitShellTool(sleep=fake_sleep).run({"block_until_ms": 1500}, ctx)
    assert slept == [1.5] and not ctx.execs and not out.is_error


async def test_shell_rejected_permission_and_sandbox(make_ctx):
    def rejected(request):
        return [
            _stream(start=pb.ShellStreamStart()),
            _stream(rejected=pb.ShellRejected(reason="no")),
        ]

    out = await ShellTool().run(
        {"command": "rm -rf /"}, make_ctx(overrides={"shell_stream_args": rejected})
    )
    assert out.is_error and "declined" in out.text and "no" in out.text
    assert out.tool_call.shell_tool_call.result.rejected.reason == "no"

    def denied(request):
        return _stream(permission_denied=pb.ShellPermissionDenied(error="blocked by admin"))

    out = await ShellTool().run({"command": "x"}, make_ctx(overrides={"shell_stream_args": denied}))
    assert out.is_error and "blocked by admin" in out.text
    assert out.tool_call.shell_tool_call.result.WhichOneof("result") == "permission_denied"

    def unsupported(request):
        return _stream(sandbox_unsupported=pb.ShellSandboxUnsupported(reason="no seatbelt"))

    ctx = make_ctx(overrides={"shell_stream_args": unsupported}, mode=pb.AGENT_MODE_ASK)
    out = await ShellTool(read_only_sandbox=True).run({"command": "ls"}, ctx)
    assert out.is_error and "no seatbelt" in out.text and "read-only" in out.text


async def test_shell_thrown_and_aborted(make_ctx):
    out = await ShellTool().run({"command": "x"}, make_ctx(overrides={"shell_stream_args": thrown}))
    assert out.is_error and "failed to run the command" in out.text
    assert out.tool_call.shell_tool_call.result.WhichOneof("result") == "spawn_error"

    def aborted(request):
        exit_ = pb.ShellStreamExit(code=130, aborted=True)
        exit_.abort_reason = pb.SHELL_ABORT_REASON_USER_ABORT
        return [_stream(stdout=pb.ShellStreamStdout(data="partial\n")), _stream(exit=exit_)]

    ctx = make_ctx(overrides={"shell_stream_args": aborted})
    out = await ShellTool().run({"command": "x"}, ctx)
    assert out.is_error and "aborted (stopped by the user)" in out.text and "partial" in out.text
    failure = out.tool_call.shell_tool_call.result.failure
    assert failure.aborted and failure.abort_reason == pb.SHELL_ABORT_REASON_USER_ABORT


async def test_ask_mode_requests_a_read_only_sandbox(make_ctx):
    ctx = make_ctx(mode=pb.AGENT_MODE_ASK)
    await ShellTool().run({"command": "true"}, ctx)
    policy = ctx.execs[0].shell_stream_args.requested_sandbox_policy
    assert policy.type == pb.SandboxPolicy.TYPE_WORKSPACE_READONLY


async def test_shell_huge_output_is_truncated_with_note(ctx):
    out = await ShellTool().run({"command": "seq 1 5000"}, ctx)
    lines = out.text.splitlines()
    assert lines[2] == "1" and lines[-1] == "5000"
    assert any("lines omitted" in line for line in lines)
    assert len(lines) <= MAX_RESULT_LINES + 3
    # The output exceeded the 40 KB file threshold? seq 1..5000 is ~24 KB: no file.
    assert "full output" not in out.text


async def test_shell_output_file_location(ctx):
    out = await ShellTool().run({"command": "seq 1 20000"}, ctx)
    loc = out.tool_call.shell_tool_call.result.success.output_location
    assert loc.file_path and "full output" in out.text and loc.file_path in out.text
    assert Path(loc.file_path).read_text().endswith("20000\n")


async def test_shell_missing_command(ctx):
    out = await ShellTool().run({"command": ""}, ctx)
    assert out.is_error and "command" in out.text and not ctx.execs


class _LoopWithoutBackgroundedAsTerminal(FakeToolContext):
    """Like a loop that treats `backgrounded` as a stream event and keeps waiting."""

    cancelled = False

    async def exec(self, message, on_event=None):
        self.execs.append(message)
        events = [
            _stream(start=pb.ShellStreamStart()),
            _stream(stdout=pb.ShellStreamStdout(data="booting\n")),
            _stream(backgrounded=pb.ShellStreamBackgrounded(shell_id=7, pid=42)),
        ]
        for event in events:
            on_event(event)
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            type(self).cancelled = True
            raise


async def test_terminal_event_seen_as_stream_event_still_ends_the_call(workspace):
    ctx = _LoopWithoutBackgroundedAsTerminal(workspace)
    out = await asyncio.wait_for(ShellTool().run({"command": "serve"}, ctx), timeout=5)
    assert not out.is_error and "shell id 7, pid 42" in out.text and "booting" in out.text
    assert f"{ctx.request_context.env.terminals_folder}/7.txt" in out.text
    assert _LoopWithoutBackgroundedAsTerminal.cancelled
