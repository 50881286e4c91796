"""The routes resolver (issue 36, item 3): the picker's BYOK model wins, Auto goes to the mode's
route, tasks to theirs (else the older single keys), and another table resolves the same way."""

from __future__ import annotations

from typing import Any

from cursor_byok.config import parse_config
from cursor_byok.config.routes import compaction_model
from cursor_byok.config.routes import model_for_run
from cursor_byok.config.routes import routed
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.proxy.routing import CURSOR
from cursor_byok.proxy.routing import LOCAL
from cursor_byok.proxy.routing import decide


def config(routes: dict[str, str] | None = None, **top: Any):
    raw: dict[str, Any] = {
        "default_model": "Small",
        "providers": {"p": {"kind": "openai-chat", "base_url": "http://127.0.0.1:9/v1"}},
        "models": [
            {"name": "Big", "provider": "p", "model": "big"},
            {"name": "Small", "provider": "p", "model": "small", "supports_images": True},
            {"name": "Summary", "provider": "p", "model": "summary"},
        ],
        **top,
    }
    if routes is not None:
        raw["routes"] = routes
    return parse_config(raw)


def name(model) -> str | None:
    return model.name if model is not None else None


def test_the_picker_wins_and_auto_follows_the_mode() -> None:
    c = config({"plan": "Big", "ask": "Small"})
    assert name(model_for_run(c, "default", pb.AGENT_MODE_PLAN)) == "Big"
    assert name(model_for_run(c, "", pb.AGENT_MODE_PLAN)) == "Big"
    assert name(model_for_run(c, "auto", pb.AGENT_MODE_ASK)) == "Small"
    assert name(model_for_run(c, "Small", pb.AGENT_MODE_PLAN)) == "Small"  # picked: it wins
    assert name(model_for_run(c, "", pb.AGENT_MODE_AGENT)) == "Small"  # no route: the default
    assert model_for_run(c, "default", pb.AGENT_MODE_AGENT) is None  # Auto, no route: Cursor's
    assert model_for_run(c, "gpt-5", pb.AGENT_MODE_PLAN) is None  # Cursor's model: Cursor's


def test_tasks_take_their_route_else_the_older_keys() -> None:
    c = config({"subagent": "Big", "title": "Summary", "compaction": "Summary"})
    assert name(model_for_run(c, "Small", pb.AGENT_MODE_AGENT, subagent=True)) == "Big"
    assert name(routed(c, "title")) == "Summary"
    small = c.model("Small")
    assert small is not None and name(compaction_model(c, small)) == "Summary"
    older = config(None, subagent_model="Big", title_model="Small", vision_model="Small")
    assert name(routed(older, "subagent")) == "Big"
    assert name(routed(older, "title")) == "Small"
    assert name(routed(older, "vision")) == "Small"
    assert routed(older, "compaction") is None


def test_another_table_resolves_with_the_same_function() -> None:
    c = config({})
    assert name(routed(c, "cmd_k", {"cmd_k": "Big"})) == "Big"
    assert routed(c, "tab", {"cmd_k": "Big"}) is None


def test_routing_serves_auto_runs_of_a_routed_mode_here() -> None:
    c = config({"plan": "Big"})

    def run(model: str, mode: int) -> pb.AgentRunRequest:
        request = pb.AgentRunRequest(conversation_id="c")
        request.requested_model.model_id = model
        message = request.action.user_message_action.user_message
        message.text, message.mode = "hi", mode
        return request

    assert decide(c, run("default", pb.AGENT_MODE_PLAN)) == LOCAL
    assert decide(c, run("default", pb.AGENT_MODE_AGENT)) == CURSOR
    assert decide(c, run("gpt-5", pb.AGENT_MODE_PLAN)) == CURSOR
    assert decide(c, run("Big", pb.AGENT_MODE_AGENT)) == LOCAL
