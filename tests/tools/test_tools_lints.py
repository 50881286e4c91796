"""ReadLints: one diagnostics exec per path, merged into one card."""

from __future__ import annotations

from pathlib import Path

from fake_context import FakeToolContext

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools.lints import ReadLintsTool


async def test_clean_file(ctx: FakeToolContext, workspace: Path):
    out = await ReadLintsTool().run({"paths": [str(workspace / "src" / "app.py")]}, ctx)
    assert out.text == "No linter errors found." and not out.is_error
    ok = out.tool_call.read_lints_tool_call.result.success
    assert ok.total_files == 1 and ok.total_diagnostics == 0


async def test_diagnostics_of_several_paths(ctx, workspace):
    (workspace / "bad.py").write_text("def f(:\n    pass\n")
    (workspace / "warn.txt").write_text("ok\nx = 1  # LINT: warning unused x\n")
    out = await ReadLintsTool().run({"paths": ["bad.py", str(workspace / "warn.txt")]}, ctx)
    assert not out.is_error
    assert ctx.exec_kinds() == ["diagnostics_args", "diagnostics_args"]
    assert [e.diagnostics_args.tool_call_id for e in ctx.execs] == ["call-1", "call-1"]
    lines = out.text.splitlines()
    assert lines[0] == "Found 2 diagnostics:"
    assert lines[1].startswith(f"{workspace / 'bad.py'}:0:") and ": error: " in lines[1]
    assert lines[2] == f"{workspace / 'warn.txt'}:1:0: warning: unused x [lint]"
    ok = out.tool_call.read_lints_tool_call.result.success
    assert ok.total_files == 2 and ok.total_diagnostics == 2
    assert ok.file_diagnostics[1].diagnostics[0].severity == pb.DIAGNOSTIC_SEVERITY_WARNING
    assert list(out.tool_call.read_lints_tool_call.args.paths) == [
        str(workspace / "bad.py"),
        str(workspace / "warn.txt"),
    ]


async def test_default_is_the_workspace_and_partial_failures(ctx, workspace):
    out = await ReadLintsTool().run({}, ctx)
    assert [e.diagnostics_args.path for e in ctx.execs] == [str(workspace)]
    assert not out.is_error
    out = await ReadLintsTool().run({"paths": ["src/app.py", "missing.py"]}, ctx)
    assert not out.is_error and "missing.py: file not found" in out.text


async def test_all_paths_failing_is_an_error(ctx):
    out = await ReadLintsTool().run({"paths": "/nowhere/x.py"}, ctx)
    assert out.is_error and "file not found" in out.text
    assert out.tool_call.read_lints_tool_call.result.WhichOneof("result") == "error"
