"""Tab (StreamCpp) on the user's model, sans-IO: the request into a fill-in-the-middle prompt,
the model's text back into the frames Cursor's Tab client reads (docs/protocol.md "Tab").

What the editor sends (`StreamCppRequest`): the current file (`contents`, possibly a window that
starts at `contents_start_at_line`), the cursor (`cursor_position`, 0-based line and column
[inf]), the language, recent edits (`diff_history`, `file_diff_histories`), other open files
(`additional_files`), lint errors and `context_items`. The prompt is the text before the cursor,
with that context as comments above it, and the text after it (`FimPrompt`); a chat model gets
the same as one message with a `<CURSOR>` mark (`chat_messages`).

The answer replaces the cursor's line (`range_to_replace`, 1-based, inclusive) with the line's
text before the cursor, the completion, and the line's text after it: one edit between
`begin_edit` and `done_edit`, after `model_info`, ended by `done_stream`
(`answer_frames`). A completion that leaves a placeholder (`pass`, `...`, `TODO`) or a lint
error below it gets a `cursor_prediction_target` there (`next_jump`). The proxy streams the
edit as the model writes: `begin_frame`, `text` deltas cleaned as they come (`Cleaner`: the same
text `clean` makes of the whole), `end_frames`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cursor_byok.errors import ByokError
from cursor_byok.errors import Code
from cursor_byok.pb import aiserver_features_pb2 as fpb

MAX_PREFIX = 6000  # characters of the file before the cursor a prompt carries
MAX_SUFFIX = 2000
MAX_CONTEXT = 3000  # characters of edits, other files and lint errors
MAX_LINES = 12  # a suggestion is a few lines, not an essay
MAX_TOKENS = 160
# At most four (OpenAI's and Mistral's limit); Ollama and llama.cpp add the model's own EOS.
STOP = ["\n\n\n", "<|endoftext|>", "<|file_separator|>", "<|fim_pad|>"]
_HASH = {"python", "shellscript", "ruby", "yaml", "toml", "perl", "r", "makefile", "dockerfile"}
_DASH = {"sql", "lua", "haskell"}
_PLACEHOLDER = re.compile(r"^\s*(pass|\.\.\.|todo!\(\)|unimplemented!\(\)|.*\bTODO\b.*)\s*$")
_LEADING_FENCE = re.compile(r"^\s*```[\w+-]*\s*\n?")
_FENCE = re.compile(r"^\s*```[\w+-]*\s*\n?|\n?\s*```\s*$")
CHAT_SYSTEM = (
    "You are a code completion engine. Reply with only the code that belongs at <CURSOR>: "
    "no explanation, no markdown fences, nothing that is already before or after <CURSOR>. "
    "A few lines at most; an empty reply when nothing fits."
)


class NoContents(ByokError, ValueError):
    """The request relies on filesync and carries no file text (the client must re-send)."""

    code = Code.FAILED_PRECONDITION


@dataclass(frozen=True, slots=True)
class FimPrompt:
    prefix: str  # context comments, then the file up to the cursor
    suffix: str  # the file after the cursor
    path: str
    language: str
    line: int  # the cursor's line, 0-based in the whole file
    line_before: str  # the cursor line's text before the cursor
    line_after: str  # and after it
    context: str  # the context alone (for the chat prompt)
    before: str = ""  # the file up to the cursor (bounded), without the context
    lint_lines: tuple[int, ...] = ()  # 0-based lines of the file's lint errors


def comment(language: str, text: str) -> str:
    """`text` as line comments of `language` (a FIM model reads the context as code)."""
    mark = "#" if language in _HASH else "--" if language in _DASH else "//"
    return "".join(f"{mark} {line}\n" if line else f"{mark}\n" for line in text.splitlines())


def _context(request: fpb.StreamCppRequest, path: str) -> tuple[str, tuple[int, ...]]:
    parts: list[str] = []
    for item in request.context_items:
        parts.append(f"From {item.relative_workspace_path}:\n{item.contents}")
    for extra in request.additional_files:
        if extra.visible_range_content:
            text = "\n".join(extra.visible_range_content)
            parts.append(f"From {extra.relative_workspace_path}:\n{text}")
    edits = [d for h in request.file_diff_histories for d in h.diff_history]
    edits += list(request.diff_history)
    if edits:
        parts.append("Recent edits:\n" + "\n".join(edits[-5:]))
    lint_lines: list[int] = []
    if request.HasField("linter_errors"):
        errors = request.linter_errors.errors
        lines = [f"line {e.range.start_position.line}: {e.message}" for e in errors]
        lint_lines = [e.range.start_position.line - 1 for e in errors]  # 1-based [inf]
        if lines:
            parts.append("Problems in this file:\n" + "\n".join(lines[:10]))
    text = "\n\n".join(parts)
    if len(text) > MAX_CONTEXT:
        text = text[-MAX_CONTEXT:].split("\n", 1)[-1]
    return text, tuple(lint_lines)


def build_prompt(request: fpb.StreamCppRequest) -> FimPrompt:
    """The FIM prompt for a StreamCpp request; raises `NoContents` for a filesync-only one."""
    current = request.current_file
    if not current.contents and current.rely_on_filesync:
        raise NoContents(current.relative_workspace_path)
    lines = current.contents.split("\n")
    start = current.contents_start_at_line
    row = min(max(current.cursor_position.line - start, 0), len(lines) - 1)
    col = min(max(current.cursor_position.column, 0), len(lines[row]))
    before = "\n".join([*lines[:row], lines[row][:col]])
    after = "\n".join([lines[row][col:], *lines[row + 1 :]])
    path = current.relative_workspace_path
    context, lint_lines = _context(request, path)
    header = f"Path: {path}\n" + (context + "\n" if context else "")
    prefix = comment(current.language_id, header) + before[-MAX_PREFIX:]
    return FimPrompt(
        prefix=prefix,
        suffix=after[:MAX_SUFFIX],
        path=path,
        language=current.language_id,
        line=row + start,
        line_before=lines[row][:col],
        line_after=lines[row][col:],
        context=context,
        before=before[-MAX_PREFIX:],
        lint_lines=lint_lines,
    )


def fim_params(prompt: FimPrompt) -> dict[str, object]:
    """What a FIM endpoint's body carries besides model and max_tokens (providers/fim.py)."""
    return {"prompt": prompt.prefix, "suffix": prompt.suffix, "stop": list(STOP)}


def chat_messages(prompt: FimPrompt) -> tuple[str, list[dict[str, object]]]:
    """(system, messages) asking a chat model for the text at the cursor."""
    before = prompt.before
    text = (
        f"File {prompt.path} ({prompt.language or 'plain text'}).\n"
        + (f"Context:\n{prompt.context}\n\n" if prompt.context else "")
        + f"```\n{before}<CURSOR>{prompt.suffix}\n```"
    )
    return CHAT_SYSTEM, [{"role": "user", "content": [{"type": "text", "text": text}]}]


def clean(completion: str, prompt: FimPrompt, *, chat: bool) -> str:
    """The completion as it goes in: fences gone (chat), at most MAX_LINES, no repeat of what
    follows the cursor, no trailing blank lines."""
    if chat:
        completion = _FENCE.sub("", completion)
        completion = completion.replace("<CURSOR>", "")
    for stop in STOP:
        completion = completion.split(stop, 1)[0]
    lines = completion.split("\n")[:MAX_LINES]
    completion = "\n".join(lines).rstrip("\n ")
    rest = prompt.line_after.strip()
    # A tail of only brackets and punctuation is the completion's own more often than a repeat.
    if any(c.isalnum() for c in rest) and completion.rstrip().endswith(rest):
        completion = completion.rstrip()[: -len(rest)]
    return completion


def next_jump(
    completion: str, prompt: FimPrompt
) -> fpb.StreamCppResponse.CursorPredictionTarget | None:
    """Where the answer implies the editor jumps next: a placeholder the completion leaves, else
    the first lint error below the edit (1-based line numbers)."""
    first = prompt.line + 1
    for offset, text in enumerate(completion.split("\n")):
        if offset and _PLACEHOLDER.match(text):
            return fpb.StreamCppResponse.CursorPredictionTarget(
                relative_path=prompt.path,
                line_number_one_indexed=first + offset,
                expected_content=text,
                should_retrigger_cpp=True,
            )
    end = prompt.line + completion.count("\n")
    below = sorted(line for line in prompt.lint_lines if line > end)
    if below:
        return fpb.StreamCppResponse.CursorPredictionTarget(
            relative_path=prompt.path,
            line_number_one_indexed=below[0] + 1 + completion.count("\n"),
            should_retrigger_cpp=True,
        )
    return None


MODEL_INFO = fpb.StreamCppResponse(model_info=fpb.StreamCppResponse.ModelInfo())
DONE_STREAM = fpb.StreamCppResponse(done_stream=True)


def begin_frame(prompt: FimPrompt) -> fpb.StreamCppResponse:
    """The edit's start: the cursor's line is replaced, beginning with its text before the
    cursor (sent with the first text of the completion, never before: an empty answer has none)."""
    line = prompt.line + 1
    return fpb.StreamCppResponse(
        range_to_replace=fpb.LineRange(start_line_number=line, end_line_number_inclusive=line),
        suggestion_start_line=line,
        begin_edit=True,
        text=prompt.line_before,
    )


def end_frames(prompt: FimPrompt, completion: str) -> list[fpb.StreamCppResponse]:
    """The edit's end (the line's text after the cursor) and where the editor jumps next."""
    out = [fpb.StreamCppResponse(text=prompt.line_after, done_edit=True)]
    target = next_jump(completion, prompt)
    if target is not None:
        out.append(fpb.StreamCppResponse(cursor_prediction_target=target))
    return out


def answer_frames(deltas: list[str], prompt: FimPrompt, completion: str) -> list[bytes]:
    """The StreamCppResponse messages (serialised) for a completion; `deltas` are its pieces as
    the model sent them (already `clean`ed as a whole: `completion`). No completion: only
    `model_info` and `done_stream` (the client shows nothing). `Cleaner` makes the same frames
    as the model writes."""
    out = [MODEL_INFO]
    if completion:
        out.append(begin_frame(prompt))
        out.extend(fpb.StreamCppResponse(text=piece) for piece in _pieces(deltas, completion))
        out.extend(end_frames(prompt, completion))
    out.append(DONE_STREAM)
    return [m.SerializeToString() for m in out]


class Cleaner:
    """`clean`, as the model writes (the text frames stream): `feed` each delta and send what it
    returns, which never changes afterwards; `finish` returns the rest once the model is done.
    Held back until the next delta: trailing blanks, a possible start of a stop sequence (or of
    `<CURSOR>` and a closing fence from a chat model), and as many characters as the text after
    the cursor (a repeat of it is dropped at the end). `done` once a stop sequence or the
    MAX_LINES-th line has come: the rest of the model's answer is not needed."""

    def __init__(self, prompt: FimPrompt, *, chat: bool) -> None:
        self.prompt = prompt
        self.chat = chat
        self.raw = ""
        self.sent = ""  # what `feed`/`finish` returned so far: the completion as shown
        self.done = False
        rest = prompt.line_after.strip()
        self._rest = len(rest) if any(c.isalnum() for c in rest) else 0
        self._stops = STOP + (["<CURSOR>", "```"] if chat else [])

    def feed(self, delta: str) -> str:
        if self.done:
            return ""
        self.raw += delta
        text = self._cut(self.raw)
        if self.done:
            return ""  # the caller stops the model and calls `finish`
        return self._advance(text[: len(text) - self._held(text)])

    def finish(self) -> str:
        """The rest of the cleaned completion (what `clean` makes of the whole answer)."""
        self.done = True
        return self._advance(clean(self.raw, self.prompt, chat=self.chat))

    def _advance(self, text: str) -> str:
        if len(text) <= len(self.sent) or not text.startswith(self.sent):
            return ""
        piece, self.sent = text[len(self.sent) :], text
        return piece

    def _cut(self, raw: str) -> str:
        text = raw
        if self.chat:
            if text.lstrip().startswith("`"):
                if "\n" not in text:
                    return ""  # an opening fence, perhaps: wait for its line
                text = _LEADING_FENCE.sub("", text, count=1)
            text = text.replace("<CURSOR>", "")
        for stop in STOP:
            if stop in text:
                text, self.done = text.split(stop, 1)[0], True
        if text.count("\n") >= MAX_LINES:
            text, self.done = "\n".join(text.split("\n")[:MAX_LINES]), True
        return text

    def _held(self, text: str) -> int:
        partial = 0  # the start of a stop sequence, perhaps
        for stop in self._stops:
            for n in range(len(stop) - 1, partial, -1):
                if text.endswith(stop[:n]):
                    partial = n
                    break
        body = text[: len(text) - partial]
        held = partial + len(body) - len(body.rstrip("\n ")) + self._rest
        if self.chat and "\n" in text:
            last = text.rsplit("\n", 1)[1]
            if last.strip().startswith("`"):
                held = max(held, len(last) + 1)
        return min(held, len(text))


def _pieces(deltas: list[str], completion: str) -> list[str]:
    """The model's deltas cut to the cleaned completion (the text frames the client reads)."""
    out: list[str] = []
    left = completion
    for delta in deltas:
        if not left:
            break
        if left.startswith(delta):
            out.append(delta)
            left = left[len(delta) :]
        else:
            break
    if left:
        out.append(left)
    return [p for p in out if p]
