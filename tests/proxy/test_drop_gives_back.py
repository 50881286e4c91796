"""Issue 33 item 10: a large run's memory goes back to the system once nothing holds it — when
it is dropped, or when the last stream still reading it then goes (not before: it is alive)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from cursor_byok.core.runs import RunConfig
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.proxy import memory
from cursor_byok.proxy.run_registry import RunRegistry

OWNER = b"me"


def _run_request() -> pb.AgentClientMessage:
    message = pb.AgentClientMessage()
    message.run_request.conversation_id = "c"
    message.run_request.action.user_message_action.user_message.text = "hi"
    return message


async def _finished_run(registry: RunRegistry, request_id: str) -> None:
    message = _run_request()
    registry.receive(request_id, 0, message, raw=message.SerializeToString(), owner=OWNER)
    for _ in range(50):
        run = registry.run_for(request_id)
        if run is not None and run.finished:
            return
        await asyncio.sleep(0)
    raise AssertionError("the turn did not finish")


@pytest.mark.parametrize("read", [False, True])
async def test_a_dropped_run_is_given_back_once_unheld(monkeypatch, read: bool) -> None:
    given: list[int] = []
    monkeypatch.setattr(memory, "run_dropped", given.append)
    now = [0.0]

    async def runner(live, _request) -> None:
        live.finish()

    registry = RunRegistry(runner, config=RunConfig(linger=10), clock=lambda: now[0])
    registry.open_attempt("r", owner=OWNER)
    sub = registry.subscribe("r", owner=OWNER) if read else None
    await _finished_run(registry, "r")
    now[0] = 20
    registry.tick()  # the linger is over: the run is dropped
    await asyncio.sleep(0)
    if sub is not None:
        assert given == []  # a stream still reads it: nothing to give back yet
        registry.unsubscribe(sub)
        await asyncio.sleep(0)
    assert len(given) == 1 and given[0] > 0  # the size of its frames


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_give_back_trims_glibc_heaps() -> None:
    import platform

    if platform.libc_ver()[0] != "glibc":
        pytest.skip("not glibc")
    assert memory.give_back()


def test_give_back_is_a_no_op_elsewhere(monkeypatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert not memory.give_back()
