"""ReadLints (tools.md §4.10): the editor's diagnostics, one `diagnostics_args` exec per path.

The exec takes a single path, so several paths mean several execs under one call, run
concurrently and merged into one card. Without paths we ask for the workspace roots.
"""

from __future__ import annotations

import asyncio
from typing import Any
from typing import ClassVar

from cursor_byok.pb import agent_v1_pb2 as pb

from .base import Tool
from .base import ToolContext
from .base import ToolError
from .base import ToolOutcome
from .base import arg_str_list
from .base import clamp32
from .base import no_result_text
from .base import plural
from .base import resolve_path
from .base import result_of
from .base import truncate_text
from .base import workspace_roots

_SEVERITY = {
    pb.DIAGNOSTIC_SEVERITY_ERROR: "error",
    pb.DIAGNOSTIC_SEVERITY_WARNING: "warning",
    pb.DIAGNOSTIC_SEVERITY_INFORMATION: "info",
    pb.DIAGNOSTIC_SEVERITY_HINT: "hint",
}
MAX_PATHS = 50


def _format(path: str, d: pb.Diagnostic) -> str:
    # Positions are passed through as the client reports them (0- or 1-based is unverified).
    where = f"{path}:{d.range.start.line}:{d.range.start.column}"
    tail = " ".join(x for x in (d.source, f"({d.code})" if d.code else "") if x)
    stale = " (stale)" if d.is_stale else ""
    sev = _SEVERITY.get(d.severity, "diagnostic")
    return f"{where}: {sev}: {d.message}{f' [{tail}]' if tail else ''}{stale}"


class ReadLintsTool(Tool):
    name = "ReadLints"
    identifier = "READ_LINTS"
    read_only = True
    description = (
        "Read linter and type-checker diagnostics from the editor for files or directories. "
        "Without `paths`, reads them for the whole workspace. Use after editing to check for "
        "errors you introduced; do not fix unrelated pre-existing issues unless asked."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "paths": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Absolute file or directory paths (default: the workspace).",
            },
        },
    }

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        ui = pb.ReadLintsToolArgs()
        paths = args.get("paths")
        if isinstance(paths, str):
            paths = [paths]
        if isinstance(paths, list):
            ui.paths.extend(p for p in paths if isinstance(p, str))
        return pb.ToolCall(read_lints_tool_call=pb.ReadLintsToolCall(args=ui))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.read_lints_tool_call.result.error.error_message = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        paths = [resolve_path(ctx, p) for p in arg_str_list(args, "paths") if p.strip()]
        if not paths:
            paths = workspace_roots(ctx)
        if not paths:
            raise ToolError("No paths given and the workspace root is unknown; pass `paths`.")
        paths = list(dict.fromkeys(paths))[:MAX_PATHS]

        async def one(path: str) -> pb.ExecClientMessage:
            diag = pb.DiagnosticsArgs(path=path, tool_call_id=ctx.call_id)
            return await ctx.exec(pb.ExecServerMessage(diagnostics_args=diag))

        replies = await asyncio.gather(*(one(p) for p in paths))
        call = self._ui_call({"paths": paths})
        ok = pb.ReadLintsToolSuccess()
        lines: list[str] = []
        problems: list[str] = []
        succeeded = 0
        for path, reply in zip(paths, replies, strict=True):
            result = result_of(reply, "diagnostics_result")
            kind = result.WhichOneof("result") if result is not None else None
            if result is None or kind != "success":
                problems.append(_failure(path, result, reply))
                continue
            succeeded += 1
            success = result.success
            file_path = success.path or path
            diags = list(success.diagnostics)
            entry = ok.file_diagnostics.add(path=file_path, diagnostics_count=len(diags))
            for d in diags:
                item = entry.diagnostics.add(
                    severity=d.severity,
                    message=d.message,
                    source=d.source,
                    code=d.code,
                    is_stale=d.is_stale,
                )
                item.range.start.CopyFrom(d.range.start)
                item.range.end.CopyFrom(d.range.end)
                lines.append(_format(file_path, d))
        if not succeeded:
            text = "\n".join(problems)
            call.read_lints_tool_call.result.error.error_message = text
            return ToolOutcome(text, True, call)
        total = sum(len(f.diagnostics) for f in ok.file_diagnostics)
        ok.total_files = clamp32(len(ok.file_diagnostics)) or 0
        ok.total_diagnostics = clamp32(total) or 0
        call.read_lints_tool_call.result.success.CopyFrom(ok)
        if lines:
            head = f"Found {plural(total, 'diagnostic')}:"
            text = "\n".join([head, *lines])
        else:
            text = "No linter errors found."
        if problems:
            text += "\n\nCould not read diagnostics for:\n" + "\n".join(problems)
        return ToolOutcome(truncate_text(text), False, call)


def _failure(path: str, result: pb.DiagnosticsResult | None, reply: pb.ExecClientMessage) -> str:
    if result is None:
        return f"{path}: " + no_result_text(reply, "read diagnostics")
    kind = result.WhichOneof("result")
    if kind == "file_not_found":
        return f"{path}: file not found"
    if kind == "permission_denied":
        return f"{path}: permission denied"
    if kind == "rejected":
        return f"{path}: blocked ({result.rejected.reason or 'no reason given'})"
    if kind == "error":
        return f"{path}: {result.error.error or 'error'}"
    return f"{path}: no result"
