"""WebSearch through a configured endpoint: approval, request, parsing, card, failures."""

from __future__ import annotations

import gzip
import json
import socket
from collections.abc import Awaitable
from collections.abc import Callable

import pytest
from aiohttp import web
from fakes.web_endpoint import endpoint

from cursor_byok.config import ConfigError
from cursor_byok.config import WebSearchConfig
from cursor_byok.config import parse_config
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools import tools_for
from cursor_byok.tools.websearch import WebSearchTool
from cursor_byok.tools.websearch import parse_results

SEARX = {
    "results": [
        {"title": "Python 3.13", "url": "https://python.org/3.13", "content": "What's new"},
        {"title": "no url"},
        {"url": "https://docs.python.org", "content": "x" * 2000},
    ]
}


def approved(query: pb.InteractionQuery) -> pb.InteractionResponse:
    response = pb.InteractionResponse()
    response.web_search_request_response.approved.SetInParent()
    return response


def json_answer(data, status: int = 200) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handler(request: web.Request) -> web.Response:
        return web.json_response(data, status=status)

    return handler


def tool(url: str, **config) -> WebSearchTool:
    settings = WebSearchConfig(url=url + "/s?q={query}&format=json", **config)
    return WebSearchTool(settings)


async def test_search_after_approval(make_ctx, monkeypatch) -> None:
    monkeypatch.setenv("SEARCH_KEY", "k-123")
    ctx = make_ctx(answers={"web_search_request_query": approved})
    async with endpoint(json_answer(SEARX)) as search:
        outcome = await tool(search.url, api_key_env="SEARCH_KEY", api_key_header="X-Api-Key").run(
            {"search_term": "python 3.13 news"}, ctx
        )
    assert not outcome.is_error
    [query] = ctx.queries
    assert query.web_search_request_query.args.search_term == "python 3.13 news"
    assert query.web_search_request_query.args.tool_call_id == "call-1"
    [request] = search.requests
    assert request.method == "GET" and request.query["q"] == "python 3.13 news"
    assert request.headers["x-api-key"] == "k-123"
    refs = outcome.tool_call.web_search_tool_call.result.success.references
    assert [r.url for r in refs] == ["https://python.org/3.13", "https://docs.python.org"]
    assert refs[1].title == "https://docs.python.org" and len(refs[1].chunk) < 700
    assert "1. Python 3.13" in outcome.text and "What's new" in outcome.text


async def test_rejected_search_makes_no_request(make_ctx) -> None:
    def rejected(query):
        response = pb.InteractionResponse()
        response.web_search_request_response.rejected.reason = "not now"
        return response

    async with endpoint(json_answer(SEARX)) as search:
        ctx = make_ctx(answers={"web_search_request_query": rejected})
        outcome = await tool(search.url).run({"search_term": "x"}, ctx)
        assert outcome.is_error and "not now" in outcome.text
        assert outcome.tool_call.web_search_tool_call.result.rejected.reason == "not now"
        unanswered = await tool(search.url).run({"search_term": "x"}, make_ctx())
        assert unanswered.is_error
        assert unanswered.tool_call.web_search_tool_call.result.HasField("error")
    assert search.requests == []


async def test_endpoint_failures_are_tool_errors(make_ctx) -> None:
    ctx = make_ctx(answers={"web_search_request_query": approved})

    async def html(request: web.Request) -> web.Response:
        return web.Response(text="<html>")

    async def redirect(request: web.Request) -> web.Response:
        raise web.HTTPFound("http://127.0.0.1:9/elsewhere")

    async with endpoint(json_answer({}, status=503)) as search:
        down = await tool(search.url).run({"search_term": "x"}, ctx)
    assert down.is_error and "HTTP 503" in down.text
    assert down.tool_call.web_search_tool_call.result.error.error
    async with endpoint(html) as search:
        junk = await tool(search.url).run({"search_term": "x"}, ctx)
    assert junk.is_error
    async with endpoint(redirect) as search:
        moved = await tool(search.url).run({"search_term": "x"}, ctx)
    assert moved.is_error and "HTTP 302" in moved.text  # not followed
    async with endpoint(json_answer({"results": []})) as search:
        empty = await tool(search.url).run({"search_term": "x"}, ctx)
    assert not empty.is_error and "No results" in empty.text
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    refused = await tool(f"http://127.0.0.1:{port}").run({"search_term": "x"}, ctx)
    assert refused.is_error and f"cannot connect to 127.0.0.1:{port}" in refused.text


async def test_a_compressed_answer_is_decoded_and_bounded(make_ctx) -> None:
    ctx = make_ctx(answers={"web_search_request_query": approved})

    async def gzipped(request: web.Request) -> web.Response:
        body = gzip.compress(json.dumps(SEARX).encode())
        return web.Response(body=body, headers={"content-encoding": "gzip"})

    async def bomb(request: web.Request) -> web.Response:
        body = gzip.compress(b"[" + b" " * (64 << 20) + b"]", compresslevel=9)
        return web.Response(body=body, headers={"content-encoding": "gzip"})

    async with endpoint(gzipped) as search:
        outcome = await tool(search.url).run({"search_term": "x"}, ctx)
    assert not outcome.is_error and "Python 3.13" in outcome.text
    async with endpoint(bomb) as search:
        outcome = await tool(search.url).run({"search_term": "x"}, ctx)
    assert outcome.is_error and "larger than 8388608 bytes" in outcome.text


def test_parse_common_shapes() -> None:
    brave = {"web": {"results": [{"title": "B", "url": "https://b", "description": "d"}]}}
    serper = {"organic": [{"title": "S", "link": "https://s", "snippet": "s"}]}
    cse = {"items": [{"title": "G", "link": "https://g"}]}
    assert [r.url for r in parse_results(brave, 5)] == ["https://b"]
    assert parse_results(serper, 5)[0].chunk == "s"
    assert parse_results(cse, 5)[0].title == "G"
    assert parse_results({"unknown": 1}, 5) == []
    assert len(parse_results({"results": [{"url": f"https://{i}"} for i in range(20)]}, 3)) == 3


def test_offered_only_with_an_endpoint_and_the_clients_flag() -> None:
    request = pb.AgentRunRequest()
    context = request.action.request_context_parts.dynamic_context
    context.web_search_enabled = True
    settings = WebSearchConfig(url="http://s/?q={query}")
    assert "WebSearch" not in tools_for(pb.AGENT_MODE_AGENT, request).names()
    assert "WebSearch" in tools_for(pb.AGENT_MODE_AGENT, request, web_search=settings).names()
    assert "WebSearch" in tools_for(pb.AGENT_MODE_ASK, request, web_search=settings).names()
    context.web_search_enabled = False
    assert "WebSearch" not in tools_for(pb.AGENT_MODE_AGENT, request, web_search=settings).names()


RAW = {
    "providers": {"p": {"kind": "openai-chat", "base_url": "http://127.0.0.1:1/v1"}},
    "models": [{"name": "M", "provider": "p", "model": "m"}],
}


def test_web_search_config() -> None:
    config = parse_config({**RAW, "web_search": {"url": "https://s.test/?q={query}"}})
    assert config.web_search is not None and config.web_search.max_results == 8
    assert parse_config(RAW).web_search is None
    for bad, key in (
        ({"url": "https://s.test/"}, "web_search.url"),
        ({"url": "ftp://x/{query}"}, "web_search.url"),
        ({"url": "https://s/{query}", "max_results": 0}, "web_search.max_results"),
        ({"url": "https://s/{query}", "bogus": 1}, "web_search.bogus"),
    ):
        with pytest.raises(ConfigError, match=key):
            parse_config({**RAW, "web_search": bad})
