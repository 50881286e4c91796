"""WebFetch (tools.md §4.12): user approval, then a `fetch_args` exec on the client.

Fetching on the client uses the user's own network and proxy settings, which is what the
user expects. HTML is turned into compact Markdown-ish text here, with the standard library
only, so the model does not read tags and scripts.

WebSearch is not offered: the client only approves searches and Cursor's server performs
them; a BYOK setup needs its own search backend (tools.md §4.13).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any
from typing import ClassVar
from urllib.parse import urljoin
from urllib.parse import urlparse

from cursor_byok.pb import agent_v1_pb2 as pb

from .base import Tool
from .base import ToolContext
from .base import ToolError
from .base import ToolOutcome
from .base import arg_str
from .base import loose_str
from .base import no_result_text
from .base import result_of
from .base import truncate_text

_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "iframe"})
_BLOCK = frozenset(
    {"p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "table",
     "tr", "ul", "ol", "blockquote", "form", "figure", "br", "hr", "dl", "dt", "dd"}
)  # fmt: skip


class _Markdown(HTMLParser):
    """A forgiving HTML → Markdown-ish text converter (headings, links, lists, code)."""

    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base = base_url
        self.out: list[str] = []
        self.skip = 0
        self.pre = 0
        self.links: list[str | None] = []
        self.title: list[str] = []
        self.in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.skip += 1
            return
        if tag == "title":
            self.in_title = True
        elif re.fullmatch(r"h[1-6]", tag):
            self.out.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag == "li":
            self.out.append("\n- ")
        elif tag == "pre":
            self.pre += 1
            self.out.append("\n```\n")
        elif tag == "code" and not self.pre:
            self.out.append("`")
        elif tag in ("strong", "b"):
            self.out.append("**")
        elif tag in ("em", "i"):
            self.out.append("*")
        elif tag == "a":
            href = dict(attrs).get("href")
            self.links.append(urljoin(self.base, href) if href else None)
            self.out.append("[")
        elif tag in ("td", "th"):
            self.out.append(" | ")
        elif tag in _BLOCK:
            self.out.append("\n\n" if tag != "br" else "\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
            return
        if tag == "title":
            self.in_title = False
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
            self.out.append("\n```\n")
        elif tag == "code" and not self.pre:
            self.out.append("`")
        elif tag in ("strong", "b"):
            self.out.append("**")
        elif tag in ("em", "i"):
            self.out.append("*")
        elif tag == "a":
            href = self.links.pop() if self.links else None
            self.out.append(f"]({href})" if href else "]")
        elif re.fullmatch(r"h[1-6]", tag) or tag in _BLOCK:
            self.out.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
            return
        if self.skip:
            return
        self.out.append(data if self.pre else re.sub(r"\s+", " ", data))

    def text(self) -> str:
        body = "".join(self.out)
        body = re.sub(r"[ \t]+\n", "\n", body)
        body = re.sub(r"\n{3,}", "\n\n", body).strip()
        title = " ".join("".join(self.title).split())
        return f"# {title}\n\n{body}" if title and not body.startswith("#") else body


def html_to_markdown(html: str, base_url: str = "") -> str:
    parser = _Markdown(base_url)
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # malformed markup: fall back to stripped text
        return re.sub(r"<[^>]+>", " ", html)
    return parser.text()


def _is_html(content_type: str, content: str) -> bool:
    if "html" in content_type.lower():
        return True
    head = content.lstrip()[:200].lower()
    return head.startswith("<!doctype html") or head.startswith("<html")


class WebFetchTool(Tool):
    name = "WebFetch"
    identifier = "WEB_FETCH"
    read_only = True
    description = (
        "Fetch a web page or file by URL (http or https) and return its content as Markdown "
        "text. The user may have to approve the fetch. Use for documentation and references "
        "the user points to; it cannot log in or run JavaScript."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"url": {"type": "string", "description": "The URL to fetch."}},
        "required": ["url"],
    }

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        ui = pb.WebFetchArgs(url=loose_str(args, "url"))
        return pb.ToolCall(web_fetch_tool_call=pb.WebFetchToolCall(args=ui))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.web_fetch_tool_call.result.error.url = loose_str(args, "url")
        call.web_fetch_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        url = arg_str(args, "url", required=True).strip()
        if urlparse(url).scheme not in ("http", "https") or not urlparse(url).netloc:
            raise ToolError(f"Not an http(s) URL: {url}")
        fetch_args = pb.WebFetchArgs(url=url, tool_call_id=ctx.call_id)
        call = pb.ToolCall(web_fetch_tool_call=pb.WebFetchToolCall(args=fetch_args))
        res = call.web_fetch_tool_call.result
        answer = await ctx.interact(
            pb.InteractionQuery(web_fetch_request_query=pb.WebFetchRequestQuery(args=fetch_args))
        )
        verdict = (
            answer.web_fetch_request_response.WhichOneof("result")
            if answer.WhichOneof("result") == "web_fetch_request_response"
            else None
        )
        if verdict != "approved":
            reason = (
                answer.web_fetch_request_response.rejected.reason
                if verdict == "rejected"
                else "no answer"
            ) or "no reason given"
            res.rejected.reason = reason
            return ToolOutcome(f"The user declined to fetch {url}: {reason}", True, call)
        reply = await ctx.exec(
            pb.ExecServerMessage(fetch_args=pb.FetchArgs(url=url, tool_call_id=ctx.call_id))
        )
        result = result_of(reply, "fetch_result")
        kind = result.WhichOneof("result") if result is not None else None
        if result is None or kind != "success":
            detail = (
                (result.error.error or "unknown error")
                if result is not None and kind == "error"
                else no_result_text(reply, f"fetch {url}")
            )
            res.error.url = url
            res.error.error = detail
            return ToolOutcome(f"Fetching {url} failed: {detail}", True, call)
        ok = result.success
        content = ok.content
        if _is_html(ok.content_type, content):
            content = html_to_markdown(content, ok.url or url)
        res.success.url = ok.url or url
        res.success.markdown = content
        status = ok.status_code
        head = f"URL: {ok.url or url}\nStatus: {status or 'unknown'}"
        if ok.content_type:
            head += f"\nContent-Type: {ok.content_type}"
        body = truncate_text(content) if content.strip() else "(empty response)"
        # Success is the fetch's oneof; an HTTP error page is still a result the model reads.
        return ToolOutcome(f"{head}\n\n{body}", False, call)
