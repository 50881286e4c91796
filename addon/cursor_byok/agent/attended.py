"""Model calls only while somebody may read them: the limit on unattended provider calls.

A run whose every response stream is gone is kept for a reconnect (`cursor_byok_grace_ms`, minutes),
because a dropped connection must not lose the turn. But the provider bills for the answer as it
streams, and an answer nobody reads is money spent for nothing: Cursor's SDK cancels a run by just
ending its stream (no `cancel_action`), and would otherwise pay for the whole answer each time.

So a model call may go on for `Turn.detached_call_limit` seconds (`cursor_byok_detached_call_ms`,
750 ms: a cancel stops the provider within a second) after the run's last stream went away; the
client is on the proxy's machine, so a reconnect comes at once if at all. Then the call is
aborted (its HTTP request closed) and its partial answer forgotten. The run stays where its last
completed step left it: the transcript has every finished tool batch, so nothing runs twice. When a
stream attaches again (a reconnect of the same run), the interrupted call is made again, and only
it; if none comes, the grace period cancels the run as before. A call is not even started while the
run has been unattended for longer than the limit.

What a reconnecting client reads is the run's backlog, which still holds the abandoned call's
partial text; the call made again streams its answer after it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from cursor_byok.agent.turn import Turn

log = logging.getLogger(__name__)


def unattended_for(turn: Turn) -> float | None:
    """How long the run has had no stream (None while one reads it)."""
    since = turn.live.detached_since
    return None if since is None else max(0.0, turn.live.clock() - since)


async def until_attended(turn: Turn) -> None:
    """Return once a model call may start: a stream reads the run, or it has been unattended
    for less than the limit. Waits on stream changes (the grace period ends the wait by
    cancelling the turn)."""
    logged = False
    while True:
        idle = unattended_for(turn)
        if idle is None or idle < turn.options.detached_call_limit:
            return
        if not logged:
            logged = True
            log.info(
                "turn %s: no stream for %.1f s; the next model call waits for the client",
                turn.request_id,
                idle,
            )
        await turn.live.watch_streams()


async def attended[T](turn: Turn, call: Callable[[], Awaitable[T]]) -> T:
    """Run one model call (`call()` makes it afresh each time) under the limit: aborted when
    the run has been unattended for `detached_call_limit`, made again once a stream is back."""
    limit = turn.options.detached_call_limit
    while True:
        await until_attended(turn)
        mark = turn.ui.mark()
        task: asyncio.Future[T] = asyncio.ensure_future(call())
        try:
            while True:
                watcher = turn.live.watch_streams()
                idle = unattended_for(turn)
                timeout = None if idle is None else max(0.0, limit - idle)
                pending: set[asyncio.Future[Any]] = {task, watcher}
                done, _ = await asyncio.wait(
                    pending, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
                )
                watcher.cancel()
                if task in done:
                    return task.result()
                if watcher not in done:
                    break  # unattended for the whole limit: give the call up
        finally:
            if not task.done():
                task.cancel()
                await asyncio.wait({task})  # its connection closed before anything goes on
        turn.ui.rewind(mark)
        log.info(
            "turn %s: no stream for %.1f s: model call aborted (nobody reads it); it is made "
            "again when the client reconnects",
            turn.request_id,
            limit,
        )
