"""A run in the sans-IO core, started and read the way the shell does: the helpers the core's
backlog tests share (a run request, a client message, a subscriber, a text delta)."""

from __future__ import annotations

from cursor_byok.core.attempts import Registry
from cursor_byok.core.attempts import Subscriber
from cursor_byok.core.runs import Note
from cursor_byok.core.runs import Run
from cursor_byok.core.runs import StartTurn
from cursor_byok.pb import agent_v1_pb2 as pb

OWNER = b"owner"


def run_request(run_id: str) -> pb.AgentClientMessage:
    msg = pb.AgentClientMessage()
    msg.run_request.action.user_message_action.user_message.text = "hi"
    msg.run_request.run_id = run_id
    msg.run_request.conversation_id = "c"
    return msg


def send(
    core: Registry, request_id: str, message: pb.AgentClientMessage, now: float, seqno: int = 0
) -> list:
    """The commands a client message makes (the `Note`s to log left out)."""
    raw = message.SerializeToString()
    commands = core.receive(request_id, seqno, message, raw=raw, owner=OWNER, now=now)
    return [c for c in commands if not isinstance(c, Note)]


def started(core: Registry, request_id: str) -> Run:
    [cmd] = send(core, request_id, run_request(request_id), 0)
    assert isinstance(cmd, StartTurn)
    return cmd.run


def subscribe(core: Registry, request_id: str, now: float, **kw) -> Subscriber:
    sub, _ = core.subscribe(request_id, owner=OWNER, now=now, **kw)
    return sub


def text(t: str) -> pb.AgentServerMessage:
    update = pb.InteractionUpdate(text_delta=pb.TextDeltaUpdate(text=t))
    return pb.AgentServerMessage(interaction_update=update)
