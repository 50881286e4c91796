"""The history format: the JSON messages a conversation's checkpoint holds, as types.

Each `root_prompt_messages_json` entry of a checkpoint is the blob id of one message in this
format (`checkpoint.encode_message`), and an unsettled tool batch travels inline in
`pending_tool_calls` in it (protocol.md §10). It is AI-SDK style, neutral between providers: the
agent appends to it, the provider adapters project it into their wire formats
(`providers/history_projection.py`, providers.md §6).

- user:      {"role": "user", "content": "text" | [TextPart | ImagePart, ...]}
- assistant: {"role": "assistant", "content": [ReasoningPart | TextPart | ToolCallPart, ...],
              "providerOptions": {"cursorByok": ProviderState}}
- tool:      {"role": "tool", "content": [ToolResultPart, ...]}

The types say what cursor-byok writes and what a `Transcript` holds. Blobs come back from the
client, and a checkpoint may have been written by another version or by Cursor's own backend, so
code that *reads* stored messages keeps checking each field (`providers.history.normalise` takes
them as plain mappings): a `HistoryMessage` read from a blob is promised its role, not its shape.
Key order is part of the format too: the bytes of a message are its blob id, so equal messages
must be built with their keys in the same order.

Free of protobuf and of I/O: the provider adapters import it, and they know no Cursor protobuf.
"""

# No `from __future__ import annotations`: evaluated annotations let TypedDict see NotRequired,
# so `__required_keys__` is right at run time (tests/conversation/test_history_format.py relies
# on it).
from typing import Any
from typing import Final
from typing import Literal
from typing import NotRequired
from typing import TypedDict

# The key of cursor-byok's own data in a message's `providerOptions`.
REPLAY_KEY: Final = "cursorByok"


class TextPart(TypedDict):
    type: Literal["text"]
    text: str


class ImagePart(TypedDict):
    """An image the user attached; `data` is base64 (or a data:, http:, https: URL)."""

    type: Literal["image"]
    mediaType: str
    data: str


class ReasoningPart(TypedDict):
    """What the model thought, as shown; `signature` is Anthropic's, when there is one."""

    type: Literal["reasoning"]
    text: str
    signature: NotRequired[str]


class ToolCallPart(TypedDict):
    type: Literal["tool-call"]
    toolCallId: str
    toolName: str
    args: dict[str, Any]


class ToolResultPart(TypedDict):
    """The result of one tool call, as the model reads it (text; errors start with "Error")."""

    type: Literal["tool-result"]
    toolCallId: str
    toolName: str
    result: str
    isError: bool


UserPart = TextPart | ImagePart
AssistantPart = ReasoningPart | TextPart | ToolCallPart


class ProviderState(TypedDict, total=False):
    """`providerOptions.cursorByok`: who wrote an assistant message, and what that provider
    needs back on the next request (signatures, encrypted reasoning, vendor fields).

    Replayed only to the same provider kind, endpoint and model (`history.replay_data`)."""

    kind: str  # the wire format: openai-chat, openai-responses, anthropic
    provider: str  # the configured provider's label
    model: str  # the upstream model id
    reasoning: list[Any]  # native reasoning items, one per reasoning part (Anthropic, Responses)
    reasoningContent: str  # Chat Completions: `reasoning_content` (DeepSeek, Qwen, Kimi)
    reasoningDetails: list[Any]  # Chat Completions: OpenRouter's `reasoning_details`
    toolCalls: dict[str, dict[str, Any]]  # Chat Completions: unknown keys per tool call id
    summary: bool  # on the user message that stands for a compacted past (compaction.py)


class ProviderOptions(TypedDict, total=False):
    cursorByok: ProviderState


class UserHistoryMessage(TypedDict):
    role: Literal["user"]
    content: str | list[UserPart]
    providerOptions: NotRequired[ProviderOptions]


class AssistantHistoryMessage(TypedDict):
    """One model call's answer, appended to the history as the adapter returned it."""

    role: Literal["assistant"]
    content: list[AssistantPart]
    providerOptions: NotRequired[ProviderOptions]


class ToolHistoryMessage(TypedDict):
    """The results of one tool batch, in call order."""

    role: Literal["tool"]
    content: list[ToolResultPart]
    providerOptions: NotRequired[ProviderOptions]


HistoryMessage = UserHistoryMessage | AssistantHistoryMessage | ToolHistoryMessage
