"""Local tools the server completes itself: TodoWrite and UpdateCurrentStep (tools.md §4.14,
§4.19).

No exec: the card is shown with tool_call_started + tool_call_completed only (tools.md §1
rule 1). TodoWrite keeps the list in the conversation state (`ctx.todos`, mutated in place)
so the loop can persist it in the checkpoint.
"""

from __future__ import annotations

import time
from typing import Any
from typing import ClassVar

from cursor_byok.pb import agent_v1_pb2 as pb

from .base import Tool
from .base import ToolContext
from .base import ToolError
from .base import ToolOutcome
from .base import arg_bool
from .base import arg_opt_str
from .base import loose_str

STATUSES: dict[str, pb.TodoStatus] = {
    "pending": pb.TODO_STATUS_PENDING,
    "in_progress": pb.TODO_STATUS_IN_PROGRESS,
    "completed": pb.TODO_STATUS_COMPLETED,
    "cancelled": pb.TODO_STATUS_CANCELLED,
}
_ALIASES = {"in-progress": "in_progress", "inprogress": "in_progress", "canceled": "cancelled",
            "done": "completed", "todo": "pending"}  # fmt: skip


def _status(raw: Any, *, strict: bool) -> str | None:
    if raw is None or raw == "":
        return None
    text = str(raw).strip().lower().replace(" ", "_").removeprefix("todo_status_")
    text = _ALIASES.get(text, text)
    if text in STATUSES:
        return text
    if strict:
        raise ToolError(f"Unknown todo status {raw!r}; use one of: {', '.join(STATUSES)}.")
    return None


def _status_value(raw: Any) -> pb.TodoStatus:
    """The enum value for a loose status (unknown ones are left unspecified)."""
    return STATUSES.get(_status(raw, strict=False) or "", pb.TODO_STATUS_UNSPECIFIED)


def todo_item(todo: dict[str, Any]) -> pb.TodoItem:
    """The protobuf TodoItem for one todo dict (the shape kept in ctx.todos)."""
    item = pb.TodoItem(
        id=str(todo.get("id", "")),
        content=str(todo.get("content", "")),
        status=_status_value(todo.get("status")),
    )
    for key in ("created_at", "updated_at"):
        value = todo.get(key)
        if isinstance(value, int):
            setattr(item, key, value)
    deps = todo.get("dependencies")
    if isinstance(deps, list):
        item.dependencies.extend(str(d) for d in deps)
    return item


_MARK = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]", "cancelled": "[-]"}


def render_todos(todos: list[dict[str, Any]]) -> str:
    if not todos:
        return "(the todo list is empty)"
    lines = []
    for t in todos:
        status = _status(t.get("status"), strict=False) or "unknown"
        mark = _MARK.get(status, "[?]")
        lines.append(f"{mark} {t.get('content', '')} (id: {t.get('id', '')}, {status})")
    return "\n".join(lines)


class TodoWriteTool(Tool):
    name = "TodoWrite"
    identifier = "TODO_WRITE"
    read_only = True
    description = (
        "Create and update a structured todo list for the current task, shown to the user. "
        "Use it for multi-step work: add the steps, mark one in_progress when you start it and "
        "completed as soon as it is done. With merge=true the given todos update existing ones "
        "by id (omitted fields keep their values) and new ids are appended; with merge=false "
        "the list is replaced. Statuses: pending, in_progress, completed, cancelled."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "content": {"type": "string"},
                        "status": {"type": "string", "enum": list(STATUSES)},
                    },
                    "required": ["id"],
                },
            },
            "merge": {"type": "boolean", "description": "Merge into the existing list by id."},
        },
        "required": ["todos", "merge"],
    }

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        ui = pb.UpdateTodosArgs(merge=args.get("merge") is True)
        todos = args.get("todos")
        if isinstance(todos, list):
            for t in todos:
                if isinstance(t, dict):
                    ui.todos.add(
                        id=loose_str(t, "id"),
                        content=loose_str(t, "content"),
                        status=_status_value(t.get("status")),
                    )
        return pb.ToolCall(update_todos_tool_call=pb.UpdateTodosToolCall(args=ui))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.update_todos_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        raw = args.get("todos")
        if not isinstance(raw, list):
            raise ToolError("`todos` must be a list of {id, content, status} objects.")
        merge = arg_bool(args, "merge")
        now = int(time.time() * 1000)
        current = [dict(t) for t in ctx.todos] if merge else []
        by_id = {str(t.get("id")): t for t in current}
        for i, t in enumerate(raw, 1):
            if not isinstance(t, dict):
                raise ToolError(f"Todo {i} must be an object with id, content and status.")
            ident = loose_str(t, "id") or (None if merge else str(i))
            if ident is None:
                raise ToolError(f"Todo {i} has no `id`; merging needs ids.")
            content = loose_str(t, "content")
            status = _status(t.get("status"), strict=True)
            existing = by_id.get(ident)
            if existing is not None:
                if content:
                    existing["content"] = content
                if status:
                    existing["status"] = status
                existing["updated_at"] = now
                continue
            if not content:
                raise ToolError(f"Todo {ident!r} is new and needs `content`.")
            item = {"id": ident, "content": content, "status": status or "pending",
                    "created_at": now, "updated_at": now}  # fmt: skip
            current.append(item)
            by_id[ident] = item
        ctx.todos[:] = current
        call = self._ui_call(args)
        ok = call.update_todos_tool_call.result.success
        ok.todos.extend(todo_item(t) for t in current)
        ok.total_count = len(current)
        ok.was_merge = merge
        done = sum(1 for t in current if t["status"] == "completed")
        text = f"Todo list updated ({done}/{len(current)} completed):\n{render_todos(current)}"
        return ToolOutcome(text, False, call)


class UpdateCurrentStepTool(Tool):
    """UpdateCurrentStep (subagent runs): progress shown on the parent's Task card."""

    name = "UpdateCurrentStep"
    identifier = "COMMUNICATE_UPDATE"
    read_only = True
    description = (
        "Tell the parent agent and the user what you are working on now (a short phrase). "
        "When you finish, pass `final_summary` and optionally a `completed_subtitle`."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "current_step": {"type": "string", "description": "What you are doing now."},
            "final_summary": {"type": "string", "description": "Summary when done."},
            "completed_subtitle": {"type": "string", "description": "Short done label."},
        },
        "required": ["current_step"],
    }

    def __init__(self) -> None:
        self.steps = 0  # one instance per run: the 1-based index within this turn

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        ui = pb.CommunicateUpdateArgs()
        for key in ("current_step", "final_summary", "completed_subtitle"):
            value = loose_str(args, key)
            if value:
                setattr(ui, key, value)
        return pb.ToolCall(communicate_update_tool_call=pb.CommunicateUpdateToolCall(args=ui))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.communicate_update_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        step = arg_opt_str(args, "current_step") or ""
        summary = arg_opt_str(args, "final_summary")
        if not step and not summary:
            raise ToolError("Pass `current_step` (or `final_summary` when done).")
        self.steps += 1
        call = self._ui_call(args)
        ok = call.communicate_update_tool_call.result.success
        ok.current_step = step
        ok.message_index = self.steps
        return ToolOutcome("Progress update shown.", False, call)
