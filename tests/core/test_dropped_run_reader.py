"""A run dropped while a stream still reads it is forgotten when that stream goes (issue 33
item 10: three 24 MiB turns whose streams outlived the linger kept every frame, ~450 MiB)."""

from __future__ import annotations

from cursor_byok.core.attempts import Registry
from cursor_byok.core.runs import DropRun
from cursor_byok.core.runs import Note
from cursor_byok.core.runs import RunConfig
from cursor_byok.core.runs import StartTurn
from cursor_byok.core.states import RunState
from cursor_byok.pb import agent_v1_pb2 as pb

OWNER = b"owner"


def _started(core: Registry):
    message = pb.AgentClientMessage()
    message.run_request.action.user_message_action.user_message.text = "hi"
    message.run_request.run_id = ""
    message.run_request.conversation_id = "c"
    raw = message.SerializeToString()
    commands = core.receive("r", 0, message, raw=raw, owner=OWNER, now=0)
    commands = [c for c in commands if not isinstance(c, Note)]
    [start] = commands
    assert isinstance(start, StartTurn)
    return start.run


def _ticked(core: Registry, now: float) -> list:
    return [c for c in core.tick(now).commands if not isinstance(c, Note)]


def test_last_reader_of_a_dropped_run_forgets_its_attempt() -> None:
    core = Registry(RunConfig(linger=30))
    run = _started(core)
    sub, _ = core.subscribe("r", owner=OWNER, now=0)
    run.finish(now=1)
    [drop] = _ticked(core, 31)
    assert isinstance(drop, DropRun) and run.state is RunState.DROPPED
    assert "r" in core.attempts  # still read: kept for that stream
    core.unsubscribe(sub, now=40)
    assert "r" not in core.attempts  # nothing holds the run (and its frames) any more


def test_a_finished_run_keeps_its_attempt_when_its_reader_goes() -> None:
    core = Registry(RunConfig(linger=30))
    run = _started(core)
    sub, _ = core.subscribe("r", owner=OWNER, now=0)
    run.finish(now=1)
    core.unsubscribe(sub, now=2)
    assert "r" in core.attempts  # a reconnect within the linger still replays it
    [drop] = _ticked(core, 31)
    assert isinstance(drop, DropRun) and "r" not in core.attempts
