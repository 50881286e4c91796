"""The test ToolContext: runs execs with the e2e client's local executor in a tmp workspace.

It assigns exec ids like the loop would, splits shell streams into non-terminal events (to
`on_event`) and the terminal result, records deltas and queries, answers interaction queries
from a script, and lets a test replace the client's answer for one exec kind (rejections,
throws, odd results).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import workspace_exec  # tests/e2e, put on sys.path by conftest.py

from cursor_byok.pb import agent_v1_pb2 as pb

Answer = pb.InteractionResponse | Callable[[pb.InteractionQuery], pb.InteractionResponse]
Override = Callable[[pb.ExecServerMessage], pb.ExecClientMessage | list[pb.ExecClientMessage]]


class FakeToolContext:
    def __init__(
        self,
        workspace: Path,
        *,
        mode: int = pb.AGENT_MODE_AGENT,
        request_context: pb.RequestContext | None = None,
        answers: dict[str, Answer] | None = None,
        overrides: dict[str, Override] | None = None,
        call_id: str = "call-1",
    ) -> None:
        self.workspace = workspace
        self.call_id = call_id
        self.model_call_id = "model-1"
        self.mode = mode
        if request_context is None:
            request_context = pb.RequestContext()
            request_context.env.workspace_paths.append(str(workspace))
            request_context.env.terminals_folder = str(workspace_exec.terminals_folder(workspace))
            request_context.env.shell = "bash"
        self.request_context = request_context
        self.todos: list[dict[str, Any]] = []
        self.answers = dict(answers or {})
        self.overrides = dict(overrides or {})
        self.execs: list[pb.ExecServerMessage] = []
        self.events: list[pb.ExecClientMessage] = []
        self.deltas: list[pb.ToolCallDelta] = []
        self.queries: list[pb.InteractionQuery] = []
        self._next_id = 1

    async def exec(
        self,
        message: pb.ExecServerMessage,
        on_event: Callable[[pb.ExecClientMessage], None] | None = None,
    ) -> pb.ExecClientMessage:
        request = pb.ExecServerMessage()
        request.CopyFrom(message)
        request.id = self._next_id
        request.exec_id = f"exec-{self._next_id}"
        self._next_id += 1
        self.execs.append(request)
        kind = request.WhichOneof("message")
        override = self.overrides.get(kind)
        if override is not None:
            produced = override(request)
            results = produced if isinstance(produced, list) else [produced]
        else:
            results = await asyncio.to_thread(workspace_exec.execute, self.workspace, request)
        for result in results:
            result.id = request.id
        *events, final = results
        for event in events:
            self.events.append(event)
            if on_event is not None:
                on_event(event)
        return final

    async def interact(self, query: pb.InteractionQuery) -> pb.InteractionResponse:
        self.queries.append(query)
        answer = self.answers.get(query.WhichOneof("query"))
        response = answer(query) if callable(answer) else (answer or pb.InteractionResponse())
        response.id = query.id
        return response

    def delta(self, delta: pb.ToolCallDelta) -> None:
        self.deltas.append(delta)

    def exec_kinds(self) -> list[str]:
        return [e.WhichOneof("message") for e in self.execs]


def thrown(request: pb.ExecServerMessage) -> pb.ExecClientMessage:
    """What the loop hands a tool when the client threw: a result with no oneof set."""
    return pb.ExecClientMessage()
