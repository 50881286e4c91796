"""Model-picker catalog entries, merging into upstream bodies, and the ModelPicker hooks."""

from __future__ import annotations

import asyncio
import logging
import tomllib
from pathlib import Path

import pytest
from google.protobuf.message import DecodeError
from mitmproxy import connection
from mitmproxy import exceptions
from mitmproxy import http
from mitmproxy.proxy import server_hooks
from mitmproxy.test import taddons
from mitmproxy.test import tflow
from mitmproxy.test import tutils

from cursor_byok.config import catalog as models
from cursor_byok.config import parse_config
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.proxy import model_picker
from cursor_byok.proxy.model_picker import ModelPicker
from cursor_byok.wire import connect

HOST = "api2.cursor.sh"
AVAILABLE = "/aiserver.v1.AiService/AvailableModels"
USABLE_AI = "/aiserver.v1.AiService/GetUsableModels"
USABLE_AGENT = "/agent.v1.AgentService/GetUsableModels"
DEFAULT_CLI = "/aiserver.v1.AiService/GetDefaultModelForCli"
CPP_AVAILABLE = "/aiserver.v1.CppService/AvailableModels"
# field 999, varint 7: a field our schema does not know (tag 999<<3|0 = 0xb8 0x3e)
UNKNOWN_FIELD = b"\xb8\x3e\x07"

RAW_CONFIG = {
    "default_model": "Sonnet",
    "providers": {
        "anth": {"kind": "anthropic", "base_url": "https://api.anthropic.example"},
        "local": {"kind": "openai-chat", "base_url": "http://127.0.0.1:11434/v1"},
    },
    "models": [
        {
            "name": "Qwen Local",
            "provider": "local",
            "model": "qwen3:8b",
            "context_window": 32768,
        },
        {
            "name": "Sonnet",
            "provider": "anth",
            "model": "claude-sonnet-4-5",
            "context_window": 200_000,
            "supports_images": True,
            "thinking": True,
        },
    ],
}
CONFIG = parse_config(RAW_CONFIG)
QWEN, SONNET = CONFIG.models


def upstream_available_models() -> bytes:
    response = aipb.AvailableModelsResponse(
        model_names=["gpt-5"],
        models=[
            aipb.AvailableModelsResponse.AvailableModel(
                name="gpt-5", client_display_name="GPT-5", supports_agent=True
            )
        ],
        composer_model_config=aipb.AvailableModelsResponse.FeatureModelConfig(
            default_model="gpt-5"
        ),
    )
    return response.SerializeToString() + UNKNOWN_FIELD


def upstream_usable_models() -> bytes:
    response = pb.GetUsableModelsResponse(
        models=[pb.ModelDetails(model_id="gpt-5", display_name="GPT-5")]
    )
    return response.SerializeToString() + UNKNOWN_FIELD


# --- ids and lookup -----------------------------------------------------------------------------


def test_model_id_is_stable_opaque_and_distinct() -> None:
    assert models.model_id(QWEN) == models.model_id(parse_config(RAW_CONFIG).models[0])
    assert models.model_id(QWEN).startswith("byok-")
    assert len(models.model_id(QWEN)) == len("byok-") + 12
    assert models.model_id(QWEN) != models.model_id(SONNET)
    assert "qwen" not in models.model_id(QWEN).lower()


def test_model_id_ignores_edits_that_keep_the_model() -> None:
    def edited(**changes) -> str:
        raw = {"providers": RAW_CONFIG["providers"], "models": [RAW_CONFIG["models"][0] | changes]}
        return models.model_id(parse_config(raw).models[0])

    assert edited(context_window=65536, supports_images=True) == models.model_id(QWEN)
    assert edited(model="qwen3:14b") != models.model_id(QWEN)
    assert edited(provider="anth") != models.model_id(QWEN)


@pytest.mark.parametrize(
    ("requested", "expected"),
    [
        (models.model_id(SONNET), SONNET),
        ("Sonnet", SONNET),
        ("claude-sonnet-4-5", SONNET),
        ("Qwen Local", QWEN),
        ("qwen3:8b", QWEN),  # an upstream id with ':' is not mistaken for a variant
        (models.model_id(QWEN) + ":high", QWEN),
        ("", SONNET),  # the default model
        ("gpt-5", None),
        ("Sonnet:high", None),  # variants only on stable ids
    ],
)
def test_find_model(requested: str, expected) -> None:
    assert models.find_model(CONFIG, requested) is expected


@pytest.mark.parametrize(
    ("path", "method"),
    [
        (AVAILABLE, models.AVAILABLE_MODELS),
        (USABLE_AI, models.USABLE_MODELS),
        (USABLE_AGENT, models.USABLE_MODELS),
        (DEFAULT_CLI, models.DEFAULT_MODEL_FOR_CLI),
        ("/aiserver.v2.SomeNewService/AvailableModels?x=1", models.AVAILABLE_MODELS),
        (CPP_AVAILABLE, None),
        ("/aiserver.v1.AiService/GetDefaultModel", None),
        ("/aiserver.v1.AiService/GetDefaultModelNudgeData", None),
        ("/agent.v1.AgentService/RunSSE", None),
        ("/AvailableModelsX", None),
        ("", None),
    ],
)
def test_classify(path: str, method: str | None) -> None:
    assert models.classify(path) == method


# --- builders -----------------------------------------------------------------------------------


def test_available_models_response_entries_and_flags() -> None:
    body = models.available_models_response(CONFIG).SerializeToString()
    response = aipb.AvailableModelsResponse.FromString(body)
    assert list(response.model_names) == [models.model_id(QWEN), models.model_id(SONNET)]
    qwen, sonnet = response.models
    assert sonnet.name == sonnet.server_model_name == models.model_id(SONNET)
    assert sonnet.client_display_name == sonnet.inputbox_short_model_name == "Sonnet"
    for entry in (qwen, sonnet):
        assert entry.supports_agent and entry.default_on and entry.is_user_added
        assert entry.supports_plan_mode
        # Present (not just default false/true) like on Cursor's own entries, so pickers in
        # either Max or normal mode list ours.
        assert entry.HasField("supports_max_mode") and entry.supports_max_mode
        assert entry.HasField("supports_non_max_mode") and entry.supports_non_max_mode
        assert entry.HasField("is_hidden") and not entry.is_hidden
        assert entry.HasField("supports_cmd_k") and not entry.supports_cmd_k
        assert entry.context_token_limit_for_max_mode == entry.context_token_limit
        assert entry.tooltip_data_for_max_mode == entry.tooltip_data
    assert sonnet.supports_thinking and sonnet.supports_images
    assert sonnet.HasField("supports_thinking") and not qwen.supports_thinking
    assert not qwen.supports_images
    assert (qwen.context_token_limit, sonnet.context_token_limit) == (32768, 200_000)
    assert "anthropic" in sonnet.tooltip_data.primary_text
    assert "200k" in sonnet.tooltip_data.secondary_text
    assert "127.0.0.1" not in qwen.tooltip_data.primary_text  # no base URLs


def test_model_details_never_carry_credentials() -> None:
    for response in (
        models.usable_models_response(CONFIG),
        models.default_model_for_cli_response(CONFIG),
    ):
        for details in getattr(response, "models", None) or [response.model]:
            assert details.WhichOneof("credentials") is None
    qwen, sonnet = models.usable_models_response(CONFIG).models
    assert sonnet.model_id == sonnet.display_model_id == models.model_id(SONNET)
    assert sonnet.display_name == sonnet.display_name_short == "Sonnet"
    assert sonnet.HasField("thinking_details") and not qwen.HasField("thinking_details")


def test_default_model_for_cli_is_the_configured_default() -> None:
    response = models.default_model_for_cli_response(CONFIG)
    assert response.model.model_id == models.model_id(SONNET)


# --- merging ------------------------------------------------------------------------------------


def test_merge_available_models_keeps_upstream_and_unknown_fields() -> None:
    upstream = upstream_available_models()
    merged = models.merge_available_models(upstream, CONFIG)
    assert merged.startswith(upstream)  # upstream bytes, unknown field included, untouched
    response = aipb.AvailableModelsResponse.FromString(merged)
    assert list(response.model_names) == ["gpt-5", models.model_id(QWEN), models.model_id(SONNET)]
    assert [m.name for m in response.models] == [
        "gpt-5",
        models.model_id(QWEN),
        models.model_id(SONNET),
    ]
    assert response.composer_model_config.default_model == "gpt-5"
    assert UNKNOWN_FIELD in response.SerializeToString()  # the decoder kept it as unknown


def test_merging_twice_adds_nothing() -> None:
    once = models.merge_available_models(upstream_available_models(), CONFIG)
    assert models.merge_available_models(once, CONFIG) == once
    usable = models.merge_usable_models(upstream_usable_models(), CONFIG)
    assert models.merge_usable_models(usable, CONFIG) == usable


@pytest.mark.parametrize(
    "response_type", [pb.GetUsableModelsResponse, aipb.GetUsableModelsResponse]
)
def test_merge_usable_models_for_both_services(response_type) -> None:
    upstream = upstream_usable_models()
    merged = models.merge_body(
        models.classify(
            USABLE_AI if response_type is aipb.GetUsableModelsResponse else USABLE_AGENT
        )
        or "",
        upstream,
        CONFIG,
        content_type="application/proto",
    )
    assert merged.startswith(upstream)
    response = response_type.FromString(merged)
    assert [m.model_id for m in response.models] == [
        "gpt-5",
        models.model_id(QWEN),
        models.model_id(SONNET),
    ]
    assert UNKNOWN_FIELD in response.SerializeToString()


def test_merge_default_model_for_cli_replaces_the_model_keeps_unknown_fields() -> None:
    upstream = (
        pb.GetDefaultModelForCliResponse(
            model=pb.ModelDetails(model_id="gpt-5", aliases=["x"])
        ).SerializeToString()
        + UNKNOWN_FIELD
    )
    merged = models.merge_default_model_for_cli(upstream, CONFIG)
    response = pb.GetDefaultModelForCliResponse.FromString(merged)
    assert response.model == models.model_details(SONNET)
    assert UNKNOWN_FIELD in merged


def test_merge_into_an_empty_body() -> None:
    merged = models.merge_available_models(b"", CONFIG)
    assert merged == models.available_models_response(CONFIG).SerializeToString()


def test_merge_rejects_garbage() -> None:
    with pytest.raises(DecodeError):
        models.merge_available_models(b"\xff\xff\xff", CONFIG)
    with pytest.raises(models.UnsupportedBody):
        models.merge_body(
            models.AVAILABLE_MODELS, b"\xff\xff", CONFIG, content_type="application/proto"
        )


@pytest.mark.parametrize("ctype", ["application/json", "text/html", None])
def test_merge_body_refuses_other_formats(ctype: str | None) -> None:
    with pytest.raises(models.UnsupportedBody):
        models.merge_body(models.AVAILABLE_MODELS, b"{}", CONFIG, content_type=ctype)


@pytest.mark.parametrize("encoding", [None, "gzip"])
def test_merge_enveloped_body(encoding: str | None) -> None:
    upstream = upstream_available_models()
    end = connect.encode_end_stream(metadata={"x-trace": ["1"]})
    body = connect.encode_frame(upstream, encoding=encoding) + end
    merged = models.merge_body(
        models.AVAILABLE_MODELS,
        body,
        CONFIG,
        content_type="application/connect+proto",
        envelope_encoding=encoding,
    )
    frames = connect.decode_envelopes(merged, encoding=encoding)
    assert frames[0].was_compressed == (encoding is not None)
    assert frames[0].payload == models.merge_available_models(upstream, CONFIG)
    assert merged.endswith(end)


def test_encode_answer_formats() -> None:
    message = models.usable_models_response(CONFIG)
    body, ctype = models.encode_answer(message, "proto")
    assert ctype == "application/proto" and pb.GetUsableModelsResponse.FromString(body) == message
    body, ctype = models.encode_answer(message, "connect+proto")
    data, end = connect.decode_envelopes(body)
    assert ctype == "application/connect+proto" and end.is_end_stream
    assert pb.GetUsableModelsResponse.FromString(data.payload) == message
    body, ctype = models.encode_answer(message, "json")
    assert ctype == "application/json" and b'"displayName":"Sonnet"' in body


# --- the addon ----------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


TOML = """
default_model = "Sonnet"
[providers.anth]
kind = "anthropic"
base_url = "https://api.anthropic.example"
api_key_env = "NOT_SET_ANYWHERE"
[[models]]
name = "Sonnet"
provider = "anth"
model = "claude-sonnet-4-5"
thinking = true
"""


@pytest.fixture
def config_file(tmp_path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(TOML)
    return path


@pytest.fixture
def clock() -> Clock:
    return Clock()


class Probe:
    """Stands in for the TCP probe: says whether Cursor's API answers; counts the calls."""

    def __init__(self) -> None:
        self.up = True
        self.calls: list[tuple[str, int]] = []

    async def check(self, host: str, port: int) -> bool:
        self.calls.append((host, port))
        return self.up


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
def tctx(config_file, clock, probe):
    picker = ModelPicker(clock=clock, probe=probe.check)
    with taddons.context(picker) as context:  # it declares every option it reads
        context.configure(picker, cursor_byok_config=str(config_file))
        context.picker = picker
        yield context


def picker_flow(
    path: str, *, host: str = HOST, body: bytes = b"", ctype: str = "application/proto"
):
    request = tutils.treq(
        method=b"POST",
        host=host,
        port=443,
        path=path.encode(),
        content=body,
        headers=http.Headers(content_type=ctype),
    )
    request.scheme = "https"
    return tflow.tflow(req=request)


def upstream_reply(flow, body: bytes, status: int = 200, ctype: str = "application/proto"):
    flow.response = http.Response.make(status, body, {"content-type": ctype})


def sonnet_id() -> str:
    return models.model_id(parse_config(tomllib.loads(TOML)).models[0])


async def test_merge_mode_leaves_request_alone_and_merges_response(tctx) -> None:
    flow = picker_flow(AVAILABLE, body=b"\x18\x01")
    await tctx.picker.request(flow)
    assert flow.response is None
    upstream_reply(flow, upstream_available_models())
    tctx.picker.response(flow)
    response = aipb.AvailableModelsResponse.FromString(flow.response.content)
    assert [m.name for m in response.models] == ["gpt-5", sonnet_id()]
    assert flow.response.content.startswith(upstream_available_models())


def test_merge_mode_keeps_content_encoding(tctx) -> None:
    flow = picker_flow(USABLE_AGENT)
    upstream_reply(flow, upstream_usable_models())
    flow.response.encode("gzip")
    tctx.picker.response(flow)
    assert flow.response.headers["content-encoding"] == "gzip"
    response = pb.GetUsableModelsResponse.FromString(flow.response.content)
    assert [m.model_id for m in response.models] == ["gpt-5", sonnet_id()]


@pytest.mark.parametrize("status", [401, 500, 503])
def test_non_2xx_passes_through(tctx, status: int) -> None:
    flow = picker_flow(AVAILABLE)
    body = b'{"code":"unauthenticated","message":"no"}'
    upstream_reply(flow, body, status, "application/json")
    tctx.picker.response(flow)
    assert (flow.response.status_code, flow.response.content) == (status, body)


def test_json_and_garbage_pass_through_with_a_log_line(tctx, caplog) -> None:
    caplog.set_level(logging.INFO, logger="cursor_byok.proxy.model_picker")
    for body, ctype in ((b'{"models":[]}', "application/json"), (b"\xff\xff", "application/proto")):
        flow = picker_flow(AVAILABLE)
        upstream_reply(flow, body, 200, ctype)
        tctx.picker.response(flow)
        assert flow.response.content == body
    assert caplog.text.count("passed through without our models") == 2


def test_other_hosts_paths_and_cpp_service_are_untouched(tctx) -> None:
    for flow in (
        picker_flow(AVAILABLE, host="example.com"),
        picker_flow(CPP_AVAILABLE),
        picker_flow("/aiserver.v1.AiService/GetDefaultModel"),
    ):
        upstream_reply(flow, upstream_available_models())
        tctx.picker.response(flow)
        assert flow.response.content == upstream_available_models()


async def test_replace_mode_answers_every_picker_call_locally(tctx) -> None:
    tctx.configure(tctx.picker, cursor_byok_models_mode="replace")
    expected = {
        AVAILABLE: aipb.AvailableModelsResponse,
        USABLE_AI: aipb.GetUsableModelsResponse,
        USABLE_AGENT: pb.GetUsableModelsResponse,
        DEFAULT_CLI: pb.GetDefaultModelForCliResponse,
    }
    for path, response_type in expected.items():
        flow = picker_flow(path)
        await tctx.picker.request(flow)
        assert flow.response is not None and flow.response.status_code == 200
        assert flow.response.headers["content-type"] == "application/proto"
        message = response_type.FromString(flow.response.content)
        assert sonnet_id() in str(message)
        before = flow.response.content
        tctx.picker.response(flow)  # the response hook also runs for local answers
        assert flow.response.content == before
    cpp = picker_flow(CPP_AVAILABLE)
    await tctx.picker.request(cpp)
    assert cpp.response is None


async def test_replace_mode_answers_in_the_clients_format(tctx) -> None:
    tctx.configure(tctx.picker, cursor_byok_models_mode="replace")
    flow = picker_flow(AVAILABLE, body=b"{}", ctype="application/json")
    await tctx.picker.request(flow)
    assert flow.response.headers["content-type"] == "application/json"
    assert b'"clientDisplayName":"Sonnet"' in flow.response.content
    flow = picker_flow(USABLE_AGENT, ctype="application/connect+proto")
    await tctx.picker.request(flow)
    data, end = connect.decode_envelopes(flow.response.content)
    assert end.is_end_stream
    assert pb.GetUsableModelsResponse.FromString(data.payload).models[0].model_id == sonnet_id()


async def test_off_mode_does_nothing(tctx) -> None:
    tctx.configure(tctx.picker, cursor_byok_models_mode="off")
    flow = picker_flow(AVAILABLE)
    await tctx.picker.request(flow)
    assert flow.response is None
    upstream_reply(flow, upstream_available_models())
    tctx.picker.response(flow)
    assert flow.response.content == upstream_available_models()


def test_unknown_mode_is_rejected(tctx) -> None:
    with pytest.raises(exceptions.OptionsError):
        tctx.configure(tctx.picker, cursor_byok_models_mode="mix")


async def test_broken_config_passes_through_and_logs_once(tctx, config_file, caplog) -> None:
    caplog.set_level(logging.INFO, logger="cursor_byok.proxy.model_picker")
    config_file.write_text("models = [")
    tctx.configure(tctx.picker, cursor_byok_models_mode="replace")
    for _ in range(3):
        flow = picker_flow(AVAILABLE)
        await tctx.picker.request(flow)
        assert flow.response is None  # goes upstream untouched
    assert caplog.text.count("not valid TOML") == 1
    config_file.write_text(TOML)
    flow = picker_flow(AVAILABLE)
    await tctx.picker.request(flow)
    assert flow.response is not None
    assert "config fixed" in caplog.text


def test_missing_config_in_merge_mode_passes_through(tctx, tmp_path) -> None:
    tctx.configure(tctx.picker, cursor_byok_config=str(tmp_path / "nope.toml"))
    flow = picker_flow(AVAILABLE)
    upstream_reply(flow, upstream_available_models())
    tctx.picker.response(flow)
    assert flow.response.content == upstream_available_models()


def connect_error(host: str = HOST, port: int = 443) -> server_hooks.ServerConnectionHookData:
    server = connection.Server(address=(host, port))
    server.error = "Connect call failed"
    return server_hooks.ServerConnectionHookData(server=server, client=tflow.tclient_conn())


async def test_unreachable_cursor_is_answered_locally_for_a_while(tctx, clock) -> None:
    # a good upstream answer first: remembered for offline answers
    first = picker_flow(AVAILABLE, body=b"\x18\x01")
    upstream_reply(first, upstream_available_models())
    tctx.picker.response(first)

    tctx.picker.server_connect_error(connect_error())
    same = picker_flow(AVAILABLE, body=b"\x18\x01")
    await tctx.picker.request(same)
    response = aipb.AvailableModelsResponse.FromString(same.response.content)
    assert [m.name for m in response.models] == ["gpt-5", sonnet_id()]  # last list + ours

    other = picker_flow(USABLE_AI)
    await tctx.picker.request(other)
    assert [
        m.model_id for m in pb.GetUsableModelsResponse.FromString(other.response.content).models
    ] == [sonnet_id()]

    clock.now += models.OFFLINE_RETRY_SECONDS + 1
    retry = picker_flow(AVAILABLE)
    await tctx.picker.request(retry)
    assert retry.response is None  # tries Cursor again

    tctx.picker.server_connect_error(connect_error())
    tctx.picker.server_connected(connect_error())  # reachable again ends it at once
    again = picker_flow(AVAILABLE)
    await tctx.picker.request(again)
    assert again.response is None


async def test_a_failed_probe_answers_the_first_call_locally(tctx, probe, clock) -> None:
    probe.up = False
    flow = picker_flow(AVAILABLE)
    await tctx.picker.request(flow)  # no 502 first: Cursor's host is probed before
    assert flow.response is not None and flow.response.status_code == 200
    assert [m.name for m in aipb.AvailableModelsResponse.FromString(flow.response.content).models]
    again = picker_flow(USABLE_AGENT)
    await tctx.picker.request(again)
    assert again.response is not None
    assert probe.calls == [(HOST, 443)]  # offline for a while: no probe per call

    clock.now += models.OFFLINE_RETRY_SECONDS + 1
    probe.up = True
    retry = picker_flow(AVAILABLE)
    await tctx.picker.request(retry)
    assert retry.response is None  # up again: goes to Cursor
    probe.up = False  # gone again: the very next call is answered here
    gone = picker_flow(AVAILABLE)
    await tctx.picker.request(gone)
    assert gone.response is not None and len(probe.calls) == 3


async def test_calls_that_come_together_share_one_probe(tctx, probe) -> None:
    flows = [picker_flow(path) for path in (AVAILABLE, USABLE_AGENT, USABLE_AI)]
    await asyncio.gather(*(tctx.picker.request(flow) for flow in flows))
    assert all(flow.response is None for flow in flows) and len(probe.calls) == 1


async def test_an_open_connection_skips_the_probe(tctx, probe) -> None:
    probe.up = False  # would fail, but is not asked while a connection is open
    server = connection.Server(address=(HOST, 443))
    data = server_hooks.ServerConnectionHookData(server=server, client=tflow.tclient_conn())
    tctx.picker.server_connected(data)
    flow = picker_flow(AVAILABLE)
    await tctx.picker.request(flow)
    assert flow.response is None and probe.calls == []
    tctx.picker.server_disconnected(data)
    closed = picker_flow(AVAILABLE)
    await tctx.picker.request(closed)
    assert closed.response is not None and probe.calls == [(HOST, 443)]


async def test_tcp_probe_tells_open_from_closed_ports() -> None:
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    assert await model_picker.tcp_probe("127.0.0.1", port)
    server.close()
    await server.wait_closed()
    assert not await model_picker.tcp_probe("127.0.0.1", port)


async def test_unreachable_other_hosts_are_ignored(tctx) -> None:
    tctx.picker.server_connect_error(connect_error("example.com"))
    flow = picker_flow(AVAILABLE)
    await tctx.picker.request(flow)
    assert flow.response is None


def test_streamed_response_is_left_alone(tctx) -> None:
    flow = picker_flow(AVAILABLE)
    upstream_reply(flow, b"")
    flow.response.stream = True
    flow.response.data.content = None
    tctx.picker.response(flow)
    assert flow.response.raw_content is None
