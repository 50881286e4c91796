"""What the live status shows of a turn while it runs: its model, tokens, running tool, outcome.

Kept apart from `Turn` so the status display (`proxy/status.py`) reads one small object, and the
agent's modules change it only through its methods.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from dataclasses import field

from cursor_byok.pb import agent_v1_pb2 as pb


@dataclass
class UsageTally:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    reported: set[str] = field(default_factory=set)
    # Characters of text and thinking shown since the provider last reported output tokens
    # (most report them at the end of a call): the live status's rate while a call streams.
    streaming_chars: int = 0

    def add(self, **counts: int | None) -> None:
        for name, value in counts.items():
            if value is not None:
                setattr(self, name, getattr(self, name) + value)
                self.reported.add(name)
        if counts.get("output_tokens") is not None:
            self.streaming_chars = 0

    def live_output_tokens(self) -> int:
        """Output tokens so far: those reported, and ~4 characters a token of what streamed
        since."""
        return self.output_tokens + self.streaming_chars // 4

    def turn_ended(self) -> pb.TurnEndedUpdate:
        update = pb.TurnEndedUpdate()
        for name in sorted(self.reported):
            if hasattr(update, name):
                setattr(update, name, getattr(self, name))
        return update


@dataclass
class TurnStatus:
    """The turn as the status display shows it; `track` follows the UI updates it emits."""

    model: str = ""  # the model serving the turn (the one that answered, after a fallback)
    fallback_from: str | None = None  # the model a fallback served for (agent/chain.py)
    current_tool: str | None = None  # the latest tool still running (or being written)
    outcome: str | None = None
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None  # monotonic time the turn ended (its rate freezes)
    running_tools: dict[str, str] = field(default_factory=dict)  # call id -> tool, start order
    step_id: int = 0  # the latest step's (`StepStartedUpdate`)
    step_started: float | None = None  # while a step runs: when it started

    def start_step(self) -> int:
        self.step_id += 1
        self.step_started = time.monotonic()
        return self.step_id

    def complete_step(self) -> tuple[int, int] | None:
        """The step that ends now and its duration in ms (None when no step runs)."""
        if self.step_started is None:
            return None
        ms = int((time.monotonic() - self.step_started) * 1000)
        self.step_started = None
        return self.step_id, ms

    def serve(self, model: str, fallback_from: str | None = None) -> None:
        """The model that serves the turn from now on (usage prices it, the status shows it)."""
        self.model = model
        self.fallback_from = fallback_from

    def end(self, outcome: str) -> None:
        """The turn is over: its outcome shows, its rate freezes (if the answer did not yet)."""
        self.outcome = outcome
        if self.ended is None:
            self.ended = time.monotonic()

    def track(self, variant: dict) -> None:
        """Which tool the status shows: the latest one started and not completed (a batch runs
        several; the first to finish must not blank the column), or one whose arguments the
        model is still writing (`Name…`)."""
        running = self.running_tools
        if "tool_call_started" in variant:
            started = variant["tool_call_started"]
            running.pop(started.call_id, None)
            running[started.call_id] = started.tool_call.WhichOneof("tool") or "tool"
        elif "partial_tool_call" in variant:
            partial = variant["partial_tool_call"]
            if partial.call_id not in running:
                running[partial.call_id] = (partial.tool_call.WhichOneof("tool") or "tool") + "…"
        elif "tool_call_completed" in variant:
            running.pop(variant["tool_call_completed"].call_id, None)
        elif "step_completed" in variant or "turn_ended" in variant:
            for call_id in [c for c, tool in running.items() if tool.endswith("…")]:
                del running[call_id]  # written, never started (a refused call)
            if "turn_ended" in variant:
                self.ended = time.monotonic()  # the answer is complete; acks may follow
        else:
            return
        self.current_tool = next(reversed(running.values()), None)
