"""WriteShellStdin, ListMcpResources and EditNotebook (tools.md §3, §4.3, §4.11).

- WriteShellStdin types into a background shell (`write_shell_stdin_args`); the reply says
  where the terminal file stood before the input, so AwaitShell can read what followed.
- ListMcpResources lists the resources of the user's MCP servers
  (`list_mcp_resources_exec_args`); FetchMcpResource reads one.
- EditNotebook edits one cell of a Jupyter notebook: the same hidden read → write flow as
  StrReplace, on the notebook's JSON, shown on the edit card.
"""

from __future__ import annotations

import json
from typing import Any
from typing import ClassVar

from cursor_byok.pb import agent_v1_pb2 as pb

from .base import Tool
from .base import ToolContext
from .base import ToolError
from .base import ToolOutcome
from .base import arg_bool
from .base import arg_int
from .base import arg_opt_str
from .base import arg_str
from .base import loose_int
from .base import loose_str
from .base import no_result_text
from .base import path_lock
from .base import resolve_path
from .base import result_of
from .base import truncate_text
from .edits import EditBase

MAX_STDIN_CHARS = 10_000
MAX_LISTED_RESOURCES = 200


# =========================================================================== WriteShellStdin


class WriteShellStdinTool(Tool):
    name = "WriteShellStdin"
    identifier = "WRITE_SHELL_STDIN"
    read_only = False
    description = (
        "Write characters to the standard input of a shell running in the background (a "
        "command Shell moved to the background; use the shell id it reported). Include a "
        "trailing newline (\\n) to submit a line. Then use AwaitShell to read the response."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "shell_id": {"type": "integer", "description": "The background shell's id."},
            "chars": {"type": "string", "description": "The characters to write."},
        },
        "required": ["shell_id", "chars"],
    }

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        ui = pb.WriteShellStdinArgs(chars=loose_str(args, "chars"))
        shell_id = loose_int(args, "shell_id")
        if shell_id is not None and 0 <= shell_id < 2**32:
            ui.shell_id = shell_id
        return pb.ToolCall(write_shell_stdin_tool_call=pb.WriteShellStdinToolCall(args=ui))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.write_shell_stdin_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        shell_id = arg_int(args, "shell_id")
        if shell_id is None or not 0 <= shell_id < 2**32:
            raise ToolError("Argument `shell_id` must be the id of a background shell.")
        chars = arg_str(args, "chars", required=True, allow_empty=True)
        if len(chars) > MAX_STDIN_CHARS:
            raise ToolError(f"Write at most {MAX_STDIN_CHARS} characters at a time.")
        write = pb.WriteShellStdinArgs(shell_id=shell_id, chars=chars)
        reply = await ctx.exec(pb.ExecServerMessage(write_shell_stdin_args=write))
        result = result_of(reply, "write_shell_stdin_result")
        if result is None:
            raise ToolError(no_result_text(reply, f"write to shell {shell_id}"))
        call = pb.ToolCall(
            write_shell_stdin_tool_call=pb.WriteShellStdinToolCall(args=write, result=result)
        )
        if result.WhichOneof("result") != "success":
            error = result.error.error or "unknown error"
            return ToolOutcome(f"Writing to shell {shell_id} failed: {error}", True, call)
        offset = result.success.terminal_file_length_before_input_written
        return ToolOutcome(
            f"Wrote {len(chars)} characters to shell {shell_id}. Its output after this input "
            f"starts at byte {offset} of its terminal file; use AwaitShell to read it.",
            False,
            call,
        )


# =========================================================================== ListMcpResources


class ListMcpResourcesTool(Tool):
    name = "ListMcpResources"
    identifier = "LIST_MCP_RESOURCES"
    read_only = True
    description = (
        "List the resources the user's MCP servers offer (URI, name, type), optionally of one "
        "server. Read one with FetchMcpResource."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": "Only this MCP server (name or id)."},
        },
    }

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        ui = pb.ListMcpResourcesExecArgs()
        server = loose_str(args, "server")
        if server:
            ui.server = server
        return pb.ToolCall(list_mcp_resources_tool_call=pb.ListMcpResourcesToolCall(args=ui))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.list_mcp_resources_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        listing = pb.ListMcpResourcesExecArgs()
        server = arg_opt_str(args, "server")
        if server:
            listing.server = server
        reply = await ctx.exec(pb.ExecServerMessage(list_mcp_resources_exec_args=listing))
        result = result_of(reply, "list_mcp_resources_exec_result")
        if result is None:
            raise ToolError(no_result_text(reply, "list MCP resources"))
        call = pb.ToolCall(
            list_mcp_resources_tool_call=pb.ListMcpResourcesToolCall(args=listing, result=result)
        )
        kind = result.WhichOneof("result")
        if kind == "rejected":
            reason = result.rejected.reason or "no reason given"
            return ToolOutcome(f"The user declined listing MCP resources: {reason}", True, call)
        if kind != "success":
            return ToolOutcome(
                f"Listing MCP resources failed: {result.error.error or 'unknown error'}",
                True,
                call,
            )
        resources = list(result.success.resources)
        if not resources:
            where = f" on server {server}" if server else ""
            return ToolOutcome(f"No MCP resources{where}.", False, call)
        lines = []
        for item in resources[:MAX_LISTED_RESOURCES]:
            line = f"- {item.uri}"
            details = [d for d in (item.name, item.mime_type) if d]
            if item.server:
                details.insert(0, f"server {item.server}")
            if details:
                line += f" ({', '.join(details)})"
            if item.description:
                line += f": {item.description[:200]}"
            lines.append(line)
        if len(resources) > MAX_LISTED_RESOURCES:
            lines.append(f"- … and {len(resources) - MAX_LISTED_RESOURCES} more")
        return ToolOutcome(truncate_text("\n".join(lines)), False, call)


# =========================================================================== EditNotebook


class EditNotebookTool(EditBase):
    name = "EditNotebook"
    identifier = "EDIT_NOTEBOOK"
    description = (
        "Edit one cell of a Jupyter notebook (.ipynb). To change a cell, give its 0-based "
        "`cell_idx`, the exact `old_string` to replace (unique in that cell) and `new_string`. "
        "To add a cell, set `is_new_cell` true: it is inserted at `cell_idx` with `new_string` "
        "as its source (old_string empty) and `cell_language` (python, markdown, …)."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "target_notebook": {"type": "string", "description": "Absolute notebook path."},
            "cell_idx": {"type": "integer", "description": "0-based cell index."},
            "is_new_cell": {"type": "boolean", "description": "Insert a new cell."},
            "cell_language": {"type": "string", "description": "python, markdown, raw, …"},
            "old_string": {"type": "string", "description": "Text to replace in the cell."},
            "new_string": {"type": "string", "description": "Replacement or new cell source."},
        },
        "required": ["target_notebook", "cell_idx", "is_new_cell", "old_string", "new_string"],
    }

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        return pb.ToolCall(
            edit_tool_call=pb.EditToolCall(
                args=pb.EditArgs(path=loose_str(args, "target_notebook"))
            )
        )

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        return super().error_call({"path": loose_str(args, "target_notebook")}, message)

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        path = resolve_path(ctx, arg_str(args, "target_notebook", required=True))
        if not path.lower().endswith(".ipynb"):
            raise ToolError(f"{path} is not a notebook (.ipynb); use StrReplace for other files.")
        index = arg_int(args, "cell_idx")
        if index is None or index < 0:
            raise ToolError("Argument `cell_idx` must be a cell index (0 or more).")
        new_cell = arg_bool(args, "is_new_cell")
        old = arg_str(args, "old_string", allow_empty=True)
        new = arg_str(args, "new_string", required=True, allow_empty=True)
        language = arg_str(args, "cell_language", default="python") or "python"
        async with path_lock(path):
            before, exists = await self._hidden_read(ctx, path, need_content=True)
            if not exists:
                if not new_cell:
                    raise self._fail(path, f"File not found: {path}", "file_not_found", path=path)
                before = None
            after, text = edit_notebook(
                before, index, new_cell=new_cell, old=old, new=new, language=language
            )
            call, _success, added, removed = await self._write(ctx, path, before, after)
        text += f" (+{added} -{removed})."
        call.edit_tool_call.result.success.message = text
        return ToolOutcome(text, False, call)


def edit_notebook(
    content: str | None, index: int, *, new_cell: bool, old: str, new: str, language: str
) -> tuple[str, str]:
    """(new notebook JSON, what changed). Raises ToolError on a bad notebook or edit."""
    if content is None or not content.strip():
        notebook: dict[str, Any] = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    else:
        try:
            notebook = json.loads(content)
        except ValueError as exc:
            raise ToolError(f"The notebook is not valid JSON: {exc}") from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise ToolError("The notebook has no `cells` list.")
    if new_cell:
        if index > len(cells):
            raise ToolError(f"cell_idx {index} is past the end ({len(cells)} cells).")
        kind = (
            "markdown" if language.lower() == "markdown" else "raw" if language == "raw" else "code"
        )
        cell: dict[str, Any] = {"cell_type": kind, "metadata": {}, "source": _source(new)}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        cells.insert(index, cell)
        what = f"Inserted a {kind} cell at index {index}"
    else:
        if index >= len(cells):
            raise ToolError(f"cell_idx {index} does not exist ({len(cells)} cells).")
        cell = cells[index]
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else str(source)
        if old == "":
            if text.strip():
                raise ToolError(
                    "old_string is empty but the cell is not; quote the text to replace."
                )
            text = new
        else:
            count = text.count(old)
            if count == 0:
                raise ToolError(f"old_string not found in cell {index}.")
            if count > 1:
                raise ToolError(f"old_string occurs {count} times in cell {index}; add context.")
            text = text.replace(old, new, 1)
        cell["source"] = _source(text)
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None  # stale after an edit
        what = f"Edited cell {index}"
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", what  # Jupyter's style


def _source(text: str) -> list[str]:
    """Notebook style: a list of lines, each but the last keeping its newline."""
    return text.splitlines(keepends=True)
