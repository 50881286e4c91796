"""Live status in the terminal: active turns, model, tokens, speed, current tool, outcome.

A separate addon so it can be switched off (`--set cursor_byok_status=false`, or `cursor-byok
run --quiet`) and so nothing in the request path depends on it. It only reads session state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import Iterable

from mitmproxy import ctx
from rich.console import Console
from rich.live import Live
from rich.table import Table

from cursor_byok.sessions import LiveSession

log = logging.getLogger(__name__)
REFRESH = 0.5


def status_table(sessions: Iterable[LiveSession], now: float | None = None) -> Table:
    """One row per session that has (or had) a turn; pure, so it is testable."""
    now = time.monotonic() if now is None else now
    table = Table(title="cursor-byok", expand=False)
    columns = ("request", "conversation", "model", "state", "in", "cached", "out", "tok/s")
    for column in (*columns, "context", "tool"):
        table.add_column(column, no_wrap=True)
    for live in sessions:
        turn = live.turn
        if turn is None:
            continue
        usage = turn.usage
        elapsed = max(now - turn.started, 1e-3)
        state = turn.outcome or live.core.state.value
        table.add_row(
            live.request_id[:8],
            (turn.run_request.conversation_id or "")[:8],
            turn.model or "?",
            state if len(state) < 40 else state[:39] + "…",
            str(usage.input_tokens),
            str(usage.cache_read_tokens),
            str(usage.output_tokens),
            f"{usage.output_tokens / elapsed:.1f}",
            _context(turn),
            turn.current_tool or "",
        )
    return table


def _context(turn) -> str:
    """Context use as `used/max (share)`, from the checkpoint meter."""
    transcript = getattr(turn, "transcript", None)
    if transcript is None:
        return ""
    used, window = transcript.used_tokens, transcript.context_window
    if not used or not window:
        return ""
    return f"{used}/{window} ({100 * used // window}%)"


class LiveStatus:
    def __init__(self) -> None:
        self._task: asyncio.Task | None = None

    def load(self, loader) -> None:
        loader.add_option(
            "cursor_byok_status",
            bool,
            True,
            "Show a live status table of running turns (only on a terminal).",
        )

    def running(self) -> None:
        if not ctx.options.cursor_byok_status or not sys.stderr.isatty():
            return
        self._task = asyncio.get_running_loop().create_task(self._show())

    def done(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _show(self) -> None:
        addon = ctx.master.addons.get("cursorbyok")
        if addon is None or addon.registry is None:
            return
        console = Console(stderr=True)
        with (
            contextlib.suppress(asyncio.CancelledError),
            Live(console=console, refresh_per_second=2, transient=True) as live,
        ):
            while True:
                live.update(status_table(addon.registry.sessions.values()))
                await asyncio.sleep(REFRESH)
