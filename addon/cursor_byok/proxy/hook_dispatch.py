"""mitmproxy's hook dispatch without its per-addon overhead (issue 38 item 1).

mitmproxy runs every hook event (a flow's `request`, the `update` after it, each TLS step, …)
over every top-level addon: a coroutine (`invoke_addon`), a generator walk of the addon's tree
and a `safecall` context manager each, whether the addon has the hook or not. With its ~40
built-in addons that was ~44 % of the proxy's CPU on RunSSE + BidiAppend under cProfile
(1,621 events, 58,356 `invoke_addon` calls for 20 turns of 200 deltas), on every flow of every
heartbeat and KV acknowledgement. `trigger_event` below does the same calls in the same order
with the same error handling, inline: an addon without the hook costs one `getattr`.

Installed and removed by `mitmproxy_patches.MitmproxyPatches` like the other patches.
"""

from __future__ import annotations

import inspect
import logging
import types

from mitmproxy import exceptions
from mitmproxy import hooks
from mitmproxy.addonmanager import AddonManager
from mitmproxy.addonmanager import cut_traceback

from cursor_byok.proxy.mitmproxy_compat import Undo
from cursor_byok.proxy.mitmproxy_compat import _replace

_MARK = "_cursor_byok_direct_hooks"
MITMPROXY_TRIGGER_EVENT = AddonManager.trigger_event  # as it ships (this module patches it)
_mitm_log = logging.getLogger("mitmproxy.addonmanager")  # where `safecall` logs addon errors


async def _trigger_event(self: AddonManager, event: hooks.Hook) -> None:
    """`AddonManager.trigger_event` (mitmproxy 12): each top-level addon's hooks, children
    after their parent, an addon's error logged and the next addon called, `AddonHalt` ending
    the event, `OptionsError` raised. A leaf addon is looked at directly, without a walk, and
    the hook's arguments are read off the event once (mitmproxy reads its dataclass fields again
    for every call; no hook sees the event itself, so they cannot change in between)."""
    name = event.name
    args: list | None = None
    for top in self.chain:
        try:
            if hasattr(top, "addons"):
                for _addon, func in self._iter_hooks(top, event):
                    if args is None:
                        args = event.args()
                    result = func(*args)
                    if result is not None and inspect.isawaitable(result):
                        await result
                continue
            func = getattr(top, name, None)
            if not func or isinstance(func, types.ModuleType):
                continue  # no hook (or a module of the hook's name: mitmproxy skips it too)
            if not callable(func):
                raise exceptions.AddonManagerError(f"Addon handler {name} ({top}) not callable")
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


def dispatch_hooks_directly() -> Undo | None:
    """Install `_trigger_event` as `AddonManager.trigger_event` (None: installed already)."""
    if getattr(AddonManager.trigger_event, _MARK, False):
        return None
    setattr(_trigger_event, _MARK, True)
    return _replace(AddonManager, "trigger_event", _trigger_event)
