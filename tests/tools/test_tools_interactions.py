"""AskQuestion, CreatePlan, SwitchMode, WebFetch: tools answered through InteractionQuery."""

from __future__ import annotations

from fake_context import FakeToolContext

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools.interactions import AskQuestionTool
from cursor_byok.tools.interactions import CreatePlanTool
from cursor_byok.tools.interactions import SwitchModeTool
from cursor_byok.tools.web import WebFetchTool
from cursor_byok.tools.web import html_to_markdown

QUESTIONS = {
    "title": "Setup",
    "questions": [
        {
            "id": "db",
            "prompt": "Which database?",
            "options": [{"id": "pg", "label": "Postgres"}, {"id": "sq", "label": "SQLite"}],
        },
        {
            "id": "tests",
            "prompt": "Add tests?",
            "options": [{"id": "y", "label": "Yes"}, {"id": "n", "label": "No"}],
            "allow_multiple": True,
        },
    ],
}


def _ask_answer(result: pb.AskQuestionResult):
    def answer(query: pb.InteractionQuery) -> pb.InteractionResponse:
        response = pb.InteractionResponse()
        response.ask_question_interaction_response.result.CopyFrom(result)
        return response

    return answer


async def test_ask_question_answered(make_ctx):
    result = pb.AskQuestionResult()
    result.success.answers.add(question_id="db", selected_option_ids=["sq"])
    result.success.answers.add(question_id="tests", freeform_text="only smoke tests")
    ctx: FakeToolContext = make_ctx(answers={"ask_question_interaction_query": _ask_answer(result)})
    out = await AskQuestionTool().run(QUESTIONS, ctx)
    assert not out.is_error
    assert "Which database?\n  → SQLite" in out.text
    assert "(own words) only smoke tests" in out.text
    [query] = ctx.queries
    asked = query.ask_question_interaction_query
    assert asked.tool_call_id == "call-1" and asked.args.title == "Setup"
    assert asked.args.questions[1].allow_multiple
    assert out.tool_call.ask_question_tool_call.result.success.answers[0].question_id == "db"


async def test_ask_question_skipped_async_and_unanswered(make_ctx):
    skipped = pb.AskQuestionResult()
    skipped.rejected.reason = "busy"
    ctx = make_ctx(answers={"ask_question_interaction_query": _ask_answer(skipped)})
    out = await AskQuestionTool().run(QUESTIONS, ctx)
    assert out.is_error and "skipped the questions: busy" in out.text
    assert out.tool_call.ask_question_tool_call.result.rejected.reason == "busy"
    later = pb.AskQuestionResult()
    getattr(later, "async").SetInParent()  # `async` is a Python keyword
    ctx = make_ctx(answers={"ask_question_interaction_query": _ask_answer(later)})
    out = await AskQuestionTool().run(QUESTIONS, ctx)
    assert not out.is_error and "answer later" in out.text
    out = await AskQuestionTool().run(QUESTIONS, make_ctx())
    assert out.is_error and "No answer" in out.text


async def test_ask_question_validation(ctx):
    out = await AskQuestionTool().run({"questions": []}, ctx)
    assert out.is_error and "non-empty" in out.text and not ctx.queries
    one_option = {"questions": [{"id": "a", "prompt": "?", "options": [{"id": "1", "label": "x"}]}]}
    out = await AskQuestionTool().run(one_option, ctx)
    assert out.is_error and "at least 2 options" in out.text


async def test_create_plan(make_ctx):
    def saved(query: pb.InteractionQuery) -> pb.InteractionResponse:
        response = pb.InteractionResponse()
        response.create_plan_request_response.result.plan_uri = "file:///plans/x.md"
        response.create_plan_request_response.result.success.SetInParent()
        return response

    ctx = make_ctx(mode=pb.AGENT_MODE_PLAN, answers={"create_plan_request_query": saved})
    args = {
        "name": "X",
        "overview": "Do X",
        "plan": "# X\n\nsteps",
        "todos": [{"id": "a", "content": "first"}, {"content": "second"}],
    }
    out = await CreatePlanTool().run(args, ctx)
    assert not out.is_error and "file:///plans/x.md" in out.text
    query = ctx.queries[0].create_plan_request_query
    assert query.tool_call_id == "call-1" and query.args.plan == "# X\n\nsteps"
    assert [(t.id, t.content, t.status) for t in query.args.todos] == [
        ("a", "first", pb.TODO_STATUS_PENDING),
        ("2", "second", pb.TODO_STATUS_PENDING),
    ]
    assert out.tool_call.create_plan_tool_call.result.plan_uri == "file:///plans/x.md"


async def test_create_plan_error_and_missing_plan(make_ctx):
    def failed(query):
        response = pb.InteractionResponse()
        response.create_plan_request_response.result.error.error = "disk full"
        return response

    ctx = make_ctx(answers={"create_plan_request_query": failed})
    out = await CreatePlanTool().run({"plan": "# P", "overview": "o"}, ctx)
    assert out.is_error and "disk full" in out.text
    out = await CreatePlanTool().run({"overview": "o"}, ctx)
    assert out.is_error and "plan" in out.text


def _switch(verdict: str, reason: str = ""):
    def answer(query):
        response = pb.InteractionResponse()
        if verdict == "approved":
            response.switch_mode_request_response.approved.SetInParent()
        else:
            response.switch_mode_request_response.rejected.reason = reason
        return response

    return answer


async def test_switch_mode_approved_and_rejected(make_ctx):
    ctx = make_ctx(answers={"switch_mode_request_query": _switch("approved")})
    out = await SwitchModeTool().run({"target_mode_id": "plan", "explanation": "big task"}, ctx)
    assert not out.is_error and out.text == "Switched from agent to plan mode."
    success = out.tool_call.switch_mode_tool_call.result.success
    assert (success.from_mode_id, success.to_mode_id) == ("agent", "plan")
    args = ctx.queries[0].switch_mode_request_query.args
    assert args.tool_call_id == "call-1" and args.explanation == "big task"
    ctx = make_ctx(answers={"switch_mode_request_query": _switch("rejected", "stay")})
    out = await SwitchModeTool().run({"target_mode_id": "plan"}, ctx)
    assert out.is_error and "declined" in out.text and "stay" in out.text
    assert out.tool_call.switch_mode_tool_call.result.rejected.reason == "stay"


async def test_switch_mode_bad_targets(ctx):
    out = await SwitchModeTool().run({"target_mode_id": "ask"}, ctx)
    assert out.is_error and "agent, plan" in out.text and not ctx.queries
    out = await SwitchModeTool().run({"target_mode_id": "agent"}, ctx)
    assert out.is_error and "Already in agent mode" in out.text


def _fetch_verdict(approved: bool):
    def answer(query):
        response = pb.InteractionResponse()
        if approved:
            response.web_fetch_request_response.approved.SetInParent()
        else:
            response.web_fetch_request_response.rejected.reason = "no web"
        return response

    return answer


async def test_web_fetch_approved_html_becomes_markdown(make_ctx):
    ctx = make_ctx(answers={"web_fetch_request_query": _fetch_verdict(True)})
    out = await WebFetchTool().run({"url": "https://example.test/page"}, ctx)
    assert not out.is_error, out.text
    assert ctx.exec_kinds() == ["fetch_args"]
    assert ctx.execs[0].fetch_args.tool_call_id == "call-1"
    assert "Status: 200" in out.text and "# Hello" in out.text
    assert "[https://example.test/page](https://example.test/next)" in out.text
    assert "- one" in out.text and "var x" not in out.text and "<p>" not in out.text
    ok = out.tool_call.web_fetch_tool_call.result.success
    assert ok.url == "https://example.test/page" and "# Hello" in ok.markdown
    out = await WebFetchTool().run({"url": "https://example.test/404"}, ctx)
    assert "Status: 404" in out.text


async def test_web_fetch_rejected_and_bad_url(make_ctx):
    ctx = make_ctx(answers={"web_fetch_request_query": _fetch_verdict(False)})
    out = await WebFetchTool().run({"url": "https://example.test/"}, ctx)
    assert out.is_error and "declined" in out.text and not ctx.execs
    assert out.tool_call.web_fetch_tool_call.result.rejected.reason == "no web"
    out = await WebFetchTool().run({"url": "file:///etc/passwd"}, ctx)
    assert out.is_error and "Not an http(s) URL" in out.text


def test_html_to_markdown_basics():
    md = html_to_markdown(
        "<title>T</title><h2>Sub</h2><p>a <b>b</b> <code>c</code></p><pre>x\n  y</pre>",
        "https://h/",
    )
    assert (
        md.startswith("## Sub") and "# T" not in md
    )  # a leading heading makes the title redundant
    assert html_to_markdown("<title>T</title><p>x</p>") == "# T\n\nx"
    assert "## Sub" in md and "a **b** `c`" in md and "x\n  y" in md
