"""The tool interface the agent loop codes against, and the helpers every tool shares.

A tool turns one model tool call into Cursor's own machinery: `ExecServerMessage`s run by the
client, `InteractionQuery`s answered by the user, or nothing at all (local tools). It reports
the call to the chat UI as a typed `ToolCall` and hands the model a plain-text result.
Spec: docs/tools.md (rules in §1, per tool in §4).

Contract (kept deliberately small so the loop and the tools can evolve separately):

- `ui_call(args)` never raises: it is called on half-streamed arguments.
- `run(args, ctx)` never raises for tool-level failures; only `asyncio.CancelledError`
  propagates. Failures come back as `ToolOutcome(is_error=True)` with a message the model
  can act on and a typed error result on the UI `ToolCall`.
- Success is decided by the typed result oneof, never by scanning text.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ntpath
import posixpath
import weakref
from collections.abc import AsyncIterator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from typing import ClassVar
from typing import Protocol

from cursor_byok.errors import ByokError
from cursor_byok.pb import agent_v1_pb2 as pb

log = logging.getLogger(__name__)

# Caps for tool-result text given to the model (tools.md §1 rule 8: peers cap at 40-50 KB or
# 2,000 lines). Above them the text keeps its head and tail with a visible note between.
MAX_RESULT_CHARS = 50_000
MAX_RESULT_LINES = 2_000
# A single line longer than this is cut (minified files, base64 blobs) so it cannot eat the
# whole budget of a result.
MAX_LINE_CHARS = 2_000
# Caps for output copied into UI results (larger than the model's, the card can scroll).
MAX_UI_CHARS = 256_000

# agent.v1 AgentMode values, by the ids SwitchMode and the prompts use.
MODE_IDS: dict[int, str] = {
    pb.AGENT_MODE_AGENT: "agent",
    pb.AGENT_MODE_ASK: "ask",
    pb.AGENT_MODE_PLAN: "plan",
    pb.AGENT_MODE_DEBUG: "debug",
    pb.AGENT_MODE_TRIAGE: "triage",
    pb.AGENT_MODE_PROJECT: "project",
    pb.AGENT_MODE_MULTITASK: "multitask",
    pb.AGENT_MODE_CUSTOM: "custom",
}


class ToolContext(Protocol):
    """What a tool may use of the live turn; implemented by the agent loop.

    `exec` sends one exec request (the loop assigns `id`/`exec_id`) and returns the final
    result. For `shell_stream_args` the non-terminal `ShellStream` events (start, stdout,
    stderr, hook_context) go to `on_event` and the terminal one is returned. A result whose
    `message` oneof is unset means the client threw. `delta` sends a `tool_call_delta` for
    this call (shell output, streamed edit content). `todos` is the conversation's todo list
    as dicts `{"id", "content", "status"}` (status: pending | in_progress | completed |
    cancelled); TodoWrite mutates it in place.
    """

    call_id: str
    model_call_id: str
    mode: int
    request_context: pb.RequestContext
    todos: list[dict[str, Any]]

    async def exec(
        self,
        message: pb.ExecServerMessage,
        on_event: Callable[[pb.ExecClientMessage], None] | None = None,
    ) -> pb.ExecClientMessage: ...

    async def interact(self, query: pb.InteractionQuery) -> pb.InteractionResponse: ...

    def delta(self, delta: pb.ToolCallDelta) -> None: ...


@dataclass(frozen=True, slots=True)
class ToolImage:
    """An image a tool result carries (Read of an image, MCP image content).

    Only useful to vision models; `ToolOutcome.text` always says an image is attached, so a
    loop that ignores images still gives the model a coherent result.
    """

    data: bytes
    mime_type: str


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """The result of one tool call: text for the model and the completed UI card."""

    text: str
    is_error: bool
    tool_call: pb.ToolCall
    images: tuple[ToolImage, ...] = ()


class ToolError(ByokError):
    """A tool-level failure raised inside `Tool._run`; `Tool.run` turns it into an outcome.

    `tool_call` is the UI card with its typed error result when the raiser built one; else
    the tool's `error_call` builds it.
    """

    def __init__(self, message: str, tool_call: pb.ToolCall | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.tool_call = tool_call


class Tool:
    """Base of every tool: argument safety, error capture, the model-facing spec.

    Subclasses set the class attributes (MCP tools set them per instance), implement
    `_ui_call` (typed args from possibly partial args), `error_call` (the card with a typed
    error result) and `_run`.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
    read_only: ClassVar[bool] = True
    identifier: ClassVar[str] = ""

    def ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        """Typed args for partial_tool_call / tool_call_started; best effort, never raises."""
        try:
            return self._ui_call(args if isinstance(args, dict) else {})
        except Exception:  # partial or garbage args: an emptier card is fine
            log.debug("%s: ui_call on bad args %r", self.name, args, exc_info=True)
            try:
                return self._ui_call({})
            except Exception:
                return pb.ToolCall()

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        """Execute the call; every failure becomes an error outcome (CancelledError excepted)."""
        if not isinstance(args, dict):
            return self.failure({}, f"Invalid arguments for {self.name}: expected a JSON object.")
        try:
            return await self._run(args, ctx)
        except ToolError as exc:
            return ToolOutcome(
                text=exc.message,
                is_error=True,
                tool_call=exc.tool_call or self.error_call(args, exc.message),
            )
        except TimeoutError:
            return self.failure(args, f"{self.name} timed out waiting for the client.")
        except Exception as exc:
            log.exception("%s failed unexpectedly", self.name)
            return self.failure(args, f"{self.name} failed: {type(exc).__name__}: {exc}")

    def failure(self, args: dict[str, Any], message: str) -> ToolOutcome:
        """An error outcome with the typed error result on the card."""
        try:
            call = self.error_call(args, message)
        except Exception:
            call = self.ui_call(args)
        return ToolOutcome(text=message, is_error=True, tool_call=call)

    def spec(self) -> tuple[str, str, dict[str, Any]]:
        """(name, description, JSON schema) for the provider request."""
        return (self.name, self.description, self.parameters)

    # -- to implement -------------------------------------------------------------------

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        raise NotImplementedError

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        raise NotImplementedError

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


# --------------------------------------------------------------------------- arguments
#
# Models send numbers as strings, booleans as "true", single strings for lists; accept those
# instead of failing the call, but reject what cannot be read (ToolError with a clear text).


def _missing(key: str) -> ToolError:
    return ToolError(f"Missing required argument `{key}`.")


def arg_str(
    args: dict[str, Any],
    key: str,
    *,
    required: bool = False,
    default: str = "",
    allow_empty: bool = False,
) -> str:
    """A string argument; numbers are accepted and converted.

    `required` means the key must be present; `allow_empty` lets a required one be "" (file
    contents, replacement text).
    """
    value = args.get(key)
    if value is None:
        if required:
            raise _missing(key)
        return default
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ToolError(f"Argument `{key}` must be a string.")
    text = str(value)
    if required and not allow_empty and text == "":
        raise ToolError(f"Argument `{key}` must not be empty.")
    return text


def arg_opt_str(args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None or value == "":
        return None
    return arg_str(args, key)


def arg_int(args: dict[str, Any], key: str, *, default: int | None = None) -> int | None:
    """An integer argument; "42" and 42.0 are accepted."""
    value = args.get(key)
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        raise ToolError(f"Argument `{key}` must be an integer.")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return int(value.strip())
    raise ToolError(f"Argument `{key}` must be an integer, got {value!r}.")


def arg_bool(args: dict[str, Any], key: str, *, default: bool = False) -> bool:
    """A boolean argument; "true"/"false"/"1"/"0" are accepted."""
    value = args.get(key)
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "1", "yes"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "0", "no"):
        return False
    raise ToolError(f"Argument `{key}` must be a boolean, got {value!r}.")


def arg_str_list(args: dict[str, Any], key: str) -> list[str]:
    """A list of strings; a single string becomes a one-item list."""
    value = args.get(key)
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ToolError(f"Argument `{key}` must be a list of strings.")


def clamp32(value: int | None) -> int | None:
    """Clamp to the int32 range protobuf fields accept (models send absurd numbers)."""
    if value is None:
        return None
    return max(-(2**31), min(2**31 - 1, value))


def loose_str(args: Any, key: str) -> str:
    """For ui_call: the string at `key` if it is one, else ""."""
    if isinstance(args, dict):
        value = args.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
    return ""


def loose_int(args: Any, key: str) -> int | None:
    """For ui_call: the integer at `key` if readable, else None."""
    try:
        return arg_int(args, key) if isinstance(args, dict) else None
    except ToolError:
        return None


# --------------------------------------------------------------------------- paths


def workspace_roots(ctx: ToolContext) -> list[str]:
    try:
        return [p for p in ctx.request_context.env.workspace_paths if p]
    except AttributeError:
        return []


def _is_windows_path(path: str) -> bool:
    return bool(ntpath.splitdrive(path)[0]) or path.startswith("\\\\")


def is_absolute(path: str) -> bool:
    return path.startswith("/") or _is_windows_path(path)


def resolve_path(ctx: ToolContext, path: str) -> str:
    """An absolute path: relative paths are taken from the first workspace root.

    Cursor's tools want absolute paths; models sometimes send relative ones. The client's
    OS decides the separator, so join in the root's own style.
    """
    if not path or is_absolute(path):
        return path
    roots = workspace_roots(ctx)
    if not roots:
        return path
    root = roots[0]
    if _is_windows_path(root):
        return ntpath.normpath(ntpath.join(root, path))
    return posixpath.normpath(posixpath.join(root, path))


# --------------------------------------------------------------------------- text


def cap_line(line: str, limit: int = MAX_LINE_CHARS) -> str:
    if len(line) <= limit:
        return line
    return f"{line[:limit]}… [{len(line) - limit} characters cut]"


def truncate_text(
    text: str, *, max_chars: int = MAX_RESULT_CHARS, max_lines: int = MAX_RESULT_LINES
) -> str:
    """Keep the head and tail of a long text with a visible "… N lines omitted …" note.

    Models read both ends of build logs and test output; the note tells them there is more
    (and how much) so they can narrow the command instead of trusting a cut text.
    """
    if len(text) <= max_chars and text.count("\n") < max_lines:
        return text
    lines = text.split("\n")
    half_chars, half_lines = max_chars // 2, max(1, max_lines // 2)

    def take(seq: list[str]) -> list[str]:
        kept: list[str] = []
        size = 0
        for line in seq:
            if len(kept) >= half_lines or size + len(line) + 1 > half_chars:
                break
            kept.append(line)
            size += len(line) + 1
        return kept

    head = take(lines)
    tail = take(lines[len(head) :][::-1])[::-1]
    omitted = len(lines) - len(head) - len(tail)
    if omitted <= 0 or (not head and not tail):
        # A few enormous lines: cut by characters instead.
        cut = len(text) - 2 * half_chars
        return f"{text[:half_chars]}\n… {cut} characters omitted …\n{text[-half_chars:]}"
    note = f"… {omitted} lines omitted …"
    return "\n".join([*head, note, *tail])


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


# --------------------------------------------------------------------------- exec helpers


def exec_message(**kwargs: Any) -> pb.ExecServerMessage:
    """An ExecServerMessage with one args field set (the loop assigns id and exec_id)."""
    return pb.ExecServerMessage(**kwargs)


def result_of(reply: pb.ExecClientMessage, expected: str) -> Any | None:
    """The typed result for `expected` (e.g. "read_result"), or None if the client threw
    or answered with another kind."""
    kind = reply.WhichOneof("message")
    if kind != expected:
        if kind is not None:
            log.warning("expected %s, the client answered %s", expected, kind)
        return None
    return getattr(reply, expected)


def no_result_text(reply: pb.ExecClientMessage, what: str) -> str:
    kind = reply.WhichOneof("message")
    if kind is None:
        return f"The client failed to {what} (it reported an internal error); try again."
    return f"The client answered {what} with an unexpected result ({kind})."


# --------------------------------------------------------------------------- path locks

_locks: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[str, tuple[asyncio.Lock, list[int]]]
] = weakref.WeakKeyDictionary()


@contextlib.asynccontextmanager
async def path_lock(path: str) -> AsyncIterator[None]:
    """Serialise mutating calls on one path in call order (tools.md §1 rule 7).

    asyncio.Lock is FIFO, and tools take it before their first await, so two edits of one
    file in one batch apply in the order the loop started them. Entries are reference
    counted so the table does not grow with every path ever edited.
    """
    loop = asyncio.get_running_loop()
    table = _locks.setdefault(loop, {})
    key = posixpath.normpath(path.replace("\\", "/")) if path else path
    lock, users = table.setdefault(key, (asyncio.Lock(), [0]))
    users[0] += 1
    try:
        async with lock:
            yield
    finally:
        users[0] -= 1
        if users[0] == 0:
            table.pop(key, None)
