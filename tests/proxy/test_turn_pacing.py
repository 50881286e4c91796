"""Turns' set-ups and closes take one pass of the event loop each (proxy/turn_pacing.py), so the
deltas of streams already running go between them (`run_turn` waiting for its slot before both:
test_run_registry.py)."""

from __future__ import annotations

import asyncio
import itertools

from cursor_byok.proxy.turn_pacing import Pacer


async def _passes_between(pacer: Pacer, turns: int) -> list[str]:
    """What ran, in order: each turn's step after its slot, and a stream that makes one step
    ready in every pass of the loop (as a socket with data does) until the turns are done."""
    loop = asyncio.get_running_loop()
    order: list[str] = []
    done = False

    def stream_step() -> None:
        order.append("delta")
        if not done:
            loop.call_soon(stream_step)

    async def turn(name: str) -> None:
        await pacer.slot()
        order.append(name)

    loop.call_soon(stream_step)
    await asyncio.gather(*(turn(f"turn{i}") for i in range(turns)))
    done = True
    await asyncio.sleep(0)
    return order


async def test_each_slot_comes_in_a_pass_of_its_own_with_the_streams_between() -> None:
    pacer = Pacer()
    order = await _passes_between(pacer, 5)
    turns = [i for i, what in enumerate(order) if what.startswith("turn")]
    assert [order[i] for i in turns] == [f"turn{i}" for i in range(5)]  # first come, first served
    # a stream step between any two turns' steps: they never run back to back in one pass
    assert all(b - a > 1 for a, b in itertools.pairwise(turns)), order
    assert pacer.given == 5


async def test_a_turn_cancelled_while_it_waits_is_skipped() -> None:
    pacer = Pacer()
    got: list[str] = []

    async def turn(name: str) -> None:
        await pacer.slot()
        got.append(name)

    first = asyncio.ensure_future(turn("first"))
    second = asyncio.ensure_future(turn("second"))
    third = asyncio.ensure_future(turn("third"))
    await asyncio.sleep(0)  # all three wait
    second.cancel()
    await asyncio.wait_for(asyncio.gather(first, third), 5)
    assert got == ["first", "third"]
    assert second.cancelled()
    assert pacer.given == 2


def test_a_pacer_serves_a_new_event_loop_after_its_old_one_closed() -> None:
    """The proxy's objects outlive a loop in tests: a slot asked on a new loop must not wait
    for a timer armed on the closed one."""
    pacer = Pacer()
    old = asyncio.new_event_loop()
    waiting = old.create_task(pacer.slot())  # its first step arms the pacer's timer on `old`
    old.call_soon(old.stop)  # in the same pass: the loop stops before the timer is due
    old.run_forever()
    old.close()
    waiting._log_destroy_pending = False  # it can never run again: no warning when collected
    assert not waiting.done()

    async def again() -> None:
        await asyncio.wait_for(pacer.slot(), 5)

    asyncio.run(again())
