"""Format-neutral scripted responses for the fake provider (what the model "says")."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Literal

Format = Literal["chat", "responses", "anthropic"]


@dataclass
class Step:
    """One scripted response, format-neutral. Build it with `Script` methods."""

    kind: Literal[
        "reply",
        "error",
        "stream_error",
        "cut",
        "hang",
        "raw",
        "empty",
        "stall",
        "trickle",
        "giant",
        "endless",
    ]
    text: str = ""
    reasoning: str | None = None
    tool_calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    status: int = 200
    message: str = ""
    code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    usage: tuple[int, int, int] = (100, 20, 0)  # input, output, cache read
    hard: bool = False  # cut: drop the TCP connection instead of ending the body cleanly
    delay: float | None = None  # seconds between chunks; None = the server's chunk_delay
    size: int = 0  # giant: bytes of one endless line


class Script:
    """FIFO of steps. Each method appends one step and returns it (tweak it if needed,
    e.g. `fp.script.text("slow").delay = 0.5` to stream slowly)."""

    def __init__(self) -> None:
        self._steps: deque[Step] = deque()

    def __len__(self) -> int:
        return len(self._steps)

    def add(self, step: Step) -> Step:
        self._steps.append(step)
        return step

    def pop(self) -> Step | None:
        return self._steps.popleft() if self._steps else None

    def text(
        self, text: str, *, reasoning: str | None = None, usage: tuple[int, int, int] | None = None
    ) -> Step:
        """A final answer (optionally preceded by reasoning)."""
        return self.add(Step("reply", text=text, reasoning=reasoning, usage=usage or (100, 20, 0)))

    def tool_calls(
        self,
        calls: list[tuple[str, str, dict[str, Any]]],
        *,
        text: str = "",
        reasoning: str | None = None,
        usage: tuple[int, int, int] | None = None,
    ) -> Step:
        """A model turn that calls tools: [(call_id, name, args), ...] (parallel if several)."""
        return self.add(
            Step(
                "reply",
                text=text,
                reasoning=reasoning,
                tool_calls=list(calls),
                usage=usage or (100, 20, 0),
            )
        )

    def error(
        self,
        status: int,
        *,
        message: str | None = None,
        code: str | None = None,
        retry_after: float | None = None,
        headers: dict[str, str] | None = None,
    ) -> Step:
        """An HTTP error response in the provider's error body shape."""
        all_headers = dict(headers or {})
        if retry_after is not None:
            all_headers["retry-after"] = f"{retry_after:g}"
        return self.add(
            Step(
                "error",
                status=status,
                message=message or f"fake error {status}",
                code=code,
                headers=all_headers,
            )
        )

    def stream_error(
        self, *, text: str = "", message: str = "fake stream error", code: str | None = None
    ) -> Step:
        """HTTP 200, optional text, then an in-band error event (overloaded/server error)."""
        return self.add(Step("stream_error", text=text, message=message, code=code))

    def cut(self, *, text: str = "partial", hard: bool = False) -> Step:
        """Stream some text, then end without the format's terminator (`hard`: reset TCP)."""
        return self.add(Step("cut", text=text, hard=hard))

    def hang(self, *, text: str = "partial") -> Step:
        """Stream some text, then wait until the client disconnects (cancellation tests)."""
        return self.add(Step("hang", text=text))

    def stall(self) -> Step:
        """HTTP 200 headers, then nothing at all until the client gives up."""
        return self.add(Step("stall"))

    def trickle(self, *, every: float = 0.05, text: str = "") -> Step:
        """HTTP 200, then only keep-alive comments (`: keep-alive`) every `every` seconds:
        the connection looks alive to a read timeout, yet no event ever comes (after the
        events of `text`, if given: the first-token budget is then spent)."""
        return self.add(Step("trickle", text=text, delay=every))

    def endless(self, *, text: str = "more ", every: float = 0.01) -> Step:
        """HTTP 200 and a text delta every `every` seconds, for ever (until the client goes)."""
        return self.add(Step("endless", text=text, delay=every))

    def giant(self, size: int) -> Step:
        """HTTP 200 and one `data:` line of `size` bytes that never ends (sent lazily)."""
        return self.add(Step("giant", size=size))

    def empty(self) -> Step:
        """HTTP 200 with an empty body (llama.cpp does this)."""
        return self.add(Step("empty"))

    def raw(
        self, chunks: list[bytes], *, status: int = 200, headers: dict[str, str] | None = None
    ) -> Step:
        """Exact body chunks, sent as they are."""
        return self.add(
            Step("raw", chunks=list(chunks), status=status, headers=dict(headers or {}))
        )
