"""Compaction: fold the older part of a conversation into a structured summary.

When a model call would use more than `compact_at` of the context window (default 80 %), when
the provider answers `context_length_exceeded`, or when the user runs `/summarize`
(`summarize_action`), the history is split into an older part and the recent turns. Old tool
results are truncated first; the older part is then summarised by the same provider (or the
model's `compaction_model`) into goals, decisions, files touched, open tasks and facts, and the
history becomes `[summary message, recent messages verbatim]`. Cursor is shown
`summary_started` / `summary` / `summary_completed`, and the checkpoint carries the rewritten
roots plus the summary fields, so a later turn (or another proxy instance) continues from it.

Compaction rewrites the prompt prefix, so provider caches miss once; it is done rarely and in
one large step (the recent window is at most `KEEP_SHARE` of the window) instead of a little on
every call.

The planning parts (`split`, `truncate_tool_results`, `render_transcript`) are pure; only
`Compactor.compact` talks to the provider and the turn.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cursor_byok.agent.completion import complete
from cursor_byok.agent.tokens import TokenMeter
from cursor_byok.agent.tokens import messages_bytes
from cursor_byok.agent.turn import Turn
from cursor_byok.agent.turn import UsageTally
from cursor_byok.conversation.history_format import REPLAY_KEY
from cursor_byok.conversation.history_format import HistoryMessage
from cursor_byok.conversation.history_format import ToolResultPart
from cursor_byok.conversation.history_format import UserHistoryMessage
from cursor_byok.errors import ByokError
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.providers import ModelRequest
from cursor_byok.providers import Provider
from cursor_byok.providers.provider_error import ProviderError
from cursor_byok.tools import hooks

log = logging.getLogger(__name__)

KEEP_SHARE = 0.3  # at most this share of the window stays verbatim after compaction
OLD_RESULT_CHARS = 2_000  # tool results outside the protected tail are cut to this
PROTECTED_TAIL = 4  # the last messages whose tool results are never truncated
SUMMARY_INPUT_SHARE = 0.6  # the summariser's input is clipped to this share of its window
SUMMARY_MAX_TOKENS = 4_096
TOO_LARGE_TITLE = "Context Too Large After Compaction"

SUMMARY_SYSTEM = (
    "You summarise a coding-agent conversation so the agent can continue it with only your "
    "summary and the most recent messages. Write a faithful, dense summary in Markdown with "
    "these sections:\n"
    "## Goals\nWhat the user wants overall and in the current request.\n"
    "## Decisions\nChoices made and why (approaches, constraints, user preferences).\n"
    "## Files touched\nEvery file read, created or modified, with what changed.\n"
    "## Open tasks\nWhat remains to be done, in order.\n"
    "## Facts to remember\nNames, numbers, identifiers, commands, errors and any fact the user "
    "stated that may be asked about later; quote them exactly.\n"
    "Do not invent anything. Do not call tools. Output only the summary."
)


def is_summary(message: Mapping[str, Any]) -> bool:
    """The message stands for a compacted past (`summary_message`); any message, as stored."""
    opts = message.get("providerOptions")
    replay = opts.get(REPLAY_KEY) if isinstance(opts, dict) else None
    return isinstance(replay, dict) and replay.get("summary") is True


def summary_message(summary: str) -> UserHistoryMessage:
    """The history message that stands for everything summarised (a user message: every
    provider accepts it first, before the kept turns)."""
    text = (
        "<conversation_summary>\nThe earlier part of this conversation was summarised to fit "
        f"the context window:\n\n{summary.strip()}\n</conversation_summary>"
    )
    return {
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "providerOptions": {REPLAY_KEY: {"summary": True}},
    }


def summary_text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


# --------------------------------------------------------------------------- planning


def _is_real_user(message: Mapping[str, Any]) -> bool:
    return message.get("role") == "user" and not is_summary(message)


def split(
    messages: list[HistoryMessage], keep_bytes: int
) -> tuple[list[HistoryMessage], list[HistoryMessage]]:
    """(older, recent): `recent` is the longest tail that fits `keep_bytes` and starts at a
    user or assistant message (a tool message is never separated from its call). The latest
    user message always stays verbatim, even if the tail that follows it is cut."""
    boundaries = [
        i for i, m in enumerate(messages) if i > 0 and m.get("role") in ("user", "assistant")
    ]
    last_user = max((i for i, m in enumerate(messages) if _is_real_user(m)), default=None)
    cut = None
    for i in boundaries:  # ascending: the first that fits keeps the most
        if messages_bytes(messages[i:]) <= keep_bytes:
            cut = i
            break
    if cut is None:
        cut = boundaries[-1] if boundaries else len(messages)
        # nothing fits: keep at least the last exchange (its results get truncated later)
    older, recent = messages[:cut], messages[cut:]
    if last_user is not None and last_user < cut:
        older = [m for i, m in enumerate(messages[:cut]) if i != last_user]
        recent = [messages[last_user], *recent]
    return older, recent


def truncate_tool_results(
    messages: list[HistoryMessage],
    *,
    limit: int = OLD_RESULT_CHARS,
    protect: int = PROTECTED_TAIL,
) -> list[HistoryMessage]:
    """Copies of `messages` whose tool results (outside the last `protect` messages) are cut
    to `limit` characters with a marker saying so."""
    out: list[HistoryMessage] = []
    edge = len(messages) - protect
    for index, message in enumerate(messages):
        if index >= edge or message["role"] != "tool":
            out.append(message)
            continue
        content = message.get("content")
        if not isinstance(content, list):  # a tool message written elsewhere
            out.append(message)
            continue
        parts: list[ToolResultPart] = []
        for part in content:
            result = part.get("result") if isinstance(part, dict) else None
            if isinstance(result, str) and len(result) > limit:
                cut = len(result) - limit
                part = {**part, "result": result[:limit] + f"\n[… {cut} characters truncated]"}
            parts.append(part)
        out.append({**message, "content": parts})
    return out


def render_transcript(messages: Sequence[Mapping[str, Any]], max_chars: int) -> str:
    """The older messages as plain text for the summariser (any provider can read it, and
    no tool-call pairing rules apply). Over `max_chars`, the oldest lines go first, but a
    previous summary is always kept."""
    lines: list[str] = []
    keep_first = False
    for message in messages:
        role = message.get("role")
        if is_summary(message):
            lines.append("[Earlier summary]\n" + summary_text(message))
            keep_first = keep_first or len(lines) == 1
            continue
        content = message.get("content")
        if role == "user":
            lines.append("[User]\n" + _text(content))
        elif role == "assistant":
            pieces = []
            for part in content if isinstance(content, list) else []:
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "text":
                    pieces.append(part.get("text", ""))
                elif part.get("type") == "tool-call":
                    args = json.dumps(part.get("args", {}), ensure_ascii=False)
                    pieces.append(f"(calls {part.get('toolName')} {args[:OLD_RESULT_CHARS]})")
            if isinstance(content, str):
                pieces.append(content)
            lines.append("[Assistant]\n" + "\n".join(p for p in pieces if p))
        elif role == "tool":
            for part in content if isinstance(content, list) else []:
                if isinstance(part, dict):
                    result = str(part.get("result", ""))[:OLD_RESULT_CHARS]
                    lines.append(f"[Result of {part.get('toolName', 'tool')}]\n{result}")
    head = lines[:1] if keep_first else []
    body = lines[1:] if keep_first else lines
    total = sum(len(x) + 2 for x in head + body)
    while body and total > max_chars:
        total -= len(body.pop(0)) + 2
    return "\n\n".join(head + body)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        p.get("text", "") for p in content or [] if isinstance(p, dict) and p.get("type") == "text"
    )


# --------------------------------------------------------------------------- running


class CompactionFailed(ByokError):
    """Nothing left to compact, or the summary call failed; the message says which."""


@dataclass
class SummaryModel:
    """Who writes the summary: a provider, its upstream model id and window."""

    provider: Provider
    model: str
    context_window: int
    max_retries: int = 2
    first_token_timeout: float | None = None
    params: dict[str, Any] | None = None
    metadata: dict[str, str] | None = None  # who the call is for, for a gateway (adapter.py)


class Compactor:
    """Decides when to compact and does it for one turn."""

    def __init__(
        self,
        summariser: SummaryModel,
        *,
        context_window: int,
        compact_at: float = 0.8,
        hook_steps: frozenset[str] = frozenset(),
    ) -> None:
        self.summariser = summariser
        self.hook_steps = hook_steps  # the steps the user's hooks watch (preCompact among them)
        self.window = context_window
        self.compact_at = compact_at
        self.count = 0
        self._floor: int | None = None  # prompt estimate right after the last compaction

    def needed(self, estimated_tokens: int) -> bool:
        """Over the threshold, and (after a compaction) grown by a tenth of the window since:
        when the fixed part alone is near the threshold, compacting on every call would only
        burn summary calls and cache hits."""
        if estimated_tokens <= self.window * self.compact_at:
            return False
        return self._floor is None or estimated_tokens > self._floor + self.window // 10

    def compacted(self, estimated_tokens: int) -> None:
        self._floor = estimated_tokens

    async def compact(
        self,
        turn: Turn,
        *,
        reason: str,
        bytes_per_token: float = 4.0,
        keep_share: float = KEEP_SHARE,
    ) -> str:
        """Summarise the older part of `turn.transcript` and rewrite it; returns the summary.

        Raises `CompactionFailed` when there is nothing older to summarise."""
        transcript = turn.transcript
        messages = transcript.messages()
        keep_bytes = int(self.window * keep_share * bytes_per_token)
        older, recent = split(messages, keep_bytes)
        if not older:
            raise CompactionFailed("the recent messages alone exceed the context window")
        recent = truncate_tool_results(recent)
        shown = await hooks.pre_compact(  # the user's preCompact hooks (tools/hooks.py)
            turn,
            self.hook_steps,
            manual=reason == "summarize_action",
            tokens=int(messages_bytes(messages) / bytes_per_token),
            window=self.window,
            messages=len(messages),
            to_compact=len(older),
            first=self.count == 0 and not transcript.base.summary,
        )
        if shown:
            turn.text(f"{shown}\n\n")
        log.info(
            "turn %s: compacting (%s): %d messages summarised, %d kept",
            turn.request_id,
            reason,
            len(older),
            len(recent),
        )
        turn.update(summary_started=pb.SummaryStartedUpdate())
        try:
            summary = await self._summarise(older, bytes_per_token, turn.usage)
        except ProviderError as exc:
            turn.update(summary_completed=pb.SummaryCompletedUpdate())
            raise CompactionFailed(f"the summary call failed: {exc}") from exc
        turn.update(summary=pb.SummaryUpdate(summary=summary))
        turn.update(summary_completed=pb.SummaryCompletedUpdate())
        transcript.compact(summary, summary_message(summary), older, recent)
        self.count += 1
        return summary

    async def _summarise(
        self, older: list[HistoryMessage], bytes_per_token: float, usage: UsageTally
    ) -> str:
        """The summary text; the call's token usage is added to the turn's (it is billed)."""
        s = self.summariser
        max_chars = int(s.context_window * SUMMARY_INPUT_SHARE * bytes_per_token)
        transcript = render_transcript(older, max_chars)
        request = ModelRequest(
            model=s.model,
            system=SUMMARY_SYSTEM,
            messages=[
                {
                    "role": "user",
                    "content": "Summarise this conversation:\n\n<conversation>\n"
                    + transcript
                    + "\n</conversation>",
                }
            ],
            tools=[],
            max_output_tokens=SUMMARY_MAX_TOKENS,
            params=dict(s.params or {}),
            reasoning=False,
            metadata=dict(s.metadata or {}),
        )
        return await complete(
            s.provider,
            request,
            usage.add,
            max_retries=s.max_retries,
            first_token_timeout=s.first_token_timeout,
            what="the summary",
        )


async def summarize_conversation(turn: Turn, compactor: Compactor, meter: TokenMeter) -> None:
    """`summarize_action` (/summarize): compact now, keeping only the last exchange verbatim,
    and tell the user when there is nothing to summarise yet."""
    try:
        await compactor.compact(
            turn, reason="summarize_action", bytes_per_token=1 / meter.ratio, keep_share=0.0
        )
    except CompactionFailed as exc:
        log.info("turn %s: /summarize: %s", turn.request_id, exc)
        turn.text("_Nothing to summarise yet._")
        return
    meter.reset_report()
