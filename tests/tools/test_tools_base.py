"""Shared helpers: truncation with a visible note, argument coercion, paths, the run wrapper."""

from __future__ import annotations

import asyncio
import re

import pytest
from fake_context import FakeToolContext
from hypothesis import given
from hypothesis import strategies as st

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools.base import MAX_RESULT_CHARS
from cursor_byok.tools.base import MAX_RESULT_LINES
from cursor_byok.tools.base import Tool
from cursor_byok.tools.base import ToolError
from cursor_byok.tools.base import ToolOutcome
from cursor_byok.tools.base import arg_bool
from cursor_byok.tools.base import arg_int
from cursor_byok.tools.base import arg_str
from cursor_byok.tools.base import arg_str_list
from cursor_byok.tools.base import path_lock
from cursor_byok.tools.base import resolve_path
from cursor_byok.tools.base import truncate_text

NOTE = re.compile(r"… (\d+) (lines|characters) omitted …")


def test_truncate_keeps_short_text():
    assert truncate_text("a\nb") == "a\nb"
    assert truncate_text("") == ""


def test_truncate_by_lines_keeps_head_and_tail():
    text = "\n".join(f"line {i}" for i in range(10_000))
    out = truncate_text(text)
    lines = out.splitlines()
    assert lines[0] == "line 0" and lines[-1] == "line 9999"
    [note] = [x for x in lines if NOTE.fullmatch(x)]
    assert int(NOTE.fullmatch(note).group(1)) == 10_000 - (len(lines) - 1)
    assert len(lines) <= MAX_RESULT_LINES + 1


def test_truncate_by_chars_and_huge_single_line():
    text = "\n".join("x" * 999 for _ in range(200))  # 200 KB, few lines
    out = truncate_text(text)
    assert len(out) <= MAX_RESULT_CHARS + 100 and NOTE.search(out)
    one = "y" * 500_000
    out = truncate_text(one)
    assert "499" not in out[:10] and "characters omitted" in out
    assert len(out) <= MAX_RESULT_CHARS + 100


@given(st.text(alphabet="ab\n", max_size=3000), st.integers(10, 500), st.integers(2, 50))
def test_truncate_properties(text: str, max_chars: int, max_lines: int):
    out = truncate_text(text, max_chars=max_chars, max_lines=max_lines)
    if len(text) <= max_chars and text.count("\n") < max_lines:
        assert out == text
    else:
        assert NOTE.search(out)
        assert len(out) <= max_chars + 60
        assert out.count("\n") <= max_lines + 2


def test_argument_coercion():
    assert arg_int({"n": "42"}, "n") == 42 and arg_int({"n": 3.0}, "n") == 3
    assert arg_int({}, "n", default=7) == 7
    with pytest.raises(ToolError):
        arg_int({"n": "x"}, "n")
    with pytest.raises(ToolError):
        arg_int({"n": True}, "n")
    assert arg_bool({"b": "true"}, "b") and not arg_bool({"b": "0"}, "b")
    with pytest.raises(ToolError):
        arg_bool({"b": "maybe"}, "b")
    assert arg_str({"s": 5}, "s") == "5"
    with pytest.raises(ToolError, match="Missing required argument `s`"):
        arg_str({}, "s", required=True)
    with pytest.raises(ToolError, match="must not be empty"):
        arg_str({"s": ""}, "s", required=True)
    assert arg_str({"s": ""}, "s", required=True, allow_empty=True) == ""
    assert arg_str_list({"p": "a"}, "p") == ["a"]
    with pytest.raises(ToolError):
        arg_str_list({"p": [1]}, "p")


def test_resolve_path(workspace):
    ctx = FakeToolContext(workspace)
    assert resolve_path(ctx, "/abs/x") == "/abs/x"
    assert resolve_path(ctx, "a/../b.txt") == f"{workspace}/b.txt"
    win = pb.RequestContext()
    win.env.workspace_paths.append("C:\\proj")
    ctx = FakeToolContext(workspace, request_context=win)
    assert resolve_path(ctx, "src/x.py") == "C:\\proj\\src\\x.py"
    assert resolve_path(ctx, "D:\\other") == "D:\\other"


async def test_path_lock_serialises_in_call_order():
    order: list[str] = []

    async def job(name: str, path: str, delay: float) -> None:
        async with path_lock(path):
            order.append(f"{name}+")
            await asyncio.sleep(delay)
            order.append(f"{name}-")

    await asyncio.gather(job("a", "/x", 0.02), job("b", "/x", 0), job("c", "/y", 0))
    assert order.index("a-") < order.index("b+")
    assert order.index("c+") < order.index("a-")  # another path does not wait


class _Boom(Tool):
    name = "Boom"

    def _ui_call(self, args):
        raise RuntimeError("ui broke")

    def error_call(self, args, message):
        return pb.ToolCall(read_tool_call=pb.ReadToolCall())

    async def _run(self, args, ctx) -> ToolOutcome:
        if args.get("cancel"):
            raise asyncio.CancelledError
        if args.get("timeout"):
            raise TimeoutError
        raise KeyError("oops")


async def test_run_turns_exceptions_into_errors_but_not_cancellation(ctx):
    out = await _Boom().run({}, ctx)
    assert out.is_error and "Boom failed: KeyError" in out.text
    out = await _Boom().run({"timeout": True}, ctx)
    assert out.is_error and "timed out" in out.text
    with pytest.raises(asyncio.CancelledError):
        await _Boom().run({"cancel": True}, ctx)
    assert _Boom().ui_call({"x": 1}) == pb.ToolCall()
