"""The direct hook dispatch calls exactly what mitmproxy's `trigger_event` calls, in its order,
with its error handling (issue 38 item 1: the per-addon coroutine and context manager gone)."""

from __future__ import annotations

import logging
import re
import types
from dataclasses import fields
from types import SimpleNamespace

import pytest
from mitmproxy import exceptions
from mitmproxy import hooks
from mitmproxy.addonmanager import AddonManager
from mitmproxy.hooks import ConfigureHook
from mitmproxy.log import LegacyLogEvents
from mitmproxy.proxy.layers.http import HttpRequestHook
from mitmproxy.test import tflow

from cursor_byok.proxy import hook_dispatch


@pytest.fixture(autouse=True)
def unpatched(monkeypatch) -> None:
    """mitmproxy's dispatch for the test, even when an earlier test in this process loaded the
    addons and left the patches installed."""
    monkeypatch.setattr(AddonManager, "trigger_event", hook_dispatch.MITMPROXY_TRIGGER_EVENT)
    monkeypatch.setattr(AddonManager, "trigger", hook_dispatch.MITMPROXY_TRIGGER)
    monkeypatch.setattr(AddonManager, "register", hook_dispatch.MITMPROXY_REGISTER)
    monkeypatch.setattr(AddonManager, "remove", hook_dispatch.MITMPROXY_REMOVE)
    monkeypatch.setattr(LegacyLogEvents, "emit", hook_dispatch.MITMPROXY_LOG_EMIT)
    monkeypatch.setattr(hooks.Hook, "args", hook_dispatch.MITMPROXY_HOOK_ARGS)
    monkeypatch.setattr(hook_dispatch._Switch, "planning", False)


class Addon:
    def __init__(self, name: str, calls: list[str], **behaviour) -> None:
        self.name = name
        self.calls = calls
        self.behaviour = behaviour
        if "children" in behaviour:
            self.addons = behaviour["children"]

    def request(self, flow) -> None:
        self.calls.append(self.name)
        what = self.behaviour.get("does")
        if what == "fail":
            raise ValueError(f"{self.name} failed")
        if what == "halt":
            raise exceptions.AddonHalt()
        if what == "options":
            raise exceptions.OptionsError("bad option")


class AsyncAddon(Addon):
    async def request(self, flow) -> None:  # type: ignore[override]
        self.calls.append(f"{self.name} (async)")


class Bare:
    """No hook at all; one attribute named like a hook that is a module, one not callable."""

    response = types  # a module: skipped, as mitmproxy does


def _manager(chain: list) -> AddonManager:
    master = SimpleNamespace(
        options=SimpleNamespace(changed=SimpleNamespace(connect=lambda _handler: None))
    )
    manager = AddonManager(master)
    manager.chain = chain
    return manager


def _chain(calls: list[str], does: str | None) -> list:
    grandchild = AsyncAddon("grandchild", calls)
    child = Addon("child", calls, does=does, children=[grandchild])
    return [
        Bare(),
        Addon("first", calls),
        Addon("parent", calls, children=[child, Bare(), Addon("sibling", calls)]),
        AsyncAddon("async", calls),
        Addon("last", calls),
    ]


async def _calls(trigger, does: str | None, caplog) -> tuple[list[str], object, list[str]]:
    calls: list[str] = []
    manager = _manager(_chain(calls, does))
    caplog.clear()
    outcome: object = None
    try:
        await trigger(manager, HttpRequestHook(tflow.tflow()))
    except Exception as exc:
        outcome = type(exc)
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    return calls, outcome, errors


@pytest.mark.parametrize("does", [None, "fail", "halt", "options"])
async def test_same_calls_as_mitmproxy(does: str | None, caplog) -> None:
    original = AddonManager.trigger_event
    assert not getattr(original, "_cursor_byok_direct_hooks", False)
    mitmproxy_way = await _calls(original, does, caplog)
    ours = await _calls(hook_dispatch._trigger_event, does, caplog)
    assert ours == mitmproxy_way
    if does is None:
        order = ["first", "parent", "child", "grandchild (async)", "sibling", "async (async)"]
        assert ours[0] == [*order, "last"]
    if does == "halt":  # the event ends at once
        assert ours[0] == ["first", "parent", "child"] and ours[1] is None
    if does == "options":
        assert ours[1] is exceptions.OptionsError
    if does == "fail":  # logged, and the next top-level addon still called
        assert ours[2] == ["Addon error: child failed"] and "last" in ours[0]


async def test_a_hook_that_is_not_callable_is_an_addon_error(caplog) -> None:
    class Broken:
        request = 3

    calls: list[str] = []
    for trigger in (AddonManager.trigger_event, hook_dispatch._trigger_event):
        manager = _manager([Broken(), Addon("after", calls)])
        caplog.clear()
        await trigger(manager, HttpRequestHook(tflow.tflow()))
        assert any("not callable" in r.getMessage() for r in caplog.records)
    assert calls == ["after", "after"]


def test_installed_once_and_removed() -> None:
    original = AddonManager.trigger_event
    undo = hook_dispatch.dispatch_hooks_directly()
    assert undo is not None
    try:
        assert AddonManager.trigger_event is hook_dispatch._trigger_event
        assert hook_dispatch.dispatch_hooks_directly() is None  # a second proxy: already in
        assert vars(hooks.Hook)["args"] is hook_dispatch._hook_args
    finally:
        undo()
    assert AddonManager.trigger_event is original
    assert vars(hooks.Hook)["args"] is hook_dispatch.MITMPROXY_HOOK_ARGS


def test_a_hooks_arguments_are_mitmproxys_with_its_fields_named_once(monkeypatch) -> None:
    """Every hook mitmproxy defines gives the same arguments in the same order, and
    `dataclasses.fields` is asked once per hook class, not at every event."""
    flow = tflow.tflow(resp=True)
    made = []
    for name, cls in hooks.all_hooks.items():
        values = {f.name: (flow if "flow" in f.name else f"{name}.{f.name}") for f in fields(cls)}
        made.append(cls(**values))
    asked = []
    real_fields = hook_dispatch.fields

    def counted(hook):
        asked.append(type(hook))
        return real_fields(hook)

    monkeypatch.setattr(hook_dispatch, "fields", counted)
    monkeypatch.setattr(hook_dispatch, "_ARG_NAMES", {})
    for _ in range(3):
        for hook in made:
            assert hook_dispatch._hook_args(hook) == hook_dispatch.MITMPROXY_HOOK_ARGS(hook)
    assert sorted(map(str, asked)) == sorted(str(type(h)) for h in made)


def _registering_manager() -> AddonManager:
    """A manager whose `register` / `remove` run as in mitmdump (load hook, command collection)."""
    master = SimpleNamespace(
        options=SimpleNamespace(
            changed=SimpleNamespace(connect=lambda _handler: None), process_deferred=lambda: None
        ),
        commands=SimpleNamespace(collect_commands=lambda _addon: None),
    )
    return AddonManager(master)


async def test_the_plan_follows_registered_and_removed_addons() -> None:
    """Which addons have a hook is found once per hook name; a child registered or removed the
    way the script loader does it (register, then into its parent's `addons`; remove, then out)
    is seen by the next event, and so is a top-level addon added to the chain."""
    calls: list[str] = []
    undo = hook_dispatch.dispatch_hooks_directly()
    assert undo is not None
    try:
        manager = _registering_manager()
        parent = Addon("parent", calls, children=[])
        manager.add(Addon("first", calls), parent)
        hook_dispatch.plan_from_now_on(manager)
        event = HttpRequestHook(tflow.tflow())
        await manager.trigger_event(event)
        parent.addons.append(Addon("unregistered", calls))  # not seen: the plan is kept
        await manager.trigger_event(event)
        parent.addons.pop()
        child = Addon("child", calls)
        manager.register(child)
        parent.addons.append(child)
        await manager.trigger_event(event)
        manager.remove(child)
        parent.addons.remove(child)
        await manager.trigger_event(event)
        manager.add(Addon("last", calls))
        await manager.trigger_event(event)
    finally:
        undo()
    assert calls == [
        *("first", "parent"),
        *("first", "parent"),
        *("first", "parent", "child"),
        *("first", "parent"),
        *("first", "parent", "last"),
    ]


async def test_a_replaced_hook_is_the_one_called() -> None:
    """The plan names addons, not their hooks: an addon that swaps its hook (a test's
    monkeypatch, an addon rebinding one) is called through the new one."""
    calls: list[str] = []
    addon = Addon("addon", calls)
    manager = _manager([addon])
    event = HttpRequestHook(tflow.tflow())
    await hook_dispatch._trigger_event(manager, event)
    addon.request = lambda flow: calls.append("replaced")  # type: ignore[method-assign]
    await hook_dispatch._trigger_event(manager, event)
    del addon.request
    await hook_dispatch._trigger_event(manager, event)
    assert calls == ["addon", "replaced", "addon"]


async def test_a_configure_event_drops_the_plans() -> None:
    """The script loader reorders scripts in `configure` without registering anything: the
    plans made before it are not used after it."""
    calls: list[str] = []
    first, second = Addon("first", calls), Addon("second", calls)
    loader = SimpleNamespace(addons=[first, second])
    manager = _manager([loader])
    hook_dispatch.plan_from_now_on(manager)
    event = HttpRequestHook(tflow.tflow())
    await hook_dispatch._trigger_event(manager, event)
    loader.addons = [second, first]
    hook_dispatch._trigger(manager, ConfigureHook(set()))
    await hook_dispatch._trigger_event(manager, event)
    assert calls == ["first", "second", "second", "first"]


class SyncAddon(Addon):
    def configure(self, updated) -> None:
        self.request(None)


class AsyncConfigure:
    async def configure(self, updated) -> None:
        pass


@pytest.mark.parametrize("does", [None, "fail", "halt", "options"])
def test_sync_trigger_same_calls_as_mitmproxy(does: str | None, caplog) -> None:
    def run(trigger) -> tuple[list[str], object, list[str]]:
        calls: list[str] = []
        child = SyncAddon("child", calls, does=does)
        chain = [
            SyncAddon("first", calls),
            Addon("parent", calls, children=[child, AsyncConfigure(), SyncAddon("sib", calls)]),
            SyncAddon("last", calls),
        ]
        caplog.clear()
        outcome: object = None
        try:
            trigger(_manager(chain), ConfigureHook({"x"}))
        except Exception as exc:
            outcome = type(exc)
        errors = [
            re.sub(r" at 0x[0-9a-f]+", "", r.getMessage())
            for r in caplog.records
            if r.levelno >= logging.ERROR
        ]
        return calls, outcome, errors

    mitmproxy_way = run(hook_dispatch.MITMPROXY_TRIGGER)
    ours = run(hook_dispatch._trigger)
    assert ours == mitmproxy_way
    if does is None:  # the async hook is an addon error: its parent's later children skipped
        assert ours[0] == ["first", "child", "last"]
        assert any("cannot be called from sync context" in e for e in ours[2])


def test_no_log_event_while_no_addon_has_add_log() -> None:
    """A log record becomes an `add_log` event (a loop wake-up, a walk of every addon) only
    while some addon has the hook, or while no plan says none has."""

    class Hears:
        def add_log(self, entry) -> None:
            pass

    scheduled: list[object] = []
    undo = hook_dispatch.dispatch_hooks_directly()
    assert undo is not None
    try:
        manager = _registering_manager()
        manager.add(Addon("addon", []))
        loop = SimpleNamespace(call_soon_threadsafe=lambda *args: scheduled.append(args))
        handler = LegacyLogEvents(SimpleNamespace(addons=manager, event_loop=loop))
        record = logging.LogRecord("x", logging.INFO, __file__, 1, "a line", None, None)
        handler.emit(record)  # no plan yet: as mitmproxy does
        hook_dispatch.plan_from_now_on(manager)
        manager.trigger(scheduled[-1][1])  # the event, dispatched: plans "no one has add_log"
        handler.emit(record)
        assert len(scheduled) == 1
        manager.add(Hears())
        handler.emit(record)
        assert len(scheduled) == 2
    finally:
        undo()
