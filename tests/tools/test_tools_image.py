"""GenerateImage through a configured image endpoint: approval, generation, saving, card."""

from __future__ import annotations

import base64
import json

import pytest
from aiohttp import web
from fakes.web_endpoint import endpoint

from cursor_byok.config import ConfigError
from cursor_byok.config import ImageGenerationConfig
from cursor_byok.config import parse_config
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools import tools_for
from cursor_byok.tools.image import GenerateImageTool
from cursor_byok.tools.image import default_path

PNG = b"\x89PNG\r\n\x1a\n" + b"\x01" * 32


def approved(query: pb.InteractionQuery) -> pb.InteractionResponse:
    response = pb.InteractionResponse()
    response.generate_image_request_response.approved.description = "a red fox, flat style"
    return response


def tool(url: str) -> GenerateImageTool:
    return GenerateImageTool(ImageGenerationConfig(base_url=url + "/v1", model="img-1"))


async def test_generates_after_approval_and_saves_in_the_workspace(make_ctx, workspace) -> None:
    async def handler(request: web.Request) -> web.Response:
        assert request.path == "/v1/images/generations"
        return web.json_response({"data": [{"b64_json": base64.b64encode(PNG).decode()}]})

    ctx = make_ctx(answers={"generate_image_request_query": approved})
    async with endpoint(handler) as images:
        outcome = await tool(images.url).run(
            {"description": "a red fox", "file_path": "art/fox", "aspect_ratio": "16:9"}, ctx
        )
    assert not outcome.is_error, outcome.text
    [query] = ctx.queries
    assert query.generate_image_request_query.args.description == "a red fox"
    assert query.generate_image_request_query.tool_call_id == "call-1"
    assert [json.loads(b) for b in images.bodies] == [
        {"model": "img-1", "prompt": "a red fox, flat style", "n": 1, "size": "1536x1024"}
    ]
    assert images.requests[0].headers["content-type"] == "application/json"
    assert (workspace / "art" / "fox.png").read_bytes() == PNG
    card = outcome.tool_call.generate_image_tool_call
    assert card.result.success.file_path == str(workspace / "art" / "fox.png")
    assert base64.b64decode(card.result.success.image_data) == PNG


async def test_an_image_given_by_url_is_fetched(make_ctx, workspace) -> None:
    async def handler(request: web.Request) -> web.Response:
        if request.path == "/files/fox.png":
            return web.Response(body=PNG, content_type="image/png")
        return web.json_response({"data": [{"url": f"{base[0]}/files/fox.png"}]})

    base: list[str] = []
    ctx = make_ctx(answers={"generate_image_request_query": approved})
    async with endpoint(handler) as images:
        base.append(images.url)
        outcome = await tool(images.url).run({"description": "a red fox"}, ctx)
    assert not outcome.is_error, outcome.text
    assert (workspace / "generated-images" / "a-red-fox.png").read_bytes() == PNG


async def test_rejection_and_endpoint_failure(make_ctx, workspace) -> None:
    def rejected(query):
        response = pb.InteractionResponse()
        response.generate_image_request_response.rejected.reason = "no images"
        return response

    async def failing(request: web.Request) -> web.Response:
        return web.Response(status=500)

    async with endpoint(failing) as images:
        outcome = await tool(images.url).run(
            {"description": "x"}, make_ctx(answers={"generate_image_request_query": rejected})
        )
        assert outcome.is_error and "no images" in outcome.text
        assert images.requests == []  # no generation after a rejection
        failed = await tool(images.url).run(
            {"description": "x"}, make_ctx(answers={"generate_image_request_query": approved})
        )
    assert failed.is_error and "HTTP 500" in failed.text
    assert failed.tool_call.generate_image_tool_call.result.error.error
    assert not (workspace / "generated-images").exists()


def test_default_path_and_offer() -> None:
    assert default_path("A red Fox!") == "generated-images/a-red-fox.png"
    request = pb.AgentRunRequest()
    config = ImageGenerationConfig(base_url="http://i/v1", model="m")
    assert "GenerateImage" not in tools_for(pb.AGENT_MODE_AGENT, request).names()
    names = tools_for(pb.AGENT_MODE_AGENT, request, image_generation=config).names()
    assert "GenerateImage" in names
    ask = tools_for(pb.AGENT_MODE_ASK, request, image_generation=config).names()
    assert "GenerateImage" not in ask


def test_image_generation_config() -> None:
    raw = {
        "providers": {"p": {"kind": "openai-chat", "base_url": "http://127.0.0.1:1/v1"}},
        "models": [{"name": "M", "provider": "p", "model": "m"}],
    }
    config = parse_config(
        {
            **raw,
            "image_generation": {"base_url": "https://api.openai.com/v1/", "model": "gpt-image-1"},
        }
    )
    assert config.image_generation is not None
    assert config.image_generation.base_url == "https://api.openai.com/v1"
    with pytest.raises(ConfigError, match=r"image_generation\.model"):
        parse_config({**raw, "image_generation": {"base_url": "https://x"}})
