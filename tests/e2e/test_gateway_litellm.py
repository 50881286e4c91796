"""cursor-byok behind a real team gateway: LiteLLM's proxy (issue 36, item 5).

LiteLLM runs from a venv of its own (`LITELLM_VENV`, made by `.ci/run`; never the project's
dependencies), on 127.0.0.1, offline (`LITELLM_LOCAL_MODEL_COST_MAP=True`), in config-file mode
(`model_list` + `master_key`, no database) in front of a fake provider. A callback of the test's
(LiteLLM's `CustomLogger`) writes down what the gateway logged for each request. Through mitmdump:
each call carries the conversation, Cursor's mode and the call's kind (LiteLLM records them as the
request's metadata, its end user and its headers); the gateway's own 429 reaches Cursor's error UI
as a rate limit; with `fallbacks` the same 429 goes to a direct provider instead; a deployment
budget crossed (the budget config-file mode enforces in memory) reaches Cursor as a quota error.
"""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import time
import uuid
from pathlib import Path

import httpx
import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from fakes.fake_provider import RecordedRequest
from fakes.script import Step
from mitm import start_mitmdump

from cursor_byok.pb import aiserver_v1_pb2 as aipb

pytestmark = pytest.mark.timeout(420)
VENV = os.environ.get("LITELLM_VENV", "")
LITELLM = Path(VENV) / "bin" / "litellm"
MASTER_KEY = "sk-team-fake"  # LiteLLM wants sk-; short: not a real key
START_DEADLINE = 240.0  # measured: ~10 s idle, up to ~50 s on a loaded 2-core machine

if not VENV or not LITELLM.exists():
    pytest.skip(
        "LiteLLM's proxy is not installed: set LITELLM_VENV to a venv with litellm[proxy] "
        "(.ci/run makes one under .cache/)",
        allow_module_level=True,
    )

RECORDER = """
import json, os
from litellm.integrations.custom_logger import CustomLogger

def _write(event, kwargs):
    params = kwargs.get("litellm_params") or {}
    logged = kwargs.get("standard_logging_object") or {}
    metadata = params.get("metadata") or {}
    record = {
        "event": event,
        "model_group": metadata.get("model_group"),
        "requester_metadata": metadata.get("requester_metadata"),
        "headers": metadata.get("headers"),
        "end_user": logged.get("end_user"),
        "tags": logged.get("request_tags"),
    }
    with open(os.environ["GATEWAY_RECORD"], "a") as out:
        out.write(json.dumps(record, default=str) + "\\n")

class Recorder(CustomLogger):
    async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):
        _write("success", kwargs)

    async def async_log_failure_event(self, kwargs, response_obj, start_time, end_time):
        _write("failure", kwargs)

handler = Recorder()
"""


def free_port() -> int:
    """A free loopback port below 32768 (LiteLLM needs a number: uvicorn prints port 0 back)."""
    for _ in range(200):
        port = random.randint(20000, 32767)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port below 32768")


def gateway_config(upstream: FakeProvider) -> str:
    common = f"""
      api_base: {upstream.base_url}
      api_key: sk-upstream-not-real"""
    return f"""
model_list:
  - model_name: team-model
    litellm_params:
      model: openai/upstream-1{common}
  - model_name: team-budget
    litellm_params:
      model: openai/upstream-2{common}
      input_cost_per_token: 0.001
      output_cost_per_token: 0.001
      max_budget: 0.000001
      budget_duration: 1d
general_settings:
  master_key: {MASTER_KEY}
litellm_settings:
  callbacks: recorder.handler
  num_retries: 0
router_settings:
  num_retries: 0
"""


def start_gateway(tmp: Path, upstream: FakeProvider) -> tuple[subprocess.Popen, int, Path]:
    tmp.mkdir()
    (tmp / "recorder.py").write_text(RECORDER)
    (tmp / "config.yaml").write_text(gateway_config(upstream))
    record = tmp / "record.jsonl"
    port = free_port()
    env = dict(
        os.environ,
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        GATEWAY_RECORD=str(record),
        PYTHONPATH=str(tmp),
        NO_PROXY="*",
    )
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        env.pop(name, None)
    log = (tmp / "litellm.log").open("w")
    process = subprocess.Popen(
        [str(LITELLM), "--config", "config.yaml", "--host", "127.0.0.1", "--port", str(port)],
        cwd=tmp,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + START_DEADLINE
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("LiteLLM exited:\n" + (tmp / "litellm.log").read_text()[-3000:])
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health/liveliness", timeout=2).is_success:
                return process, port, record
        except httpx.TransportError:
            pass
        time.sleep(0.2)  # a readiness probe of another program: nothing to wait on but its port
    process.kill()
    raise RuntimeError("LiteLLM did not start:\n" + (tmp / "litellm.log").read_text()[-3000:])


def byok_config(tmp: Path, port: int, direct: FakeProvider) -> Path:
    path = tmp / "config.toml"
    path.write_text(
        f"""
default_model = "Team"

[providers.team]
kind = "openai-chat"
base_url = "http://127.0.0.1:{port}/v1"
api_key_env = "LITELLM_API_KEY"
send_metadata = true
max_retries = 0

[providers.direct]
kind = "anthropic"
base_url = "{direct.base_url}"
api_key_env = "DIRECT_KEY"

[[models]]
name = "Team"
provider = "team"
model = "team-model"

[[models]]
name = "Team with backup"
provider = "team"
model = "team-model"
fallbacks = ["Direct"]

[[models]]
name = "Team budget"
provider = "team"
model = "team-budget"

[[models]]
name = "Direct"
provider = "direct"
model = "direct-1"
"""
    )
    return path


def records(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def title(result) -> str:
    [detail] = result.end.error.details
    return aipb.ErrorDetails.FromString(detail.value).details.title


async def test_turns_through_a_litellm_gateway(tmp_path, workspace) -> None:
    def upstream_answers(request: RecordedRequest) -> Step:
        return Step("reply", text=f"gateway answer via {request.json['model']}")

    async with (
        FakeProvider(responder=upstream_answers, strict=False, check_on_exit=False) as upstream,
        FakeProvider() as direct,
    ):
        gateway, port, record = start_gateway(tmp_path / "gateway", upstream)
        proxy = None
        try:
            proxy = start_mitmdump(
                tmp_path / "proxy",
                agent="provider",
                config=byok_config(tmp_path, port, direct),
                env={"LITELLM_API_KEY": MASTER_KEY, "DIRECT_KEY": "sk-direct-not-real"},
            )
            client = CursorLikeClient.through(proxy, workspace)

            async def turn(model: str, conversation: str | None = None):
                conversation = conversation or str(uuid.uuid4())
                message = client.run_request("hi", conversation_id=conversation, model=model)
                return await client.turn(message)

            try:
                conversation = str(uuid.uuid4())
                served = await turn("Team", conversation)
                upstream.script.error(429, message="upstream says slow down", retry_after=3600)
                limited = await turn("Team")
                upstream.script.error(429, message="upstream says slow down", retry_after=3600)
                direct.script.text("the direct provider took over")
                fell_back = await turn("Team with backup")
                budget = None
                deadline = time.monotonic() + 60  # the gateway books spend after the answer
                while time.monotonic() < deadline:
                    budget = await turn("Team budget")
                    if not budget.end.ok:
                        break
            finally:
                await client.aclose()
        finally:
            if proxy is not None:
                proxy.stop()
            gateway.terminate()
            gateway.wait(timeout=30)

    assert served.end.ok and served.text == "gateway answer via upstream-1"
    [logged] = [r for r in records(record) if r["end_user"] == conversation]
    assert logged["event"] == "success" and logged["model_group"] == "team-model"
    sent = logged["requester_metadata"]
    assert sent["cursor_byok_conversation"] == conversation
    assert sent["cursor_byok_mode"] == "agent" and sent["cursor_byok_kind"] == "agent"
    assert "cursor-byok:kind:agent" in logged["tags"]
    assert logged["headers"]["x-cursor-byok-conversation"] == conversation
    assert logged["headers"]["x-cursor-byok-mode"] == "agent"

    assert limited.end.error.code == "resource_exhausted"
    assert title(limited) == "Provider rate limit (HTTP 429)"
    assert "litellm.RateLimitError" in limited.end.error.message

    assert fell_back.end.ok and fell_back.text == "the direct provider took over"

    assert budget is not None and not budget.end.ok
    assert budget.end.error.code == "resource_exhausted"
    assert title(budget) == "Provider quota or billing limit (HTTP 429)"
    assert "crossed budget" in budget.end.error.message
    assert MASTER_KEY not in proxy.log()
