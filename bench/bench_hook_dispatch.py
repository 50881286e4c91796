"""CPU per hook event: mitmproxy's `AddonManager.trigger_event` against ours (issue 38 item 1).

    uv run python bench/bench_hook_dispatch.py [--events 3000]

A chain shaped like mitmdump's with the addon loaded: 38 built-in leaf addons (every fifth with
the hook), then the script loader's tree three levels deep holding our 21 addons (every fourth
with the hook) and two small parents. Process CPU time per `HttpRequestHook`, two rounds each;
ours before mitmproxy's `running` (a plan made for every event) and after (one kept plan).
"""

from __future__ import annotations

import argparse
import asyncio
import time
import types
from types import SimpleNamespace

from mitmproxy.addonmanager import AddonManager
from mitmproxy.proxy.layers.http import HttpRequestHook
from mitmproxy.test import tflow

from cursor_byok.proxy import hook_dispatch


class Leaf:
    """An addon without the hook."""


class Hooked:
    def request(self, flow) -> None:
        pass


class Parent:
    def __init__(self, children: list) -> None:
        self.addons = children


def manager() -> AddonManager:
    ours = [Hooked() if i % 4 == 0 else Leaf() for i in range(21)]
    script = types.ModuleType("script")
    script.addons = ours  # type: ignore[attr-defined]
    changed = SimpleNamespace(connect=lambda _handler: None)
    built = AddonManager(SimpleNamespace(options=SimpleNamespace(changed=changed)))
    built.chain = [Leaf() if i % 5 else Hooked() for i in range(38)]
    built.chain += [Parent([Parent([script])]), Parent([]), Parent([Leaf()])]
    return built


async def per_event(trigger, chain: AddonManager, events: int) -> float:
    event = HttpRequestHook(tflow.tflow())
    started = time.process_time()
    for _ in range(events):
        await trigger(chain, event)
    return (time.process_time() - started) / events * 1e6


async def main(events: int) -> None:
    chain = manager()
    for round_ in (1, 2):
        for name, trigger, planned in (
            ("mitmproxy", hook_dispatch.MITMPROXY_TRIGGER_EVENT, False),
            ("cursor-byok, starting", hook_dispatch._trigger_event, False),
            ("cursor-byok", hook_dispatch._trigger_event, True),
        ):
            hook_dispatch._Switch.planning = False  # before `running`: a plan per event
            if planned:
                hook_dispatch.plan_from_now_on(chain)  # running: one plan per hook name
            cost = await per_event(trigger, chain, events)
            print(f"round {round_}: {name:22} {cost:6.1f} µs/event")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=3000)
    asyncio.run(main(parser.parse_args().events))
