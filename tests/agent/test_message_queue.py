"""The one queue of user messages for a turn (issue 32 item 6): those queued before it started
and those sent while the model answers (steering)."""

from __future__ import annotations

from cursor_byok.agent.steering import MAX_EARLIER
from cursor_byok.agent.steering import Injection
from cursor_byok.agent.steering import MessageQueue
from cursor_byok.pb import agent_v1_pb2 as pb


def _message(text: str, ident: str = "") -> pb.UserMessage:
    return pb.UserMessage(text=text, message_id=ident)


def test_messages_queued_before_the_turn_are_given_once_each() -> None:
    queue = MessageQueue([_message("a", "1"), _message("a"), _message("b", "1"), _message("c")])
    assert [m.text for m in queue.before()] == ["a", "c"]  # by text or by id, once
    assert [m.text for m in queue.before(_message("c"))] == ["a"]  # not the turn's own


def test_between_turns_the_queue_is_bounded() -> None:
    queue = MessageQueue()
    for n in range(MAX_EARLIER + 3):
        queue.queue_next(_message(str(n)))
    assert len(queue.earlier) == MAX_EARLIER


def test_steering_is_confirmed_to_the_turn_it_is_bound_to() -> None:
    updates: list[dict] = []
    queue = MessageQueue([_message("early")])
    queue.add(Injection("before-bind", _message("x")))  # no turn yet: nothing confirmed
    queue.bind(lambda **variant: updates.append(variant), lambda: False, "req-1")
    queue.add(Injection("i1", _message("y")))
    states = [u["context_injection_state"].state.WhichOneof("state") for u in updates]
    assert states == ["queued"]
    assert [i.injection_id for i in queue.take(1)] == ["before-bind", "i1"]
    queue.add(Injection("i2", _message("z")))
    queue.close()
    states = [u["context_injection_state"].state.WhichOneof("state") for u in updates]
    assert states == ["queued", "delivered", "delivered", "queued", "queued_for_next_turn"]
    assert [m.text for m in queue.before()] == ["early"]  # the earlier ones are apart
