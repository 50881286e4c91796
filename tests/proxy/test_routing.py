"""The routing decision (which way a run goes) and the table that remembers it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cursor_byok.config import ConfigError
from cursor_byok.config import parse_config
from cursor_byok.config.catalog import model_id
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.proxy.routing import CURSOR
from cursor_byok.proxy.routing import LOCAL
from cursor_byok.proxy.routing import Routes
from cursor_byok.proxy.routing import decide


def config(**top):
    raw = {
        "providers": {"p": {"kind": "openai-chat", "base_url": "http://127.0.0.1:1/v1"}},
        "models": [{"name": "Mine", "provider": "p", "model": "up-1"}],
        **top,
    }
    return parse_config(raw, Path("c.toml"))


def run(model: str = "", details: str = "", subagent: str = "") -> pb.AgentRunRequest:
    request = pb.AgentRunRequest(conversation_id="c", subagent_type_name=subagent)
    request.requested_model.model_id = model
    request.model_details.model_id = details
    return request


def test_our_models_are_served_here_by_name_upstream_id_or_picker_id() -> None:
    c = config()
    for name in ("Mine", "up-1", model_id(c.models[0]), model_id(c.models[0]) + ":high"):
        assert decide(c, run(name)) == LOCAL, name
    assert decide(c, run("", details="Mine")) == LOCAL  # model_details when requested is empty
    assert decide(c, run()) == LOCAL  # no model named: the default model


def test_other_models_go_to_cursor_by_default() -> None:
    c = config()
    assert c.route_other_models == "cursor"
    assert decide(c, run("composer-1")) == CURSOR
    assert decide(c, run("claude-4.5-sonnet", details="Mine")) == CURSOR  # requested wins


def test_error_route_keeps_them_local_for_the_clear_error() -> None:
    assert decide(config(route_other_models="error"), run("composer-1")) == LOCAL


def test_no_config_means_local() -> None:
    assert decide(None, run("composer-1")) == LOCAL


def test_subagent_runs_with_a_subagent_model_are_local() -> None:
    c = config(subagent_model="Mine")
    assert decide(c, run("composer-1", subagent="explore")) == LOCAL
    assert decide(config(), run("composer-1", subagent="explore")) == CURSOR


def test_bad_route_option_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="route_other_models"):
        config(route_other_models="drop")


def test_first_decision_wins_and_expires() -> None:
    now = [0.0]
    routes = Routes(ttl=10, clock=lambda: now[0])
    assert routes.decide("r", CURSOR) == CURSOR
    assert routes.decide("r", LOCAL) == CURSOR
    now[0] = 11
    assert routes.get("r") is None
    assert routes.decide("r", LOCAL) == LOCAL


def test_table_is_bounded() -> None:
    routes = Routes(max_entries=3)
    for i in range(5):
        routes.decide(str(i), LOCAL)
    assert len(routes) == 3
    assert routes.get("0") is None and routes.get("4") == LOCAL


async def test_waiters_wake_on_the_decision_or_time_out() -> None:
    routes = Routes()
    waiting = [asyncio.ensure_future(routes.wait("r", 5)) for _ in range(2)]
    await asyncio.sleep(0)
    routes.decide("r", CURSOR)
    assert await asyncio.gather(*waiting) == [CURSOR, CURSOR]
    assert await routes.wait("other", 0.01) is None
    assert not routes._waiters


async def test_waiting_counts_held_requests_and_a_timeout_leaves_the_id_undecided() -> None:
    import asyncio

    from cursor_byok.proxy.routing import Routes

    routes = Routes()
    waits = [asyncio.ensure_future(routes.wait("r", 0.05)) for _ in range(3)]
    await asyncio.sleep(0)
    assert routes.waiting == 3
    assert await asyncio.gather(*waits) == [None, None, None]
    assert routes.waiting == 0
    assert routes.decide("r", "local") == "local"  # what the addon records after a timeout


# --- appends, polls and parents (issue 25) -------------------------------------------------------


class FakeTurns:
    """What Routing asks of Turns: the config routing decides by."""

    def __init__(self, config) -> None:
        self._config = config

    def routing_config(self):
        return self._config


def routing_with(config_value):
    from cursor_byok.proxy.routing import Routing
    from cursor_byok.proxy.run_registry import RunRegistry

    async def runner(live, request) -> None:
        live.finish()

    routing = Routing(FakeTurns(config_value), RunRegistry(runner))  # type: ignore[arg-type]
    routing.routes.patience = 0.05  # a deadline the waits below run into
    return routing


def append(request_id: str, message: pb.AgentClientMessage | None, *, agent: bool = True):
    from cursor_byok.wire.bidi import BidiAppend

    raw = message.SerializeToString() if message is not None else b"\x0a\x05\x0a\x03xyz"
    return BidiAppend(request_id, 1, message, raw, agent=agent)


async def test_an_append_that_is_not_an_agent_message_goes_to_cursor_at_once() -> None:
    routing = routing_with(config())
    assert await routing.append_route(append("stt-1", None, agent=False)) == CURSOR
    assert routing.routes.get("stt-1") is None  # nothing decided for the id itself
    assert routing.routes.waiting == 0


async def test_an_unknown_ids_append_is_ours_or_waits_as_the_mode_says() -> None:
    heartbeat = pb.AgentClientMessage(client_heartbeat=pb.ClientHeartbeat())
    strict = routing_with(config(route_other_models="error"))
    assert await strict.append_route(append("x", heartbeat)) == LOCAL  # every run is ours
    strict.routes.decide("stt", CURSOR)  # another service's stream claimed this id
    assert await strict.append_route(append("stt", heartbeat)) == CURSOR
    passing = routing_with(config())
    waiting = asyncio.ensure_future(passing.append_route(append("y", heartbeat)))
    await asyncio.sleep(0)
    assert passing.routes.waiting == 1
    passing.routes.decide("y", LOCAL)  # its run request came
    assert await waiting == LOCAL
    assert await passing.append_route(append("z", heartbeat)) == CURSOR
    assert passing.routes.get("z") == CURSOR  # no run request in the wait: Cursor's from now on


async def test_a_child_run_takes_its_parents_route_and_conversations_remember_theirs() -> None:
    routing = routing_with(config())
    assert routing.decide("parent", run("Mine")) == LOCAL
    assert routing.decide("child", run("composer-1"), parent="parent") == LOCAL
    assert routing.decide("orphan", run("composer-1"), parent="unknown") == CURSOR
    assert routing.conversation_route("c") == CURSOR and routing.last_route == CURSOR
    assert await routing.poll_route("parent") == LOCAL
    assert await routing.poll_route("never-seen") == CURSOR  # may pass: after the wait
