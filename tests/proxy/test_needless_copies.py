"""needless_copies.py (issue 38): an option read returns what mitmproxy's `_Option.current`
returned, a fresh copy of anything a caller could change, and no deep copy of a value that
cannot change; a context fork is mitmproxy's, without the server it made and threw away."""

from __future__ import annotations

import copy
from collections.abc import Sequence

import pytest
from mitmproxy import connection
from mitmproxy import optmanager
from mitmproxy.proxy import context
from mitmproxy.test import tflow

from cursor_byok.proxy import needless_copies

MITMPROXY_CURRENT = needless_copies.MITMPROXY_CURRENT


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
    monkeypatch.setattr(optmanager._Option, "current", needless_copies._current)
    assert _reads(options) == shipped_reads
    options.update(limit="1m", count=9, hosts=["a.example"])
    assert _reads(options) == shipped_set


def test_a_list_is_a_fresh_copy_and_nothing_else_is_copied(monkeypatch) -> None:
    options = _options()
    monkeypatch.setattr(optmanager._Option, "current", needless_copies._current)
    copies: list[object] = []
    deepcopy = copy.deepcopy

    def counted(value, *args):
        copies.append(value)
        return deepcopy(value, *args)

    monkeypatch.setattr(needless_copies.copy, "deepcopy", counted)
    hosts = options.hosts
    hosts.append("changed.example")
    assert options.hosts == ["cursor.sh", "*.cursor.sh"]  # the caller's change stays its own
    assert len(copies) == 2  # one copy per read of the list, not two (the default's too)
    options.update(limit="2m")  # (mitmproxy copies the options to roll back a bad update)
    copies.clear()
    assert (options.limit, options.count, options.flag) == ("2m", 3, False)
    assert copies == []


def test_a_fork_is_mitmproxys_without_the_server_it_threw_away(monkeypatch) -> None:
    parent = context.Context(tflow.tclient_conn(), optmanager.OptManager())
    parent.server = tflow.tserver_conn()
    parent.layers = ["a", "b"]  # type: ignore[list-item]
    shipped = needless_copies.MITMPROXY_FORK(parent)
    made = []
    real_init = connection.Server.__init__

    def counted(self, *args, **kwargs):
        made.append(self)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(connection.Server, "__init__", counted)
    quick = needless_copies._fork(parent)
    assert made == []
    for fork in (shipped, quick):
        assert type(fork) is context.Context
        assert fork.client is parent.client and fork.options is parent.options
        assert fork.server is parent.server
        assert fork.layers == parent.layers and fork.layers is not parent.layers
    assert vars(quick).keys() == vars(shipped).keys()


@pytest.mark.parametrize(
    ("owner", "name", "shipped", "ours", "install"),
    [
        (
            optmanager._Option,
            "current",
            needless_copies.MITMPROXY_CURRENT,
            needless_copies._current,
            needless_copies.read_options_quickly,
        ),
        (
            context.Context,
            "fork",
            needless_copies.MITMPROXY_FORK,
            needless_copies._fork,
            needless_copies.fork_contexts_quickly,
        ),
    ],
)
def test_installed_once_and_removed(monkeypatch, owner, name, shipped, ours, install) -> None:
    monkeypatch.setattr(owner, name, shipped)
    undo = install()
    assert undo is not None
    try:
        assert vars(owner)[name] is ours
        assert install() is None  # a second proxy: installed already
    finally:
        undo()
    assert vars(owner)[name] is shipped
