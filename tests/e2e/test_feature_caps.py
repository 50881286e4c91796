"""Spending caps on the editor features (issues 34/35 meet 36), through a real mitmdump: with
`[limits] daily_usd` already reached, Cmd-K and Tab end at once with the Agent's
`resource_exhausted` error naming the cap (each in its own stream shape; commit messages as a
unary error; terminal autocomplete too), and the provider is
never called."""

from __future__ import annotations

import time

import pytest
from fakes.fake_cursor import FakeCursor
from fakes.fake_fim import FakeFim
from fakes.fake_provider import FakeProvider
from provider_config import MODEL
from tab_client import STREAM_CPP
from tab_client import cpp_request
from tab_client import stream_cpp
from test_editor_features import AUTOCOMPLETE
from test_editor_features import CMDK
from test_editor_features import COMMIT
from test_editor_features import Setup as FeatureSetup
from test_editor_features import cmd_k_request
from test_tab_e2e import SOURCE
from test_tab_e2e import Setup as TabSetup

from cursor_byok.pb import aiserver_features_pb2 as fpb
from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.store.usage import TurnUsage
from cursor_byok.store.usage import UsageStore

pytestmark = pytest.mark.timeout(120)
LIMITS = "\n[limits]\ndaily_usd = 1.0\n"
PRICES = "\nprices = { input = 1, output = 1 }\n"


def seed(data_dir, model: str) -> None:
    """$1.00 spent today on `model` ($1 per million tokens)."""
    store = UsageStore(data_dir)
    store.add_many([TurnUsage(time.time() - 60, 1.0, "", "r1", model, input_tokens=1_000_000)])
    store.close()


def refused(end) -> aipb.ErrorDetails:
    assert end is not None and end.error is not None
    assert end.error.code == "resource_exhausted"
    assert "[limits] daily_usd = $1.00 is reached: $1.00 spent today" in end.error.message
    [detail] = end.error.details
    return aipb.ErrorDetails.FromString(detail.value)


@pytest.fixture
async def backend(tmp_path):
    async with FakeCursor(tmp_path / "cursor") as server:
        yield server


async def test_cmd_k_is_refused_at_a_reached_cap_without_a_model_call(tmp_path, workspace, backend):
    def capped(config: str) -> str:
        return config.replace("context_window = 64000", "context_window = 64000" + PRICES) + LIMITS

    async with FakeProvider() as fp:
        setup = FeatureSetup(tmp_path, workspace, fp, backend, edit=capped)
        try:
            seed(setup.proxy.data_dir, MODEL)
            messages, end = await setup.stream(CMDK, cmd_k_request("capped-marker"))
            commit = await setup.unary(COMMIT, fpb.WriteGitCommitMessageRequest(diffs=["x"]))
            typed = fpb.StreamTerminalAutocompleteRequest(current_command="git st")
            completions, completion_end = await setup.stream(
                AUTOCOMPLETE, typed, fpb.StreamTerminalAutocompleteResponse
            )
        finally:
            await setup.close()
        assert not fp.requests  # the provider was never called
    assert not messages and not completions
    assert refused(end).details.title == "Spending cap reached (daily_usd)"
    refused(completion_end)  # terminal autocomplete: the same end, in its own stream
    assert commit.status_code == 429 and commit.json()["code"] == "resource_exhausted"
    assert "daily_usd" in commit.json()["message"]
    assert not [r for r in backend.requests if r.path.startswith(CMDK)]


async def test_tab_is_refused_at_a_reached_cap_without_a_model_call(tmp_path, workspace, backend):
    async with FakeFim(answer="math.pi * r * r") as fim:

        def capped(config: str) -> str:
            return config.replace('model = "coder-fim"', 'model = "coder-fim"' + PRICES) + LIMITS

        setup = TabSetup(tmp_path, workspace, backend, fim, edit=capped)
        try:
            seed(setup.proxy.data_dir, "Tab model")
            answer = await stream_cpp(setup.http, setup.base, cpp_request(SOURCE, 4, 11))
        finally:
            await setup.close()
        assert not fim.requests  # the model was never called
    assert answer.status == 200 and not answer.edit
    assert refused(answer.end).details.title == "Spending cap reached (daily_usd)"
    assert not setup.to_cursor(STREAM_CPP)
