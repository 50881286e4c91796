"""Shell and AwaitShell (tools.md §4.5, §4.6).

Commands run in the user's terminal through `shell_stream_args`; output streams back as
ShellStream events, which we relay to the card at once and collect for the model. A command
that outlives `block_until_ms` is moved to the background by the client (timeout_behavior
BACKGROUND) instead of being killed; AwaitShell then polls its terminal file.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from typing import Any
from typing import ClassVar

from cursor_byok.pb import agent_v1_pb2 as pb

from .base import MAX_UI_CHARS
from .base import Tool
from .base import ToolContext
from .base import ToolError
from .base import ToolOutcome
from .base import arg_bool
from .base import arg_int
from .base import arg_opt_str
from .base import arg_str
from .base import clamp32
from .base import is_absolute
from .base import loose_int
from .base import loose_str
from .base import no_result_text
from .base import result_of
from .base import truncate_text
from .base import workspace_roots
from .shell_parse import parsing_result

DEFAULT_BLOCK_MS = 30_000
HARD_TIMEOUT_MS = 86_400_000  # one day: the client kills a background command after this
FILE_OUTPUT_THRESHOLD = 40_000  # larger output goes to a file the model can Read
_TERMINAL_EVENTS = frozenset(
    {"exit", "backgrounded", "rejected", "permission_denied", "sandbox_unsupported"}
)
_ABORT_REASONS = {
    pb.SHELL_ABORT_REASON_USER_ABORT: "stopped by the user",
    pb.SHELL_ABORT_REASON_TIMEOUT: "timed out",
}


def _terminals_folder(ctx: ToolContext) -> str:
    try:
        return ctx.request_context.env.terminals_folder
    except AttributeError:
        return ""


def _join(folder: str, name: str) -> str:
    sep = "\\" if "\\" in folder and "/" not in folder else "/"
    return folder.rstrip("/\\") + sep + name


def _shell_args_from(args: dict[str, Any], ctx: ToolContext | None) -> pb.ShellArgs:
    """ShellArgs from model args (strict when ctx is given, i.e. for a real run)."""
    command = arg_str(args, "command", required=True)
    workdir = arg_str(args, "working_directory")
    if ctx is not None:
        roots = workspace_roots(ctx)
        if not workdir:
            workdir = roots[0] if roots else ""
        elif not is_absolute(workdir) and roots:
            workdir = _join(roots[0], workdir)
    block = arg_int(args, "block_until_ms", default=DEFAULT_BLOCK_MS)
    background = arg_bool(args, "run_in_background") or block == 0
    shell = pb.ShellArgs(
        command=command,
        working_directory=workdir,
        timeout=clamp32(max(0, block or 0)) or 0,
        tool_call_id=ctx.call_id if ctx is not None else "",
        is_background=background,
        timeout_behavior=pb.TIMEOUT_BEHAVIOR_BACKGROUND,
        hard_timeout=HARD_TIMEOUT_MS,
        file_output_threshold_bytes=FILE_OUTPUT_THRESHOLD,
        close_stdin=True,
        parsing_result=parsing_result(command),  # clients up to 1.0.26 refuse a shell without
    )
    description = arg_opt_str(args, "description")
    if description:
        shell.description = description
    notify = args.get("notify_on_output")
    if isinstance(notify, dict) and isinstance(notify.get("pattern"), str):
        config = shell.output_notification
        config.pattern = notify["pattern"]
        config.reason = str(notify.get("reason") or "")
        debounce = notify.get("debounce_ms")
        if isinstance(debounce, int | float) and not isinstance(debounce, bool):
            config.debounce = float(debounce)
    return shell


async def _exec_until_terminal(
    ctx: ToolContext,
    message: pb.ExecServerMessage,
    on_event: Any,
    early_end: asyncio.Future[pb.ExecClientMessage],
) -> pb.ExecClientMessage:
    """ctx.exec, but a terminal ShellStream event seen by on_event also ends the wait."""
    task = asyncio.ensure_future(ctx.exec(message, on_event))
    try:
        await asyncio.wait({task, early_end}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            return task.result()
        return early_end.result()
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def _spawn_error(call: pb.ToolCall, shell: pb.ShellArgs, text: str) -> ToolOutcome:
    """The card's spawn error and the model's text, for a command that did not run or end."""
    res = call.shell_tool_call.result
    res.spawn_error.command = shell.command
    res.spawn_error.working_directory = shell.working_directory
    res.spawn_error.error = text
    return ToolOutcome(text, True, call)


class _Streamed:
    """A command's output as it streams: relayed to the card at once, kept for the model. A
    terminal event ends the call (`early_end`) even if the client's exec never does."""

    def __init__(self, ctx: ToolContext, early_end: asyncio.Future[pb.ExecClientMessage]) -> None:
        self.ctx = ctx
        self.early_end = early_end
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self.interleaved: list[str] = []

    def on_event(self, event: pb.ExecClientMessage) -> None:
        if event.WhichOneof("message") != "shell_stream":
            return
        stream = event.shell_stream
        kind = stream.WhichOneof("event")
        if kind in _TERMINAL_EVENTS:
            # A loop that does not know this event is terminal (e.g. backgrounded) would
            # wait forever for the exec; end the call here instead.
            if not self.early_end.done():
                self.early_end.set_result(event)
        elif kind == "stdout" and stream.stdout.data:
            self.stdout.append(stream.stdout.data)
            self.interleaved.append(stream.stdout.data)
            stdout = pb.ShellToolCallStdoutDelta(content=stream.stdout.data)
            self.ctx.delta(
                pb.ToolCallDelta(shell_tool_call_delta=pb.ShellToolCallDelta(stdout=stdout))
            )
        elif kind == "stderr" and stream.stderr.data:
            self.stderr.append(stream.stderr.data)
            self.interleaved.append(stream.stderr.data)
            stderr = pb.ShellToolCallStderrDelta(content=stream.stderr.data)
            self.ctx.delta(
                pb.ToolCallDelta(shell_tool_call_delta=pb.ShellToolCallDelta(stderr=stderr))
            )


class ShellTool(Tool):
    """Shell; `read_only_sandbox` (Ask mode) asks the client for a read-only sandbox."""

    name = "Shell"
    identifier = "SHELL"
    read_only = False
    description = (
        "Run a shell command in the user's terminal and return its exit code and output. "
        "`working_directory` defaults to the workspace root. The call waits up to "
        f"`block_until_ms` (default {DEFAULT_BLOCK_MS}); a command still running then keeps "
        "running in the background and its output goes to a terminal file: use AwaitShell to "
        "wait for it. Pass block_until_ms=0 to start a long-running process (dev server, "
        "watcher) in the background at once. Output longer than about "
        f"{FILE_OUTPUT_THRESHOLD // 1000} KB is saved to a file. Prefer the Read, Grep and Glob "
        "tools over cat, grep and find."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command to run."},
            "working_directory": {
                "type": "string",
                "description": "Absolute directory to run in (default: the workspace root).",
            },
            "block_until_ms": {
                "type": "integer",
                "description": (
                    f"How long to wait before moving the command to the background (default "
                    f"{DEFAULT_BLOCK_MS}; 0 = background at once)."
                ),
            },
            "description": {
                "type": "string",
                "description": "A few words saying what the command does, shown to the user.",
            },
            "notify_on_output": {
                "type": "object",
                "description": "For background commands: notify when output matches `pattern`.",
                "properties": {
                    "pattern": {"type": "string"},
                    "reason": {"type": "string"},
                    "debounce_ms": {"type": "integer"},
                },
                "required": ["pattern"],
            },
        },
        "required": ["command"],
    }

    def __init__(self, *, read_only_sandbox: bool = False) -> None:
        self.read_only_sandbox = read_only_sandbox

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        try:
            shell = _shell_args_from(args, None)
        except ToolError:
            shell = pb.ShellArgs(command=loose_str(args, "command"))
        call = pb.ToolCall(shell_tool_call=pb.ShellToolCall(args=shell))
        description = loose_str(args, "description")
        if description:
            call.shell_tool_call.description = description
        return call

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        err = call.shell_tool_call.result.spawn_error
        err.command = call.shell_tool_call.args.command
        err.working_directory = call.shell_tool_call.args.working_directory
        err.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        shell = _shell_args_from(args, ctx)
        if self._read_only(ctx):
            shell.requested_sandbox_policy.type = pb.SandboxPolicy.TYPE_WORKSPACE_READONLY
        early_end: asyncio.Future[pb.ExecClientMessage] = asyncio.get_running_loop().create_future()
        streamed = _Streamed(ctx, early_end)
        started = time.monotonic()
        reply = await _exec_until_terminal(
            ctx, pb.ExecServerMessage(shell_stream_args=shell), streamed.on_event, early_end
        )
        elapsed_ms = int((time.monotonic() - started) * 1000)
        output = "".join(streamed.interleaved)
        result = result_of(reply, "shell_stream")
        event = result.WhichOneof("event") if result is not None else None
        call = pb.ToolCall(shell_tool_call=pb.ShellToolCall(args=shell))
        if shell.HasField("description"):
            call.shell_tool_call.description = shell.description
        if result is None or event not in _TERMINAL_EVENTS:
            text = (
                no_result_text(reply, "run the command")
                if result is None
                else f"The command's output stream ended without an exit status ({event})."
            )
            if output:
                text += "\nOutput so far:\n" + truncate_text(output)
            return _spawn_error(call, shell, text)
        if event == "exit":
            return self._exit(
                call, shell, result.exit, output, streamed.stdout, streamed.stderr, elapsed_ms
            )
        if event == "backgrounded":
            return self._backgrounded(ctx, call, shell, result.backgrounded, output)
        return self._refused(ctx, call, shell, result)

    def _read_only(self, ctx: ToolContext) -> bool:
        return self.read_only_sandbox or ctx.mode == pb.AGENT_MODE_ASK

    def _refused(
        self, ctx: ToolContext, call: pb.ToolCall, shell: pb.ShellArgs, result: pb.ShellStream
    ) -> ToolOutcome:
        """The command did not run: the user declined it, it was not allowed, or the sandbox
        asked for is not available."""
        res = call.shell_tool_call.result
        event = result.WhichOneof("event")
        if event == "rejected":
            res.rejected.CopyFrom(result.rejected)
            reason = result.rejected.reason or "no reason given"
            return ToolOutcome(f"The user declined to run the command: {reason}", True, call)
        if event == "permission_denied":
            res.permission_denied.CopyFrom(result.permission_denied)
            detail = result.permission_denied.error or "permission denied"
            return ToolOutcome(f"The command was not allowed to run: {detail}", True, call)
        unsupported = result.sandbox_unsupported
        text = (
            "The command could not run in the requested sandbox"
            f" ({unsupported.sandbox_policy_type or 'sandbox'}): "
            f"{unsupported.reason or 'sandboxing is not supported here'}."
        )
        if self._read_only(ctx):
            text += " In this mode only read-only commands may run; use Read, Grep or Glob."
        return _spawn_error(call, shell, text)

    def _exit(
        self,
        call: pb.ToolCall,
        shell: pb.ShellArgs,
        exit_: pb.ShellStreamExit,
        output: str,
        stdout: list[str],
        stderr: list[str],
        elapsed_ms: int,
    ) -> ToolOutcome:
        code = exit_.code
        ok = code == 0 and not exit_.aborted
        res = call.shell_tool_call.result
        body = res.success if ok else res.failure
        body.command = shell.command
        body.working_directory = exit_.cwd or shell.working_directory
        body.exit_code = clamp32(code) or 0
        body.stdout = truncate_text("".join(stdout), max_chars=MAX_UI_CHARS)
        body.stderr = truncate_text("".join(stderr), max_chars=MAX_UI_CHARS)
        body.interleaved_output = truncate_text(output, max_chars=MAX_UI_CHARS)
        body.execution_time = clamp32(elapsed_ms) or 0
        if exit_.HasField("output_location"):
            body.output_location.CopyFrom(exit_.output_location)
        if exit_.HasField("local_execution_time_ms"):
            body.local_execution_time_ms = exit_.local_execution_time_ms
        parts = [f"Exit code: {code}"]
        if exit_.aborted:
            reason = _ABORT_REASONS.get(exit_.abort_reason, "aborted")
            res.failure.aborted = True
            if exit_.HasField("abort_reason"):
                res.failure.abort_reason = exit_.abort_reason
            parts.append(f"The command was aborted ({reason}).")
        if exit_.cwd and exit_.cwd != shell.working_directory:
            parts.append(f"Working directory is now {exit_.cwd}.")
        if exit_.HasField("output_location"):
            loc = exit_.output_location
            lines = f" ({loc.line_count} lines)" if loc.line_count else ""
            parts.append(
                f"The output was long; the full output{lines} is in {loc.file_path} "
                "(use Read or Grep on it)."
            )
        parts.append("")
        parts.append(truncate_text(output) if output.strip() else "(no output)")
        return ToolOutcome("\n".join(parts), not ok, call)

    def _backgrounded(
        self,
        ctx: ToolContext,
        call: pb.ToolCall,
        shell: pb.ShellArgs,
        bg: pb.ShellStreamBackgrounded,
        output: str,
    ) -> ToolOutcome:
        res = call.shell_tool_call.result
        folder = _terminals_folder(ctx)
        ok = res.success
        ok.command = shell.command
        ok.working_directory = bg.working_directory or shell.working_directory
        ok.shell_id = bg.shell_id
        ok.interleaved_output = truncate_text(output, max_chars=MAX_UI_CHARS)
        if bg.HasField("pid"):
            ok.pid = bg.pid
            res.pid = bg.pid
        if bg.HasField("ms_to_wait"):
            ok.ms_to_wait = bg.ms_to_wait
        if bg.HasField("reason"):
            ok.background_reason = bg.reason
        res.is_background = True
        if folder:
            res.terminals_folder = folder
        pid = f", pid {bg.pid}" if bg.HasField("pid") else ""
        where = f"; output goes to {_join(folder, f'{bg.shell_id}.txt')}" if folder else ""
        why = (
            " after block_until_ms elapsed"
            if bg.reason == pb.SHELL_BACKGROUND_REASON_TIMEOUT
            else ""
        )
        text = (
            f"Command is running in the background{why} (shell id {bg.shell_id}{pid}){where}. "
            "Use AwaitShell with this shell id to wait for it or check its output."
        )
        if output.strip():
            text += "\nOutput so far:\n" + truncate_text(output)
        return ToolOutcome(text, False, call)


# =========================================================================== AwaitShell

_EXIT_FOOTER = re.compile(r"^\s*exit_code:\s*(-?\d+)\s*$", re.MULTILINE)
_ELAPSED_FOOTER = re.compile(r"^\s*elapsed_ms:\s*(\d+)\s*$", re.MULTILINE)
_RUNNING_FOR = re.compile(r"^\s*running_for_ms:\s*(\d+)\s*$", re.MULTILINE)
_FOOTER_WINDOW = 400  # the footer is at the end; do not mistake program output for it
_POLL_FIRST_S = 0.25
_POLL_MAX_S = 2.0
MAX_AWAIT_MS = 600_000


class AwaitShellTool(Tool):
    """AwaitShell: poll a background shell's terminal file (tools.md §4.6, variant a)."""

    name = "AwaitShell"
    identifier = "AWAIT"
    read_only = True
    description = (
        "Wait for a background shell (started by Shell) to finish or to print output matching "
        "`pattern`, then return its recent output. `block_until_ms` is how long to wait "
        "(default 30000; 0 = just check). Without `shell_id` it simply waits."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "shell_id": {"type": "string", "description": "The shell id Shell reported."},
            "block_until_ms": {"type": "integer", "description": "Maximum wait in ms."},
            "pattern": {
                "type": "string",
                "description": "Regular expression; stop waiting when the output matches it.",
            },
        },
    }

    def __init__(self, *, sleep: Any = None, clock: Any = None) -> None:
        self._sleep = sleep or asyncio.sleep
        self._clock = clock or time.monotonic

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        ui = pb.AwaitArgs(task_id=loose_str(args, "shell_id"))
        block = loose_int(args, "block_until_ms")
        if block is not None:
            ui.block_until_ms = max(0, min(block, 2**32 - 1))
        pattern = loose_str(args, "pattern")
        if pattern:
            ui.regex = pattern
        return pb.ToolCall(await_tool_call=pb.AwaitToolCall(args=ui))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.await_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        shell_id = arg_str(args, "shell_id").strip()
        block = arg_int(args, "block_until_ms", default=DEFAULT_BLOCK_MS) or 0
        block = max(0, min(block, MAX_AWAIT_MS))
        pattern_text = arg_str(args, "pattern")
        try:
            pattern = re.compile(pattern_text, re.MULTILINE) if pattern_text else None
        except re.error as exc:
            raise ToolError(f"Invalid regular expression in `pattern`: {exc}") from None
        call = self._ui_call(args)
        if not shell_id:
            await self._sleep(block / 1000)
            call.await_tool_call.result.success.still_running.runtime_ms = block
            return ToolOutcome(f"Waited {block} ms.", False, call)
        folder = _terminals_folder(ctx)
        if not folder:
            raise ToolError("The client did not say where terminal output is stored.")
        path = _join(folder, f"{shell_id}.txt")
        deadline = self._clock() + block / 1000
        delay = _POLL_FIRST_S
        while True:
            content = await self._poll(ctx, path, shell_id)
            finished = _EXIT_FOOTER.search(content[-_FOOTER_WINDOW:])
            match = pattern.search(content) if pattern else None
            if finished or match or self._clock() >= deadline:
                break
            await self._sleep(min(delay, max(0.0, deadline - self._clock())))
            delay = min(delay * 2, _POLL_MAX_S)
        return self._outcome(call, shell_id, path, content, finished, match, pattern_text)

    async def _poll(self, ctx: ToolContext, path: str, shell_id: str) -> str:
        reply = await ctx.exec(
            pb.ExecServerMessage(read_args=pb.ReadArgs(path=path, tool_call_id=ctx.call_id))
        )
        result = result_of(reply, "read_result")
        if result is None:
            raise ToolError(no_result_text(reply, f"read the output of shell {shell_id}"))
        kind = result.WhichOneof("result")
        if kind == "file_not_found":
            raise ToolError(f"No background shell with id {shell_id} (no file {path}).")
        if kind != "success":
            raise ToolError(f"Cannot read the output of shell {shell_id}: {kind}")
        return result.success.content.replace("\r\n", "\n")

    def _outcome(
        self,
        call: pb.ToolCall,
        shell_id: str,
        path: str,
        content: str,
        finished: re.Match[str] | None,
        match: re.Match[str] | None,
        pattern_text: str,
    ) -> ToolOutcome:
        res = call.await_tool_call.result
        body = res.success.complete if finished else res.success.still_running
        body.task_id = shell_id
        body.output_file_path = path
        body.output_length = len(content)
        body.regex_requested = bool(pattern_text)
        if match:
            body.regex_match = match.group(0)
        runtime = _ELAPSED_FOOTER.search(content[-_FOOTER_WINDOW:]) or _RUNNING_FOR.search(
            content[:_FOOTER_WINDOW]
        )
        if runtime:
            body.runtime_ms = int(runtime.group(1))
        if finished:
            res.success.complete.exit_code = int(finished.group(1))
            head = f"Shell {shell_id} finished with exit code {finished.group(1)}."
        elif match:
            head = f"Shell {shell_id} is still running; its output matched {pattern_text!r}."
        else:
            head = f"Shell {shell_id} is still running."
        text = f"{head}\nOutput file: {path}\n\n{truncate_text(content) or '(no output yet)'}"
        return ToolOutcome(text, False, call)
