"""The doctor's checks of Cursor's traffic: whether Agent calls reach the running proxy (from the
activity record it keeps in its data directory, so this works from a second terminal; with
`--watch N`, waiting for a call made after the doctor started) and the RPC census of what Cursor
sent.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from cursor_byok.cli.doctor_setup import FAIL
from cursor_byok.cli.doctor_setup import OK
from cursor_byok.cli.doctor_setup import WARN
from cursor_byok.cli.doctor_setup import Check
from cursor_byok.store.activity import ACTIVITY_FILE
from cursor_byok.store.activity import read_activity
from cursor_byok.store.census import census_lines
from cursor_byok.store.census import leaked
from cursor_byok.store.census import since

WATCH_POLL = 0.2
CENSUS_SETTLE = 3.0  # seconds the census must stay still before the doctor reports it


def proxy_on(port: int | None, data_dir: Path) -> str | None:
    """`pid N` when the activity record says a live cursor-byok proxy listens on `port` (any
    port: None)."""
    activity, _stamp = read_activity(data_dir)
    if not activity or (port is not None and activity.get("listen_port") != port):
        return None
    pid = activity.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, someone else's
    return f"pid {pid}"


def _agent_line(activity: dict) -> str:
    how = " / ".join(x for x in (activity.get("last_transport"), activity.get("last_route")) if x)
    return f"last at {activity.get('last_agent_call', '?')}" + (f" via {how}" if how else "")


def check_activity(
    data_dir: Path,
    watch: float,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.time,
) -> Check:
    """Whether Cursor's Agent calls reach the running proxy.

    Without `watch`, what the record says (calls may be from an earlier session). With `watch`,
    wait up to that many seconds for an Agent call made after this check started, and say which
    transport and route it took.
    """
    path = data_dir / ACTIVITY_FILE
    if watch > 0:
        return _watch_activity(data_dir, watch, sleep, clock)
    activity, _stamp = read_activity(data_dir)
    if activity is None:
        return Check(
            WARN,
            "the proxy has not run yet with this data dir",
            f"no {path}",
            fix="start it (cursor-byok run), send a message in Cursor's Agent, then run the "
            "doctor again",
        )
    if activity.get("agent_calls", 0) > 0:
        return Check(OK, "Agent calls arrive", f"{_counted(activity)}, {_agent_line(activity)}")
    return _no_agent_calls(activity)


def _counted(activity: dict) -> str:
    """`3 Agent turns (41 calls)`: a turn is one stream; its many uploads are calls."""
    calls = activity.get("agent_calls", 0)
    if "agent_turns" not in activity:  # a proxy before turns were counted
        return f"{calls} Agent calls"
    turns = activity["agent_turns"]
    return f"{turns} Agent turn{'s' if turns != 1 else ''} ({calls} calls)"


def _no_agent_calls(activity: dict, other_calls: int | None = None) -> Check:
    others = activity.get("other_cursor_calls", 0) if other_calls is None else other_calls
    if others > 0:
        return Check(
            FAIL,
            "Cursor talks to the proxy, but no Agent calls arrived",
            f"{others} other Cursor calls seen",
            fix="fully restart Cursor; if Agent calls still bypass the proxy (some Cursor builds "
            "do), use local capture (cursor-byok run --local) or transparent mode",
        )
    return Check(
        FAIL,
        "no Cursor traffic reached the proxy",
        fix='set "http.proxy" and "http.proxySupport" in Cursor, trust the CA, restart Cursor',
    )


def _is_new(activity: dict | None, stamp: float, before: dict | None, started: float) -> bool:
    """An Agent call after `started`: by its time, or (older proxies) by count and file time."""
    if not activity or activity.get("agent_calls", 0) <= 0:
        return False
    if "last_agent_at" in activity:
        return float(activity["last_agent_at"]) > started
    # File times come from a coarse kernel clock: allow a little slack; the count decides.
    counted_before = (before or {}).get("agent_calls", 0)
    return stamp >= started - 1.0 and activity["agent_calls"] != counted_before


def _watch_activity(
    data_dir: Path, watch: float, sleep: Callable[[float], None], clock: Callable[[], float]
) -> Check:
    started = clock()
    before, _ = read_activity(data_dir)
    legacy = before is not None and not isinstance(before.get("pid"), int)  # no pid: wait
    if not legacy and proxy_on(None, data_dir) is None:  # nothing to wait for: say so now
        return Check(
            FAIL,
            "no cursor-byok proxy runs with this data dir",
            f"{data_dir}: "
            + ("no activity record" if before is None else "the proxy that wrote it has exited"),
            fix="start the proxy (cursor-byok run) with this data dir, then run the doctor "
            "with --watch again and send a message in Cursor's Agent while it waits",
        )
    deadline = started + watch
    activity = before
    while True:
        activity, stamp = read_activity(data_dir)
        if _is_new(activity, stamp, before, started):
            assert activity is not None
            waited = max(float(activity.get("last_agent_at", clock())) - started, 0.0)
            return Check(
                OK,
                "a new Agent call arrived",
                f"after {waited:.1f}s, {_agent_line(activity)}",
            )
        if clock() >= deadline:
            break
        sleep(min(WATCH_POLL, max(deadline - clock(), 0.0)))
    title = f"no new Agent call in {watch:g}s"
    if activity is None:
        return Check(
            FAIL,
            title,
            f"no activity record at {data_dir / ACTIVITY_FILE} (is the proxy running, with this "
            "data dir?)",
            fix="start the proxy (cursor-byok run) with this data dir, then send a message in "
            "Cursor's Agent while the doctor waits",
        )
    others = activity.get("other_cursor_calls", 0) - (before or {}).get("other_cursor_calls", 0)
    if others > 0:
        check = _no_agent_calls(activity, others)
        return Check(check.status, title, f"{others} other Cursor calls arrived", check.fix)
    return Check(
        FAIL,
        title,
        "no Cursor call reached the proxy while waiting",
        fix="send a message in Cursor's Agent while the doctor waits; if it still does not "
        'arrive, check "http.proxy" in Cursor and restart Cursor',
    )


def check_census(
    data_dir: Path,
    before: dict | None,
    settle: float = 0.0,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.time,
) -> Check | None:
    """What Cursor sent to the running proxy (since `before`, the census when the doctor
    started watching): every RPC path and what became of it, the transport of every Agent call,
    cases and fields of its messages cursor-byok does not model, ids nothing resolved. With
    `settle`, first wait (up to that long) until the record stops changing: a turn's calls come
    over seconds. A warning when something is not modelled or unresolved: a Cursor update may
    have added it (docs/protocol.md §15)."""
    deadline = clock() + settle
    activity, _ = read_activity(data_dir)
    last, still_since = (activity or {}).get("census"), clock()
    while settle > 0 and clock() < deadline and clock() - still_since < CENSUS_SETTLE:
        sleep(min(WATCH_POLL, max(deadline - clock(), 0.0)))
        activity, _ = read_activity(data_dir)
        now = (activity or {}).get("census")
        if now != last:
            last, still_since = now, clock()
    if not last:
        return None
    seen = since(last, before) if before is not None else last
    lines = census_lines(seen)
    if not lines:
        return Check(OK, "Cursor RPC census", "nothing new since the doctor started")
    new = bool(seen.get("unmodelled") or seen.get("unresolved"))
    sent = leaked(seen)
    fix = (
        "update cursor-byok, or report what is not modelled with `cursor-byok doctor "
        "--watch 60` output attached"
    )
    if sent:
        fix = (
            f'{sent} bytes of BYOK conversations went to Cursor although privacy = "local": '
            'the proxy log names the call ("a call cursor-byok does not answer named BYOK '
            'conversation"); report it with that line'
        )
    return Check(
        WARN if new or sent else OK,
        "Cursor RPC census" + (" since the doctor started" if before is not None else ""),
        "\n    " + "\n    ".join(lines),
        fix=fix,
    )
