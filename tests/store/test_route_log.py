"""Issue 33 item 8: conversation routes kept across restarts, bounded (store/routes.py)."""

from __future__ import annotations

from collections import OrderedDict

from cursor_byok.store.routes import RouteLog


def test_routes_come_back_after_a_restart_and_the_last_decision_wins(tmp_path) -> None:
    log = RouteLog(tmp_path)
    routes: OrderedDict[str, str] = OrderedDict()
    for conversation, route in (("a", "local"), ("b", "cursor"), ("a", "cursor"), ("c", "local")):
        routes[conversation] = route
        log.append(conversation, route, routes)
    with (tmp_path / "routes.log").open("a") as file:
        file.write("loc")  # a torn last write
    assert RouteLog(tmp_path).load() == OrderedDict(
        [("b", "cursor"), ("a", "cursor"), ("c", "local")]
    )
    assert (tmp_path / "routes.log").stat().st_mode & 0o777 == 0o600


def test_the_file_stays_bounded(tmp_path) -> None:
    log = RouteLog(tmp_path, max_entries=10)
    routes: OrderedDict[str, str] = OrderedDict()
    for n in range(1000):
        routes[f"c{n}"] = "local"
        while len(routes) > 10:
            routes.popitem(last=False)
        log.append(f"c{n}", "local", routes)
    lines = (tmp_path / "routes.log").read_text().splitlines()
    assert len(lines) <= 21
    assert list(RouteLog(tmp_path, max_entries=10).load()) == [f"c{n}" for n in range(990, 1000)]


def test_ids_that_would_break_a_line_are_not_kept(tmp_path) -> None:
    log = RouteLog(tmp_path)
    log.append("a b", "local", OrderedDict())
    log.append("x\ny", "local", OrderedDict())
    log.append("", "local", OrderedDict())
    log.append("ok", "elsewhere", OrderedDict())
    assert RouteLog(tmp_path).load() == OrderedDict()
