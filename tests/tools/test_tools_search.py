"""Grep and Glob through grep_args, rendered like ripgrep."""

from __future__ import annotations

from pathlib import Path

from fake_context import FakeToolContext
from fake_context import thrown

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools.search import GlobTool
from cursor_byok.tools.search import GrepTool


async def test_grep_content_mode(ctx: FakeToolContext, workspace: Path):
    out = await GrepTool().run({"pattern": "VALUE"}, ctx)
    assert not out.is_error
    assert out.text == "src/util.py\n1:VALUE = 1"
    grep = ctx.execs[0].grep_args
    assert grep.pattern == "VALUE" and grep.tool_call_id == "call-1"
    assert not grep.HasField("output_mode")
    assert out.tool_call.grep_tool_call.result.success.workspace_results


async def test_grep_flags_map_to_the_right_fields(ctx):
    args = {"pattern": "value", "-i": True, "-A": 1, "-B": 0, "glob": "*.py", "head_limit": 10}
    out = await GrepTool().run(args, ctx)
    grep = ctx.execs[0].grep_args
    assert grep.case_insensitive and grep.context_after == 1 and grep.context_before == 0
    assert grep.glob == "*.py" and grep.head_limit == 10
    assert out.text.splitlines() == ["src/util.py", "1:VALUE = 1", "2-OTHER = 2", "3:value = 3"]


async def test_grep_context_gap_separator(ctx, workspace):
    (workspace / "gap.txt").write_text("hit\n1\n2\n3\n4\nhit\n")
    out = await GrepTool().run({"pattern": "hit", "path": "gap.txt", "-C": 1}, ctx)
    assert out.text.splitlines() == ["gap.txt", "1:hit", "2-1", "--", "5-4", "6:hit"]
    assert ctx.execs[0].grep_args.path == str(workspace / "gap.txt")


async def test_grep_files_and_count_modes(ctx):
    out = await GrepTool().run(
        {"pattern": "line|TODO|OTHER", "output_mode": "files_with_matches"}, ctx
    )
    assert set(out.text.splitlines()) == {"README.md", "docs/guide.md", "src/util.py"}
    out = await GrepTool().run({"pattern": "line", "output_mode": "count"}, ctx)
    assert out.text.splitlines() == ["README.md:2", "Total: 2 matches in 1 file."]


async def test_grep_paging_note_and_no_matches(ctx):
    out = await GrepTool().run(
        {"pattern": ".", "output_mode": "files_with_matches", "head_limit": 1}, ctx
    )
    lines = out.text.splitlines()
    assert len([x for x in lines if not x.startswith("[")]) == 1
    assert "use offset=1" in out.text
    out = await GrepTool().run({"pattern": "zzz_nothing"}, ctx)
    assert out.text == "No matches found." and not out.is_error


async def test_grep_errors(make_ctx):
    ctx = make_ctx()
    out = await GrepTool().run({"pattern": "(unclosed"}, ctx)
    assert out.is_error and "regex parse error" in out.text
    assert out.tool_call.grep_tool_call.result.WhichOneof("result") == "error"
    out = await GrepTool().run({"pattern": "x", "output_mode": "lines"}, ctx)
    assert out.is_error and "output_mode" in out.text
    out = await GrepTool().run({"pattern": "x"}, make_ctx(overrides={"grep_args": thrown}))
    assert out.is_error and out.tool_call.grep_tool_call.result.error.error


async def test_grep_multi_root_paths_are_anchored(make_ctx):
    def two_roots(request):
        reply = pb.ExecClientMessage()
        ok = reply.grep_result.success
        ok.workspace_results["/a"].files.files.append("x.py")
        ok.workspace_results["/b"].files.files.append("y.py")
        ok.workspace_results["/b"].files.client_truncated = True
        return reply

    ctx = make_ctx(overrides={"grep_args": two_roots})
    out = await GrepTool().run({"pattern": "x", "output_mode": "files_with_matches"}, ctx)
    assert "/a/x.py" in out.text and "/b/y.py" in out.text and "# /a" in out.text
    assert "truncated" in out.text


async def test_glob_prepends_double_star_and_lists_files(ctx, workspace):
    out = await GlobTool().run({"glob_pattern": "*.py"}, ctx)
    assert not out.is_error
    assert out.text.splitlines() == ["src/app.py", "src/util.py"]
    grep = ctx.execs[0].grep_args
    assert grep.pattern == "" and grep.glob == "**/*.py"
    assert grep.output_mode == "files_with_matches" and grep.path == str(workspace)
    ok = out.tool_call.glob_tool_call.result.success
    assert list(ok.files) == ["src/app.py", "src/util.py"] and ok.total_files == 2
    assert out.tool_call.glob_tool_call.args.glob_pattern == "*.py"


async def test_glob_target_directory_and_no_files(ctx, workspace):
    out = await GlobTool().run({"glob_pattern": "**/*.md", "target_directory": "docs"}, ctx)
    assert out.text == "docs/guide.md"
    assert ctx.execs[0].grep_args.glob == "**/*.md"
    assert ctx.execs[0].grep_args.path == str(workspace / "docs")
    out = await GlobTool().run({"glob_pattern": "*.rs"}, ctx)
    assert out.text == "No files found matching **/*.rs." and not out.is_error


async def test_glob_error(make_ctx):
    def failed(request):
        reply = pb.ExecClientMessage()
        reply.grep_result.error.error = "rg crashed"
        return reply

    out = await GlobTool().run({"glob_pattern": "*"}, make_ctx(overrides={"grep_args": failed}))
    assert out.is_error and "rg crashed" in out.text
    assert out.tool_call.glob_tool_call.result.error.error == out.text
