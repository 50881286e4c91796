"""The provider interface, types only: requests, normalised stream events, settings.

The adapters (`openai_chat`, `openai_responses`, `anthropic`) turn each wire format into the
same events; `errors.py` holds the one error type and its classifier, `retries.py` the retry
policy, and the package's `make_provider` builds an adapter. Nothing here imports the HTTP
client or an adapter, so everything else may import this module.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Literal
from typing import Protocol

from cursor_byok.conversation.text import TextParts
from cursor_byok.secrets import is_secret_header

log = logging.getLogger(__name__)

ProviderKind = Literal["openai-chat", "openai-responses", "anthropic", "openai-fim", "mistral-fim"]
# The last two are fill-in-the-middle endpoints (providers/fim.py): Tab only, never the Agent.
PROVIDER_KINDS: tuple[str, ...] = (
    "openai-chat",
    "openai-responses",
    "anthropic",
    "openai-fim",
    "mistral-fim",
)


# --------------------------------------------------------------------------- request


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool offered to the model; `parameters` is a JSON Schema object."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(slots=True)
class ModelRequest:
    """One model call.

    `messages` are in the neutral history format (see `history.py`); the system prompt is
    `system`, never a message. `params` are extra body parameters merged into the request
    (e.g. `temperature`, `reasoning_effort`); a few keys are interpreted per adapter
    (`thinking_budget` for Anthropic, `reasoning_effort` / `reasoning_summary` for Responses).
    `cache_key` is a stable per-conversation key (OpenAI `prompt_cache_key`).
    """

    model: str
    system: str
    messages: list[dict[str, Any]]
    tools: list[ToolSpec] = field(default_factory=list)
    max_output_tokens: int | None = None
    params: dict[str, Any] = field(default_factory=dict)
    cache_key: str | None = None
    reasoning: bool = False
    # Let the provider search the web itself (Anthropic's server-side web search tool,
    # OpenAI Responses' hosted web_search); adapters without one ignore it.
    web_search: bool = False
    # Who the call is for (conversation, mode, kind): sent only to a provider with
    # `send_metadata` (a team gateway that attributes spend by it), see adapter.attribute()
    metadata: dict[str, str] = field(default_factory=dict)


# --------------------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class TextDelta:
    """Answer text. `source`/`end`: the adapter's record of the message part it is in, and
    where it ends there, so the turn's record of what it showed can be a range of that one
    instead of a copy (`conversation.text.TextView`); not part of the event's value."""

    text: str
    source: TextParts | None = field(default=None, compare=False, repr=False)
    end: int = field(default=0, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """Reasoning text; `source`/`end` as `TextDelta`'s."""

    text: str
    source: TextParts | None = field(default=None, compare=False, repr=False)
    end: int = field(default=0, compare=False, repr=False)


def event_fields(event: object) -> dict[str, Any]:
    """An event's value as a dict, as equality sees it (`dataclasses.asdict` would also copy a
    delta's `source`, the adapter's whole record)."""
    if isinstance(event, TextDelta | ReasoningDelta):
        return {"text": event.text}
    return dataclasses.asdict(event)  # type: ignore[call-overload]


def streamed[E: (TextDelta, ReasoningDelta)](kind: type[E], parts: TextParts, text: str) -> E:
    """Append a delta to the part being built and the event that shows it, which says where
    the delta is in `parts`."""
    parts.append(text)
    return kind(text, parts, parts.chars)


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    call_id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCallArgsDelta:
    call_id: str
    fragment: str


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    """A complete tool call. `args` is None and `error` is set when the arguments are not a
    JSON object (truncated by max tokens, model mistake); the loop returns `error` to the
    model as the tool result instead of executing the call."""

    call_id: str
    name: str
    args: dict[str, Any] | None
    raw_args: str
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one model call, normalised across providers.

    `input_tokens` is the whole prompt including cached tokens (Anthropic's three input
    counters are summed); `output_tokens` includes reasoning tokens. None = not reported.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None


FinishReason = Literal[
    "stop", "tool_calls", "length", "content_filter", "refusal", "pause_turn", "context_length"
]


@dataclass(frozen=True, slots=True)
class Finish:
    """End of a successful call. `message` is the assistant message in the neutral history
    format, with provider replay data under `providerOptions.cursorByok`; append it to the
    history unchanged. A call whose arguments were invalid appears with `args: {}` (its
    `ToolCallEnd.error` is what the model should get back as the result).

    `reason` is one of: stop, tool_calls, length, content_filter, refusal, pause_turn,
    context_length (Anthropic `model_context_window_exceeded`)."""

    reason: str
    message: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ServerToolCall:
    """A tool the provider ran itself (web search): shown to the user, not executed by us."""

    call_id: str
    name: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ServerToolResult:
    """The outcome of a `ServerToolCall`: (title, url) references, or an error."""

    call_id: str
    name: str
    references: tuple[tuple[str, str], ...] = ()
    error: str | None = None


ProviderEvent = (
    TextDelta
    | ReasoningDelta
    | ToolCallStart
    | ToolCallArgsDelta
    | ToolCallEnd
    | ServerToolCall
    | ServerToolResult
    | Usage
    | Finish
)


# --------------------------------------------------------------------------- settings

ChatReasoningPassback = Literal["reasoning_content", "reasoning", "reasoning_details"]


@dataclass(slots=True)
class ProviderSettings:
    """How to reach one provider. Built from the user's profile.

    Chat knobs (`chat_*`): `chat_reasoning_passback` names the assistant-message field that
    reasoning is sent back in (`reasoning_content` for DeepSeek/Kimi/Qwen, `reasoning` or
    `reasoning_details` for OpenRouter, None = never); `chat_reasoning_passback_scope`
    limits it to assistant messages that made tool calls (DeepSeek's requirement) or sends it
    on all. `chat_reasoning_body` / `chat_no_reasoning_body` are merged into the body when
    the request asks for reasoning or not (vendors spell the switch differently).
    """

    kind: str
    base_url: str
    api_key: str = field(default="", repr=False)
    extra_headers: dict[str, str] = field(default_factory=dict, repr=False)
    connect_timeout: float = 10.0
    read_timeout: float = 300.0
    # a stream that goes this long without an SSE event ends (comments do not count: a
    # provider sending only keep-alives would hold the turn for ever); None = no bound
    idle_timeout: float | None = 600.0
    max_retries: int = 2
    name: str = ""  # label for errors, logs and replay matching; defaults to the host
    proxy: str | None = None  # an HTTP proxy (CONNECT for https) for this provider's calls
    proxy_auth: str = field(default="", repr=False)  # "user:password" for `proxy` (Basic)
    proxy_from_env: bool = False  # HTTPS_PROXY / NO_PROXY of the proxy's environment
    ca_file: str | None = None  # a PEM bundle trusted besides the system store and certifi
    extra_body: dict[str, Any] = field(default_factory=dict)
    send_cache_key: bool = True
    send_metadata: bool = False  # a gateway: `metadata`, `user` and headers name the call
    # openai-chat
    chat_reasoning_passback: str | None = None
    chat_reasoning_passback_scope: Literal["tool_turns", "all"] = "tool_turns"
    chat_reasoning_body: dict[str, Any] = field(default_factory=dict)
    chat_no_reasoning_body: dict[str, Any] = field(default_factory=dict)
    chat_max_tokens_field: str = "max_completion_tokens"
    chat_include_usage: bool = True
    chat_think_tags: bool = True
    # anthropic
    anthropic_version: str = "2023-06-01"
    anthropic_beta: str | None = None
    anthropic_max_tokens: int = 16384
    anthropic_thinking: Literal["enabled", "adaptive"] = "enabled"
    anthropic_thinking_budget: int = 8192
    anthropic_cache: bool = True
    # openai-responses (store is always false: we run stateless)
    responses_reasoning_summary: str | None = "auto"
    responses_include_encrypted: bool = True

    def __post_init__(self) -> None:
        if self.kind not in PROVIDER_KINDS:
            raise ValueError(
                f"unknown provider kind {self.kind!r}; expected one of {PROVIDER_KINDS}"
            )
        if self.chat_reasoning_passback not in (
            None,
            "reasoning_content",
            "reasoning",
            "reasoning_details",
        ):
            raise ValueError(f"unknown chat_reasoning_passback {self.chat_reasoning_passback!r}")

    def __repr__(self) -> str:
        key = "set" if self.api_key else "unset"
        headers = sorted(self.extra_headers)
        return (
            f"ProviderSettings(kind={self.kind!r}, base_url={self.base_url!r}, "
            f"name={self.label!r}, api_key=<{key}>, extra_headers={headers!r})"
        )

    @property
    def label(self) -> str:
        """Provider label used in errors and to decide whether replay data applies."""
        if self.name:
            return self.name
        from urllib.parse import urlsplit

        return urlsplit(self.base_url).hostname or self.kind

    def secrets(self) -> list[str]:
        """Strings that must never appear in messages or logs."""
        out = [self.api_key] if self.api_key else []
        if self.proxy_auth:
            out.append(self.proxy_auth)
            _, _, password = self.proxy_auth.partition(":")
            if password:
                out.append(password)
        for name, value in self.extra_headers.items():
            if is_secret_header(name) and value:
                out.append(value)
                # "Bearer xyz": also the bare token
                _, _, token = value.partition(" ")
                if token:
                    out.append(token)
        return out


# --------------------------------------------------------------------------- provider


class Provider(Protocol):
    """A model endpoint. `stream` yields events and ends with `Finish`, or raises
    `ProviderError`. Closing the iterator early (aclose / cancellation) closes the HTTP
    response, hence an async generator (callers wrap it in `contextlib.aclosing`)."""

    def stream(self, request: ModelRequest) -> AsyncGenerator[ProviderEvent]: ...

    async def aclose(self) -> None: ...
