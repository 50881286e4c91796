"""Grep and Glob (tools.md §4.7, §4.8): ripgrep on the user's machine via `grep_args`.

Glob has no exec of its own: Cursor runs it as a files-mode grep with an empty pattern and
the glob as filter, and so do we. Results come per workspace root; we render them like
ripgrep so models read them the way they were trained to.
"""

from __future__ import annotations

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
from .base import cap_line
from .base import clamp32
from .base import is_absolute
from .base import loose_str
from .base import no_result_text
from .base import plural
from .base import resolve_path
from .base import result_of
from .base import truncate_text
from .base import workspace_roots

OUTPUT_MODES = ("content", "files_with_matches", "count")
_INT_FLAGS = (("-B", "context_before"), ("-A", "context_after"), ("-C", "context"))


def _join_root(root: str, path: str, multi: bool) -> str:
    """With several workspace roots, relative paths are ambiguous: anchor them to their root."""
    if not multi or not root or is_absolute(path):
        return path
    sep = "\\" if "\\" in root and "/" not in root else "/"
    return root.rstrip("/\\") + sep + path


def _paging_notes(union: Any, kind: str, offset: int) -> list[str]:
    notes = []
    if union.client_truncated or union.ripgrep_truncated:
        notes.append(
            "[Results were truncated; there are at least this many. Narrow the pattern, path or "
            "glob, or page with head_limit/offset.]"
        )
    if union.HasField("head_limit_applied"):
        nxt = offset + union.head_limit_applied
        notes.append(
            f"[Limited to {union.head_limit_applied} {kind} by head_limit; use offset={nxt} "
            "to see more.]"
        )
    return notes


def render_grep(success: pb.GrepSuccess, mode: str, offset: int = 0) -> tuple[str, int]:
    """(ripgrep-like text, number of hits) for every workspace root in the result."""
    blocks: list[str] = []
    hits = 0
    results = sorted(success.workspace_results.items())
    if success.HasField("active_editor_result"):
        results.append(("(active editor)", success.active_editor_result))
    multi = len(results) > 1
    for root, union in results:
        kind = union.WhichOneof("result")
        lines: list[str] = []
        if kind == "content":
            res = union.content
            for file_match in res.matches:
                if lines:
                    lines.append("")
                lines.append(_join_root(root, file_match.file, multi))
                previous = None
                for m in file_match.matches:
                    if previous is not None and m.line_number > previous + 1:
                        lines.append("--")
                    sep = "-" if m.is_context_line else ":"
                    text = cap_line(m.content.rstrip("\r\n"))
                    lines.append(f"{m.line_number}{sep}{text}{'…' if m.content_truncated else ''}")
                    previous = m.line_number
                    hits += 0 if m.is_context_line else 1
            lines += _paging_notes(res, "lines", offset)
        elif kind == "files":
            res = union.files
            lines += [_join_root(root, f, multi) for f in res.files]
            hits += len(res.files)
            if res.total_files > len(res.files):
                lines.append(f"[{res.total_files} files in total.]")
            lines += _paging_notes(res, "files", offset)
        elif kind == "count":
            res = union.count
            lines += [f"{_join_root(root, c.file, multi)}:{c.count}" for c in res.counts]
            hits += sum(c.count for c in res.counts)
            if res.counts:
                lines.append(
                    f"Total: {plural(res.total_matches or hits, 'match', 'matches')} in "
                    f"{plural(res.total_files or len(res.counts), 'file')}."
                )
            lines += _paging_notes(res, "files", offset)
        if not lines:
            continue
        if multi:
            lines.insert(0, f"# {root}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks), hits


class GrepTool(Tool):
    name = "Grep"
    identifier = "GREP"
    read_only = True
    description = (
        "Search file contents with ripgrep (regular expressions, ripgrep syntax). "
        "`output_mode`: content (matching lines with line numbers, the default), "
        'files_with_matches (paths only) or count. Filter files with `glob` (e.g. "*.py") or '
        "`type` (e.g. py, js, rust). -A/-B/-C add context lines, -i ignores case, `multiline` "
        "lets patterns span lines. Page large results with head_limit and offset. Respects "
        ".gitignore. Use this instead of grep or rg in the shell."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression to search for."},
            "path": {
                "type": "string",
                "description": "File or directory to search (default: the workspace).",
            },
            "glob": {"type": "string", "description": "Only search files matching this glob."},
            "type": {"type": "string", "description": "Only search files of this type."},
            "output_mode": {"type": "string", "enum": list(OUTPUT_MODES)},
            "-A": {"type": "integer", "description": "Lines of context after each match."},
            "-B": {"type": "integer", "description": "Lines of context before each match."},
            "-C": {"type": "integer", "description": "Lines of context around each match."},
            "-i": {"type": "boolean", "description": "Case-insensitive search."},
            "head_limit": {"type": "integer", "description": "Return at most this many results."},
            "offset": {"type": "integer", "description": "Skip this many results first."},
            "multiline": {"type": "boolean", "description": "Let patterns match across lines."},
        },
        "required": ["pattern"],
    }

    def _grep_args(self, args: dict[str, Any], ctx: ToolContext | None) -> pb.GrepArgs:
        grep = pb.GrepArgs(pattern=arg_str(args, "pattern", required=True))
        path = arg_opt_str(args, "path")
        if path:
            grep.path = resolve_path(ctx, path) if ctx is not None else path
        for key in ("glob", "type"):
            value = arg_opt_str(args, key)
            if value:
                setattr(grep, key, value)
        mode = arg_opt_str(args, "output_mode")
        if mode is not None:
            if mode not in OUTPUT_MODES:
                raise ToolError(f"`output_mode` must be one of {', '.join(OUTPUT_MODES)}.")
            grep.output_mode = mode
        for key, field in _INT_FLAGS:
            number = arg_int(args, key)
            if number is not None:
                setattr(grep, field, clamp32(max(0, number)))
        for key, field in (("head_limit", "head_limit"), ("offset", "offset")):
            number = arg_int(args, key)
            if number is not None and number > 0:
                setattr(grep, field, clamp32(number))
        if "-i" in args:
            grep.case_insensitive = arg_bool(args, "-i")
        if "multiline" in args:
            grep.multiline = arg_bool(args, "multiline")
        if ctx is not None:
            grep.tool_call_id = ctx.call_id
        return grep

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        try:
            grep = self._grep_args(args, None)
        except ToolError:
            grep = pb.GrepArgs(pattern=loose_str(args, "pattern"))
        return pb.ToolCall(grep_tool_call=pb.GrepToolCall(args=grep))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.grep_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        grep = self._grep_args(args, ctx)
        reply = await ctx.exec(pb.ExecServerMessage(grep_args=grep))
        result = result_of(reply, "grep_result")
        if result is None:
            raise ToolError(no_result_text(reply, "run the search"))
        call = pb.ToolCall(grep_tool_call=pb.GrepToolCall(args=grep, result=result))
        if result.WhichOneof("result") != "success":
            detail = result.error.error if result.HasField("error") else "no result"
            return ToolOutcome(f"Search failed: {detail or 'unknown error'}", True, call)
        mode = grep.output_mode or result.success.output_mode or "content"
        text, hits = render_grep(result.success, mode, grep.offset)
        if not hits and not text:
            return ToolOutcome("No matches found.", False, call)
        return ToolOutcome(truncate_text(text), False, call)


class GlobTool(Tool):
    name = "Glob"
    identifier = "GLOB"
    read_only = True
    description = (
        'Find files by name with a glob pattern such as "*.ts" or "src/**/test_*.py". '
        'Patterns not starting with "**/" are searched at any depth ("**/" is prepended). '
        "Searches `target_directory`, by default the workspace. Respects .gitignore."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "glob_pattern": {"type": "string", "description": "The glob to match file paths."},
            "target_directory": {
                "type": "string",
                "description": "Absolute directory to search (default: the workspace).",
            },
        },
        "required": ["glob_pattern"],
    }

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        ui = pb.GlobToolArgs(glob_pattern=loose_str(args, "glob_pattern"))
        target = loose_str(args, "target_directory")
        if target:
            ui.target_directory = target
        return pb.ToolCall(glob_tool_call=pb.GlobToolCall(args=ui))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.glob_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        raw = arg_str(args, "glob_pattern", required=True).strip()
        pattern = raw if raw.startswith("**/") or is_absolute(raw) else "**/" + raw
        target = arg_opt_str(args, "target_directory")
        roots = workspace_roots(ctx)
        path = resolve_path(ctx, target) if target else (roots[0] if roots else "")
        grep = pb.GrepArgs(
            pattern="", glob=pattern, output_mode="files_with_matches", tool_call_id=ctx.call_id
        )
        if path:
            grep.path = path
        reply = await ctx.exec(pb.ExecServerMessage(grep_args=grep))
        result = result_of(reply, "grep_result")
        if result is None:
            raise ToolError(no_result_text(reply, "search for files"))
        if result.WhichOneof("result") != "success":
            detail = result.error.error if result.HasField("error") else "no result"
            raise ToolError(f"File search failed: {detail or 'unknown error'}")
        files: list[str] = []
        total = 0
        client_truncated = ripgrep_truncated = False
        items = sorted(result.success.workspace_results.items())
        for root, union in items:
            if union.WhichOneof("result") != "files":
                continue
            res = union.files
            files += [_join_root(root, f, len(items) > 1) for f in res.files]
            total += max(res.total_files, len(res.files))
            client_truncated |= res.client_truncated
            ripgrep_truncated |= res.ripgrep_truncated
        call = self._ui_call({"glob_pattern": raw, "target_directory": target or ""})
        ok = call.glob_tool_call.result.success
        ok.pattern = pattern
        ok.path = path
        ok.files.extend(files)
        ok.total_files = clamp32(total) or 0
        ok.client_truncated = client_truncated
        ok.ripgrep_truncated = ripgrep_truncated
        if not files:
            return ToolOutcome(f"No files found matching {pattern}.", False, call)
        lines = list(files)
        if total > len(files) or client_truncated or ripgrep_truncated:
            lines.append(
                f"[Showing {len(files)} of at least {total} files; use a more specific pattern "
                "or target_directory.]"
            )
        return ToolOutcome(truncate_text("\n".join(lines)), False, call)
