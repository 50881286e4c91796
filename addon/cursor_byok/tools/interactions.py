"""Tools answered by the user: AskQuestion, CreatePlan, SwitchMode (tools.md §4.15-4.17).

Each sends one `InteractionQuery` and waits for the `InteractionResponse`; nothing runs on
the machine. A skipped or rejected answer is a normal tool result the model can react to
(flagged as an error, per the rule that every non-success oneof is one).
"""

from __future__ import annotations

from typing import Any
from typing import ClassVar

from cursor_byok.pb import agent_v1_pb2 as pb

from .base import MODE_IDS
from .base import Tool
from .base import ToolContext
from .base import ToolError
from .base import ToolOutcome
from .base import arg_opt_str
from .base import arg_str
from .base import loose_str

SWITCH_TARGETS = ("agent", "plan")


def _response(answer: pb.InteractionResponse, kind: str) -> Any | None:
    return getattr(answer, kind) if answer.WhichOneof("result") == kind else None


# =========================================================================== AskQuestion


def _questions(raw: Any, *, strict: bool) -> list[pb.AskQuestionArgs.Question]:
    """Questions from model args; strict mode enforces what the dialog needs."""
    if not isinstance(raw, list) or (strict and not raw):
        if strict:
            raise ToolError("`questions` must be a non-empty list of questions.")
        return []
    out = []
    for qi, q in enumerate(raw, 1):
        if not isinstance(q, dict):
            if strict:
                raise ToolError(f"Question {qi} must be an object with prompt and options.")
            continue
        question = pb.AskQuestionArgs.Question(
            id=loose_str(q, "id") or f"q{qi}",
            prompt=loose_str(q, "prompt"),
            allow_multiple=q.get("allow_multiple") is True,
        )
        options = q.get("options")
        if not isinstance(options, list):
            options = []
        for oi, o in enumerate(options, 1):
            if isinstance(o, dict):
                label = loose_str(o, "label")
                question.options.add(id=loose_str(o, "id") or str(oi), label=label)
            elif isinstance(o, str):
                question.options.add(id=str(oi), label=o)
        if strict:
            if not question.prompt:
                raise ToolError(f"Question {qi} has no `prompt`.")
            if len(question.options) < 2:
                raise ToolError(f"Question {qi} needs at least 2 options.")
        out.append(question)
    if strict and len({q.id for q in out}) != len(out):
        raise ToolError("Question ids must be unique.")
    return out


class AskQuestionTool(Tool):
    name = "AskQuestion"
    identifier = "ASK_QUESTION"
    read_only = True
    description = (
        "Ask the user one or more multiple-choice questions and wait for the answers. Use it "
        "when a decision really needs the user (ambiguous requirements, a choice between "
        "approaches); each question needs at least 2 options, and the user can also answer "
        "in their own words."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "Optional title of the question form."},
            "questions": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "prompt": {"type": "string"},
                        "options": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "id": {"type": "string"},
                                    "label": {"type": "string"},
                                },
                                "required": ["id", "label"],
                            },
                        },
                        "allow_multiple": {"type": "boolean"},
                    },
                    "required": ["id", "prompt", "options"],
                },
            },
        },
        "required": ["questions"],
    }

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        ui = pb.AskQuestionArgs(title=loose_str(args, "title"))
        ui.questions.extend(_questions(args.get("questions"), strict=False))
        return pb.ToolCall(ask_question_tool_call=pb.AskQuestionToolCall(args=ui))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.ask_question_tool_call.result.error.error_message = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        ask = pb.AskQuestionArgs(title=arg_str(args, "title"))
        ask.questions.extend(_questions(args.get("questions"), strict=True))
        query = pb.AskQuestionInteractionQuery(args=ask, tool_call_id=ctx.call_id)
        answer = await ctx.interact(pb.InteractionQuery(ask_question_interaction_query=query))
        response = _response(answer, "ask_question_interaction_response")
        call = pb.ToolCall(ask_question_tool_call=pb.AskQuestionToolCall(args=ask))
        if response is None or response.result.WhichOneof("result") is None:
            text = "No answer was received for the questions."
            call.ask_question_tool_call.result.error.error_message = text
            return ToolOutcome(text, True, call)
        result = response.result
        call.ask_question_tool_call.result.CopyFrom(result)
        kind = result.WhichOneof("result")
        if kind == "rejected":
            reason = result.rejected.reason
            text = "The user skipped the questions" + (f": {reason}" if reason else ".")
            return ToolOutcome(
                text + " Proceed with your best judgement or ask differently.", True, call
            )
        if kind == "error":
            return ToolOutcome(
                f"Asking failed: {result.error.error_message or 'unknown error'}", True, call
            )
        if kind == "async":
            return ToolOutcome(
                "The questions were posted; the user will answer later and the answers will "
                "arrive as a new message. Continue with what does not depend on them.",
                False,
                call,
            )
        return ToolOutcome(self._render(ask, result.success), False, call)

    @staticmethod
    def _render(ask: pb.AskQuestionArgs, success: pb.AskQuestionSuccess) -> str:
        answers = {a.question_id: a for a in success.answers}
        lines: list[str] = ["The user answered:"]
        for q in ask.questions:
            labels = {o.id: o.label for o in q.options}
            a = answers.get(q.id)
            chosen: list[str] = []
            if a is not None:
                chosen = [labels.get(i, i) for i in a.selected_option_ids]
                if a.freeform_text.strip():
                    chosen.append(f"(own words) {a.freeform_text.strip()}")
            lines.append(f"- {q.prompt}\n  → {'; '.join(chosen) if chosen else '(no answer)'}")
        return "\n".join(lines)


# =========================================================================== CreatePlan


class CreatePlanTool(Tool):
    name = "CreatePlan"
    identifier = "CREATE_PLAN_V2"
    read_only = True
    description = (
        "Present an implementation plan to the user for review (Plan mode). `plan` is "
        "Markdown whose first line is a level-1 heading; give a short `overview` and, on the "
        "first call, a `name`. `todos` are the concrete steps. The user reviews the plan and "
        "decides when to build it; do not start implementing in Plan mode."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Short plan name (first call only)."},
            "overview": {"type": "string", "description": "One or two sentences."},
            "plan": {"type": "string", "description": "The plan in Markdown."},
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"id": {"type": "string"}, "content": {"type": "string"}},
                    "required": ["id", "content"],
                },
            },
        },
        "required": ["plan", "overview"],
    }

    @staticmethod
    def _args(args: dict[str, Any]) -> pb.CreatePlanArgs:
        plan = pb.CreatePlanArgs(
            plan=loose_str(args, "plan"),
            overview=loose_str(args, "overview"),
            name=loose_str(args, "name"),
        )
        todos = args.get("todos")
        if isinstance(todos, list):
            for i, t in enumerate(todos, 1):
                if isinstance(t, dict) and loose_str(t, "content"):
                    plan.todos.add(
                        id=loose_str(t, "id") or str(i),
                        content=loose_str(t, "content"),
                        status=pb.TODO_STATUS_PENDING,
                    )
        return plan

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        return pb.ToolCall(create_plan_tool_call=pb.CreatePlanToolCall(args=self._args(args)))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.create_plan_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        arg_str(args, "plan", required=True)
        plan = self._args(args)
        query = pb.CreatePlanRequestQuery(args=plan, tool_call_id=ctx.call_id)
        answer = await ctx.interact(pb.InteractionQuery(create_plan_request_query=query))
        response = _response(answer, "create_plan_request_response")
        call = pb.ToolCall(create_plan_tool_call=pb.CreatePlanToolCall(args=plan))
        if response is None or response.result.WhichOneof("result") is None:
            text = "The client did not confirm the plan."
            call.create_plan_tool_call.result.error.error = text
            return ToolOutcome(text, True, call)
        call.create_plan_tool_call.result.CopyFrom(response.result)
        if response.result.WhichOneof("result") == "error":
            return ToolOutcome(
                f"Saving the plan failed: {response.result.error.error or 'unknown error'}",
                True,
                call,
            )
        uri = response.result.plan_uri
        text = f"Plan saved ({uri})." if uri else "Plan saved."
        return ToolOutcome(text + " The user will review it.", False, call)


# =========================================================================== SwitchMode


class SwitchModeTool(Tool):
    """SwitchMode; on approval the loop switches tools and mode (read the card's result)."""

    name = "SwitchMode"
    identifier = "SWITCH_MODE"
    read_only = True
    description = (
        "Ask the user to switch the conversation to another mode: `agent` (make changes) or "
        "`plan` (research and write a plan first). Explain why in `explanation`. The switch "
        "happens only if the user approves."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "target_mode_id": {"type": "string", "enum": list(SWITCH_TARGETS)},
            "explanation": {"type": "string", "description": "Why the switch helps."},
        },
        "required": ["target_mode_id"],
    }

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        ui = pb.SwitchModeArgs(target_mode_id=loose_str(args, "target_mode_id"))
        explanation = loose_str(args, "explanation")
        if explanation:
            ui.explanation = explanation
        return pb.ToolCall(switch_mode_tool_call=pb.SwitchModeToolCall(args=ui))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.switch_mode_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        target = arg_str(args, "target_mode_id", required=True).strip().lower()
        if target not in SWITCH_TARGETS:
            raise ToolError(f"`target_mode_id` must be one of: {', '.join(SWITCH_TARGETS)}.")
        current = MODE_IDS.get(ctx.mode, "agent")
        if target == current:
            raise ToolError(f"Already in {target} mode.")
        switch = pb.SwitchModeArgs(target_mode_id=target, tool_call_id=ctx.call_id)
        explanation = arg_opt_str(args, "explanation")
        if explanation:
            switch.explanation = explanation
        answer = await ctx.interact(
            pb.InteractionQuery(switch_mode_request_query=pb.SwitchModeRequestQuery(args=switch))
        )
        response = _response(answer, "switch_mode_request_response")
        verdict = response.WhichOneof("result") if response is not None else None
        call = pb.ToolCall(switch_mode_tool_call=pb.SwitchModeToolCall(args=switch))
        res = call.switch_mode_tool_call.result
        if verdict == "approved":
            res.success.from_mode_id = current
            res.success.to_mode_id = target
            return ToolOutcome(f"Switched from {current} to {target} mode.", False, call)
        if response is not None and verdict == "rejected":
            reason = response.rejected.reason or "no reason given"
            res.rejected.reason = reason
            return ToolOutcome(
                f"The user declined switching to {target} mode: {reason}. Stay in {current} mode.",
                True,
                call,
            )
        text = "No answer was received for the mode switch; staying in " + current + " mode."
        res.error.error = text
        return ToolOutcome(text, True, call)
