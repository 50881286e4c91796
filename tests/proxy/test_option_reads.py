"""option_reads.py: an option read returns what mitmproxy's `_Option.current` returned, a
fresh copy of anything a caller could change, and no deep copy of a value that cannot change
(issue 38: mitmproxy and our hooks read several options a flow)."""

from __future__ import annotations

import copy
from collections.abc import Sequence

from mitmproxy import optmanager

from cursor_byok.proxy import option_reads

MITMPROXY_CURRENT = option_reads.MITMPROXY_CURRENT


def _options() -> optmanager.OptManager:
    options = optmanager.OptManager()
    options.add_option("limit", str | None, None, "")
    options.add_option("count", int, 3, "")
    options.add_option("flag", bool, False, "")
    options.add_option("hosts", Sequence[str], ["cursor.sh", "*.cursor.sh"], "")
    return options


def _reads(options: optmanager.OptManager) -> list:
    return [options.limit, options.count, options.flag, options.hosts]


def test_reads_are_what_mitmproxy_read(monkeypatch) -> None:
    options = _options()
    monkeypatch.setattr(optmanager._Option, "current", MITMPROXY_CURRENT)
    shipped_reads = _reads(options)
    options.update(limit="1m", count=9, hosts=["a.example"])
    shipped_set = _reads(options)
    options.reset()
    monkeypatch.setattr(optmanager._Option, "current", option_reads._current)
    assert _reads(options) == shipped_reads
    options.update(limit="1m", count=9, hosts=["a.example"])
    assert _reads(options) == shipped_set


def test_a_list_is_a_fresh_copy_and_nothing_else_is_copied(monkeypatch) -> None:
    options = _options()
    monkeypatch.setattr(optmanager._Option, "current", option_reads._current)
    copies: list[object] = []
    deepcopy = copy.deepcopy

    def counted(value, *args):
        copies.append(value)
        return deepcopy(value, *args)

    monkeypatch.setattr(option_reads.copy, "deepcopy", counted)
    hosts = options.hosts
    hosts.append("changed.example")
    assert options.hosts == ["cursor.sh", "*.cursor.sh"]  # the caller's change stays its own
    assert len(copies) == 2  # one copy per read of the list, not two (the default's too)
    options.update(limit="2m")  # (mitmproxy copies the options to roll back a bad update)
    copies.clear()
    assert (options.limit, options.count, options.flag) == ("2m", 3, False)
    assert copies == []


def test_installed_once_and_removed(monkeypatch) -> None:
    monkeypatch.setattr(optmanager._Option, "current", MITMPROXY_CURRENT)
    undo = option_reads.read_options_quickly()
    assert undo is not None
    try:
        assert vars(optmanager._Option)["current"] is option_reads._current
        assert option_reads.read_options_quickly() is None
    finally:
        undo()
    assert vars(optmanager._Option)["current"] is MITMPROXY_CURRENT
