"""WebSearch through a search endpoint the user configured (tools.md §4.13).

Cursor's client only approves a search (`web_search_request_query`); Cursor's own server runs
it. cursor-byok runs it against the `[web_search]` endpoint of the config (a SearxNG instance,
Brave, Serper, Tavily, Google CSE… anything answering GET with JSON) after the user approved,
and shows the references on the WebSearch card. Without an endpoint the tool is not offered.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from typing import ClassVar
from urllib.parse import quote_plus

from cursor_byok import outbound
from cursor_byok.config import WebSearchConfig
from cursor_byok.errors import ByokError
from cursor_byok.pb import agent_v1_pb2 as pb

from .base import Tool
from .base import ToolContext
from .base import ToolError
from .base import ToolOutcome
from .base import arg_str
from .base import loose_str
from .base import truncate_text

log = logging.getLogger(__name__)

MAX_SNIPPET_CHARS = 600
MAX_ANSWER_BYTES = 8 * 1024 * 1024  # a search API's JSON answer (decoded); past it: an error
# Where the common search APIs put their result list, and the keys of one result.
_LISTS = (("results",), ("web", "results"), ("organic",), ("items",), ("data",))
_TITLE = ("title", "name")
_URL = ("url", "link", "href")
_SNIPPET = ("content", "snippet", "description", "body", "text")


def parse_results(data: Any, limit: int) -> list[pb.WebSearchReference]:
    """References from a search API's JSON answer (first known list shape wins)."""
    items: Any = None
    for path in _LISTS:
        node = data
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, list):
            items = node
            break
    refs: list[pb.WebSearchReference] = []
    for item in items or []:
        if not isinstance(item, dict):
            continue
        url = _first(item, _URL)
        if not url:
            continue
        snippet = _first(item, _SNIPPET)
        if len(snippet) > MAX_SNIPPET_CHARS:
            snippet = snippet[:MAX_SNIPPET_CHARS] + "…"
        refs.append(
            pb.WebSearchReference(title=_first(item, _TITLE) or url, url=url, chunk=snippet)
        )
        if len(refs) >= limit:
            break
    return refs


def _first(item: dict, keys: tuple[str, ...]) -> str:
    for key in keys:
        value = item.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


class WebSearchTool(Tool):
    name = "WebSearch"
    identifier = "WEB_SEARCH"
    read_only = True
    description = (
        "Search the web for up-to-date information (documentation, error messages, releases). "
        "Returns titles, URLs and snippets; use WebFetch to read a page in full."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "search_term": {"type": "string", "description": "The search query."},
            "explanation": {"type": "string", "description": "Why you search (for the user)."},
        },
        "required": ["search_term"],
    }

    def __init__(self, config: WebSearchConfig) -> None:
        self.config = config

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        ui = pb.WebSearchArgs(search_term=loose_str(args, "search_term"))
        return pb.ToolCall(web_search_tool_call=pb.WebSearchToolCall(args=ui))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.web_search_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        term = arg_str(args, "search_term", required=True).strip()
        if not term:
            raise ToolError("Argument `search_term` must not be empty.")
        search = pb.WebSearchArgs(search_term=term, tool_call_id=ctx.call_id)
        answer = await ctx.interact(
            pb.InteractionQuery(web_search_request_query=pb.WebSearchRequestQuery(args=search))
        )
        call = pb.ToolCall(web_search_tool_call=pb.WebSearchToolCall(args=search))
        response = answer.web_search_request_response
        has = answer.HasField("web_search_request_response")
        kind = response.WhichOneof("result") if has else None
        if kind == "rejected":
            reason = response.rejected.reason or "no reason given"
            call.web_search_tool_call.result.rejected.reason = reason
            return ToolOutcome(f"The user declined the web search: {reason}", True, call)
        if kind != "approved":
            raise ToolError("The client did not approve the web search.")
        try:
            refs = await self._search(term)
        except (outbound.ClientError, OSError, TimeoutError, ByokError) as exc:
            message = f"The web search failed: {outbound.describe(exc)}"
            log.info("web search failed: %s", message)
            call.web_search_tool_call.result.error.error = message
            return ToolOutcome(message, True, call)
        except ValueError as exc:  # an answer that is not the JSON we read
            message = f"The web search failed: {exc}"
            log.info("web search failed: %s", exc)
            call.web_search_tool_call.result.error.error = message
            return ToolOutcome(message, True, call)
        call.web_search_tool_call.result.success.references.extend(refs)
        if not refs:
            return ToolOutcome(f"No results for {term!r}.", False, call)
        lines = [f"Results for {term!r}:"]
        for index, ref in enumerate(refs, 1):
            lines.append(f"{index}. {ref.title}\n   {ref.url}")
            if ref.chunk:
                lines.append("   " + ref.chunk.replace("\n", " "))
        return ToolOutcome(truncate_text("\n".join(lines)), False, call)

    async def _search(self, term: str) -> list[pb.WebSearchReference]:
        config = self.config
        headers = {"accept": "application/json", **config.headers}
        key = config.api_key()
        if key:
            if config.api_key_header.lower() == "authorization":
                headers["authorization"] = f"Bearer {key}"
            else:
                headers[config.api_key_header] = key
        url = config.url.replace("{query}", quote_plus(term))
        # A session per search: searches are rare, and a session holds sockets and a TLS
        # context that an idle tool should not keep.
        async with (
            outbound.new_session(
                connect_timeout=config.timeout,
                read_timeout=config.timeout,  # as before: per read, not for the whole call
            ) as session,
            session.get(url, headers=headers, allow_redirects=False) as response,
        ):
            if response.status >= 300:  # a redirect too: not followed
                raise ValueError(f"the search endpoint answered HTTP {response.status}")
            body = await outbound.read_body(response, MAX_ANSWER_BYTES)
        return parse_results(json.loads(body), config.max_results)
