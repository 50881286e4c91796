"""The Tab prompt builder and answer frames (cursor/tab.py), sans-IO."""

from __future__ import annotations

import pytest

from cursor_byok.cursor import tab
from cursor_byok.pb import aiserver_features_pb2 as fpb

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


def stream(prompt: tab.FimPrompt, deltas: list[str], *, chat: bool) -> tuple[list[str], bool]:
    """What `Cleaner` lets out after each delta, then at the end; and whether it asked to stop."""
    cleaner = tab.Cleaner(prompt, chat=chat)
    out = [cleaner.feed(delta) for delta in deltas]
    done = cleaner.done
    out.append(cleaner.finish())
    assert "".join(out) == cleaner.sent == tab.clean("".join(deltas), prompt, chat=chat)
    return out, done


@pytest.mark.parametrize(
    ("deltas", "chat"),
    [
        (["round(", "area(2)", ", 2)", "\n\n\nprint()"], False),
        (["a<|end", "oftext|>b"], False),
        (["```py", "thon\nfoo(", "1)\n", "```"], True),
        (["x = 1\n", "<CUR", "SOR>y = 2"], True),
        (["line\n"] * 20, False),
        (["", "  \n", "ok"], False),
    ],
)
def test_cleaner_streams_what_clean_makes_of_the_whole(deltas, chat):
    stream(tab.build_prompt(request(line=5, column=6)), deltas, chat=chat)


def test_cleaner_shows_text_as_it_comes_and_holds_what_may_change():
    prompt = tab.FimPrompt("print(", ")\n", "a.py", "python", 0, "print(", ")", "")
    out, _ = stream(prompt, ["round(", "area(2)", ", 2)\n", "x"], chat=False)
    assert out[:2] == ["round(", "area(2)"]  # shown at once, not at the end
    repeat = tab.FimPrompt("print(", "x)\n", "a.py", "python", 0, "print(", "x)", "")
    out, _ = stream(repeat, ["foo(", "1, ", "x)"], chat=False)
    assert out == ["fo", "o(", "1, ", ""]  # as many characters as "x)" held until the end
    out, _ = stream(prompt, ["a <|", "endoftext|>"], chat=False)
    assert out[0] == "a"  # " <|" may begin a stop sequence: held


def test_cleaner_stops_at_a_stop_sequence_and_at_the_last_line():
    prompt = tab.build_prompt(request())
    assert stream(prompt, ["a\n\n\n", "never"], chat=False)[1]
    out, done = stream(prompt, [f"l{i}\n" for i in range(30)], chat=False)
    assert done and "".join(out).count("\n") == tab.MAX_LINES - 1


def test_cleaner_drops_a_repeat_of_the_text_after_the_cursor_at_the_end():
    prompt = tab.build_prompt(request(line=5, column=6))
    if not any(c.isalnum() for c in prompt.line_after):
        pytest.skip("the cursor line has no alphanumeric text after the cursor")
    out, _ = stream(prompt, ["round(1) + ", prompt.line_after.strip()], chat=False)
    assert "".join(out) == tab.clean("round(1) + " + prompt.line_after.strip(), prompt, chat=False)
