"""Live status in the terminal: active turns, model, tokens, speed, tool, cost, outcome.

A separate addon so it can be switched off (`--set cursor_byok_status=false`, or `cursor-byok
run --quiet`) and so nothing in the request path depends on it. It only reads session state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import Callable
from collections.abc import Iterable
from pathlib import Path

from mitmproxy import ctx
from rich.console import Console
from rich.live import Live
from rich.table import Table

from cursor_byok.config import Config
from cursor_byok.config import ConfigError
from cursor_byok.proxy import options
from cursor_byok.proxy.routing import Routes
from cursor_byok.proxy.shell import LiveRun
from cursor_byok.proxy.shell import SessionRegistry
from cursor_byok.proxy.turns import Turns
from cursor_byok.store.census import Census
from cursor_byok.store.census import census_lines
from cursor_byok.store.usage import Prices
from cursor_byok.store.usage import store_for
from cursor_byok.store.usage import summarise
from cursor_byok.store.usage import turn_cost

log = logging.getLogger(__name__)
REFRESH = 0.5
SESSION_COST_EVERY = 10  # refreshes between two reads of the usage database


def _turn_cost(turn, prices_for: Callable[[str], Prices | None] | None) -> str:
    prices = prices_for(turn.model) if prices_for and turn.model else None
    if prices is None:
        return ""
    usage = turn.usage
    cost = turn_cost(prices, vars(usage))
    return f"${cost:.4f}" if cost is not None else ""


def status_table(
    sessions: Iterable[LiveRun],
    now: float | None = None,
    prices_for: Callable[[str], Prices | None] | None = None,
    session_cost: str = "",
    routed: Iterable = (),
    census: dict | None = None,
) -> Table:
    """One row per session that has (or had) a turn, then the latest runs that went to Cursor's
    backend (`routing.RoutedRun`: nothing but their model is known here); pure, so testable."""
    now = time.monotonic() if now is None else now
    title = "cursor-byok" + (f" — {session_cost}" if session_cost else "")
    # The census (store/census.py): what Cursor sent, and what is new in it.
    caption = "\n".join(census_lines(census, limit=0)) if census else None
    table = Table(title=title, caption=caption, caption_justify="left", expand=False)
    columns = (
        "request",
        "conversation",
        "model",
        "route",
        "state",
        "in",
        "cached",
        "out",
        "tok/s",
    )
    for column in (*columns, "context", "tool", "cost"):
        table.add_column(column, no_wrap=True)
    for live in sessions:
        turn = live.turn
        if turn is None:
            continue
        usage = turn.usage
        elapsed = max(now - turn.started, 1e-3)
        state = turn.outcome or live.state
        table.add_row(
            live.request_id[:8],
            (turn.run_request.conversation_id or "")[:8],
            turn.model or "?",
            "local",
            state if len(state) < 40 else state[:39] + "…",
            str(usage.input_tokens),
            str(usage.cache_read_tokens),
            str(usage.output_tokens),
            f"{usage.output_tokens / elapsed:.1f}",
            _context(turn),
            turn.current_tool or "",
            _turn_cost(turn, prices_for),
        )
    for run in routed:
        ago = max(0, int(now - run.at))
        table.add_row(
            run.request_id[:8],
            run.conversation_id[:8],
            run.model or "?",
            "cursor",
            f"sent to Cursor {ago}s ago",
            *([""] * 7),
        )
    return table


def prices_lookup(config: Config | None) -> Callable[[str], Prices | None]:
    return config.prices_of if config is not None else lambda _model: None


def session_cost_text(data_dir: Path, since: float, config: Config | None) -> str:
    """Cost of the turns finished since the proxy started (from the usage database)."""
    from cursor_byok.store.usage import format_cost

    rows = store_for(data_dir).rows(since)  # the proxy's open store: no open per refresh
    if not rows:
        return ""
    _groups, total = summarise(rows, "model", config.prices_of if config else None)
    cost = format_cost(total)
    turns = f"{total.turns} turn{'s' if total.turns != 1 else ''}"
    return f"this session: {turns}" + (f", {cost}" if cost != "—" else "")


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
    """An addon: the live status table of running turns, on a terminal."""

    def __init__(
        self,
        registry: SessionRegistry,
        routes: Routes,
        turns: Turns,
        census: Census | None = None,
    ) -> None:
        self.registry = registry
        self.routes = routes
        self.turns = turns
        self.census = census
        self._task: asyncio.Task | None = None

    def load(self, loader) -> None:
        options.declare(loader, "cursor_byok_status", "cursor_byok_data_dir")

    def running(self) -> None:
        if not ctx.options.cursor_byok_status or not sys.stderr.isatty():
            return
        self._task = asyncio.get_running_loop().create_task(self._show())

    def done(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _show(self) -> None:
        console = Console(stderr=True)
        started = time.time()
        session_cost, refreshes = "", 0
        with (
            contextlib.suppress(asyncio.CancelledError),
            Live(console=console, refresh_per_second=2, transient=True) as live,
        ):
            while True:
                try:
                    config = self.turns.config()
                except ConfigError:
                    config = None
                if refreshes % SESSION_COST_EVERY == 0:
                    data_dir = options.data_dir(ctx.options)
                    try:
                        session_cost = session_cost_text(data_dir, started, config)
                    except Exception as exc:  # a display must never take the proxy down
                        log.debug("no session cost: %s", exc)
                refreshes += 1
                live.update(
                    status_table(
                        self.registry.sessions.values(),
                        prices_for=prices_lookup(config),
                        session_cost=session_cost,
                        routed=list(self.routes.recent),
                        census=self.census.snapshot() if self.census is not None else None,
                    )
                )
                await asyncio.sleep(REFRESH)
