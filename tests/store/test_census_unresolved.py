"""Issue 33 item 12: the census's unresolved line names the ids, not only how many."""

from __future__ import annotations

from cursor_byok.store.census import Census
from cursor_byok.store.census import census_lines
from cursor_byok.store.census import since


def test_the_unresolved_line_names_the_latest_ids() -> None:
    census = Census()
    blob = "ab" * 32
    for n in range(5):
        census.unresolved("request id", f"req-{n}")
    census.unresolved("blob id", blob)
    census.unresolved("blob id", blob)  # the same id twice: named once
    line = next(line for line in census_lines(census.snapshot()) if line.startswith("Unresolved"))
    assert line == (
        "Unresolved: 2 blob id(s) (abababababab…), 5 request id(s) (req-2, req-3, req-4)"
    )
    before = census.snapshot()
    census.unresolved("request id", "req-9")
    delta = since(census.snapshot(), before)
    line = next(line for line in census_lines(delta) if line.startswith("Unresolved"))
    assert line == "Unresolved: 1 request id(s) (req-9)"
