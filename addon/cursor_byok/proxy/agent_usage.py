"""`GET /v1/agents/<id>/usage` (the SDK's `agent.get_usage()`) answered from our usage store.

A BYOK agent's turns ran on the user's provider, so Cursor has no usage for them: the SDK would
show zeros (or an error) for tokens the user did pay for. When the usage store has turns of that
agent (the SDK's agent id is the conversation id of its runs), the proxy answers with them, in
the shape the SDK reads: `{totalUsage, runs: [{id, usage}]}` (token counts; no `cost`, which the
SDK shows as "not reported"). `runId` selects one entry (our request id: what `runs[].id` says).
An agent we never served passes through to Cursor.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from pathlib import Path
from typing import Any

from mitmproxy import ctx
from mitmproxy import http

from cursor_byok.proxy import options
from cursor_byok.proxy.hosts import cursor_host
from cursor_byok.store.usage import TITLE
from cursor_byok.store.usage import store_for
from cursor_byok.store.usage import writer_for

log = logging.getLogger(__name__)

_PATH = re.compile(r"^/v1/agents/([^/?]+)/usage$")
_FLUSH_WAIT = 2.0  # seconds: a turn that just ended must be counted


def token_usage(rows: list[Any]) -> dict[str, int]:
    """The SDK's TokenUsage JSON: input without the cached part, as the SDK sums them [inf]."""
    cache_read = sum(r["cache_read_tokens"] for r in rows)
    cache_write = sum(r["cache_write_tokens"] for r in rows)
    uncached = max(0, sum(r["input_tokens"] for r in rows) - cache_read - cache_write)
    output = sum(r["output_tokens"] for r in rows)
    return {
        "inputTokens": uncached,
        "outputTokens": output,
        "cacheReadTokens": cache_read,
        "cacheWriteTokens": cache_write,
        "totalTokens": uncached + output + cache_read + cache_write,
        "reasoningTokens": sum(r["reasoning_tokens"] for r in rows),
    }


def usage_answer(rows: list[Any], run_id: str = "") -> dict[str, Any]:
    """The answer for an agent's usage rows (one entry per turn, by request id)."""
    if run_id:
        rows = [r for r in rows if r["request"] == run_id]
    return {
        "totalUsage": token_usage(rows),
        "runs": [{"id": r["request"], "usage": token_usage([r])} for r in rows],
    }


def _rows_of(data_dir: Path, agent_id: str) -> list[Any]:
    """The agent's turns (a turn that just ended is written first)."""
    writer_for(data_dir).flush(_FLUSH_WAIT)
    return [
        r
        for r in store_for(data_dir).rows()
        if r["conversation"] == agent_id and r["outcome"] != TITLE
    ]


class AgentUsage:
    def load(self, loader) -> None:
        options.declare(loader, "cursor_byok_data_dir", "cursor_byok_hosts")

    async def request(self, flow: http.HTTPFlow) -> None:
        if flow.response or flow.error or not flow.live or flow.request.method != "GET":
            return
        match = _PATH.match(flow.request.path.split("?", 1)[0])
        if match is None or not cursor_host(flow):
            return
        agent_id = match.group(1)
        rows = await asyncio.to_thread(_rows_of, options.data_dir(ctx.options), agent_id)
        if not rows:
            return  # not an agent of ours: Cursor answers
        answer = usage_answer(rows, flow.request.query.get("runId", ""))
        flow.response = http.Response.make(
            200, json.dumps(answer).encode(), {"content-type": "application/json"}
        )
        log.info("agent usage of %s answered from the usage store (%d turns)", agent_id, len(rows))
