"""What a client message means for its run (sans-IO): an answer to one of its requests, a
shell's stream event, a conversation action mid-run, or nothing.

A message is dispatched in its attempt's order (`attempts.Registry` releases it from the
attempt's inbox); an answer resolves its request once, and a repeated or late one is dropped
(`pending.Pending.late`), so no request's answer reaches the turn twice.
"""

from __future__ import annotations

from cursor_byok.core.outbox import PendingKey
from cursor_byok.core.outbox import PendingKind
from cursor_byok.core.runs import Command
from cursor_byok.core.runs import LiveAction
from cursor_byok.core.runs import Note
from cursor_byok.core.runs import Resolve
from cursor_byok.core.runs import Run
from cursor_byok.core.runs import StreamEvent
from cursor_byok.pb import agent_v1_pb2 as pb

_LATE_ACTIONS = frozenset({"user_message_action", "inject_context_action"})
_SHELL_TERMINAL = frozenset(
    {"exit", "rejected", "permission_denied", "sandbox_unsupported", "backgrounded"}
)


def dispatch(run: Run, message: pb.AgentClientMessage, *, now: float) -> list[Command]:
    """One client message of any attempt of `run`, in its attempt's order."""
    run.heard(now)
    kind = message.WhichOneof("message")
    if kind == "run_request" or kind == "client_heartbeat" or kind is None:
        return []
    if kind == "exec_client_message":
        return _exec_result(run, message.exec_client_message)
    if kind == "kv_client_message":
        kv = message.kv_client_message
        if kv.WhichOneof("message") is None:
            return []
        return _resolve(run, (PendingKind.KV, kv.id), kv)
    if kind == "interaction_response":
        reply = message.interaction_response
        return _resolve(run, (PendingKind.INTERACTION, reply.id), reply)
    if kind == "exec_client_control_message":
        return _exec_control(run, message.exec_client_control_message)
    if kind == "conversation_action":
        return _action(run, message.conversation_action)
    return [Note.info("run %s: client message %s ignored", run.run_id, kind)]


def answers_unissued(run: Run, message: pb.AgentClientMessage) -> bool:
    """Whether a client message answers an exec or KV request `run` never sent."""
    kind = message.WhichOneof("message")
    if kind == "exec_client_message" and message.exec_client_message.WhichOneof("message"):
        return not run.issued((PendingKind.EXEC, message.exec_client_message.id))
    if kind == "kv_client_message" and message.kv_client_message.WhichOneof("message"):
        return not run.issued((PendingKind.KV, message.kv_client_message.id))
    return False


def _action(run: Run, action: pb.ConversationAction) -> list[Command]:
    if not run.running:
        # A message for the conversation's next run (queued while this one closed), or
        # steering that came too late; the shell says which (`_LATE_ACTIONS`).
        late = action.WhichOneof("action") in _LATE_ACTIONS
        return [LiveAction(run, action)] if late else []
    if action.WhichOneof("action") == "cancel_action":
        return run.cancel("cancelled by the user", action.cancel_action, final="user")
    return [LiveAction(run, action)]


def _exec_result(run: Run, result: pb.ExecClientMessage) -> list[Command]:
    kind = result.WhichOneof("message")
    if kind is None:  # not a result (protocol.md §5): keep waiting
        return []
    key = (PendingKind.EXEC, result.id)
    if kind == "mcp_result" and result.mcp_result.WhichOneof("result") == "approved":
        # The user approved the call; the real result follows with the same id.
        return [StreamEvent(run, result.id, result)] if key in run.pending else []
    if kind == "shell_stream":
        event = result.shell_stream.WhichOneof("event")
        if event not in _SHELL_TERMINAL:
            if key in run.pending:
                return [StreamEvent(run, result.id, result)]
            return _unknown(run, key)
    return _resolve(run, key, result)


def _exec_control(run: Run, control: pb.ExecClientControlMessage) -> list[Command]:
    if control.WhichOneof("message") == "throw":
        key = (PendingKind.EXEC, control.throw.id)
        if key in run.pending:
            # The client failed to run it: an empty result the tool layer reads as an error.
            note = Note.info("run %s: client threw for exec %d", run.run_id, key[1])
            return [note, *_resolve(run, key, pb.ExecClientMessage(id=control.throw.id))]
    return []


def _resolve(
    run: Run,
    key: PendingKey,
    message: pb.ExecClientMessage | pb.KvClientMessage | pb.InteractionResponse,
) -> list[Command]:
    if not run.pending.resolve(key):
        return _unknown(run, key)
    run.outbox.answered(key)  # a frame made again for a replay keeps no bytes from now on
    return [Resolve(run, key, message)]


def _unknown(run: Run, key: PendingKey) -> list[Command]:
    kind, ident = key
    if run.pending.late(key):
        return [Note.debug("run %s: repeated or late result for %s %d dropped", run.run_id, *key)]
    run.ignored_results += 1
    return [
        Note.warning("run %s: result for unknown %s id %d ignored", run.run_id, kind.value, ident)
    ]
