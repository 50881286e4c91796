"""Read, Write, StrReplace, Delete, LS against a real tmp workspace through the client emulator."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fake_context import FakeToolContext
from fake_context import thrown

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools.base import MAX_RESULT_LINES
from cursor_byok.tools.edits import StrReplaceTool
from cursor_byok.tools.edits import WriteTool
from cursor_byok.tools.files import DeleteTool
from cursor_byok.tools.files import LsTool
from cursor_byok.tools.files import ReadTool

# --------------------------------------------------------------------------- Read


async def test_read_numbers_lines_and_fills_the_card(ctx: FakeToolContext, workspace: Path):
    out = await ReadTool().run({"path": str(workspace / "README.md")}, ctx)
    assert not out.is_error
    assert out.text.splitlines() == ["     1|# Demo", "     2|line two", "     3|line three"]
    ok = out.tool_call.read_tool_call.result.success
    assert ok.content == "# Demo\nline two\nline three"
    assert ok.total_lines == 3 and ok.read_range.start_line == 1 and ok.read_range.end_line == 3
    assert out.tool_call.read_tool_call.args.path == str(workspace / "README.md")
    [request] = ctx.execs
    assert request.read_args.tool_call_id == "call-1"


async def test_read_relative_path_resolves_against_workspace(ctx, workspace):
    out = await ReadTool().run({"path": "src/util.py"}, ctx)
    assert not out.is_error
    assert ctx.execs[0].read_args.path == str(workspace / "src" / "util.py")


async def test_read_offset_limit_and_negative_offset(ctx, workspace):
    path = str(workspace / "src" / "util.py")
    out = await ReadTool().run({"path": path, "offset": 2, "limit": 1}, ctx)
    assert out.text.splitlines() == ["     2|OTHER = 2"]
    assert ctx.execs[0].read_args.offset == 2 and ctx.execs[0].read_args.limit == 1
    out = await ReadTool().run({"path": path, "offset": "-1"}, ctx)
    assert out.text.splitlines() == ["     3|value = 3"]


async def test_read_applies_range_itself_when_the_client_did_not(workspace, make_ctx):
    def whole_file(request: pb.ExecServerMessage) -> pb.ExecClientMessage:
        reply = pb.ExecClientMessage()
        reply.read_result.success.content = "a\r\nb\r\nc\r\nd\r\n"
        return reply

    ctx = make_ctx(overrides={"read_args": whole_file})
    out = await ReadTool().run({"path": "/x", "offset": 2, "limit": 2}, ctx)
    assert out.text.splitlines() == ["     2|b", "     3|c"]


async def test_read_empty_and_missing_files(ctx, workspace):
    (workspace / "empty.txt").write_text("")
    out = await ReadTool().run({"path": str(workspace / "empty.txt")}, ctx)
    assert out.text == "File is empty." and not out.is_error
    assert out.tool_call.read_tool_call.result.success.is_empty
    out = await ReadTool().run({"path": str(workspace / "nope.txt")}, ctx)
    assert out.is_error and out.text == f"File not found: {workspace / 'nope.txt'}"
    assert out.tool_call.read_tool_call.result.WhichOneof("result") == "error"


async def test_read_rejected_and_thrown(make_ctx):
    def rejected(request):
        reply = pb.ExecClientMessage()
        reply.read_result.rejected.reason = "in .cursorignore"
        return reply

    out = await ReadTool().run({"path": "/secret"}, make_ctx(overrides={"read_args": rejected}))
    assert out.is_error and "in .cursorignore" in out.text
    out = await ReadTool().run({"path": "/x"}, make_ctx(overrides={"read_args": thrown}))
    assert out.is_error and "failed to read" in out.text
    assert out.tool_call.read_tool_call.result.error.error_message == out.text


async def test_read_binary_and_image(ctx, workspace):
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    out = await ReadTool().run({"path": str(workspace / "blob.bin")}, ctx)
    assert not out.is_error and "binary file" in out.text and not out.images
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 20
    (workspace / "pic.png").write_bytes(png)
    out = await ReadTool().run({"path": str(workspace / "pic.png")}, ctx)
    assert out.images and out.images[0].mime_type == "image/png" and out.images[0].data == png
    assert out.tool_call.read_tool_call.result.success.data == png


async def test_read_huge_file_is_cut_with_a_continuation_note(ctx, workspace):
    big = workspace / "big.txt"
    big.write_text("".join(f"row {i}\n" for i in range(1, MAX_RESULT_LINES + 501)))
    out = await ReadTool().run({"path": str(big)}, ctx)
    lines = out.text.splitlines()
    assert lines[0] == "     1|row 1"
    assert f"offset={MAX_RESULT_LINES + 1}" in lines[-1]
    assert len(lines) == MAX_RESULT_LINES + 1
    assert out.tool_call.read_tool_call.result.success.exceeded_limit


async def test_read_bad_args(ctx):
    out = await ReadTool().run({}, ctx)
    assert out.is_error and "path" in out.text and not ctx.execs
    out = await ReadTool().run({"path": "/x", "limit": "many"}, ctx)
    assert out.is_error and "limit" in out.text
    out = await ReadTool().run("not a dict", ctx)  # type: ignore[arg-type]
    assert out.is_error


# --------------------------------------------------------------------------- Write


async def test_write_creates_a_file_after_a_hidden_read(ctx, workspace):
    target = workspace / "new" / "file.txt"
    out = await WriteTool().run({"path": str(target), "contents": "one\ntwo\n"}, ctx)
    assert not out.is_error, out.text
    assert target.read_text() == "one\ntwo\n"
    assert ctx.exec_kinds() == ["read_args", "write_args"]
    assert out.text.startswith("Created")
    ok = out.tool_call.edit_tool_call.result.success
    assert ok.lines_added == 2 and ok.lines_removed == 0 and ok.after_full_file_content
    assert not ok.HasField("before_full_file_content")
    streamed = "".join(d.edit_tool_call_delta.stream_content_delta for d in ctx.deltas)
    assert streamed == "one\ntwo\n"
    assert ctx.execs[1].write_args.tool_call_id == "call-1"


async def test_write_overwrites_with_diff(ctx, workspace):
    target = workspace / "README.md"
    out = await WriteTool().run({"path": str(target), "contents": "# Demo\nchanged\n"}, ctx)
    assert not out.is_error
    ok = out.tool_call.edit_tool_call.result.success
    assert ok.before_full_file_content == "# Demo\nline two\nline three\n"
    assert ok.lines_added == 1 and ok.lines_removed == 2
    assert "-line two" in ok.diff_string and "+changed" in ok.diff_string
    assert "(+1 -2)" in out.text


async def test_write_empty_contents_is_allowed(ctx, workspace):
    out = await WriteTool().run({"path": str(workspace / "e.txt"), "contents": ""}, ctx)
    assert not out.is_error and (workspace / "e.txt").read_text() == ""


async def test_write_rejected_by_user(make_ctx, workspace):
    def rejected(request):
        reply = pb.ExecClientMessage()
        reply.write_result.rejected.reason = "not now"
        return reply

    ctx = make_ctx(overrides={"write_args": rejected})
    out = await WriteTool().run({"path": str(workspace / "x.txt"), "contents": "x"}, ctx)
    assert out.is_error and "rejected" in out.text and "not now" in out.text
    assert out.tool_call.edit_tool_call.result.rejected.reason == "not now"
    assert not (workspace / "x.txt").exists()


async def test_write_permission_denied_and_missing_contents(make_ctx, workspace):
    def denied(request):
        reply = pb.ExecClientMessage()
        reply.write_result.permission_denied.is_readonly = True
        return reply

    ctx = make_ctx(overrides={"write_args": denied})
    out = await WriteTool().run({"path": str(workspace / "x"), "contents": "x"}, ctx)
    assert out.is_error and "read-only" in out.text
    assert out.tool_call.edit_tool_call.result.write_permission_denied.is_readonly
    out = await WriteTool().run({"path": str(workspace / "x")}, ctx)
    assert out.is_error and "contents" in out.text


# --------------------------------------------------------------------------- StrReplace


async def test_str_replace_once(ctx, workspace):
    path = str(workspace / "src" / "app.py")
    out = await StrReplaceTool().run(
        {"path": path, "old_string": "return 1", "new_string": "return 2"}, ctx
    )
    assert not out.is_error, out.text
    assert (workspace / "src" / "app.py").read_text().startswith("def main():\n    return 2\n")
    assert "line 2" in out.text
    ok = out.tool_call.edit_tool_call.result.success
    assert ok.lines_added == 1 and ok.lines_removed == 1
    assert ctx.exec_kinds() == ["read_args", "write_args"]


async def test_str_replace_missing_old_string(ctx, workspace):
    path = str(workspace / "src" / "app.py")
    before = (workspace / "src" / "app.py").read_text()
    out = await StrReplaceTool().run({"path": path, "old_string": "nope", "new_string": "x"}, ctx)
    assert out.is_error and "old_string not found" in out.text
    assert out.tool_call.edit_tool_call.result.error.model_visible_error == out.text
    assert (workspace / "src" / "app.py").read_text() == before
    assert ctx.exec_kinds() == ["read_args"]


async def test_str_replace_whitespace_near_miss_hint(ctx, workspace):
    path = str(workspace / "src" / "app.py")
    out = await StrReplaceTool().run(
        {"path": path, "old_string": "def main():\n  return 1", "new_string": "x"}, ctx
    )
    assert out.is_error and "Lines 1-2 match if whitespace is ignored" in out.text


async def test_str_replace_ambiguous_and_replace_all(ctx, workspace):
    target = workspace / "dup.txt"
    target.write_text("a = 1\nb = 1\na = 1\n")
    args = {"path": str(target), "old_string": "a = 1", "new_string": "a = 2"}
    out = await StrReplaceTool().run(args, ctx)
    assert out.is_error and "Found 2 matches" in out.text and "lines 1, 3" in out.text
    assert target.read_text() == "a = 1\nb = 1\na = 1\n"
    out = await StrReplaceTool().run({**args, "replace_all": True}, ctx)
    assert not out.is_error and target.read_text() == "a = 2\nb = 1\na = 2\n"
    assert "2 occurrences" in out.text


async def test_str_replace_identical_and_missing_file(ctx, workspace):
    out = await StrReplaceTool().run(
        {"path": str(workspace / "README.md"), "old_string": "x", "new_string": "x"}, ctx
    )
    assert out.is_error and "identical" in out.text and not ctx.execs
    out = await StrReplaceTool().run(
        {"path": str(workspace / "gone.py"), "old_string": "x", "new_string": "y"}, ctx
    )
    assert out.is_error and out.text.startswith("File not found")
    assert out.tool_call.edit_tool_call.result.file_not_found.path == str(workspace / "gone.py")


async def test_str_replace_empty_old_string_creates_file(ctx, workspace):
    target = workspace / "fresh.txt"
    out = await StrReplaceTool().run(
        {"path": str(target), "old_string": "", "new_string": "hello\n"}, ctx
    )
    assert not out.is_error and target.read_text() == "hello\n"
    out = await StrReplaceTool().run(
        {"path": str(target), "old_string": "", "new_string": "again"}, ctx
    )
    assert out.is_error and "not empty" in out.text


async def test_str_replace_keeps_crlf(ctx, workspace):
    target = workspace / "win.txt"
    target.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    out = await StrReplaceTool().run(
        {"path": str(target), "old_string": "two\nthree", "new_string": "2\n3"}, ctx
    )
    assert not out.is_error, out.text
    assert target.read_bytes() == b"one\r\n2\r\n3\r\n"


async def test_str_replace_same_file_edits_are_serialised(ctx, workspace):
    target = workspace / "seq.txt"
    target.write_text("alpha\nbeta\n")
    tool = StrReplaceTool()
    first = tool.run({"path": str(target), "old_string": "alpha", "new_string": "ALPHA"}, ctx)
    second = tool.run({"path": str(target), "old_string": "beta", "new_string": "BETA"}, ctx)
    a, b = await asyncio.gather(first, second)
    assert not a.is_error and not b.is_error
    assert target.read_text() == "ALPHA\nBETA\n"
    assert ctx.exec_kinds() == ["read_args", "write_args", "read_args", "write_args"]


async def test_str_replace_binary_file(ctx, workspace):
    (workspace / "b.bin").write_bytes(b"\x00\xff")
    out = await StrReplaceTool().run(
        {"path": str(workspace / "b.bin"), "old_string": "a", "new_string": "b"}, ctx
    )
    assert out.is_error and "binary" in out.text


# --------------------------------------------------------------------------- Delete


async def test_delete_file_missing_and_directory(ctx, workspace):
    out = await DeleteTool().run({"path": str(workspace / "README.md")}, ctx)
    assert not out.is_error and not (workspace / "README.md").exists()
    assert out.tool_call.delete_tool_call.result.success.prev_content.startswith("# Demo")
    assert out.tool_call.delete_tool_call.args.tool_call_id == "call-1"
    out = await DeleteTool().run({"path": str(workspace / "README.md")}, ctx)
    assert out.is_error and out.text.startswith("File not found")
    assert out.tool_call.delete_tool_call.result.WhichOneof("result") == "file_not_found"
    out = await DeleteTool().run({"path": str(workspace / "src")}, ctx)
    assert out.is_error and "directory" in out.text


async def test_delete_rejected_and_thrown(make_ctx, workspace):
    def rejected(request):
        reply = pb.ExecClientMessage()
        reply.delete_result.rejected.reason = "keep it"
        return reply

    out = await DeleteTool().run(
        {"path": str(workspace / "README.md")}, make_ctx(overrides={"delete_args": rejected})
    )
    assert out.is_error and "keep it" in out.text and (workspace / "README.md").exists()
    out = await DeleteTool().run({"path": "/x"}, make_ctx(overrides={"delete_args": thrown}))
    assert out.is_error and out.tool_call.delete_tool_call.result.WhichOneof("result") == "error"


# --------------------------------------------------------------------------- LS


async def test_ls_renders_a_tree(ctx, workspace):
    out = await LsTool().run({"path": str(workspace), "ignore": ["*.md"]}, ctx)
    assert not out.is_error
    lines = out.text.splitlines()
    assert lines[0] == f"{workspace}/"
    assert "  src/" in lines and "    app.py" in lines and "  docs/" in lines
    assert "README.md" not in out.text
    out = await LsTool().run({"path": str(workspace / "missing")}, ctx)
    assert out.is_error and "no such directory" in out.text
