"""Live status in the terminal: active turns, model, tokens, speed, tool, cost, outcome; and the
editor features' calls (Cmd-K, terminal, commit messages): calls, tokens, last latency, cost.

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
from rich.file_proxy import FileProxy
from rich.live import Live
from rich.table import Table

from cursor_byok.config import Config
from cursor_byok.config import ConfigError
from cursor_byok.proxy import options
from cursor_byok.proxy.mitmproxy_compat import redirect_termlog
from cursor_byok.proxy.routing import RoutedRun
from cursor_byok.proxy.routing import Routes
from cursor_byok.proxy.run_registry import LiveRun
from cursor_byok.proxy.run_registry import RunRegistry
from cursor_byok.proxy.turns import Turns
from cursor_byok.store.census import Census
from cursor_byok.store.census import census_lines
from cursor_byok.store.feature_calls import FeatureCalls
from cursor_byok.store.feature_calls import FeatureRow
from cursor_byok.store.usage import Prices
from cursor_byok.store.usage import store_for
from cursor_byok.store.usage import summarise
from cursor_byok.store.usage import turn_cost

log = logging.getLogger(__name__)
REFRESH = 0.5
SESSION_COST_EVERY = 10  # refreshes between two reads of the usage database


def _turn_cost(turn, prices_for: Callable[[str], Prices | None] | None) -> str:
    prices = prices_for(turn.status.model) if prices_for and turn.status.model else None
    if prices is None:
        return ""
    usage = turn.usage
    cost = turn_cost(prices, vars(usage))
    return f"${cost:.4f}" if cost is not None else ""


def _served(turn) -> str:
    """The model that serves the turn; a fallback says whose place it took."""
    model = turn.status.model or "?"
    fallback_from = turn.status.fallback_from
    return f"{model} ← {fallback_from}" if fallback_from else model


# Every column, in the order shown, with its priority when the terminal is narrow: the lower the
# number, the longer it stays (issue 28: at 100 columns `in`, `out`, `state` and `route` used to
# collapse to "…" while the model name kept 23 characters). The model name is shortened before
# any column goes; the least useful columns go first.
COLUMNS: tuple[tuple[str, int], ...] = (
    ("request", 11),
    ("conversation", 10),
    ("model", 0),
    ("route", 4),
    ("state", 0),
    ("in", 1),
    ("cached", 8),
    ("out", 1),
    ("tok/s", 2),
    ("context", 7),
    ("tool", 3),
    ("cost", 9),
)
MODEL_MIN = 10  # the model column is never narrower than this
STATE_MAX = 24
CHROME = 3  # a column's share of the borders and padding ("│ x "), plus one for the last border


def status_table(
    runs: Iterable[LiveRun],
    now: float | None = None,
    prices_for: Callable[[str], Prices | None] | None = None,
    session_cost: str = "",
    routed: Iterable = (),
    census: dict | None = None,
    width: int | None = None,
    tab: str = "",
    features: Iterable[FeatureRow] = (),
) -> Table:
    """One row per session that has (or had) a turn, then the latest runs that went to Cursor's
    backend (`routing.RoutedRun`: nothing but their model is known here), then one row per
    editor feature and model (`store/feature_calls.py`: Cmd-K, terminal, commit messages, with
    their calls, tokens and the last call's latency); pure, so testable.

    With `width` (the terminal's), the table fits it: the model name is shortened first, then
    the least useful columns are left out (COLUMNS), so what matters never collapses to "…"."""
    now = time.monotonic() if now is None else now
    rows = [_turn_row(live, now, prices_for) for live in runs if live.turn is not None]
    rows.extend(_routed_row(run, now) for run in routed)
    rows.extend(feature_row(row, now, prices_for) for row in features)
    shown, model_width = _fit(rows, width)
    title = "cursor-byok" + (f" — {session_cost}" if session_cost else "")
    table = Table(title=title, caption=_caption(census, tab), caption_justify="left", expand=False)
    for index in shown:
        name = COLUMNS[index][0]
        if name == "model":
            table.add_column(name, no_wrap=True, max_width=model_width, overflow="ellipsis")
        else:
            table.add_column(name, no_wrap=True)
    for row in rows:
        cells = [row[i] for i in shown]
        if model_width is not None:
            model_at = shown.index(2)
            cells[model_at] = _shorten(cells[model_at], model_width)
        table.add_row(*cells)
    return table


def _turn_row(
    live: LiveRun, now: float, prices_for: Callable[[str], Prices | None] | None
) -> list[str]:
    """A run served here, by its turn's state, tokens, rate, context, tool and cost."""
    turn = live.turn
    assert turn is not None
    usage = turn.usage
    state = turn.status.outcome or live.state
    return [
        live.request_id[:8],
        (turn.run_request.conversation_id or "")[:8],
        _served(turn),
        "local",
        state if len(state) <= STATE_MAX else state[: STATE_MAX - 1] + "…",
        str(usage.input_tokens),
        str(usage.cache_read_tokens),
        str(usage.output_tokens),
        _rate(turn, now),
        _context(turn),
        tool_label(turn.status.current_tool),
        _turn_cost(turn, prices_for),
    ]


def _routed_row(run: RoutedRun, now: float) -> list[str]:
    """A run that went to Cursor's backend (`routing.RoutedRun`): only its model is known."""
    ago = max(0, int(now - run.at))
    return [
        run.request_id[:8],
        run.conversation_id[:8],
        run.model or "?",
        "cursor",
        f"sent to Cursor {ago}s ago",
        *([""] * 7),
    ]


def _caption(census: dict | None, tab: str) -> str | None:
    """The census (store/census.py): what Cursor sent, and what is new in it; Tab on the
    user's model live first (the census has its totals too)."""
    lines = census_lines(census, limit=0) if census else []
    if tab:
        lines = [tab] + [line for line in lines if not line.startswith("Tab on your model")]
    return "\n".join(lines) if lines else None


def feature_row(
    row: FeatureRow, now: float, prices_for: Callable[[str], Prices | None] | None = None
) -> list[str]:
    """An editor feature's row: its calls where a turn's request id is, its kind before the
    model (the model column stays at any width: the kind is never shortened away), the last
    call's latency (to its end, and to its first text) as the state."""
    if row.running:
        state = "answering…"
    elif row.last_problem:
        state = row.last_problem
    elif row.last_duration is not None:
        first = row.last_first_text
        state = f"last {row.last_duration:.2f}s" + (f", 1st {first:.2f}s" if first else "")
    else:
        state = ""
    prices = prices_for(row.model) if prices_for else None
    cost = turn_cost(prices, row.tokens) if prices is not None else None
    tokens = row.tokens
    return [
        f"{row.calls} call{'s' if row.calls != 1 else ''}",
        "",
        f"{row.kind}: {row.model}",
        "local",
        state if len(state) <= STATE_MAX else state[: STATE_MAX - 1] + "…",
        str(tokens["input_tokens"]),
        str(tokens["cache_read_tokens"]),
        str(tokens["output_tokens"]),
        "",
        "",
        "",
        f"${cost:.4f}" if cost is not None else "",
    ]


def _fit(rows: list[list[str]], width: int | None) -> tuple[list[int], int | None]:
    """Which columns to show and how wide the model name may be, to fit `width`."""
    natural = [
        max([len(name), *(len(row[i]) for row in rows)]) for i, (name, _p) in enumerate(COLUMNS)
    ]
    shown = list(range(len(COLUMNS)))
    if width is None:
        return shown, None

    def total(columns: list[int], model: int) -> int:
        widths = [model if i == 2 else natural[i] for i in columns]
        return sum(widths) + CHROME * len(columns) + 1

    model = natural[2]
    if total(shown, model) <= width:
        return shown, None
    by_priority = sorted(shown, key=lambda i: COLUMNS[i][1], reverse=True)
    for index in by_priority:
        need = total(shown, MODEL_MIN) - width
        if need <= 0:
            break
        if COLUMNS[index][1] == 0:
            break
        shown.remove(index)
    spare = width - total(shown, 0)
    return shown, max(MODEL_MIN, min(natural[2], spare))


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def tool_label(tool: str | None) -> str:
    """`read_tool_call` → `Read`: what the model called, as Cursor's card names it."""
    if not tool:
        return ""
    pending = tool.endswith("…")
    name = tool.removesuffix("…").removesuffix("_tool_call")
    label = "".join(part.capitalize() for part in name.split("_")) or tool
    return label + ("…" if pending else "")


def _rate(turn, now: float) -> str:
    """Output tokens per second of the turn, frozen at its end (a finished turn keeps its
    final rate instead of sinking while the clock runs on)."""
    ended = turn.status.ended
    elapsed = max((ended if ended is not None else now) - turn.status.started, 1e-3)
    usage = turn.usage
    live = getattr(usage, "live_output_tokens", None)  # while a call streams: estimated
    tokens = live() if live is not None else usage.output_tokens
    return f"{tokens / elapsed:.1f}"


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


def _ended(live: LiveRun) -> bool:
    return live.turn is not None and live.turn.status.outcome is not None


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
        registry: RunRegistry,
        routes: Routes,
        turns: Turns,
        census: Census | None = None,
        tab_line: Callable[[], str] | None = None,
        features: FeatureCalls | None = None,
    ) -> None:
        self.tab_line = tab_line  # Tab's one line (proxy/tab.py), under the table
        self.registry = registry
        self.routes = routes
        self.turns = turns
        self.census = census
        self.features = features  # the editor features' calls (Cmd-K, terminal, commit)
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
        """The table under the log: rich's Live redraws it in place, and every log line
        (mitmdump's and ours, which print to the stdout mitmdump took at start) is printed
        above it through rich's stdout proxy, so the terminal never stacks copies of it."""
        console = Console(stderr=True)
        started = time.time()
        session_cost, refreshes = "", 0
        finished, reread = 0, 0  # turns ended so far; refreshes that read the database anew
        undo: Callable[[], None] | None = None
        live = Live(console=console, refresh_per_second=2, transient=True)
        try:
            with contextlib.suppress(asyncio.CancelledError), live:
                if sys.stdout.isatty() and isinstance(sys.stdout, FileProxy):
                    undo = redirect_termlog(sys.stdout)  # the same terminal: lines go above
                while True:
                    try:
                        config = self.turns.config()
                    except ConfigError:
                        config = None
                    # A turn just ended: its row is on its way (the writer's thread); read
                    # now and at the next refresh, so the header does not lag by seconds.
                    ended = sum(1 for r in self.registry.runs.values() if _ended(r))
                    if ended != finished:
                        finished, reread = ended, 2
                    if reread or refreshes % SESSION_COST_EVERY == 0:
                        reread = max(reread - 1, 0)
                        data_dir = options.data_dir(ctx.options)
                        try:
                            session_cost = session_cost_text(data_dir, started, config)
                        except Exception as exc:  # a display must never take the proxy down
                            log.debug("no session cost: %s", exc)
                    refreshes += 1
                    live.update(
                        status_table(
                            self.registry.runs.values(),
                            prices_for=prices_lookup(config),
                            session_cost=session_cost,
                            routed=list(self.routes.recent),
                            census=self.census.snapshot() if self.census is not None else None,
                            width=console.width,
                            tab=self.tab_line() if self.tab_line is not None else "",
                            features=self.features.rows() if self.features is not None else (),
                        )
                    )
                    await asyncio.sleep(REFRESH)
        finally:
            if undo is not None:
                undo()
