"""mitmproxy's hook dispatch without its per-addon overhead (issue 38 item 1).

mitmproxy runs every hook event (a flow's `request`, the `update` after it, each TLS step, …)
over every top-level addon: a coroutine (`invoke_addon`), a generator walk of the addon's tree
and a `safecall` context manager each, whether the addon has the hook or not. With its ~40
built-in addons that was ~44 % of the proxy's CPU on RunSSE + BidiAppend under cProfile
(1,621 events, 58,356 `invoke_addon` calls for 20 turns of 200 deltas), on every flow of every
heartbeat and KV acknowledgement. `trigger_event` below does the same calls in the same order
with the same error handling, inline.

Which addons have a hook is found once per hook name (a walk of every addon tree, the script
loader's three levels deep), not at every event: the plan is kept until the chain changes or an
addon is registered or removed (mitmproxy's way to add or drop child addons: the script loader
and a script reload go through it), so an event costs one `getattr` per addon that has the hook.
The hook itself is still read at each event, so an addon that replaces its hook is called anew;
one that grows a hook it did not have when the plan was made, without a register, is not seen.

Installed and removed by `mitmproxy_patches.MitmproxyPatches` like the other patches.
"""

from __future__ import annotations

import inspect
import logging
import types
from typing import Any

from mitmproxy import exceptions
from mitmproxy import hooks
from mitmproxy.addonmanager import AddonManager
from mitmproxy.addonmanager import cut_traceback
from mitmproxy.addonmanager import traverse

from cursor_byok.proxy.mitmproxy_compat import Undo
from cursor_byok.proxy.mitmproxy_compat import _replace

_MARK = "_cursor_byok_direct_hooks"
_PLANS = "_cursor_byok_hook_plans"  # on the AddonManager: its `_Plans`
MITMPROXY_TRIGGER_EVENT = AddonManager.trigger_event  # as it ships (this module patches it)
_mitm_log = logging.getLogger("mitmproxy.addonmanager")  # where `safecall` logs addon errors

Plan = list[tuple[Any, ...]]  # per top-level addon: the addons of its tree that have the hook


class _Plans:
    """The plans of one chain as it was: valid while it is the same list of the same length."""

    def __init__(self, chain: list) -> None:
        self.chain = chain
        self.length = len(chain)
        self.by_name: dict[str, Plan] = {}


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
    plans = manager.__dict__.get(_PLANS)
    chain = manager.chain
    if plans is None or plans.chain is not chain or plans.length != len(chain):
        plans = manager.__dict__[_PLANS] = _Plans(chain)
    plan = plans.by_name.get(name)
    if plan is None:
        plan = plans.by_name[name] = _make_plan(chain, name)
    return plan


def forget_plans(manager: AddonManager) -> None:
    """The addon trees changed (an addon registered or removed): plan again at the next event."""
    manager.__dict__.pop(_PLANS, None)


async def _trigger_event(self: AddonManager, event: hooks.Hook) -> None:
    """`AddonManager.trigger_event` (mitmproxy 12): each top-level addon's hooks, children
    after their parent, an addon's error logged and the next top-level addon called,
    `AddonHalt` ending the event, `OptionsError` raised. Only the addons the plan names are
    looked at, and the hook's arguments are read off the event once (mitmproxy reads its
    dataclass fields again for every call; no hook sees the event itself, so they cannot
    change in between)."""
    name = event.name
    args: list | None = None
    for addons in _plan(self, name):
        try:
            for addon in addons:
                func = getattr(addon, name, None)
                if not func or isinstance(func, types.ModuleType):
                    continue  # gone, or a module of the hook's name: mitmproxy skips it too
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
            tb = cut_traceback(exc.__traceback__, "_trigger_event")
            _mitm_log.error(f"Addon error: {exc}", exc_info=(type(exc), exc, tb))


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


def dispatch_hooks_directly() -> Undo | None:
    """Install `_trigger_event` as `AddonManager.trigger_event`, and plan-dropping `register`
    and `remove` (None: installed already)."""
    if getattr(AddonManager.trigger_event, _MARK, False):
        return None
    setattr(_trigger_event, _MARK, True)
    undos = [
        _replace(AddonManager, "register", _forgetting(AddonManager.register)),
        _replace(AddonManager, "remove", _forgetting(AddonManager.remove)),
        _replace(AddonManager, "trigger_event", _trigger_event),
    ]

    def undo() -> None:
        while undos:
            undos.pop()()

    return undo
