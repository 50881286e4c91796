"""What a run asks the model to do, for every `ConversationAction` variant (protocol.md §11.10).

Cursor starts every run with one action: a user message, Plan → Build, an auto-resume, a shell
command the user typed, finished background work, a late AskQuestion answer… `resolve` turns
the run request into one `Instruction`: the user message the model sees (real or synthesised),
the request context the action carries inline, the mode it implies and what else the loop
must do first (re-run a pending tool batch, run the user's command). Pure: no I/O here.

Mode resolution (§11.10, peer practice): the action's own mode (`start_plan_action` → Plan,
`execute_plan_action.execution_mode`), then `UserMessage.mode`, then the checkpoint's mode.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from dataclasses import field

from cursor_byok.conversation.history_format import HistoryMessage
from cursor_byok.cursor import imported_history
from cursor_byok.pb import agent_v1_pb2 as pb

# How a run is served. Every variant maps to exactly one kind; UNSUPPORTED ends the run with an
# error Cursor shows (never a silent empty turn).
MESSAGE = "message"  # a model turn with `user_message`
RESUME = "resume"  # re-run the checkpoint's pending batch, then continue (or end if none)
SHELL = "shell"  # run the user's shell command, record it; no model call
CANCEL_SUBAGENT = "cancel_subagent"  # stop one running child run; no model call
NOTHING = "nothing"  # nothing to do in a run of its own (e.g. cancel or background request)
SUMMARIZE = "summarize"  # compaction, served by the summariser (issue 12)
UNSUPPORTED = "unsupported"

# A goal's continuations stop (the run does nothing) after this many in a row without a tool
# call, or this many in all: a client that keeps asking cannot make the model loop for ever.
MAX_IDLE_GOAL_CONTINUATIONS = 3
MAX_GOAL_CONTINUATIONS = 50

# Caps for background-completion text given to the model.
MAX_COMPLETION_CHARS = 4_000
MAX_COMPLETIONS = 20

_STATUS = {
    pb.BACKGROUND_TASK_STATUS_SUCCESS: "finished successfully",
    pb.BACKGROUND_TASK_STATUS_ERROR: "failed",
    pb.BACKGROUND_TASK_STATUS_ABORTED: "was aborted",
}
_KIND = {pb.BACKGROUND_TASK_KIND_SHELL: "shell", pb.BACKGROUND_TASK_KIND_SUBAGENT: "subagent"}


@dataclass
class Instruction:
    """What one run asks of the agent."""

    action: str  # the ConversationAction variant name ("" when the run has none)
    kind: str
    user_message: pb.UserMessage = field(default_factory=pb.UserMessage)
    # The RequestContext the action carries inline (a chat's first turn), else None.
    request_context: pb.RequestContext | None = None
    mode: int = pb.AGENT_MODE_UNSPECIFIED  # resolved: action, then UserMessage, then state
    shell_command: str = ""  # SHELL
    exec_id: str = ""  # SHELL: the exec id the client chose for the command
    subagent_id: str = ""  # CANCEL_SUBAGENT
    todos: list[dict] = field(default_factory=list)  # execute_plan: the plan's todos
    plan_text: str = ""  # execute_plan: the plan the model builds
    completions: list = field(default_factory=list)  # background work that finished
    reason: str = ""  # NOTHING / UNSUPPORTED: why, for the log or the error
    # A conversation imported with the message: read by the model before it (imported_history).
    imported: list[HistoryMessage] = field(default_factory=list)

    def error_text(self) -> str:
        label = self.action or "(no action)"
        return (
            f"cursor-byok cannot serve the Cursor action {label!r} yet"
            + (f": {self.reason}" if self.reason else "")
            + ". Send a normal message instead."
        )


def resolve(run_request: pb.AgentRunRequest) -> Instruction:
    """The instruction for one run request (cheap; call it as often as needed)."""
    action = run_request.action
    variant = action.WhichOneof("action") or ""
    state_mode = run_request.conversation_state.mode
    handler = _HANDLERS.get(variant)
    if handler is None:
        return Instruction(
            variant, UNSUPPORTED, mode=state_mode, reason="this action is not implemented"
        )
    out = handler(getattr(action, variant), run_request)
    out.action = variant
    if not out.mode:
        out.mode = out.user_message.mode or state_mode
    if out.kind == MESSAGE and not out.user_message.mode and out.mode:
        out.user_message.mode = out.mode
    return out


def supersedes(run_request: pb.AgentRunRequest) -> bool:
    """Whether this run replaces a run still going on the same conversation.

    A new message, a resume or a Build does; an action aimed at work that is running
    (stop one subagent, send a shell or subagent to the background) must leave it alone.
    """
    return resolve(run_request).kind not in (CANCEL_SUBAGENT, NOTHING)


def _inline(message, name: str) -> pb.RequestContext | None:
    return getattr(message, name) if message.HasField(name) else None


def _user_message_action(a: pb.UserMessageAction, _rr) -> Instruction:
    message = pb.UserMessage()
    message.CopyFrom(a.user_message)
    for earlier in reversed(a.prepend_user_messages):  # queued messages sent before this one
        if earlier.text:
            message.text = earlier.text + "\n\n" + message.text
    out = Instruction("", MESSAGE, message, _inline(a, "request_context"))
    if a.HasField("conversation_history"):
        out.imported = imported_history.messages(a.conversation_history)
    return out


def _start_plan(a: pb.StartPlanAction, _rr) -> Instruction:
    message = pb.UserMessage()
    message.CopyFrom(a.user_message)
    message.mode = pb.AGENT_MODE_PLAN
    return Instruction("", MESSAGE, message, _inline(a, "request_context"), mode=pb.AGENT_MODE_PLAN)


def _execute_plan(a: pb.ExecutePlanAction, run_request: pb.AgentRunRequest) -> Instruction:
    mode = a.execution_mode
    if mode in (pb.AGENT_MODE_UNSPECIFIED, pb.AGENT_MODE_PLAN, pb.AGENT_MODE_ASK):
        mode = pb.AGENT_MODE_AGENT  # building a plan needs a mode that can edit
    plan = a.plan_file_content or a.plan.plan
    if not plan and run_request.conversation_state.HasField("plan"):
        plan = run_request.conversation_state.plan.decode("utf-8", "replace")
    where = a.plan_file_path or a.plan_file_uri
    if not plan and not where:
        return Instruction("", UNSUPPORTED, reason="the Build request carries no plan")
    lines = ["Implement the plan below. Follow it step by step and keep its todo list current."]
    if where:
        lines.append(f"The plan file is {where}; read it again if you need to.")
    if plan:
        lines.append("<plan>\n" + plan.strip() + "\n</plan>")
    else:
        lines.append("Read the plan file first.")
    message = pb.UserMessage(text="\n\n".join(lines), mode=mode)
    if a.kickoff_message_id:
        message.message_id = a.kickoff_message_id
    return Instruction(
        "",
        MESSAGE,
        message,
        _inline(a, "request_context"),
        mode=mode,
        todos=plan_todos(plan),
        plan_text=plan,
    )


def _resume(a: pb.ResumeAction, _rr) -> Instruction:
    return Instruction("", RESUME, request_context=_inline(a, "request_context"))


def _shell_command(a: pb.ShellCommandAction, _rr) -> Instruction:
    command = a.shell_command.command
    if not command.strip():
        return Instruction("", NOTHING, reason="empty shell command")
    return Instruction("", SHELL, shell_command=command, exec_id=a.exec_id)


def _background_completion(a: pb.BackgroundTaskCompletionAction, _rr) -> Instruction:
    if not a.completions:
        return Instruction("", NOTHING, reason="no completions")
    return Instruction(
        "",
        MESSAGE,
        pb.UserMessage(text=completion_text(a.completions)),
        completions=list(a.completions),
    )


def _async_answer(a: pb.AsyncAskQuestionCompletionAction, _rr) -> Instruction:
    return Instruction("", MESSAGE, pb.UserMessage(text=async_answer_text(a)))


def _goal_continuation(_a, run_request: pb.AgentRunRequest) -> Instruction:
    """The client asks the agent to go on with the conversation's active goal (goals.py)."""
    state = run_request.conversation_state
    goal = state.goal_state
    if not state.HasField("goal_state") or goal.status != pb.GOAL_STATUS_ACTIVE:
        return Instruction("", NOTHING, reason="no active goal")
    if goal.idle_continuations_without_tool_calls >= MAX_IDLE_GOAL_CONTINUATIONS:
        return Instruction("", NOTHING, reason="the goal's last continuations made no tool call")
    if goal.continuation_count >= MAX_GOAL_CONTINUATIONS:
        return Instruction("", NOTHING, reason="the goal was continued too often")
    text = (
        f"Continue working toward the goal: {goal.objective}\n\nPick up where you left off. "
        "When the objective is met, call UpdateGoal with status complete; if you need the "
        "user before going on, call UpdateGoal with status paused and say what you need."
    )
    return Instruction(
        "",
        MESSAGE,
        pb.UserMessage(
            text=text,
            is_simulated_msg=True,
            simulated_msg_reason=pb.SIMULATED_MSG_REASON_GOAL_CONTINUATION,
        ),
    )


def _cancel_subagent(a: pb.CancelSubagentAction, _rr) -> Instruction:
    return Instruction("", CANCEL_SUBAGENT, subagent_id=a.subagent_id)


def _nothing(reason: str):
    def handler(_a, _rr) -> Instruction:
        return Instruction("", NOTHING, reason=reason)

    return handler


def _summarize(_a, _rr) -> Instruction:
    return Instruction("", SUMMARIZE)


_HANDLERS = {
    "user_message_action": _user_message_action,
    "start_plan_action": _start_plan,
    "execute_plan_action": _execute_plan,
    "resume_action": _resume,
    "shell_command_action": _shell_command,
    "background_task_completion_action": _background_completion,
    "async_ask_question_completion_action": _async_answer,
    "cancel_subagent_action": _cancel_subagent,
    "summarize_action": _summarize,
    "goal_continuation_action": _goal_continuation,
    # A run whose action only makes sense for another, running run: nothing is running here.
    "cancel_action": _nothing("cancel outside a running turn"),
    "background_shell_action": _nothing("no shell of this run is running"),
    "background_subagent_action": _nothing("no subagent of this run is running"),
}


# --------------------------------------------------------------------------- texts


def completion_text(completions) -> str:
    """Finished background work as bounded text for the model."""
    lines = ["<background_tasks_completed>"]
    for item in list(completions)[:MAX_COMPLETIONS]:
        kind = _KIND.get(item.kind, "task")
        status = _STATUS.get(item.status, "finished")
        head = f"- {kind} {item.title or item.task_id or item.tool_call_id} {status}"
        ids = []
        if item.task_id:
            ids.append(f"task id {item.task_id}")
        if item.subagent_id:
            ids.append(f"agent id {item.subagent_id}")
        if item.tool_call_id:
            ids.append(f"tool call {item.tool_call_id}")
        if ids:
            head += f" ({', '.join(ids)})"
        lines.append(head)
        if item.detail:
            detail = item.detail
            if len(detail) > MAX_COMPLETION_CHARS:
                cut = len(detail) - MAX_COMPLETION_CHARS
                detail = detail[:MAX_COMPLETION_CHARS] + f"\n… {cut} characters omitted …"
            lines.append("  " + detail.replace("\n", "\n  "))
        if item.output_path:
            lines.append(f"  Full output: {item.output_path} (read it if you need more).")
    if len(completions) > MAX_COMPLETIONS:
        lines.append(f"- … and {len(completions) - MAX_COMPLETIONS} more")
    lines.append("</background_tasks_completed>")
    lines.append("Background work you started has finished. Continue with the task.")
    return "\n".join(lines)


def async_answer_text(a: pb.AsyncAskQuestionCompletionAction) -> str:
    """A late AskQuestion answer, phrased as the tool's own result would be."""
    questions = {q.id: q for q in a.original_args.questions}
    result = a.result
    call = a.original_tool_call_id
    lines = [f"The user answered the questions you asked earlier (tool call {call})."]
    kind = result.WhichOneof("result")
    if kind == "success":
        for answer in result.success.answers:
            question = questions.get(answer.question_id)
            labels = {o.id: o.label for o in question.options} if question else {}
            chosen = [labels.get(i, i) for i in answer.selected_option_ids]
            if answer.freeform_text:
                chosen.append(answer.freeform_text)
            prompt = question.prompt if question else answer.question_id
            lines.append(f"- {prompt}: {', '.join(chosen) or '(no answer)'}")
    elif kind == "rejected":
        reason = result.rejected.reason
        lines.append("The user skipped the questions" + (f": {reason}" if reason else "."))
    else:
        lines.append("The questions could not be answered.")
    return "\n".join(lines)


# --------------------------------------------------------------------------- plan todos

_FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*(\n|\Z)", re.S)
_ITEM = re.compile(r"^\s*-\s+(\w+):\s*(.*)$")
_FIELD = re.compile(r"^\s+(\w+):\s*(.*)$")


def plan_todos(plan: str) -> list[dict]:
    """The todos of a plan file's front matter (`todos:` list of id/content/status).

    Cursor's plan files start with YAML front matter; only this simple, regular shape is
    read (no YAML dependency): anything else gives no todos rather than an error.
    """
    match = _FRONT.match(plan or "")
    if not match:
        return []
    todos: list[dict] = []
    inside = False
    for line in match.group(1).splitlines():
        if not line.strip():
            continue
        if not line.startswith((" ", "-")):
            inside = line.split(":", 1)[0].strip() == "todos"
            continue
        if not inside:
            continue
        item = _ITEM.match(line)
        if item:
            todos.append({item.group(1): _scalar(item.group(2))})
            continue
        extra = _FIELD.match(line)
        if extra and todos:
            todos[-1][extra.group(1)] = _scalar(extra.group(2))
    out = []
    for index, todo in enumerate(todos, 1):
        content = todo.get("content")
        if not isinstance(content, str) or not content:
            continue
        status = todo.get("status") if todo.get("status") in _TODO_STATUSES else "pending"
        out.append({"id": str(todo.get("id") or index), "content": content, "status": status})
    return out


_TODO_STATUSES = ("pending", "in_progress", "completed", "cancelled")


def _scalar(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        try:
            return json.loads(text) if text[0] == '"' else text[1:-1]
        except ValueError:
            return text[1:-1]
    return text


_RUN_STATUS = {
    pb.BACKGROUND_TASK_STATUS_SUCCESS: pb.SUBAGENT_RUN_STATUS_SUCCESS,
    pb.BACKGROUND_TASK_STATUS_ERROR: pb.SUBAGENT_RUN_STATUS_ERROR,
    pb.BACKGROUND_TASK_STATUS_ABORTED: pb.SUBAGENT_RUN_STATUS_ABORTED,
}


def finished_subagent_runs(
    state: pb.ConversationStateStructure, completions, now_ms: int
) -> dict[str, pb.SubagentRunState]:
    """Task cards of background subagents that finished, with their final state (`now_ms`, the
    wall clock in ms, stamps a run the client gave no completion time: the core reads no
    clock)."""
    out: dict[str, pb.SubagentRunState] = {}
    runs = state.subagent_runs_by_parent_tool_call_id
    for item in completions:
        if item.kind != pb.BACKGROUND_TASK_KIND_SUBAGENT:
            continue
        if item.reason == pb.BACKGROUND_TASK_COMPLETION_REASON_TASK_PROGRESS:
            continue  # a progress note, not the end
        key = item.tool_call_id or next(
            (k for k, r in runs.items() if item.subagent_id and r.subagent_id == item.subagent_id),
            "",
        )
        if not key:
            continue
        run = pb.SubagentRunState()
        if key in runs:
            run.CopyFrom(runs[key])
        run.parent_tool_call_id = key
        run.status = _RUN_STATUS.get(item.status, pb.SUBAGENT_RUN_STATUS_SUCCESS)
        if item.subagent_id:
            run.subagent_id = item.subagent_id
        if item.output_path:
            run.output_path = item.output_path
        if item.reason:
            run.completion_reason = item.reason
        run.completed_timestamp_ms = run.completed_timestamp_ms or now_ms
        out[key] = run
    return out
