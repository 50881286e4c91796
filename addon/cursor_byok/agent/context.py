"""What the model is told: the system prompt and the user message, built from the run request.

The system prompt is rebuilt every turn from the mode and the request context (environment,
workspace, rules, skills, MCP instructions, git) and kept byte-stable for a given context, so
provider prompt caches stay warm. Later turns carry the large context parts as blob references
(`request_context_parts`); they are resolved from our blob store or by KV GET.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING

from google.protobuf.message import DecodeError

from cursor_byok.agent import custom_mode
from cursor_byok.agent.turn import TurnError
from cursor_byok.conversation.history_format import UserPart
from cursor_byok.cursor import actions
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools import goals

if TYPE_CHECKING:
    from cursor_byok.agent.turn import Turn

log = logging.getLogger(__name__)

AGENT, ASK, PLAN, DEBUG = 1, 2, 3, 4
MODE_NAMES = {AGENT: "agent", ASK: "ask", PLAN: "plan", DEBUG: "debug"}
# Modes Cursor names (AgentMode) that cursor-byok has no instructions of its own for.
OTHER_MODES = {5: "triage", 6: "project", 7: "multitask", 8: "custom"}
_EMPTY_BLOB = bytes.fromhex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
MAX_RULE_CHARS = 20_000

MODE_INSTRUCTIONS = {
    AGENT: (
        "You are in Agent mode: make the changes the user asks for. Read files before editing "
        "them, prefer small precise edits (StrReplace) over rewriting files, and run commands "
        "to check your work when it helps."
    ),
    ASK: (
        "You are in Ask mode: answer questions and explain. You may read and search the "
        "workspace, but you must not modify files or run commands that change anything. If the "
        "user asks for changes, describe them and suggest switching to Agent mode."
    ),
    PLAN: (
        "You are in Plan mode: research the codebase read-only, ask clarifying questions when "
        "needed, then write a concrete implementation plan with the CreatePlan tool. Do not "
        "modify files."
    ),
    DEBUG: (
        "You are in Debug mode: find the root cause. Form hypotheses, add temporary "
        "instrumentation if useful, reproduce, and fix the cause rather than the symptom."
    ),
}


def mode_id(name: str) -> int | None:
    """`SwitchMode` names a mode ("agent", "plan"…); the enum value, or None if unknown."""
    for value, known in MODE_NAMES.items():
        if known == name.strip().lower():
            return value
    return None


BlobReader = Callable[[bytes], Awaitable[bytes]]
ContextAsker = Callable[[], Awaitable[pb.RequestContext]]
# How long the client may take to gather its context (rules, MCP servers) before the turn goes on
# without it; Cursor's SDK answers in milliseconds.
ASK_TIMEOUT = 15.0


async def request_context(
    run_request: pb.AgentRunRequest, read_blob: BlobReader, ask: ContextAsker | None = None
) -> pb.RequestContext:
    """The full RequestContext: inline on a chat's first turn, blob parts plus a small inline
    `dynamic_context` on later turns. Parts are assumed to be serialised RequestContext fragments
    (inferred); a part that does not parse is skipped with a log line rather than failing the turn.
    A run request with neither (Cursor's SDK sends none, ever) gets it from the client: `ask`.
    """
    action = run_request.action
    inline = actions.resolve(run_request).request_context
    if inline is not None:
        return inline
    context = pb.RequestContext()
    if not action.HasField("request_context_parts"):
        return await ask() if ask is not None else context
    parts = action.request_context_parts
    for name in ("rules", "skills", "subagents", "mcps"):
        ident = getattr(parts, f"{name}_blob_id")
        if not ident or ident == _EMPTY_BLOB:
            continue
        try:
            data = await read_blob(ident)
        except TurnError as exc:
            # Context parts help the model but are not the conversation: go on without one.
            log.warning("context part %s unavailable: %s", name, exc)
            continue
        try:
            context.MergeFromString(data)
        except DecodeError:
            log.info("context part %s (%d bytes) is not a RequestContext; skipped", name, len(data))
    context.MergeFrom(parts.dynamic_context)
    return context


async def client_context(turn: Turn, timeout: float = ASK_TIMEOUT) -> pb.RequestContext:
    """The client's request context, asked for with the `request_context_args` exec
    (protocol.md §11.12): what an embedded context would carry (environment, rules, MCP tools and
    instructions). A client that refuses, fails or takes longer than `timeout` leaves the turn
    without one (logged), as a run request without context always did."""
    ask = pb.ExecServerMessage(request_context_args=pb.RequestContextArgs())
    try:
        async with asyncio.timeout(timeout):
            reply = await turn.exec(ask)
    except TimeoutError:
        # Nothing else is pending this early in a turn: abort the one request on the client.
        turn.live.abort_pending()
        log.warning(
            "turn %s: no request context from the client in %.0f s; going on without",
            turn.request_id,
            timeout,
        )
        return pb.RequestContext()
    kind = reply.WhichOneof("message")
    result = reply.request_context_result
    outcome = result.WhichOneof("result") if kind == "request_context_result" else None
    if outcome == "success":
        return result.success.request_context
    why = {
        "error": lambda: f"error: {result.error.error}",
        "rejected": lambda: f"rejected: {result.rejected.reason}",
    }.get(outcome or "", lambda: f"answered {kind or 'nothing'}")()
    log.info("turn %s: the client gave no request context (%s)", turn.request_id, why)
    return pb.RequestContext()


def mode_instructions(mode: int) -> str:
    """What the model is told about its mode — never a mode it is not in."""
    if mode in MODE_INSTRUCTIONS:
        return MODE_INSTRUCTIONS[mode]
    if mode in OTHER_MODES:
        return (
            f"Cursor runs this conversation in its {OTHER_MODES[mode].capitalize()} mode. Work on "
            "the task in the user's message with the tools provided; make changes only where the "
            "message asks for them."
        )
    return MODE_INSTRUCTIONS[AGENT]  # unspecified: Cursor's default is Agent


def debug_instructions(config: pb.DebugModeConfig) -> str | None:
    """Debug mode's runtime evidence channel: where instrumentation must write its logs."""
    lines = []
    if config.log_path:
        lines.append(
            f"Write instrumentation logs to this file (NDJSON, one event per line): "
            f"{config.log_path}"
        )
    if config.server_endpoint:
        lines.append(f"Or send them as HTTP POST requests to: {config.server_endpoint}")
    if config.session_id:
        lines.append(f"Tag every log event with the debug session id: {config.session_id}")
    if not lines:
        return None
    lines.append(
        "Read the log file after the user reproduces the issue, and remove the instrumentation "
        "once the cause is fixed."
    )
    return "<debug_mode>\n" + "\n".join(lines) + "\n</debug_mode>"


def system_prompt(mode: int, context: pb.RequestContext, tool_names: list[str]) -> str:
    return "\n\n".join(text for _, text in prompt_parts(mode, context, tool_names))


def prompt_parts(
    mode: int, context: pb.RequestContext, tool_names: list[str]
) -> list[tuple[str, str]]:
    """The system prompt as (meter category, text) sections, in prompt order.

    Everything here must be byte-stable across the calls of a conversation so provider prompt
    caches hit: no clock, no per-turn state. Tool names are sorted for the same reason. The
    categories feed Cursor's context meter (protocol.md §10.5).
    """
    sections = [
        (
            "system_prompt",
            "You are a coding agent working inside the user's editor (Cursor). You act through "
            "the tools provided; every tool runs on the user's machine. Be concise, and cite "
            "file paths.",
        ),
        ("system_prompt", mode_instructions(mode)),
        ("system_prompt", "Available tools: " + ", ".join(sorted(tool_names)) + "."),
    ]
    if context.HasField("debug_mode_config"):
        debug = debug_instructions(context.debug_mode_config)
        if debug:
            sections.append(("system_prompt", debug))
    sections += _environment_parts(context.env)
    sections += _git_parts(context)
    sections += _rules_parts(context)
    sections += _skills_parts(context)
    sections += _mcp_parts(context)
    return sections


def _environment_parts(env: pb.RequestContextEnv) -> list[tuple[str, str]]:
    """The machine facts the model needs to pick paths and commands (none when Cursor sent none)."""
    facts = []
    if env.os_version:
        facts.append(f"Operating system: {env.os_version}")
    if env.shell:
        facts.append(f"Shell: {env.shell}")
    if env.workspace_paths:
        facts.append("Workspace folders: " + ", ".join(env.workspace_paths))
    if env.time_zone:
        facts.append(f"Time zone: {env.time_zone}")
    if not facts:
        return []
    return [("system_prompt", "<environment>\n" + "\n".join(facts) + "\n</environment>")]


def _git_parts(context: pb.RequestContext) -> list[tuple[str, str]]:
    """One section per git repository with a path or branch, so the model knows where it works."""
    sections = []
    for repo in context.git_repos:
        details = [f"path: {repo.path}"] if repo.path else []
        if repo.branch_name:
            details.append(f"branch: {repo.branch_name}")
        if details:
            sections.append(
                ("system_prompt", "<git_repo>\n" + "\n".join(details) + "\n</git_repo>")
            )
    return sections


def _rules_parts(context: pb.RequestContext) -> list[tuple[str, str]]:
    """The user's rules with content, capped at `MAX_RULE_CHARS` so a huge rule cannot crowd out
    the conversation."""
    rules = [r for r in list(context.rules) + list(context.non_file_rules) if r.content]
    if not rules:
        return []
    body = "\n\n".join(f"Rule {r.full_path or '(inline)'}:\n{r.content}" for r in rules)
    return [("rules", "<rules>\n" + body[:MAX_RULE_CHARS] + "\n</rules>")]


def _skills_parts(context: pb.RequestContext) -> list[tuple[str, str]]:
    """Skills listed by path and description only: the model reads one when it is relevant."""
    skills = [s for s in context.agent_skills if s.full_path or s.description]
    if not skills:
        return []
    lines = [f"- {s.full_path}: {s.description}" for s in skills]
    return [
        (
            "skills",
            "<skills>\nSkills you can read with the Read tool when relevant:\n"
            + "\n".join(lines)
            + "\n</skills>",
        )
    ]


def _mcp_parts(context: pb.RequestContext) -> list[tuple[str, str]]:
    """Each MCP server's own instructions, named by server so the model can tell them apart."""
    return [
        (
            "mcp",
            f"<mcp_server name={instructions.server_name!r}>\n"
            f"{instructions.instructions}\n</mcp_server>",
        )
        for instructions in context.mcp_instructions
        if instructions.instructions
    ]


MAX_ATTACHMENT_CHARS = 200_000  # text of one attachment given to the model


def attachment_ids(message: pb.UserMessage) -> list[bytes]:
    """Blob ids the message's selected context refers to: what Cursor uploaded before the run
    (`UploadConversationBlobs`: @-mentioned context, images, documents, PR diffs)."""
    if not message.HasField("selected_context"):
        return []
    selected = message.selected_context
    ids = [
        e.blob_id
        for e in selected.extra_context_entries
        if e.WhichOneof("data_or_blob_id") == "blob_id"
    ]
    ids += [
        i.blob_id for i in selected.selected_images if i.WhichOneof("data_or_blob_id") == "blob_id"
    ]
    ids += [
        d.blob_id
        for d in selected.selected_documents
        if d.WhichOneof("data_or_blob_id") == "blob_id"
    ]
    ids += [d.blob_id for d in selected.git_pr_diff_selections if d.blob_id and not d.diff_content]
    ids += [p.blob_id for p in selected.selected_pull_requests if p.blob_id]
    return list(dict.fromkeys(ids))


async def resolve_attachments(
    message: pb.UserMessage,
    read_blob: BlobReader,
    on_missing: Callable[[bytes], None] | None = None,
) -> dict[bytes, bytes]:
    """The blobs the message refers to: our store (where an upload put them), the run
    request's pre-fetched blobs, else the client's KV. One that nobody has is left out (the
    model is told) rather than failing the turn."""
    found: dict[bytes, bytes] = {}
    for ident in attachment_ids(message):
        try:
            found[ident] = await read_blob(ident)
        except TurnError as exc:
            log.warning("attachment %s unavailable: %s", ident.hex()[:16], exc)
            if on_missing is not None:
                on_missing(ident)
    return found


def _text(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    if len(text) > MAX_ATTACHMENT_CHARS:
        cut = len(text) - MAX_ATTACHMENT_CHARS
        text = text[:MAX_ATTACHMENT_CHARS] + f"\n… {cut} characters omitted …"
    return text


def _missing(ident: bytes) -> str:
    return f"[an attachment (blob {ident.hex()[:16]}…) could not be read]"


def _attached_context(selected: pb.SelectedContext, blobs: Mapping[bytes, bytes]) -> list[str]:
    """Selected context that arrives by value or by uploaded blob, as text for the model."""
    out: list[str] = []
    for entry in selected.extra_context_entries:
        if entry.WhichOneof("data_or_blob_id") == "data":
            out.append(entry.data)
        elif entry.blob_id:
            data = blobs.get(entry.blob_id)
            out.append(_text(data) if data is not None else _missing(entry.blob_id))
    for diff in selected.git_pr_diff_selections:
        body = diff.diff_content or (
            _text(blobs[diff.blob_id]) if diff.blob_id in blobs else _missing(diff.blob_id)
        )
        lines = f" lines {diff.start_line}-{diff.end_line}" if diff.end_line else ""
        out.append(
            f'<pr_diff url="{diff.pr_url}" file="{diff.file_path}"{lines}>\n{body}\n</pr_diff>'
        )
    for pull in selected.selected_pull_requests:
        body = pull.description or pull.summary_json
        if pull.blob_id:
            body = _text(blobs[pull.blob_id]) if pull.blob_id in blobs else _missing(pull.blob_id)
        title = f" title={pull.title!r}" if pull.title else ""
        head = f'<pull_request number="{pull.number}" url="{pull.url}"{title}>'
        out.append(f"{head}\n{body}\n</pull_request>")
    for document in selected.selected_documents:
        out.append(_document(document, blobs))
    return [text for text in out if text]


def _document(document: pb.SelectedDocument, blobs: Mapping[bytes, bytes]) -> str:
    kind = document.WhichOneof("data_or_blob_id")
    data: bytes | None = None
    if kind == "data":
        data = document.data
    elif kind == "blob_id_with_data":
        data = document.blob_id_with_data.data
    elif kind == "blob_id":
        data = blobs.get(document.blob_id)
    name = document.filename or document.path or "document"
    if data is None:
        return f'<document name="{name}">\n[its content could not be read]\n</document>'
    mime = document.mime_type or ""
    if mime == "application/pdf" or data.startswith(b"%PDF"):
        return (
            f'<document name="{name}" type="{mime or "application/pdf"}" bytes="{len(data)}">\n'
            "[a PDF: cursor-byok cannot pass documents to the model yet; ask the user for the "
            "text if you need it]\n</document>"
        )
    return f'<document name="{name}">\n{_text(data)}\n</document>'


def user_content(
    message: pb.UserMessage, *, images: bool, attachments: Mapping[bytes, bytes] | None = None
) -> list[UserPart]:
    """The user's message as neutral content parts: text, selected context, images.
    `attachments`: the uploaded blobs it refers to (`resolve_attachments`)."""
    blobs = attachments or {}
    parts: list[UserPart] = [{"type": "text", "text": message.text}]
    if not message.HasField("selected_context"):
        return parts
    selected = message.selected_context
    attached = [
        f'<file path="{f.relative_path or f.path}">\n{f.content}\n</file>'
        for f in selected.files
        if f.content
    ]
    attached += [
        f'<selection path="{s.relative_path or s.path}">\n{s.content}\n</selection>'
        for s in selected.code_selections
        if s.content
    ]
    attached += [text for text in selected.extra_context if text]
    attached += _attached_context(selected, blobs)
    if attached:
        parts.append({"type": "text", "text": "\n\n".join(attached)})
    for image in selected.selected_images:
        data = image.data or image.blob_id_with_data.data or blobs.get(image.blob_id, b"")
        if images and data:
            parts.append(
                {
                    "type": "image",
                    "mediaType": image.mime_type or _sniff_image(data),
                    "data": base64.b64encode(data).decode(),
                }
            )
    return parts


def _sniff_image(data: bytes) -> str:
    """The media type of image bytes (Cursor sets `mime_type` only for JPEG and PNG)."""
    for magic, kind in (
        (b"\x89PNG", "image/png"),
        (b"\xff\xd8\xff", "image/jpeg"),
        (b"GIF8", "image/gif"),
        (b"RIFF", "image/webp"),
    ):
        if data.startswith(magic):
            return kind
    return "image/png"


async def add_user_message(
    turn: Turn,
    message: pb.UserMessage,
    *,
    images: Sequence[UserPart] = (),
    inline_images: bool = False,
) -> None:
    """Append a user message to the turn's history as the model will read it, with the context
    Cursor uploaded for it (blobs `UploadConversationBlobs` put in our store; else pre-fetched or
    from the client's KV; a blob nobody has is counted by `turn.blob` and left out). `images`:
    what the model gets for its images (`images.py`); `inline_images`: pass inline image bytes
    as they are instead (a model that takes images). The run's own message comes after the
    conversation imported with it (`UserMessageAction.conversation_history`), and notes a
    custom mode it enters or leaves (`custom_mode.marker`)."""
    if message is turn.instruction.user_message:
        for past in turn.instruction.imported:  # a conversation imported with this message
            turn.transcript.append(past)
        if turn.instruction.action == "goal_continuation_action":
            goals.note_continuation(turn.transcript.base)
    attachments = await resolve_attachments(message, turn.blob)
    content = user_content(message, images=inline_images, attachments=attachments)
    switch = custom_mode.marker(message)  # a custom mode entered or left: noted for later turns
    if switch is not None:
        content.append({"type": "text", "text": switch})
    turn.transcript.append({"role": "user", "content": [*content, *images]})
