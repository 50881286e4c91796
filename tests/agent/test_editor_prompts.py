"""The pure parts of Cmd-K, terminal Cmd-K and commit messages (issue 34): context items by
hash, the window cut, fence stripping while code streams, the prompts and the summary line."""

from __future__ import annotations

import pytest

from cursor_byok.agent import editor_prompts
from cursor_byok.agent.editor_context import ContextCache
from cursor_byok.agent.editor_context import Continuation
from cursor_byok.agent.editor_context import FenceStripper
from cursor_byok.agent.editor_context import budget_chars
from cursor_byok.agent.editor_context import nearest_lines
from cursor_byok.agent.editor_context import resolve
from cursor_byok.pb import aiserver_features_pb2 as fpb

C = fpb.ContextItem


def whole(**kwargs) -> fpb.PotentiallyCachedContextItem:
    return fpb.PotentiallyCachedContextItem(context_item=C(**kwargs))


def hashed(value: str) -> fpb.PotentiallyCachedContextItem:
    return fpb.PotentiallyCachedContextItem(context_item_hash=value)


def query(text: str) -> fpb.PotentiallyCachedContextItem:
    return whole(cmd_k_query=C.CmdKQuery(query=text))


def test_unknown_hash_is_missing_then_learnt_from_the_resend() -> None:
    cache = ContextCache()
    first = resolve([query("q"), hashed("h1")], cache, "s")
    assert first.missing == ["h1"] and len(first.items) == 1
    again = resolve([query("q"), whole(custom_instructions=C.CustomInstructions(
        instructions="tabs"))], cache, "s")  # fmt: skip
    assert again.missing == [] and len(again.items) == 2
    later = resolve([hashed("h1")], cache, "other")
    assert later.missing == []
    assert later.items[0].custom_instructions.instructions == "tabs"


def test_a_resend_of_another_shape_teaches_nothing() -> None:
    cache = ContextCache()
    resolve([hashed("h1"), hashed("h2")], cache, "s")
    resolve([query("only one")], cache, "s")
    assert resolve([hashed("h1")], cache, "x").missing == ["h1"]


def test_cache_is_bounded_in_items_and_bytes() -> None:
    cache = ContextCache(max_items=2, max_bytes=10_000)
    for index in range(3):
        cache.put(f"h{index}", C(cmd_k_query=C.CmdKQuery(query="x")))
    assert len(cache) == 2 and cache.get("h0") is None and cache.get("h2") is not None
    cache.put("big", C(cmd_k_query=C.CmdKQuery(query="y" * 20_000)))
    assert cache.get("big") is None  # larger than the whole bound: never kept


def test_nearest_lines_keep_the_selection_surroundings_in_order() -> None:
    lines = [(n, "x" * 10) for n in range(1, 1001)]
    kept = nearest_lines(lines, 500, 501, budget=18 * 10)
    numbers = [n for n, _ in kept]
    assert numbers == sorted(numbers) and len(numbers) == 10
    assert {500, 501, 499, 502} <= set(numbers) and 1 not in numbers


def test_budget_follows_the_window_and_has_a_floor() -> None:
    assert budget_chars(64_000, 4000) == 60_000 * 3
    assert budget_chars(1000, None) >= 4000


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        (["```py", "thon\nx = 1\n", "y = 2\n`", "``"], "x = 1\ny = 2\n"),
        (["x = 1\n", "y"], "x = 1\ny"),
        (["```\nx\n```\n"], "x\n"),
        (["a ```b\n"], "a ```b\n"),
        (["```\nx\n```js\ny\n```"], "x\n```js\ny\n"),
    ],
)
def test_fences_are_dropped_while_code_streams(chunks, expected) -> None:
    fences = FenceStripper()
    out = "".join(fences.feed(chunk) for chunk in chunks) + fences.finish()
    assert out == expected


def test_unfenced_code_is_not_held_back() -> None:
    fences = FenceStripper()
    assert fences.feed("def f():\n    ret") == "def f():\n    ret"


def cmd_k_request(chat: bool = False) -> fpb.StreamCmdKRequest:
    request = fpb.StreamCmdKRequest()
    request.cmd_k_options.chat_mode = chat
    request.rules.add(name="style", description="use tabs", body="Always tabs.")
    return request


def test_cmd_k_prompt_edit_range_and_contents() -> None:
    immediate = C.CmdKImmediateContext(relative_workspace_path="a.py")
    for n in range(1, 6):
        immediate.lines.add(line=f"line{n}", line_number=n)
    items = [
        C(cmd_k_query=C.CmdKQuery(query="rename")),
        C(cmd_k_selection=C.CmdKSelection(lines=["line2", "line3"], start_line_number=2)),
        C(cmd_k_immediate_context=immediate),
        C(lints=C.Lints(relative_workspace_path="a.py", lints=[fpb.Lint(message="unused")])),
    ]
    prompt = editor_prompts.cmd_k(cmd_k_request(), items, 100_000)
    assert (prompt.start_line, prompt.end_line, prompt.path) == (2, 4, "a.py")
    assert "rename" in prompt.user and "Always tabs." in prompt.user and "unused" in prompt.user
    assert "5: line5" in prompt.user and not prompt.cut
    assert prompt.system == editor_prompts.CMD_K_EDIT_SYSTEM
    chat = editor_prompts.cmd_k(cmd_k_request(chat=True), items, 100_000)
    assert chat.system == editor_prompts.CMD_K_CHAT_SYSTEM


def test_cmd_k_prompt_without_selection_inserts() -> None:
    prompt = editor_prompts.cmd_k(cmd_k_request(), [C(cmd_k_query=C.CmdKQuery(query="q"))], 9000)
    assert (prompt.start_line, prompt.end_line) == (1, 1) and "insert" in prompt.user


def test_commit_prompt_caps_the_diff_and_shows_the_style() -> None:
    request = fpb.WriteGitCommitMessageRequest(
        diffs=["+" * 100_000, "diff --git a/b.py b/b.py\n+x\n"],
        previous_commit_messages=["feat: one", "fix: two"],
    )
    prompt = editor_prompts.commit_message(request, 1_000_000)
    assert len(prompt.user) < editor_prompts.COMMIT_DIFF_CHARS + 1000
    assert "feat: one" in prompt.user and "b.py" in prompt.user and prompt.cut


@pytest.mark.parametrize(
    ("files", "line"),
    [
        ([], "Update files"),
        (["src/a.py"], "Update a.py"),
        (["a.py", "b.py", "c.py"], "Update a.py, b.py and c.py"),
        (["a", "b", "c", "d", "e"], "Update a, b and 3 other files"),
    ],
)
def test_summary_line(files, line) -> None:
    diffs = [f"diff --git a/{name} b/{name}\n+x\n" for name in files]
    assert editor_prompts.summary_line(diffs) == line


PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d4944415478da63f8cfc0f01f0005000201a5d6dd3c0000000049454e44ae426082"
)


def test_images_go_to_a_model_that_takes_them_else_a_note_says_so() -> None:
    images = [fpb.ImageProto(data=PNG), fpb.ImageProto(data=b"not an image")]
    parts, note = editor_prompts.image_parts(images, supported=True)
    assert [p["mediaType"] for p in parts] == ["image/png"]
    assert "1 attached image(s) left out: unknown format" in note
    parts, note = editor_prompts.image_parts(images[:1], supported=False)
    assert parts == [] and "does not take them" in note
    assert editor_prompts.image_parts([], supported=True) == ([], "")


def continued(current: str, *chunks: str) -> tuple[str, bool]:
    """What terminal autocomplete shows for a model answer streamed in `chunks`."""
    line = Continuation(current)
    shown = ""
    for chunk in chunks:
        shown += line.feed(chunk)
    return shown + line.finish(), line.done


@pytest.mark.parametrize(
    ("current", "chunks", "expected"),
    [
        ("git st", ["atus"], "atus"),  # a plain continuation
        ("git st", ["git", " st", "atus"], "atus"),  # the command echoed first, in pieces
        ("git st", ["$ git status"], "atus"),  # with a prompt sign
        ("git", [" commit\n", "git push"], " commit"),  # the first line only
        ("ls", ["\n", " -la\nmore"], " -la"),  # a leading blank line is skipped
        ("ls", ["```bash\n", "ls -la\n```\n"], " -la"),  # fenced
        ("", ["make test"], "make test"),  # nothing typed yet
        ("git status", ["git st"], ""),  # half an echo: no suggestion
        ("git status", ["git status"], ""),  # the command itself: nothing to add
        ("echo $", ["HOME"], "HOME"),  # a `$` the user typed is theirs
    ],
)
def test_continuation_is_the_rest_of_one_line(current, chunks, expected) -> None:
    assert continued(current, *chunks)[0] == expected


def test_continuation_holds_back_only_a_possible_echo() -> None:
    line = Continuation("git st")
    assert line.feed("gi") == ""  # may still be the echo
    assert line.feed("t status") == "atus"
    assert line.feed(" -s") == " -s" and not line.done
    assert line.feed("\nrm -rf /") == "" and line.done
    assert line.feed("more") == "" and line.finish() == ""


def test_terminal_autocomplete_prompt_is_small_and_ends_with_the_command() -> None:
    request = fpb.StreamTerminalAutocompleteRequest(
        current_command="docker run",
        command_history=[f"cmd {n}" for n in range(1000)],
        git_diff="+x\n" * 100_000,
        commit_history=["Fix the build"],
        past_results=["docker ps"],
    )
    request.file_diff_histories.add(file_name="src/a.py")
    prompt = editor_prompts.terminal_autocomplete(request, budget=1_000_000)
    assert len(prompt.user) <= editor_prompts.AUTOCOMPLETE_CHARS + 200
    assert prompt.user.endswith("docker run") and prompt.cut
    assert "cmd 999" in prompt.user and "cmd 1\n" not in prompt.user  # the latest commands
    assert "Fix the build" in prompt.user and "src/a.py" in prompt.user
    assert "docker ps" in prompt.user
