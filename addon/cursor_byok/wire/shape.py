"""Whose bytes an upload carries, and what in it we do not model. Sans-IO.

BidiAppend is a generic envelope: Cursor's voice input (speech-to-text, `AiService/StreamStt`)
and other bidi calls reuse it with payloads that are not `agent.v1.AgentClientMessage`s, and
protobuf parses almost anything into almost anything. So "it parses" says little: an STT config
(`SttClientMessage.config`, field 1) parses as an `AgentClientMessage.run_request` full of
fields whose wire types are wrong. A payload is *agent-shaped* when it parses, no known field
of the top message or of the variant it sets came with another wire type than our schema gives
it (a mismatch parses as an unknown field), and a run request says what it runs (a conversation,
an action, a model or a run id). Only agent-shaped uploads of runs we serve are ours
(protocol.md §2.5); the rest go to Cursor as they came.

The same walk lists what a Cursor update added and we do not model yet: unknown fields (protobuf
keeps them as unknown) of the client message, its variant, and a run request's action, for the
census (`store/census.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf import unknown_fields
from google.protobuf.message import DecodeError
from google.protobuf.message import Message

from cursor_byok.pb import agent_v1_pb2 as pb


@dataclass(frozen=True, slots=True)
class Unmodelled:
    """One thing in a client message our schema does not know: `AgentRunRequest.26` (a field),
    `AgentClientMessage.9` (a case of the top oneof), or a case we model but do not serve
    (`ConversationAction.subscription_notification_action`, kind "unhandled")."""

    message: str  # the protobuf message's name, e.g. "ConversationAction"
    number: int
    kind: str  # "field", "case" or "unhandled"
    name: str = ""  # for "unhandled": the case's name

    @property
    def key(self) -> str:
        return f"{self.message}.{self.name or self.number}"

    def describe(self) -> str:
        if self.kind == "unhandled":
            return (
                f"{self.message}.{self.name} (field {self.number}), "
                "which cursor-byok does not serve"
            )
        what = " (a new kind of message)" if self.kind == "case" else ""
        return f"{self.message} field {self.number}{what}, which cursor-byok does not model"


@dataclass(frozen=True, slots=True)
class Classified:
    """An upload's payload: the parsed message (None when it does not parse) and whether it is
    shaped like an Agent client message."""

    message: pb.AgentClientMessage | None
    agent: bool


def classify(raw: bytes) -> Classified:
    """Parse `raw` as an `AgentClientMessage` and say whether it is one (see the module doc)."""
    message = pb.AgentClientMessage()
    try:
        message.ParseFromString(raw)
    except DecodeError:
        return Classified(None, False)
    return Classified(message, agent_shaped(message))


def agent_shaped(message: pb.AgentClientMessage) -> bool:
    if _mismatched(message):
        return False
    kind = message.WhichOneof("message")
    if kind is None:
        # Nothing we know; a newer case (a field number past ours) is still Cursor's agent.
        top = _unknown(message)
        return bool(top) and all(n > _LAST_CASE for n, _ in top)
    variant = getattr(message, kind)
    if _mismatched(variant):
        return False
    if kind == "run_request":
        run = message.run_request
        return bool(
            run.conversation_id
            or run.run_id
            or run.action.WhichOneof("action")
            or run.HasField("requested_model")
            or run.HasField("model_details")
        )
    return True


def unmodelled(message: pb.AgentClientMessage) -> list[Unmodelled]:
    """What this client message carries that our schema does not model (or that we model and do
    not serve: a conversation action without a handler, `unhandled`)."""
    out = [
        Unmodelled("AgentClientMessage", n, "case" if n > _LAST_CASE else "field")
        for n, _ in _unknown(message)
    ]
    kind = message.WhichOneof("message")
    if kind is None:
        return out
    variant = getattr(message, kind)
    out += _fields(variant)
    action: pb.ConversationAction | None = None
    if kind == "run_request":
        if message.run_request.HasField("action"):
            action = message.run_request.action
    elif kind == "conversation_action":
        action = message.conversation_action
    if action is not None:
        if action is not variant:
            out += _fields(action)
        case = action.WhichOneof("action")
        if case is not None:
            out += _fields(getattr(action, case))
            if case not in SERVED_ACTIONS:
                number = action.DESCRIPTOR.fields_by_name[case].number
                out.append(Unmodelled("ConversationAction", number, "unhandled", case))
    return out


# The actions cursor-byok serves: as a run of their own (cursor/actions.py) or mid-run.
SERVED_ACTIONS = frozenset(
    {
        "user_message_action",
        "resume_action",
        "cancel_action",
        "summarize_action",
        "shell_command_action",
        "start_plan_action",
        "execute_plan_action",
        "async_ask_question_completion_action",
        "cancel_subagent_action",
        "background_task_completion_action",
        "background_shell_action",
        "background_subagent_action",
        "inject_context_action",
        "goal_continuation_action",
    }
)
_LAST_CASE = max(f.number for f in pb.AgentClientMessage.DESCRIPTOR.fields)


def _unknown(message: Message) -> list[tuple[int, int]]:
    """(field number, wire type) of each unknown field at the top of `message`."""
    return [(f.field_number, f.wire_type) for f in unknown_fields.UnknownFieldSet(message)]


def _mismatched(message: Message) -> bool:
    """Whether a field our schema knows came with another wire type (protobuf keeps it as an
    unknown field of a known number): the bytes were made for another message."""
    known = message.DESCRIPTOR.fields_by_number
    return any(number in known for number, _ in _unknown(message))


def _fields(message: Message) -> list[Unmodelled]:
    name = message.DESCRIPTOR.name
    return [Unmodelled(name, number, "field") for number, _ in _unknown(message)]
