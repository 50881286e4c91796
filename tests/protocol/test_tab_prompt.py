"""The Tab prompt builder and answer frames (protocol/tab.py), sans-IO."""

from __future__ import annotations

import pytest

from cursor_byok.pb import aiserver_features_pb2 as fpb
from cursor_byok.protocol import tab

FILE = "import math\n\ndef area(r):\n    return \n\nprint(area(2))\n"


def request(line: int = 3, column: int = 11, **file) -> fpb.StreamCppRequest:
    current = fpb.CurrentFileInfo(
        relative_workspace_path="src/geo.py",
        contents=file.pop("contents", FILE),
        language_id="python",
        cursor_position=fpb.CursorPosition(line=line, column=column),
        **file,
    )
    return fpb.StreamCppRequest(current_file=current)


def frames(data: list[bytes]) -> list[fpb.StreamCppResponse]:
    return [fpb.StreamCppResponse.FromString(d) for d in data]


def test_prompt_splits_the_file_at_the_cursor_with_context_as_comments():
    req = request()
    req.diff_history.append("-    pass\n+    return ")
    req.context_items.add(relative_workspace_path="src/consts.py", contents="PI = 3.14")
    prompt = tab.build_prompt(req)
    assert prompt.prefix.endswith("def area(r):\n    return ")
    assert prompt.prefix.startswith("# Path: src/geo.py\n")
    assert "# From src/consts.py:\n# PI = 3.14\n" in prompt.prefix
    assert "# Recent edits:" in prompt.prefix
    assert prompt.suffix == "\n\nprint(area(2))\n"
    assert (prompt.line, prompt.line_before, prompt.line_after) == (3, "    return ", "")


def test_a_window_of_the_file_counts_lines_from_contents_start_at_line():
    window = "def area(r):\n    return \n"
    prompt = tab.build_prompt(
        request(line=13, column=11, contents=window, contents_start_at_line=12)
    )
    assert prompt.line == 13
    assert prompt.line_before == "    return "


def test_filesync_only_request_has_no_prompt():
    with pytest.raises(tab.NoContents):
        tab.build_prompt(request(contents="", rely_on_filesync=True))


def test_mid_line_answer_replaces_the_cursor_line():
    prompt = tab.build_prompt(request(line=5, column=6))  # print(|area(2))
    completion = tab.clean("round(area(2))", prompt, chat=False)
    out = frames(tab.answer_frames(["round(", "area(2))"], prompt, completion))
    assert out[0].HasField("model_info")
    assert out[1].range_to_replace.start_line_number == 6
    assert out[1].range_to_replace.end_line_number_inclusive == 6
    assert out[1].begin_edit
    edit = "".join(f.text for f in out)
    assert edit == "print(round(area(2))"  # the repeated tail of the line was dropped
    assert out[-2].done_edit and out[-1].done_stream


def test_multi_line_answer_cut_and_cleaned_for_chat():
    prompt = tab.build_prompt(request())
    raw = "```python\nmath.pi * r * r\n```"
    completion = tab.clean(raw, prompt, chat=True)
    assert completion == "math.pi * r * r"
    long = "\n".join(f"x{i}" for i in range(40))
    assert tab.clean(long, prompt, chat=False).count("\n") == tab.MAX_LINES - 1


def test_placeholder_in_answer_is_the_next_jump():
    prompt = tab.build_prompt(request(line=2, column=12))
    completion = "\n    if r < 0:\n        pass"
    out = frames(tab.answer_frames([completion], prompt, completion))
    targets = [f.cursor_prediction_target for f in out if f.HasField("cursor_prediction_target")]
    assert targets and targets[0].line_number_one_indexed == 5
    assert targets[0].relative_path == "src/geo.py"


def test_empty_answer_is_no_suggestion():
    prompt = tab.build_prompt(request())
    out = frames(tab.answer_frames([], prompt, ""))
    assert [f.HasField("model_info") for f in out] == [True, False]
    assert out[-1].done_stream and not any(f.begin_edit for f in out)


def test_chat_prompt_marks_the_cursor():
    system, messages = tab.chat_messages(tab.build_prompt(request()))
    assert "<CURSOR>" in system
    text = messages[0]["content"][0]["text"]  # type: ignore[index]
    assert "    return <CURSOR>\n\nprint" in text
