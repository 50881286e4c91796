"""File tools that read or remove: Read, Delete, LS (tools.md §4.1, §4.4, §4.9).

All file access runs on the user's machine through execs; we never touch the local disk. The
tools that change a file's content are in `edits.py`.
"""

from __future__ import annotations

from typing import Any
from typing import ClassVar

from cursor_byok.pb import agent_v1_pb2 as pb

from .base import MAX_RESULT_CHARS
from .base import MAX_RESULT_LINES
from .base import Tool
from .base import ToolContext
from .base import ToolError
from .base import ToolImage
from .base import ToolOutcome
from .base import arg_int
from .base import arg_str
from .base import arg_str_list
from .base import cap_line
from .base import clamp32
from .base import loose_int
from .base import loose_str
from .base import no_result_text
from .base import path_lock
from .base import plural
from .base import resolve_path
from .base import result_of
from .base import truncate_text
from .base import workspace_roots

_UINT32_MAX = 2**32 - 1


_IMAGE_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def _image_mime(data: bytes) -> str | None:
    for magic, mime in _IMAGE_MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def text_lines(text: str) -> list[str]:
    """Lines of an LF-normalised text, without a phantom last line after a final newline."""
    if not text:
        return []
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    return parts


class ReadTool(Tool):
    name = "Read"
    identifier = "READ"
    read_only = True
    description = (
        "Read a file from the user's workspace. Returns the content with line numbers in the "
        "form LINE_NUMBER|LINE_CONTENT (1-based). By default reads the whole file, up to "
        f"{MAX_RESULT_LINES} lines; for large files pass `offset` (1-based start line, negative "
        "counts from the end) and `limit` (number of lines). Images are returned as images "
        "when the model supports them. Prefer reading several relevant files in parallel."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Absolute path of the file to read."},
            "offset": {
                "type": "integer",
                "description": "Line to start from (1-based). Negative values count from the end.",
            },
            "limit": {"type": "integer", "description": "Maximum number of lines to read."},
        },
        "required": ["path"],
    }

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        ui = pb.ReadToolArgs(path=loose_str(args, "path"))
        offset, limit = clamp32(loose_int(args, "offset")), clamp32(loose_int(args, "limit"))
        if offset is not None:
            ui.offset = offset
        if limit is not None:
            ui.limit = limit
        return pb.ToolCall(read_tool_call=pb.ReadToolCall(args=ui))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.read_tool_call.result.error.error_message = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        path = resolve_path(ctx, arg_str(args, "path", required=True))
        offset = clamp32(arg_int(args, "offset"))
        limit = clamp32(arg_int(args, "limit"))
        if limit is not None and limit <= 0:
            raise ToolError("Argument `limit` must be a positive number of lines.")
        if offset == 0:
            offset = None
        read = pb.ReadArgs(path=path, tool_call_id=ctx.call_id)
        if offset is not None:
            read.offset = offset
        if limit is not None:
            read.limit = limit
        reply = await ctx.exec(pb.ExecServerMessage(read_args=read))
        result = result_of(reply, "read_result")
        ui_args = {"path": path, "offset": offset, "limit": limit}
        if result is None:
            raise ToolError(no_result_text(reply, f"read {path}"))
        kind = result.WhichOneof("result")
        if kind != "success":
            raise ToolError(read_failure_text(result, path))
        success = result.success
        if success.WhichOneof("output") == "data":
            return self._binary(ui_args, path, success)
        return self._text(ui_args, path, success, offset, limit)

    def _binary(self, ui_args: dict[str, Any], path: str, success: pb.ReadSuccess) -> ToolOutcome:
        data = success.data
        call = self._ui_call(ui_args)
        ok = call.read_tool_call.result.success
        ok.path = path
        ok.data = data
        ok.file_size = min(len(data), _UINT32_MAX)
        mime = _image_mime(data)
        if mime:
            text = f"Image file {path} ({len(data)} bytes, {mime}); the image is attached."
            return ToolOutcome(text, False, call, images=(ToolImage(data, mime),))
        text = f"{path} is a binary file ({len(data)} bytes); its content is not shown."
        return ToolOutcome(text, False, call)

    def _text(
        self,
        ui_args: dict[str, Any],
        path: str,
        success: pb.ReadSuccess,
        offset: int | None,
        limit: int | None,
    ) -> ToolOutcome:
        """Numbered lines for the model and the read card for the UI; clients that ignore the
        range send the whole file, so the window is cut here then."""
        content = success.content.replace("\r\n", "\n")
        lines = text_lines(content)
        total = success.total_lines or len(lines)
        start = _first_line(offset, total)
        if not success.range_applied:  # the client sent the whole file: apply the range ourselves
            lines = lines[start - 1 :]
            if limit is not None:
                lines = lines[:limit]
        rendered = _numbered(lines[:MAX_RESULT_LINES], start)
        exceeded = len(rendered) < len(lines)
        end = start + len(rendered) - 1
        notes: list[str] = []
        if exceeded:
            notes.append(
                f"[Showing lines {start}-{end} of {total}. Call Read with offset={end + 1} "
                "to continue.]"
            )
        if success.truncated:
            notes.append("[The client truncated this file's content.]")
        call = self._ui_call(ui_args)
        ok = call.read_tool_call.result.success
        ok.path = path
        ok.content = "\n".join(lines[: len(rendered)])
        ok.is_empty = not content
        ok.exceeded_limit = exceeded or success.truncated
        ok.total_lines = min(max(total, 0), _UINT32_MAX)
        ok.file_size = min(max(success.file_size, 0), _UINT32_MAX)
        if rendered:
            ok.read_range.start_line = start
            ok.read_range.end_line = end
        return ToolOutcome(_read_text(content, rendered, notes, total), False, call)


def _first_line(offset: int | None, total: int) -> int:
    """The 1-based line a Read starts at: a negative offset counts back from the end of the file,
    so the model can ask for the tail of a log without knowing its length."""
    if offset is None:
        return 1
    if offset > 0:
        return offset
    return max(1, total + offset + 1)


def _numbered(lines: list[str], start: int) -> list[str]:
    """`lines` as `number|text` rows, stopping before `MAX_RESULT_CHARS`: one Read must not fill
    the model's context, and the model is told where to go on."""
    rendered: list[str] = []
    size = 0
    for number, line in enumerate(lines, start):
        row = f"{number:>6}|{cap_line(line)}"
        if size + len(row) > MAX_RESULT_CHARS:
            break
        rendered.append(row)
        size += len(row) + 1
    return rendered


def _read_text(content: str, rendered: list[str], notes: list[str], total: int) -> str:
    """What the model reads: an empty file and an empty window are said in words, not as an
    empty result it could mistake for a failed call."""
    if not content:
        return "File is empty."
    if not rendered:
        return f"[No lines in range: the file has {plural(total, 'line')}.]"
    return "\n".join(rendered + notes)


def read_failure_text(result: pb.ReadResult, path: str) -> str:
    """Model-facing text for a non-success ReadResult."""
    kind = result.WhichOneof("result")
    if kind == "file_not_found":
        return f"File not found: {path}"
    if kind == "permission_denied":
        return f"Permission denied reading {path}."
    if kind == "rejected":
        reason = result.rejected.reason or "no reason given"
        return f"Reading {path} was blocked by the user or a policy: {reason}"
    if kind == "invalid_file":
        return f"Cannot read {path}: {result.invalid_file.reason or 'invalid file'}"
    if kind == "error":
        return f"Error reading {path}: {result.error.error or 'unknown error'}"
    return f"Reading {path} failed (no result)."


class DeleteTool(Tool):
    name = "Delete"
    identifier = "DELETE"
    read_only = False
    description = "Delete a file from the workspace. Fails for directories and missing files."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Absolute path of the file to delete."},
        },
        "required": ["path"],
    }

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        return pb.ToolCall(
            delete_tool_call=pb.DeleteToolCall(args=pb.DeleteArgs(path=loose_str(args, "path")))
        )

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        err = call.delete_tool_call.result.error
        err.path = loose_str(args, "path")
        err.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        path = resolve_path(ctx, arg_str(args, "path", required=True))
        delete = pb.DeleteArgs(path=path, tool_call_id=ctx.call_id)
        async with path_lock(path):
            reply = await ctx.exec(pb.ExecServerMessage(delete_args=delete))
        result = result_of(reply, "delete_result")
        if result is None:
            raise ToolError(no_result_text(reply, f"delete {path}"))
        call = pb.ToolCall(delete_tool_call=pb.DeleteToolCall(args=delete, result=result))
        kind = result.WhichOneof("result")
        if kind == "success":
            size = result.success.file_size
            return ToolOutcome(
                f"Deleted {path}" + (f" ({size} bytes)." if size else "."), False, call
            )
        if kind == "file_not_found":
            text = f"File not found: {path}"
        elif kind == "not_file":
            kind_of = result.not_file.actual_type or "not a regular file"
            text = f"{path} is not a file ({kind_of}); Delete removes single files only."
        elif kind == "permission_denied":
            detail = result.permission_denied.client_visible_error
            text = f"Permission denied deleting {path}" + (f": {detail}" if detail else ".")
        elif kind == "file_busy":
            text = f"{path} is in use by another process; it was not deleted."
        elif kind == "rejected":
            text = (
                f"The user rejected deleting {path}: {result.rejected.reason or 'no reason given'}"
            )
        elif kind == "error":
            text = f"Error deleting {path}: {result.error.error or 'unknown error'}"
        else:
            text = f"Deleting {path} failed (empty result)."
            call = self.error_call({"path": path}, text)
        return ToolOutcome(text, True, call)


def render_tree(node: pb.LsDirectoryTreeNode, *, max_lines: int = MAX_RESULT_LINES) -> str:
    """An indented tree: directories with a trailing "/", "…" for unexpanded directories."""
    out: list[str] = []

    def name_of(path: str) -> str:
        return path.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1] or path

    def walk(n: pb.LsDirectoryTreeNode, depth: int) -> None:
        pad = "  " * depth
        for child in sorted(n.children_dirs, key=lambda c: c.abs_path):
            line = f"{pad}{name_of(child.abs_path)}/"
            expanded = child.children_were_processed or child.children_dirs or child.children_files
            if not expanded:
                line += f" … ({plural(child.num_files, 'file')})" if child.num_files else " …"
            out.append(line)
            walk(child, depth + 1)
        for f in sorted(n.children_files, key=lambda c: c.name):
            out.append(f"{pad}{f.name}")

    out.append(node.abs_path.rstrip("/\\") + "/")
    walk(node, 1)
    return truncate_text("\n".join(out), max_lines=max_lines)


class LsTool(Tool):
    name = "LS"
    identifier = "LS"
    read_only = True
    description = (
        "List a directory of the workspace as a tree. Prefer Glob for finding files by pattern."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Absolute path of the directory."},
            "ignore": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Glob patterns to leave out.",
            },
        },
        "required": ["path"],
    }

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        ui = pb.LsArgs(path=loose_str(args, "path"))
        ignore = args.get("ignore")
        if isinstance(ignore, list):
            ui.ignore.extend(i for i in ignore if isinstance(i, str))
        return pb.ToolCall(ls_tool_call=pb.LsToolCall(args=ui))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.ls_tool_call.result.error.path = loose_str(args, "path")
        call.ls_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        raw = arg_str(args, "path")
        roots = workspace_roots(ctx)
        path = resolve_path(ctx, raw) if raw else (roots[0] if roots else "")
        if not path:
            raise ToolError("Missing required argument `path`.")
        ls = pb.LsArgs(path=path, ignore=arg_str_list(args, "ignore"), tool_call_id=ctx.call_id)
        reply = await ctx.exec(pb.ExecServerMessage(ls_args=ls))
        result = result_of(reply, "ls_result")
        if result is None:
            raise ToolError(no_result_text(reply, f"list {path}"))
        call = pb.ToolCall(ls_tool_call=pb.LsToolCall(args=ls, result=result))
        kind = result.WhichOneof("result")
        if kind == "success":
            return ToolOutcome(render_tree(result.success.directory_tree_root), False, call)
        if kind == "timeout":
            tree = render_tree(result.timeout.directory_tree_root)
            return ToolOutcome(f"{tree}\n[Listing timed out; the tree is partial.]", False, call)
        if kind == "rejected":
            text = f"Listing {path} was blocked: {result.rejected.reason or 'no reason given'}"
        elif kind == "error":
            text = f"Error listing {path}: {result.error.error or 'unknown error'}"
        else:
            text = f"Listing {path} failed (empty result)."
            call = self.error_call({"path": path}, text)
        return ToolOutcome(text, True, call)
