"""The prompts of Cmd-K, terminal Cmd-K and commit messages, from what the client sends: pure.

Each builder takes the request's resolved context items (`editor_context.resolve`) and a
character budget (the model's window, `editor_context.budget_chars`), and gives the system text,
the user text and, for an edit, the lines it replaces. What is always kept: the instruction and
the selection; then the lines nearest the selection; then the other items in the order the
client sent them, each cut to what is left. Nothing is ever unbounded.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from dataclasses import dataclass

from cursor_byok.agent.editor_context import clip
from cursor_byok.agent.editor_context import nearest_lines
from cursor_byok.pb import aiserver_features_pb2 as fpb

CMD_K_EDIT_SYSTEM = (
    "You edit code in the user's editor. You get the user's instruction, the lines they "
    "selected (possibly none: then write code to insert at that line) and context around "
    "them. Reply with exactly the code that replaces the selected lines: no explanation, no "
    "Markdown fences, the file's own indentation, every line of the replacement."
)
CMD_K_CHAT_SYSTEM = (
    "You answer a question about code in the user's editor, briefly and precisely, in Markdown."
)
TERMINAL_SYSTEM = (
    "You write one shell command for the user's terminal from their request and the terminal's "
    "recent history. Reply with the command only: no explanation, no Markdown, no prompt sign."
)
TERMINAL_CHAT_SYSTEM = "You answer a question about the user's terminal, briefly, in Markdown."
TERMINAL_AUTOCOMPLETE_SYSTEM = (
    "You complete the shell command the user is typing in their terminal. Reply with only the "
    "characters that come after what they typed (never repeat it), on one line: no "
    "explanation, no Markdown. Reply with an empty line when no completion is likely."
)
COMMIT_SYSTEM = (
    "You write git commit messages. Reply with the commit message only, for the diff below: a "
    "subject line under 72 characters, then (only if the change needs it) a blank line and a "
    "short body. Follow the style of the previous commit messages when there are some."
)
MAX_IMAGES = 4  # images of one Cmd-K request given to the model
MAX_IMAGE_BYTES = 5 * 1024 * 1024
_IMAGE_TYPES = (
    (b"\x89PNG", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF8", "image/gif"),
)
COMMIT_DIFF_CHARS = 24_000  # of the diffs a commit message's model reads (speed over detail)
COMMIT_HISTORY = 10  # previous commit messages shown as the style
AUTOCOMPLETE_CHARS = 8_000  # of context a terminal autocomplete reads (asked per keystroke)
AUTOCOMPLETE_COMMANDS = 30  # recent commands shown
_DIFF_FILE = re.compile(r"^(?:diff --git a/\S+ b/(\S+)|\+\+\+ b/(\S+))", re.MULTILINE)


@dataclass
class Prompt:
    system: str
    user: str
    # an edit: the first line it replaces, and the line after the last (1-based, as sent)
    start_line: int = 1
    end_line: int = 1
    path: str = ""
    cut: bool = False  # something was left out to fit the window


def _first(items: Iterable[fpb.ContextItem], kind: str):
    for item in items:
        if item.WhichOneof("item") == kind:
            return getattr(item, kind)
    return None


def _rules_text(rules: Iterable[fpb.CursorRule]) -> str:
    parts = []
    for rule in rules:
        body = rule.body if rule.HasField("body") else ""
        if body.strip() or rule.description.strip():
            parts.append(f"Rule {rule.name or '(unnamed)'}: {rule.description}\n{body}".strip())
    return "\n\n".join(parts)


def _item_text(item: fpb.ContextItem) -> str:
    """A context item as prompt text ("" for what a text prompt cannot use)."""
    kind = item.WhichOneof("item")
    if kind == "file_chunk":
        chunk = item.file_chunk
        where = f"{chunk.relative_workspace_path} from line {chunk.start_line_number}"
        return f"File {where}:\n{chunk.chunk_contents}"
    if kind == "outline_chunk":
        outline = item.outline_chunk
        return f"Outline of {outline.relative_workspace_path}:\n{outline.contents}"
    if kind == "sparse_file_chunk":
        chunk = item.sparse_file_chunk
        lines = "\n".join(f"{line.line_number}: {line.line}" for line in chunk.lines)
        return f"Lines of {chunk.relative_workspace_path}:\n{lines}"
    if kind == "custom_instructions":
        return f"Instructions: {item.custom_instructions.instructions}"
    if kind == "project_rule":
        return _rules_text([item.project_rule])
    if kind == "documentation_chunk":
        doc = item.documentation_chunk
        return f"Documentation {doc.doc_name} ({doc.page_url}):\n{doc.documentation_chunk}"
    if kind == "lints":
        lints = item.lints
        found = "\n".join(
            f"- line {lint.range.start_line_number}: {lint.message}" for lint in lints.lints
        )
        return f"Problems in {lints.relative_workspace_path}:\n{found}" if found else ""
    if kind == "chat_history":
        chat = item.chat_history
        return f"Earlier chat:\nUser: {chat.user_message}\nAssistant: {chat.assistant_response}"
    if kind == "cmd_k_query_history":
        return f"An earlier instruction: {item.cmd_k_query_history.query.query}"
    if kind == "terminal_cmd_k_query_history":
        past = item.terminal_cmd_k_query_history
        return f"An earlier request: {past.query.query} -> {past.suggested_command}"
    if kind == "go_to_definition_result":
        found = item.go_to_definition_result
        chunk_text = found.definition_chunk.chunk_contents
        return f"Definition in {found.relative_workspace_path}:\n{chunk_text}"
    if kind == "notebook_cell_output":
        return f"Notebook cell output:\n{item.notebook_cell_output.cell_output}"
    if kind == "commit_note_chunk":
        return f"Commit note: {item.commit_note_chunk.note}"
    return ""


def _extras(items: Iterable[fpb.ContextItem], skip: set[str], budget: int) -> tuple[str, bool]:
    """The other items as text, in the client's order, within `budget` characters."""
    parts: list[str] = []
    cut = False
    for item in items:
        if item.WhichOneof("item") in skip:
            continue
        text = _item_text(item)
        if not text:
            continue
        if budget <= 200:
            cut = True
            break
        clipped = clip(text, budget)
        cut |= clipped != text
        parts.append(clipped)
        budget -= len(clipped) + 2
    return "\n\n".join(parts), cut


def cmd_k(request: fpb.StreamCmdKRequest, items: list[fpb.ContextItem], budget: int) -> Prompt:
    """Cmd-K's prompt: an edit of the selection, or (chat mode) an answer."""
    query = _first(items, "cmd_k_query")
    selection = _first(items, "cmd_k_selection")
    immediate = _first(items, "cmd_k_immediate_context")
    chat = request.cmd_k_options.chat_mode
    start = selection.start_line_number if selection is not None else 1
    selected = list(selection.lines) if selection is not None else []
    end = start + len(selected)
    path = immediate.relative_workspace_path if immediate is not None else ""
    head = [f"Instruction: {query.query if query is not None else ''}"]
    rules = _rules_text(list(request.rules) + list(request.legacy_context.explicit_context.rules))
    if rules:
        head.append(rules)
    selected_text = "".join(line + "\n" for line in selected)
    left = budget - sum(len(part) for part in head)
    selected_text = clip(selected_text, max(left // 2, 1000))
    cut = False
    around = ""
    if immediate is not None:
        lines = [(line.line_number, line.line) for line in immediate.lines]
        kept = nearest_lines(lines, start, max(start, end - 1), max(0, left * 2 // 3))
        cut = len(kept) < len(lines)
        around = "\n".join(f"{number}: {text}" for number, text in kept)
        around = f"The file {path or '(untitled)'} around it (line number: line):\n{around}"
    left -= len(selected_text) + len(around)
    extras, extras_cut = _extras(
        items, {"cmd_k_query", "cmd_k_selection", "cmd_k_immediate_context"}, left
    )
    if request.links:
        extras += "\n\nLinks the user gave: " + ", ".join(link.url for link in request.links)
    where = f"lines {start} to {end - 1}" if selected else f"line {start} (insert there)"
    body = [*head, around, extras.strip()]
    body.append(f"The selection ({where} of {path or 'the file'}):\n{selected_text}")
    user = "\n\n".join(part for part in body if part)
    system = CMD_K_CHAT_SYSTEM if chat else CMD_K_EDIT_SYSTEM
    return Prompt(system, user, start, end, path, cut or extras_cut)


def terminal(
    request: fpb.StreamTerminalCmdKRequest, items: list[fpb.ContextItem], budget: int
) -> Prompt:
    """Terminal Cmd-K's prompt: a command (or, in chat mode, an answer)."""
    query = _first(items, "terminal_cmd_k_query")
    history = _first(items, "terminal_history")
    head = f"Request: {query.query if query is not None else ''}"
    shell = ""
    if history is not None:
        cwd = history.cwd_full or history.cwd_relative_workspace_path
        recent = history.history[-max(0, budget // 2) :] if budget > 0 else ""
        shell = f"Working directory: {cwd}\nRecent terminal output:\n{recent}"
    left = budget - len(head) - len(shell)
    extras, cut = _extras(items, {"terminal_cmd_k_query", "terminal_history"}, left)
    user = "\n\n".join(part for part in (shell, extras, head) if part)
    chat = request.cmd_k_options.chat_mode
    full = history is not None and len(history.history) > budget // 2
    return Prompt(TERMINAL_CHAT_SYSTEM if chat else TERMINAL_SYSTEM, user, cut=cut or full)


def commit_message(request: fpb.WriteGitCommitMessageRequest, budget: int) -> Prompt:
    """The commit message's prompt: the diffs capped (`COMMIT_DIFF_CHARS`), the style."""
    limit = min(budget, COMMIT_DIFF_CHARS)
    each = max(2000, limit // max(1, len(request.diffs)))
    diffs = [clip(diff, each) for diff in request.diffs]
    diff_text = clip("\n".join(diffs), limit)
    style = "\n---\n".join(m.strip() for m in request.previous_commit_messages[:COMMIT_HISTORY])
    parts = []
    if style:
        parts.append(f"Previous commit messages (the style to follow):\n{style}")
    parts.append(f"The diff:\n{diff_text}")
    cut = diff_text != "\n".join(request.diffs)
    return Prompt(COMMIT_SYSTEM, "\n\n".join(parts), cut=cut)


def terminal_autocomplete(request: fpb.StreamTerminalAutocompleteRequest, budget: int) -> Prompt:
    """Terminal autocomplete's prompt: the command so far last, after the recent commands, the
    recent commits, the files being edited and the git diff, each cut (small, for speed)."""
    limit = max(0, min(budget, AUTOCOMPLETE_CHARS) - len(request.current_command))
    commands = "\n".join(request.command_history[-AUTOCOMPLETE_COMMANDS:])
    parts = []
    if commands:
        parts.append("Recent commands (oldest first):\n" + _tail(commands, limit // 3))
    if request.commit_history:
        commits = "\n".join(request.commit_history[:COMMIT_HISTORY])
        parts.append("Recent commits:\n" + clip(commits, limit // 8))
    if request.file_diff_histories:
        names = ", ".join(h.file_name for h in request.file_diff_histories[-10:])
        parts.append("Files being edited: " + clip(names, limit // 16))
    if request.git_diff:
        parts.append("git diff:\n" + clip(request.git_diff, limit // 3))
    if request.past_results:  # what it suggested before [inf]
        earlier = "\n".join(request.past_results[-5:])
        parts.append("Earlier suggestions:\n" + clip(earlier, limit // 16))
    parts.append("The command so far (complete it):\n" + request.current_command)
    user = "\n\n".join(parts)
    cut = len(commands) > limit // 3 or len(request.git_diff) > limit // 3
    return Prompt(TERMINAL_AUTOCOMPLETE_SYSTEM, user, cut=cut)


def _tail(text: str, limit: int) -> str:
    """The end of `text` within `limit` characters (the most recent part)."""
    return text if len(text) <= limit else text[len(text) - limit :]


def image_type(data: bytes) -> str | None:
    """An image's media type from its first bytes (ImageProto names none)."""
    for magic, media_type in _IMAGE_TYPES:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_parts(
    images: Iterable[fpb.ImageProto], supported: bool
) -> tuple[list[dict[str, str]], str]:
    """The images of a Cmd-K request as prompt parts (a model that takes images), and a note
    for the prompt about those it does not get (never dropped without a word)."""
    parts: list[dict[str, str]] = []
    left = 0
    for image in images:
        media_type = image_type(image.data)
        if (
            not supported
            or media_type is None
            or len(parts) >= MAX_IMAGES
            or (len(image.data) > MAX_IMAGE_BYTES)
        ):
            left += 1
            continue
        data = base64.b64encode(image.data).decode()
        parts.append({"type": "image", "mediaType": media_type, "data": data})
    note = f"({left} attached image(s) left out: this model does not take them)" if left else ""
    if left and supported:
        note = f"({left} attached image(s) left out: unknown format or over the size bound)"
    return parts, note


def changed_files(diffs: Iterable[str]) -> list[str]:
    """The files a diff changes, in order, once each."""
    seen: list[str] = []
    for diff in diffs:
        for match in _DIFF_FILE.finditer(diff):
            name = match.group(1) or match.group(2)
            if name and name not in seen:
                seen.append(name)
    return seen


def summary_line(diffs: Iterable[str]) -> str:
    """A commit message made without a model, when the model does not answer in time."""
    files = [name.rsplit("/", 1)[-1] for name in changed_files(diffs)]
    if not files:
        return "Update files"
    if len(files) == 1:
        return f"Update {files[0]}"
    if len(files) <= 3:
        return f"Update {', '.join(files[:-1])} and {files[-1]}"
    return f"Update {files[0]}, {files[1]} and {len(files) - 2} other files"


def clean_command(text: str) -> str:
    """A model's command as the terminal takes it: one line or a few, no prompt sign."""
    return text.strip().removeprefix("$ ").strip()
