"""A subagent definition's `model`: used when the config routes it, else the usual choice."""

from __future__ import annotations

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools.registry import definition_models
from cursor_byok.tools.task import child_model


def route(name: str) -> str | None:
    return {"small": "Small", "big": "Big"}.get(name.lower())


def test_only_models_the_config_routes_and_not_forced_to_the_default() -> None:
    custom = [
        pb.CustomSubagent(name="Reviewer", model="small"),
        pb.CustomSubagent(name="inherits", model="inherit"),
        pb.CustomSubagent(name="unknown", model="gpt-99"),
        pb.CustomSubagent(name="forced", model="big", force_default_model=True),
    ]
    assert definition_models(custom, route) == {"reviewer": "Small"}
    assert definition_models(custom, None) == {}


def test_the_definition_model_beats_the_parents_ask_but_not_the_users_override() -> None:
    request = pb.AgentRunRequest()
    request.requested_model.model_id = "Parent"
    assert child_model(request, "reviewer", "inherit", "Small") == "Small"
    assert child_model(request, "reviewer", "", "") == "Parent"
    override = request.subagent_model_overrides.add(subagent_type="reviewer")
    override.model.model_id = "Chosen"
    assert child_model(request, "reviewer", "", "Small") == "Chosen"
