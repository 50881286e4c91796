"""The composition root: every cursor-byok addon, wired together.

Every addon gets what it shares with others in its constructor, so none finds another at run
time or depends on the order it is loaded in, and each declares the options it reads
(`options.py`). `script.py` (what mitmproxy loads), the in-process replay and the tests all
build the proxy here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cursor_byok.agent.turn import Agent
from cursor_byok.cursor import actions
from cursor_byok.proxy.activity_record import ActivityRecord
from cursor_byok.proxy.agent_calls import AgentCalls
from cursor_byok.proxy.agent_rpc import AgentRpc
from cursor_byok.proxy.agent_usage import AgentUsage
from cursor_byok.proxy.console import Console
from cursor_byok.proxy.console import OptionCheck
from cursor_byok.proxy.editor_features import EditorFeatures
from cursor_byok.proxy.limits import PortLimits
from cursor_byok.proxy.loopback.addon import Loopback
from cursor_byok.proxy.memory import MemoryGuards
from cursor_byok.proxy.mitmproxy_patches import MitmproxyPatches
from cursor_byok.proxy.model_picker import ModelPicker
from cursor_byok.proxy.passthrough import PassThrough
from cursor_byok.proxy.privacy import Privacy
from cursor_byok.proxy.reachability import Reachability
from cursor_byok.proxy.recording import Recording
from cursor_byok.proxy.routing import Routing
from cursor_byok.proxy.run_registry import RunRegistry
from cursor_byok.proxy.run_settings import RunSettings
from cursor_byok.proxy.server_config import ServerConfig
from cursor_byok.proxy.status import LiveStatus
from cursor_byok.proxy.tab import Tab
from cursor_byok.proxy.turns import Turns
from cursor_byok.store.feature_calls import FeatureCalls


@dataclass(eq=False)
class Composition:
    """The addons of one proxy, and the parts embedders and tests reach for by name."""

    registry: RunRegistry
    turns: Turns
    routing: Routing
    recording: Recording
    loopback: Loopback
    activity: ActivityRecord
    rpc: AgentRpc
    addons: list[Any]

    async def stop(self) -> None:
        """End running turns and close what they used (an embedder's shutdown; mitmdump's is
        the addons' `done` hooks)."""
        await self.loopback.stop()
        self.recording.close()
        self.activity.done()
        await self.turns.providers.aclose()


def compose(agent: Agent | None = None) -> Composition:
    """Every cursor-byok addon, wired; `agent` replaces the configured agent (tests, replay)."""
    recording = Recording()
    turns = Turns(recording, agent)
    registry = RunRegistry(
        turns.run_turn, supersedes=actions.supersedes, live_action=turns.live_action
    )
    recording.attach(registry.observers)  # the frame observer, while recording
    routing = Routing(turns, registry)
    activity = ActivityRecord()
    loopback = Loopback(registry, routing.routes, activity.census)
    registry.on_unresolved = turns.on_unresolved = activity.unresolved
    rpc = AgentRpc(registry, loopback, routing, recording, activity, turns.tool_choices)
    tab = Tab(turns, activity.census, loopback)  # Tab on the user's model, else untouched
    feature_calls = FeatureCalls()  # the editor features' calls, as the live status shows them
    reach = Reachability()  # Cursor's API reachable? fed by the picker's connection hooks
    addons: list[Any] = [
        MitmproxyPatches(),  # first: installed before any addon serves a stream
        rpc,
        RunSettings(registry),
        turns,
        routing,
        loopback,
        recording,
        activity,
        Console(loopback.log_filter),
        MemoryGuards(),
        PortLimits(),
        ModelPicker(reach=reach),
        AgentUsage(),  # an SDK agent's usage, from our usage store
        ServerConfig(),  # never steers a client to HTTP/2 it cannot have here
        AgentCalls(routing, turns, registry, reach, activity.census),
        Privacy(routing, turns, activity.census),
        tab,
        EditorFeatures(loopback, turns, activity.census, feature_calls),  # Cmd-K, commit messages
        LiveStatus(
            registry,
            routing.routes,
            turns,
            activity.census,
            features=feature_calls,
            tab_line=tab.stats.line,
        ),
        PassThrough(),  # last: after every addon that answers a request itself
        OptionCheck(),  # loaded last: every option above is declared (it has no other hook)
    ]
    return Composition(registry, turns, routing, recording, loopback, activity, rpc, addons)
