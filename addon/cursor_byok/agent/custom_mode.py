"""Custom modes (issue 37): a skill the user picked as the conversation's mode.

Cursor marks the message that enters or leaves one with `UserMessage.custom_mode_intent`
(`enter`: a `SubmittedCustomMode` naming the skill by id, label and `source_path`; `exit`: the
mode it goes back to) and sends `AgentMode.CUSTOM` as the mode. The intent carries no
instructions: they are the skill's own text, which the client lists in the request context
(`RequestContext.agent_skills`, path and content). The mode's instructions join the system
prompt for as long as the conversation stays in it.

Whether Cursor repeats the intent on every message of the mode or only on the one that enters it
is not known here [inf]. So the message that enters a mode also records it in the history as a
short marker (`marker`), and a later message in `AgentMode.CUSTOM` without an intent of its own
takes the newest marker of the history (`current`). A marker folded into a compaction summary is
gone: the conversation then runs as a plain custom mode, without the skill's instructions.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

from cursor_byok.pb import agent_v1_pb2 as pb

MARKER_TAG = "custom_mode_switch"
MAX_INSTRUCTION_CHARS = 20_000
_OPEN = f"<{MARKER_TAG}>"
_CLOSE = f"</{MARKER_TAG}>"


def marker(message: pb.UserMessage) -> str | None:
    """The history's note of a mode entered or left by this message, else None: one line the
    model reads (what the user did) and `current` reads back on later turns."""
    if not message.HasField("custom_mode_intent"):
        return None
    intent = message.custom_mode_intent
    kind = intent.WhichOneof("intent")
    if kind == "enter":
        entered = intent.enter
        record: dict[str, Any] = {"enter": {"id": entered.id, "label": entered.label}}
        if entered.source_path:
            record["enter"]["source_path"] = entered.source_path
        text = f"The user switched this conversation to the custom mode {entered.label!r}."
    elif kind == "exit":
        record = {"exit": {"id": intent.exit.exited_mode.id}}
        text = f"The user left the custom mode {intent.exit.exited_mode.label!r}."
    else:
        return None
    return f"{_OPEN}{json.dumps(record, sort_keys=True)}{_CLOSE} {text}"


def current(
    message: pb.UserMessage, mode: int, history: Iterable[Mapping[str, Any]]
) -> pb.SubmittedCustomMode | None:
    """The custom mode this turn runs in: the message's own intent (unless the model switched to
    another mode since: `mode` is then not the message's), else (in `AgentMode.CUSTOM`) the newest
    mode the history entered and did not leave."""
    if message.HasField("custom_mode_intent"):
        intent = message.custom_mode_intent
        same = mode in (pb.AGENT_MODE_CUSTOM, message.mode)
        if intent.WhichOneof("intent") == "enter" and same:
            return intent.enter
        return None  # leaving, switched away (or an intent we cannot read)
    if mode != pb.AGENT_MODE_CUSTOM:
        return None
    for entry in reversed(list(history)):
        record = _read_marker(entry)
        if record is None:
            continue
        entered = record.get("enter")
        if not isinstance(entered, dict):
            return None  # the newest switch left the mode
        return pb.SubmittedCustomMode(
            id=str(entered.get("id", "")),
            label=str(entered.get("label", "")),
            source_path=str(entered.get("source_path", "")),
        )
    return None


def _read_marker(message: Mapping[str, Any]) -> dict[str, Any] | None:
    if message.get("role") != "user":
        return None
    content = message.get("content")
    parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
    for part in parts:
        text = part.get("text") if isinstance(part, Mapping) else None
        if not isinstance(text, str) or not text.startswith(_OPEN) or _CLOSE not in text:
            continue
        try:
            record = json.loads(text[len(_OPEN) : text.index(_CLOSE)])
        except ValueError:
            continue
        if isinstance(record, dict):
            return record
    return None


def find_skill(mode: pb.SubmittedCustomMode, context: pb.RequestContext) -> pb.AgentSkill | None:
    """The skill behind a custom mode: by its path, else by its folder's name (`<id>/SKILL.md`)."""
    skills = [s for s in context.agent_skills if s.content]
    path = mode.source_path
    if path:
        for skill in skills:
            if skill.full_path == path:
                return skill
        for skill in skills:
            if skill.full_path.endswith("/" + path.lstrip("/")) or path.endswith(skill.full_path):
                return skill
    for skill in skills:
        folder = skill.full_path.replace("\\", "/").rsplit("/", 2)
        if len(folder) >= 2 and mode.id and folder[-2] == mode.id:
            return skill
    return None


def instructions(mode: pb.SubmittedCustomMode, context: pb.RequestContext) -> str:
    """The system prompt's section for a custom mode: the skill's text when the client listed
    it, else where it lives (the model reads it), else only the mode's name."""
    label = mode.label or mode.id or "custom"
    head = f"<custom_mode name={label!r}>\nThe user runs this conversation in the custom mode "
    head += f"{label!r}. Follow its instructions below for every answer in it; they take "
    head += "precedence over the general mode instructions above."
    skill = find_skill(mode, context)
    if skill is not None:
        body = skill.content
        if len(body) > MAX_INSTRUCTION_CHARS:
            cut = len(body) - MAX_INSTRUCTION_CHARS
            body = body[:MAX_INSTRUCTION_CHARS] + f"\n… {cut} characters omitted …"
        return f"{head}\n\n{body.strip()}\n</custom_mode>"
    if mode.source_path:
        where = f"Its instructions are in {mode.source_path}: read that file first and follow it."
        return f"{head}\n{where}\n</custom_mode>"
    return f"{head}\n(Its instructions were not sent with the conversation.)\n</custom_mode>"


def section(
    message: pb.UserMessage,
    mode: int,
    history: Iterable[Mapping[str, Any]],
    context: pb.RequestContext,
) -> str | None:
    """The custom mode's system prompt section for this turn, or None outside one."""
    found = current(message, mode, history)
    return instructions(found, context) if found is not None else None
