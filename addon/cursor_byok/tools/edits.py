"""File tools that change content: Write and StrReplace (tools.md §4.2-4.3).

Both do a hidden read first: the UI needs before/after content for its diff, and StrReplace
applies the replacement on our side (peer practice, tools.md §4.3). All file access runs on the
user's machine through execs.
"""

from __future__ import annotations

import difflib
from typing import Any
from typing import ClassVar

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools.files import read_failure_text
from cursor_byok.tools.files import text_lines

from .base import Tool
from .base import ToolContext
from .base import ToolError
from .base import ToolOutcome
from .base import arg_bool
from .base import arg_str
from .base import loose_str
from .base import no_result_text
from .base import path_lock
from .base import plural
from .base import resolve_path
from .base import result_of

# Chunk size of the streamed new content of an edit (keeps single frames small).
_STREAM_CHUNK = 32_000


def _edit_card(path: str) -> pb.ToolCall:
    return pb.ToolCall(edit_tool_call=pb.EditToolCall(args=pb.EditArgs(path=path)))


def _diff(path: str, before: str | None, after: str) -> tuple[str, int, int]:
    """Unified diff and added/removed line counts (the UI's EditSuccess wants both)."""
    old = (before or "").replace("\r\n", "\n").splitlines(keepends=True)
    new = after.replace("\r\n", "\n").splitlines(keepends=True)
    added = removed = 0
    chunks: list[str] = []
    for line in difflib.unified_diff(old, new, fromfile=path, tofile=path):
        chunks.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return "".join(chunks), added, removed


class EditBase(Tool):
    """Shared hidden read → write flow of Write and StrReplace."""

    read_only = False

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        return _edit_card(loose_str(args, "path"))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        path = loose_str(args, "path")
        call = _edit_card(path)
        err = call.edit_tool_call.result.error
        err.path = path
        err.error = message
        err.model_visible_error = message
        return call

    def _fail(self, card_path: str, text: str, build: str, /, **fields: Any) -> ToolError:
        """A ToolError whose card carries the EditResult variant `build` with `fields`."""
        call = _edit_card(card_path)
        variant = getattr(call.edit_tool_call.result, build)
        variant.SetInParent()
        for key, value in fields.items():
            setattr(variant, key, value)
        return ToolError(text, call)

    async def _hidden_read(
        self, ctx: ToolContext, path: str, *, need_content: bool
    ) -> tuple[str | None, bool]:
        """(current content or None, file exists). Not shown in the UI."""
        reply = await ctx.exec(
            pb.ExecServerMessage(read_args=pb.ReadArgs(path=path, tool_call_id=ctx.call_id))
        )
        result = result_of(reply, "read_result")
        kind = result.WhichOneof("result") if result is not None else None
        if result is not None and kind == "success":
            if result.success.WhichOneof("output") == "data":
                if need_content:
                    raise self._fail(
                        path,
                        f"{path} is a binary file; it cannot be edited as text.",
                        "error",
                        path=path,
                        error="binary file",
                    )
                return None, True
            return result.success.content, True
        if kind == "file_not_found":
            return None, False
        if result is not None and kind == "rejected":
            reason = result.rejected.reason or "no reason given"
            raise self._fail(
                path,
                f"Access to {path} was blocked by the user or a policy: {reason}",
                "rejected",
                path=path,
                reason=reason,
            )
        if kind == "permission_denied":
            raise self._fail(
                path, f"Permission denied reading {path}.", "read_permission_denied", path=path
            )
        if need_content:
            text = (
                read_failure_text(result, path)
                if result is not None
                else no_result_text(reply, f"read {path}")
            )
            raise self._fail(path, text, "error", path=path, error=text, model_visible_error=text)
        return None, True  # Write does not need the old content; the diff is then partial

    def _stream(self, ctx: ToolContext, content: str) -> None:
        for start in range(0, len(content), _STREAM_CHUNK):
            chunk = content[start : start + _STREAM_CHUNK]
            ctx.delta(
                pb.ToolCallDelta(
                    edit_tool_call_delta=pb.EditToolCallDelta(stream_content_delta=chunk)
                )
            )

    async def _write(
        self, ctx: ToolContext, path: str, before: str | None, after: str
    ) -> tuple[pb.ToolCall, pb.WriteSuccess, int, int]:
        """Send the write; return the success card or raise ToolError with the typed failure."""
        self._stream(ctx, after)
        write = pb.WriteArgs(
            path=path,
            file_text=after,
            tool_call_id=ctx.call_id,
            return_file_content_after_write=True,
        )
        reply = await ctx.exec(pb.ExecServerMessage(write_args=write))
        result = result_of(reply, "write_result")
        if result is None:
            text = no_result_text(reply, f"write {path}")
            raise self._fail(path, text, "error", path=path, error=text, model_visible_error=text)
        if result.WhichOneof("result") != "success":
            raise self._write_failure(path, result)
        success = result.success
        final = (
            success.file_content_after_write
            if success.HasField("file_content_after_write")
            else after
        )
        call, added, removed = _success_card(path, before, final)
        return call, success, added, removed

    def _write_failure(self, path: str, result: pb.WriteResult) -> ToolError:
        """The error for a write that did not succeed, typed so the UI shows a rejection or a
        read-only file as such and the model is told what to do about it."""
        kind = result.WhichOneof("result")
        if kind == "rejected":
            reason = result.rejected.reason or "no reason given"
            return self._fail(
                path,
                f"The user rejected the change to {path}: {reason}",
                "rejected",
                path=path,
                reason=reason,
            )
        if kind == "permission_denied":
            denied = result.permission_denied
            detail = denied.error or ("the file is read-only" if denied.is_readonly else "")
            return self._fail(
                path,
                f"Permission denied writing {path}" + (f": {detail}" if detail else "."),
                "write_permission_denied",
                path=path,
                error=denied.error,
                is_readonly=denied.is_readonly,
            )
        if kind == "no_space":
            text = f"Cannot write {path}: no space left on the device."
        else:
            detail = result.error.error if kind == "error" else "no result"
            text = f"Error writing {path}: {detail or 'unknown error'}"
        return self._fail(path, text, "error", path=path, error=text, model_visible_error=text)


def _success_card(path: str, before: str | None, final: str) -> tuple[pb.ToolCall, int, int]:
    """The edit card of a write that succeeded, with the diff against what the editor holds now
    (`final`, which may be formatted), and its added/removed line counts."""
    diff, added, removed = _diff(path, before, final)
    call = _edit_card(path)
    ok = call.edit_tool_call.result.success
    ok.path = path
    ok.lines_added = added
    ok.lines_removed = removed
    ok.diff_string = diff
    if before is not None:
        ok.before_full_file_content = before
    ok.after_full_file_content = final
    return call, added, removed


def _after_write_note(success: pb.WriteSuccess, sent: str) -> str:
    if not success.HasField("file_content_after_write"):
        return ""
    if success.file_content_after_write.replace("\r\n", "\n") == sent.replace("\r\n", "\n"):
        return ""
    return (
        "\nNote: the file's content after the write differs from what was sent (the editor may "
        "have formatted it); Read it again before further edits."
    )


class WriteTool(EditBase):
    name = "Write"
    identifier = "WRITE"
    description = (
        "Create a file or overwrite it completely with `contents`. Parent directories are "
        "created. For changes to an existing file prefer StrReplace; use Write for new files or "
        "full rewrites. Read an existing file before overwriting it."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Absolute path of the file to write."},
            "contents": {"type": "string", "description": "The complete new file content."},
        },
        "required": ["path", "contents"],
    }

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        path = resolve_path(ctx, arg_str(args, "path", required=True))
        contents = arg_str(args, "contents", required=True, allow_empty=True)
        async with path_lock(path):
            before, existed = await self._hidden_read(ctx, path, need_content=False)
            call, success, added, removed = await self._write(ctx, path, before, contents)
        lines = success.lines_created or len(text_lines(contents.replace("\r\n", "\n")))
        call.edit_tool_call.result.success.message = (
            f"Wrote {plural(lines, 'line')} to {path}" if existed else f"Created {path}"
        )
        if existed:
            text = f"Wrote {plural(lines, 'line')} to {path} (+{added} -{removed})."
        else:
            text = f"Created {path} ({plural(lines, 'line')})."
        return ToolOutcome(text + _after_write_note(success, contents), False, call)


class StrReplaceTool(EditBase):
    name = "StrReplace"
    identifier = "STR_REPLACE"
    description = (
        "Edit a file by exact string replacement. `old_string` must match the file exactly "
        "(including whitespace and indentation) and occur exactly once, unless `replace_all` is "
        "true; include enough surrounding lines to make it unique. Line numbers from Read are "
        "not part of the file. With an empty `old_string` a missing or empty file is created "
        "with `new_string`."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Absolute path of the file to edit."},
            "old_string": {"type": "string", "description": "The exact text to replace."},
            "new_string": {"type": "string", "description": "The replacement text."},
            "replace_all": {
                "type": "boolean",
                "description": "Replace every occurrence of old_string (default false).",
            },
        },
        "required": ["path", "old_string", "new_string"],
    }

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        path = resolve_path(ctx, arg_str(args, "path", required=True))
        old = arg_str(args, "old_string", required=True, allow_empty=True)
        new = arg_str(args, "new_string", required=True, allow_empty=True)
        replace_all = arg_bool(args, "replace_all")
        if old == new:
            raise ToolError("old_string and new_string are identical; there is nothing to change.")
        async with path_lock(path):
            before, exists = await self._hidden_read(ctx, path, need_content=True)
            if not exists:
                if old != "":
                    raise self._fail(path, f"File not found: {path}", "file_not_found", path=path)
                before = None
            after, count, line = self._replace(path, before or "", old, new, replace_all)
            call, _success, added, removed = await self._write(ctx, path, before, after)
        if before is None:
            text = f"Created {path}."
        elif count == 1:
            text = f"Edited {path} at line {line} (+{added} -{removed})."
        else:
            text = f"Edited {path}: replaced {count} occurrences (+{added} -{removed})."
        call.edit_tool_call.result.success.message = text
        return ToolOutcome(text, False, call)

    def _replace(
        self, path: str, before: str, old: str, new: str, replace_all: bool
    ) -> tuple[str, int, int]:
        """(new content, replacements, first line) on LF-normalised text, original EOLs kept."""
        crlf = "\r\n" in before
        text = before.replace("\r\n", "\n")
        old_n, new_n = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
        if old_n == "":
            if text.strip():
                raise self._fail(
                    path,
                    f"old_string is empty but {path} is not empty. Include the lines around the "
                    "insertion point in old_string, or use Write to replace the whole file.",
                    "error",
                    path=path,
                    error="empty old_string",
                )
            after, count, line = new_n, 1, 1
        else:
            count = text.count(old_n)
            if count == 0:
                text_err = f"old_string not found in {path}." + _near_miss(text, old_n)
                raise self._fail(
                    path, text_err, "error", path=path, error=text_err, model_visible_error=text_err
                )
            if count > 1 and not replace_all:
                lines = _match_lines(text, old_n)
                text_err = (
                    f"Found {count} matches of old_string in {path} (at lines "
                    f"{', '.join(map(str, lines[:10]))}). Add more surrounding context to make it "
                    "unique, or set replace_all to true to change every occurrence."
                )
                raise self._fail(
                    path, text_err, "error", path=path, error=text_err, model_visible_error=text_err
                )
            line = text[: text.index(old_n)].count("\n") + 1
            after = text.replace(old_n, new_n) if replace_all else text.replace(old_n, new_n, 1)
        if crlf:
            after = after.replace("\n", "\r\n")
        return after, count, line


def _match_lines(text: str, needle: str) -> list[int]:
    lines, start = [], 0
    while (found := text.find(needle, start)) != -1:
        lines.append(text.count("\n", 0, found) + 1)
        start = found + max(1, len(needle))
    return lines


def _near_miss(text: str, old: str) -> str:
    """A hint when old_string matches only if whitespace is ignored (the usual model slip)."""
    want = [line.strip() for line in old.strip("\n").split("\n")]
    have = [line.strip() for line in text.split("\n")]
    if not any(want):
        return ""
    for i in range(len(have) - len(want) + 1):
        if have[i : i + len(want)] == want:
            return (
                f" Lines {i + 1}-{i + len(want)} match if whitespace is ignored: copy the exact "
                "indentation and spacing from a fresh Read."
            )
    return " Read the file again and copy the exact text, including whitespace."
