"""mitmproxy's hook dispatch without its per-addon overhead (issue 38 item 1).

mitmproxy runs every hook event (a flow's `request`, the `update` after it, each TLS step, …)
over every top-level addon: a coroutine (`invoke_addon`), a generator walk of the addon's tree
and a `safecall` context manager each, whether the addon has the hook or not. With its ~40
built-in addons that was ~44 % of the proxy's CPU on RunSSE + BidiAppend under cProfile
(1,621 events, 58,356 `invoke_addon` calls for 20 turns of 200 deltas), on every flow of every
heartbeat and KV acknowledgement. `trigger_event` (and the synchronous `trigger`) below make the
same calls in the same order with the same error handling, inline.

Which addons have a hook is planned once per hook name (a walk of every addon tree, the script
loader's three levels deep), not at every event, once mitmproxy is running (`plan_from_now_on`,
from `MitmproxyPatches.running`: start-up registers and configures addons in ways no wrapper
sees). A plan is dropped when the chain changes, when an addon is registered or removed
(mitmproxy's way to add or drop child addons: the script loader and a script reload go through
it) and after every `configure` event (the script loader reorders scripts there). An event then
costs one `getattr` per addon that has the hook. The hook itself is read at each event, so an
addon that replaces its hook is called anew; one that grows a hook it did not have when the plan
was made, without a register, is not seen; and an addon registered while an event is dispatched
gets that event from the next one on (mitmproxy's lazy walk could reach it in the same event).

One more event with no hook behind it: every log record mitmproxy's root handler sees is
formatted and sent to the event loop as a deprecated `add_log` event (`LegacyLogEvents`), a
loop wake-up and a walk of every addon per record (5 a turn: 4.5 % of the main thread's
time on RunSSE + BidiAppend). While the plan says no addon has `add_log`, the record is not
turned into one.

Every event's arguments come from `Hook.args`, which asked `dataclasses.fields` for the hook's
fields at each event (~2 % of the proxy on RunPoll, three times a hook); `_hook_args` names them
once per hook class.

Installed and removed by `mitmproxy_patches.MitmproxyPatches` like the other patches.
"""

from __future__ import annotations

import inspect
import logging
import types
from dataclasses import fields
from typing import Any

from mitmproxy import exceptions
from mitmproxy import hooks
from mitmproxy.addonmanager import AddonManager
from mitmproxy.addonmanager import cut_traceback
from mitmproxy.addonmanager import traverse
from mitmproxy.log import LegacyLogEvents

from cursor_byok.proxy.mitmproxy_compat import Undo
from cursor_byok.proxy.mitmproxy_compat import _replace
from cursor_byok.proxy.mitmproxy_compat import _undo_all

_MARK = "_cursor_byok_direct_hooks"
_PLANS = "_cursor_byok_hook_plans"  # on the AddonManager: its `_Plans`
# as mitmproxy ships them (this module patches them)
MITMPROXY_TRIGGER_EVENT = AddonManager.trigger_event
MITMPROXY_TRIGGER = AddonManager.trigger
MITMPROXY_REGISTER = AddonManager.register
MITMPROXY_REMOVE = AddonManager.remove
MITMPROXY_LOG_EMIT = LegacyLogEvents.emit
MITMPROXY_HOOK_ARGS = hooks.Hook.args
_ARG_NAMES: dict[type, tuple[str, ...]] = {}  # hook class → its fields' names, in order
_mitm_log = logging.getLogger("mitmproxy.addonmanager")  # where `safecall` logs addon errors

Plan = list[tuple[Any, ...]]  # per top-level addon: the addons of its tree that have the hook


class _Plans:
    """The plans of one chain as it was: valid while it is the same list of the same length."""

    def __init__(self, chain: list) -> None:
        self.chain = chain
        self.length = len(chain)
        self.by_name: dict[str, Plan] = {}

    def valid_for(self, chain: list) -> bool:
        return self.chain is chain and self.length == len(chain)


class _Switch:
    planning = False  # plans are kept (from `plan_from_now_on` until the patch is removed)


def _make_plan(chain: list, name: str) -> Plan:
    """Per top-level addon, in mitmproxy's order (parents before children), the addons whose
    attribute `name` is set (a module or a non-callable one too: the dispatch treats those as
    mitmproxy does)."""
    plan: Plan = []
    for top in chain:
        tree = traverse([top]) if hasattr(top, "addons") else (top,)
        having = tuple(addon for addon in tree if getattr(addon, name, None))
        if having:
            plan.append(having)
    return plan


def _plan(manager: AddonManager, name: str) -> Plan:
    chain = manager.chain
    if not _Switch.planning:
        return _make_plan(chain, name)
    plans = manager.__dict__.get(_PLANS)
    if plans is None or not plans.valid_for(chain):
        plans = manager.__dict__[_PLANS] = _Plans(chain)
    plan = plans.by_name.get(name)
    if plan is None:
        plan = plans.by_name[name] = _make_plan(chain, name)
    return plan


def forget_plans(manager: AddonManager) -> None:
    """The addon trees changed (an addon registered or removed): plan again at the next event."""
    manager.__dict__.pop(_PLANS, None)


def plan_from_now_on(manager: AddonManager) -> None:
    """Keep plans from now on (mitmproxy is running: the addons are loaded and configured)."""
    forget_plans(manager)
    _Switch.planning = True


def _hooks(addons: tuple[Any, ...], name: str):
    """The callable hooks of `addons`, as mitmproxy's `_iter_hooks` yields them."""
    for addon in addons:
        func = getattr(addon, name, None)
        if not func or isinstance(func, types.ModuleType):
            continue  # gone, or a module of the hook's name: mitmproxy skips it too
        if not callable(func):
            raise exceptions.AddonManagerError(f"Addon handler {name} ({addon}) not callable")
        yield addon, func


def _log_addon_error(exc: Exception, frame: str) -> None:
    tb = cut_traceback(exc.__traceback__, frame)
    _mitm_log.error(f"Addon error: {exc}", exc_info=(type(exc), exc, tb))


async def _trigger_event(self: AddonManager, event: hooks.Hook) -> None:
    """`AddonManager.trigger_event` (mitmproxy 12): each top-level addon's hooks, children
    after their parent, an addon's error logged and the next top-level addon called,
    `AddonHalt` ending the event, `OptionsError` raised. Only the addons the plan names are
    looked at, and the hook's arguments are read off the event once (mitmproxy reads its
    dataclass fields again for every call; no hook sees the event itself, so they cannot
    change in between)."""
    name = event.name
    args: list | None = None
    try:
        for addons in _plan(self, name):
            try:
                for addon in addons:  # `_hooks`, inline: this is the path of every flow event
                    func = getattr(addon, name, None)
                    if not func or isinstance(func, types.ModuleType):
                        continue
                    if not callable(func):
                        raise exceptions.AddonManagerError(
                            f"Addon handler {name} ({addon}) not callable"
                        )
                    if args is None:
                        args = event.args()
                    result = func(*args)
                    if result is not None and inspect.isawaitable(result):
                        await result
            except exceptions.AddonHalt:
                return
            except exceptions.OptionsError:
                raise
            except Exception as exc:
                _log_addon_error(exc, "_trigger_event")
    finally:
        if name == "configure":
            forget_plans(self)


def _trigger(self: AddonManager, event: hooks.Hook) -> None:
    """`AddonManager.trigger`, the synchronous one (options changes, log records), as
    `_trigger_event` does it; an async hook is an addon error, as in `invoke_addon_sync`."""
    name = event.name
    args: list | None = None
    try:
        for addons in _plan(self, name):
            try:
                for addon, func in _hooks(addons, name):
                    if inspect.iscoroutinefunction(func):
                        raise exceptions.AddonManagerError(
                            f"Async handler {name} ({addon}) cannot be called from sync context"
                        )
                    if args is None:
                        args = event.args()
                    func(*args)
            except exceptions.AddonHalt:
                return
            except exceptions.OptionsError:
                raise
            except Exception as exc:
                _log_addon_error(exc, "_trigger")
    finally:
        if name == "configure":
            forget_plans(self)


def _forgetting(method: Any) -> Any:
    """`AddonManager.register` / `remove` that drop the plans once the change is made."""

    def changed(self: AddonManager, addon: Any) -> Any:
        forget_plans(self)
        try:
            return method(self, addon)
        finally:
            forget_plans(self)

    changed.__name__ = method.__name__
    changed.__doc__ = method.__doc__
    return changed


def _no_one_listens(manager: AddonManager, name: str) -> bool:
    """Whether the kept plan says no addon has hook `name` (False when there is none)."""
    plans = manager.__dict__.get(_PLANS)
    return plans is not None and plans.valid_for(manager.chain) and plans.by_name.get(name) == []


def _log_events_if_heard(emit: Any) -> Any:
    """`LegacyLogEvents.emit` that makes no `add_log` event while no addon has the hook."""

    def heard(self: LegacyLogEvents, record: logging.LogRecord) -> None:
        if _no_one_listens(self.master.addons, "add_log"):
            return
        emit(self, record)

    heard.__name__ = emit.__name__
    heard.__doc__ = emit.__doc__
    return heard


def _hook_args(self: hooks.Hook) -> list[Any]:
    """`Hook.args`: the values of the hook's fields, in order (their names found once)."""
    names = _ARG_NAMES.get(type(self))
    if names is None:
        names = _ARG_NAMES[type(self)] = tuple(f.name for f in fields(self))  # type: ignore[arg-type]
    return [getattr(self, name) for name in names]


def dispatch_hooks_directly() -> Undo | None:
    """Install `_trigger_event` / `_trigger` as `AddonManager.trigger_event` / `trigger`,
    plan-dropping `register` and `remove`, a `LegacyLogEvents.emit` that makes no event no
    one hears, and `_hook_args` as `Hook.args` (None: installed already)."""
    if getattr(AddonManager.trigger_event, _MARK, False):
        return None
    setattr(_trigger_event, _MARK, True)
    undos = [
        _replace(AddonManager, "register", _forgetting(AddonManager.register)),
        _replace(AddonManager, "remove", _forgetting(AddonManager.remove)),
        _replace(AddonManager, "trigger", _trigger),
        _replace(AddonManager, "trigger_event", _trigger_event),
        _replace(LegacyLogEvents, "emit", _log_events_if_heard(LegacyLogEvents.emit)),
        _replace(hooks.Hook, "args", _hook_args),
    ]

    return _undo_all(undos, then=_stop_planning)


def _stop_planning() -> None:
    _Switch.planning = False
