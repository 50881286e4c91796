"""Routes per mode through a real mitmdump (issue 36, item 3): with Cursor's Auto (no model
picked) a Plan run goes to the plan route and an Ask run to the ask route; a BYOK model picked in
the picker wins over the route."""

from __future__ import annotations

import uuid

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from fakes.fake_provider import RecordedRequest
from fakes.script import Step
from mitm import start_mitmdump

from cursor_byok.pb import agent_v1_pb2 as pb

pytestmark = pytest.mark.timeout(120)


def echo_model(request: RecordedRequest) -> Step:
    return Step("reply", text=f"answered by {request.json['model']}")


async def test_each_mode_goes_to_its_route_unless_a_model_was_picked(tmp_path, workspace):
    async with FakeProvider(responder=echo_model) as fp:
        config = tmp_path / "config.toml"
        config.write_text(
            f"""
default_model = "Cheap"

[providers.fake]
kind = "openai-chat"
base_url = "{fp.base_url}"
api_key_env = "FAKE_PROVIDER_KEY"

[[models]]
name = "Big"
provider = "fake"
model = "big-1"

[[models]]
name = "Cheap"
provider = "fake"
model = "cheap-1"

[routes]
plan = "Big"
ask = "Cheap"
"""
        )
        proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=config,
            env={"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"},
        )
        client = CursorLikeClient.through(proxy, workspace)
        answers = []
        try:
            for model, mode in [
                ("default", pb.AGENT_MODE_PLAN),
                ("default", pb.AGENT_MODE_ASK),
                ("", pb.AGENT_MODE_PLAN),
                ("Cheap", pb.AGENT_MODE_PLAN),  # picked explicitly: wins over plan = "Big"
                ("Big", pb.AGENT_MODE_ASK),
            ]:
                message = client.run_request(
                    "hi", conversation_id=str(uuid.uuid4()), model=model, mode=mode
                )
                result = await client.turn(message)
                assert result.end.ok, (model, mode, result.end.error)
                answers.append(result.text)
        finally:
            await client.aclose()
            proxy.stop()
    assert answers == [
        "answered by big-1",
        "answered by cheap-1",
        "answered by big-1",
        "answered by cheap-1",
        "answered by big-1",
    ]
