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
