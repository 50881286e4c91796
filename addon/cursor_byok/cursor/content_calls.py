"""The calls that carry a conversation's content to Cursor, and how each names its conversation.
Sans-IO: one table, read by the privacy addon (`proxy/privacy.py`) and by docs/protocol.md §16.

Each entry says how to read the request (its message), which conversation ids, message texts, a
transcript or model names it carries (what attributes it to a conversation), and how a BYOK
conversation's call is answered here instead (`answer`):

- `title`: NameAgent, a title made here (`agent/titles.py`);
- `empty`: the answer's message with no fields set (valid for every protobuf message: the
  client sees "nothing", e.g. no overview, no suggestion);
- `ingested`: IngestConversation's `{success: true}` (so nothing retries it);
- `branch`: WriteGitBranchName, a branch name made here from the conversation's title;
- `media`: GetSignedUrlForAttachedMedia, URLs of this proxy's media store;
- `stream`: a server-streaming call, answered with an empty stream;
- `refuse`: ShareConversation, a Connect error (a share link would put it on Cursor's servers).

The analytics calls (`ANALYTICS`) are not answered whole: their private events are taken out
(`cursor/analytics.py`). UploadConversationBlobs and the context ring are answered by the
calls-around-a-run addon (`proxy/agent_calls.py`), which keeps the blobs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message

from cursor_byok.cursor import analytics
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.pb import aiserver_v1_pb2 as aipb

AGENT = "/agent.v1.AgentService/"
AI = "/aiserver.v1.AiService/"
ANSWERS = ("title", "empty", "ingested", "branch", "media", "stream", "refuse")


def _none(_message: Any) -> list[str]:
    return []


@dataclass(frozen=True, slots=True)
class ContentCall:
    """One content call: its request message, what in it names a conversation, its answer."""

    path: str
    request: type[Message]
    answer: str  # one of ANSWERS
    what: str  # what of the conversation it carries (logs, docs)
    conversations: Callable[[Any], list[str]] = _none
    texts: Callable[[Any], list[str]] = _none  # messages as the user wrote them
    transcript: Callable[[Any], str] = lambda _m: ""
    models: Callable[[Any], list[str]] = _none

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 2)[-2].rsplit(".", 1)[-1] + "/" + self.path.rsplit("/", 1)[-1]


CALLS: dict[str, ContentCall] = {
    call.path: call
    for call in (
        ContentCall(
            AGENT + "NameAgent",
            pb.NameAgentRequest,
            "title",
            "the first message, for the chat's title",
            texts=lambda m: [m.user_message],
        ),
        ContentCall(
            AI + "NameAgent",
            pb.NameAgentRequest,
            "title",
            "the first message, for the chat's title",
            texts=lambda m: [m.user_message],
        ),
        ContentCall(
            AGENT + "UpdateConversationMetadata",
            pb.UpdateConversationMetadataRequest,
            "empty",
            "the chat's title and workspace paths",
            conversations=lambda m: [m.conversation_id],
        ),
        ContentCall(
            AGENT + "CreateTranscriptOverview",
            pb.CreateTranscriptOverviewRequest,
            "empty",
            "the whole transcript as text",
            transcript=lambda m: m.formatted_conversation,
        ),
        ContentCall(
            AGENT + "UploadLocalAgentRunToPromptQuality",
            pb.UploadLocalAgentRunToPromptQualityRequest,
            "empty",
            "a whole run: prompts, answers, tools",
            conversations=lambda m: [m.conversation_id],
        ),
        ContentCall(
            AGENT + "GetSignedUrlForAttachedMedia",
            pb.GetSignedUrlForAttachedMediaRequest,
            "media",
            "where attached media is uploaded",
            conversations=lambda m: [m.conversation_id],
        ),
        ContentCall(
            "/aiserver.v1.AnalyticsService/IngestConversation",
            aipb.IngestConversationRequest,
            "ingested",
            "the whole transcript",
            conversations=lambda m: [m.conversation_id],
            models=lambda m: [m.model],
        ),
        ContentCall(
            "/aiserver.v1.ChatService/GetConversationSummary",
            aipb.StreamUnifiedChatRequest,
            "empty",
            "the conversation, to summarise it",
            conversations=lambda m: [m.conversation_id],
            models=lambda m: [m.model_details.model_name],
        ),
        ContentCall(
            "/aiserver.v1.ChatService/StreamSpeculativeSummaries",
            aipb.StreamUnifiedChatRequest,
            "stream",
            "the conversation, to summarise it",
            conversations=lambda m: [m.conversation_id],
            models=lambda m: [m.model_details.model_name],
        ),
        ContentCall(
            "/aiserver.v1.DashboardService/ShareConversation",
            aipb.ShareConversationRequest,
            "refuse",
            "the conversation, for a share link",
            conversations=lambda m: [m.conversation_id],
        ),
        ContentCall(
            "/aiserver.v1.DashboardService/GetClientUsageData",
            aipb.GetClientUsageDataRequest,
            "empty",
            "the conversation's id, for Cursor's usage of it",
            conversations=lambda m: [m.conversation_id],
        ),
        ContentCall(
            AI + "ReportAgentMessageFeedback",
            aipb.ReportAgentMessageFeedbackRequest,
            "empty",
            "an answer's text, with a thumbs up or down",
            conversations=lambda m: [m.composer_id, m.request_id],
            models=lambda m: [m.canonical_model_name],
        ),
        ContentCall(
            AI + "GetComposerAutocomplete",
            aipb.GetComposerAutocompleteRequest,
            "empty",
            "the message being typed",
            conversations=lambda m: [m.composer_id],
        ),
        ContentCall(
            AI + "SuggestQuickActions",
            aipb.SuggestQuickActionsRequest,
            "empty",
            "the last message each way",
            texts=lambda m: [m.last_user_message],
        ),
        ContentCall(
            AI + "WriteGitBranchName",
            aipb.WriteGitBranchNameRequest,
            "branch",
            "the diffs of the conversation's work",
            conversations=lambda m: [m.conversation_id],
        ),
    )
}


@dataclass(frozen=True, slots=True)
class AnalyticsCall:
    path: str
    strings: Callable[[bytes], list[str]]  # an event's strings, from its bytes (an event: field 1)


ANALYTICS: dict[str, AnalyticsCall] = {
    call.path: call
    for call in (
        AnalyticsCall("/aiserver.v1.AnalyticsService/TrackEvents", analytics.track_event_strings),
        AnalyticsCall("/aiserver.v1.AnalyticsService/Batch", analytics.batch_event_strings),
    )
}
