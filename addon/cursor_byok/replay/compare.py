"""`cursor-byok replay --compare CAPTURE`: a conformance diff of our server against another one.

The capture is a recording of a run served by someone else — Cursor's own backend, passed
through and recorded natively (`Recorder.passthrough_*`), or an older cursor-byok. Our server is
driven with the same start (the recorded run request) and the same model behaviour: each model
call is rebuilt from the recorded frames (thinking and text deltas, tool calls with their typed
args mapped back to our tool names), and the client's side answers our requests from the
recorded answers of the same kind (the k-th `read_args` gets the k-th recorded `read_result`;
KV SETs are acknowledged; GETs answered from recorded blobs). Then the two streams are compared
structurally, not byte for byte: message kinds and their order (runs of deltas collapsed), the
tool-call variants, the fields set in checkpoints, KV usage and how the stream ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import difflib
import json
import tempfile
from collections import Counter
from collections import defaultdict
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from rich.console import Console
from rich.text import Text

from cursor_byok.capture.format import ModelCall
from cursor_byok.capture.format import RecordedTurn
from cursor_byok.capture.format import client_kind
from cursor_byok.capture.format import server_kind
from cursor_byok.capture.redact import scrub_end_stream
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.providers import Finish
from cursor_byok.providers import ModelRequest
from cursor_byok.providers import ProviderEvent
from cursor_byok.providers import ReasoningDelta
from cursor_byok.providers import TextDelta
from cursor_byok.providers import ToolCallEnd
from cursor_byok.providers import ToolCallStart
from cursor_byok.providers import Usage
from cursor_byok.replay.engine import ReplayAgent
from cursor_byok.replay.engine import ReplayError
from cursor_byok.replay.engine import _proxy
from cursor_byok.replay.frames import BIDI_APPEND
from cursor_byok.replay.frames import RUN_SSE
from cursor_byok.replay.frames import parse_frame
from cursor_byok.wire import connect
from cursor_byok.wire.bidi import encode_bidi_append
from cursor_byok.wire.bidi import encode_run_sse_request

# Kinds that stream: a run of them is one structural element.
_DELTAS = frozenset(
    {
        "interaction_update.text_delta",
        "interaction_update.thinking_delta",
        "interaction_update.token_delta",
        "interaction_update.partial_tool_call",
        "interaction_update.tool_call_delta",
        "exec_server_message.shell_stream_args",
    }
)


# --- structure -----------------------------------------------------------------------------------


@dataclass
class Structure:
    """What a stream is made of, for comparing two servers."""

    kinds: list[str]  # message kinds in order, a run of one delta kind as "kind+"
    tools: list[str]  # tool-call variants started, in order
    checkpoint_fields: list[str]  # fields set in any conversation_checkpoint_update
    kv: dict[str, int]  # set_blob_args / get_blob_args counts
    execs: list[str]  # exec request kinds, in order
    end: str  # "ok", "error <code>" or "no end"


def structure(frames: list[bytes], end: dict[str, Any] | None) -> Structure:
    kinds: list[str] = []
    tools: list[str] = []
    fields: set[str] = set()
    kv: Counter[str] = Counter()
    execs: list[str] = []
    for raw in frames:
        message = parse_frame(raw)
        kind = server_kind(raw)
        if message is None:
            kinds.append(kind)
            continue
        shown = f"{kind}+" if kind in _DELTAS else kind
        if not (kinds and kinds[-1] == shown and kind in _DELTAS):
            kinds.append(shown)
        which = message.WhichOneof("message")
        if which == "interaction_update":
            update = message.interaction_update
            if update.WhichOneof("message") == "tool_call_started":
                tools.append(update.tool_call_started.tool_call.WhichOneof("tool") or "?")
        elif which == "conversation_checkpoint_update":
            fields |= {fd.name for fd, _ in message.conversation_checkpoint_update.ListFields()}
        elif which == "kv_server_message":
            kv[message.kv_server_message.WhichOneof("message") or "?"] += 1
        elif which == "exec_server_message":
            execs.append(message.exec_server_message.WhichOneof("message") or "?")
    if end is None:
        ended = "no end"
    elif isinstance(end.get("error"), dict):
        ended = f"error {end['error'].get('code')}"
    else:
        ended = "ok"
    return Structure(kinds, tools, sorted(fields), dict(sorted(kv.items())), execs, ended)


def differences(theirs: Structure, ours: Structure) -> list[str]:
    """Human lines naming each structural difference; empty when the servers agree."""
    out: list[str] = []
    if theirs.kinds != ours.kinds:
        out.append("message kinds and order differ:")
        diff = difflib.unified_diff(theirs.kinds, ours.kinds, "theirs", "ours", n=1, lineterm="")
        out += ["  " + line for line in list(diff)[2:]]
    if theirs.tools != ours.tools:
        out.append(f"tool-call variants: theirs {theirs.tools}, ours {ours.tools}")
    if theirs.execs != ours.execs:
        out.append(f"exec requests: theirs {theirs.execs}, ours {ours.execs}")
    if theirs.checkpoint_fields != ours.checkpoint_fields:
        only_theirs = sorted(set(theirs.checkpoint_fields) - set(ours.checkpoint_fields))
        only_ours = sorted(set(ours.checkpoint_fields) - set(theirs.checkpoint_fields))
        out.append(f"checkpoint fields: only theirs {only_theirs}, only ours {only_ours}")
    if theirs.kv != ours.kv:
        out.append(f"KV usage: theirs {theirs.kv}, ours {ours.kv}")
    if theirs.end != ours.end:
        out.append(f"end of stream: theirs {theirs.end}, ours {ours.end}")
    return out


# --- the model behaviour, rebuilt from their frames ------------------------------------------


def _tool_names() -> dict[str, str]:
    """ToolCall variant (`read_tool_call`) → our tool name (`Read`)."""
    from cursor_byok.tools.registry import BUILTIN

    names: dict[str, str] = {}
    for name, factory in BUILTIN.items():
        try:
            variant = factory().ui_call({}).WhichOneof("tool")
        except Exception:
            continue
        if variant:
            names.setdefault(variant, name)
    return names


_REQUEST = ModelRequest(model="compare", system="", messages=[])


def model_calls(frames: list[bytes], end: dict[str, Any] | None = None) -> list[ModelCall]:
    """One model call per step (`step_started`): its thinking, text, token counts and started
    tool calls. A step their stream never completed before ending in an error fails.

    Edits cannot be rebuilt: the edit card of `tool_call_started` carries only the path."""
    failed = (end or {}).get("error")
    error = str(failed.get("message", "")) if isinstance(failed, dict) else None
    names = _tool_names()
    calls: list[ModelCall] = []
    events: list[ProviderEvent] | None = None
    parts: list[dict[str, Any]] = []
    completed = False

    def close() -> None:
        if events is None:
            return
        if not completed and error is not None:
            # Their stream ended in an error before this step completed: the model call failed.
            calls.append(ModelCall(_REQUEST, events, {"kind": "other", "message": error}))
            return
        has_tools = any(p["type"] == "tool-call" for p in parts)
        message = {"role": "assistant", "content": _merged(parts)}
        events.append(Finish("tool_calls" if has_tools else "stop", message))
        calls.append(ModelCall(_REQUEST, events))

    for raw in frames:
        message = parse_frame(raw)
        if message is None or message.WhichOneof("message") != "interaction_update":
            continue
        update = message.interaction_update
        which = update.WhichOneof("message")
        if which == "step_started":
            close()
            events, parts, completed = [], [], False
        if events is None:
            continue
        if which == "thinking_delta":
            events.append(ReasoningDelta(update.thinking_delta.text))
            parts.append({"type": "reasoning", "text": update.thinking_delta.text})
        elif which == "text_delta":
            events.append(TextDelta(update.text_delta.text))
            parts.append({"type": "text", "text": update.text_delta.text})
        elif which == "token_delta":
            events.append(Usage(output_tokens=update.token_delta.tokens))
        elif which == "step_completed":
            completed = True
        elif which == "tool_call_started":
            started = update.tool_call_started
            variant = started.tool_call.WhichOneof("tool") or ""
            name = names.get(variant, variant)
            args = _args(started.tool_call, variant)
            events.append(ToolCallStart(started.call_id, name))
            events.append(ToolCallEnd(started.call_id, name, args, json.dumps(args)))
            parts.append(
                {"type": "tool-call", "toolCallId": started.call_id, "toolName": name, "args": args}
            )
    close()
    return calls


def _args(call: pb.ToolCall, variant: str) -> dict[str, Any]:
    if not variant:
        return {}
    typed = getattr(call, variant)
    if "args" not in typed.DESCRIPTOR.fields_by_name or not typed.HasField("args"):
        return {}
    return json_format.MessageToDict(typed.args, preserving_proto_field_name=True)


def _merged(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Adjacent text (or reasoning) parts joined, as a provider's final message has them."""
    out: list[dict[str, Any]] = []
    for part in parts:
        if out and part["type"] in ("text", "reasoning") and out[-1]["type"] == part["type"]:
            out[-1] = {**out[-1], "text": out[-1]["text"] + part["text"]}
        else:
            out.append(dict(part))
    return out


# --- the client, answering from their recording -------------------------------------------------


class _Answers:
    """Recorded client answers, handed out by kind in recorded order."""

    def __init__(self, capture: RecordedTurn) -> None:
        self.exec: dict[str, list[list[pb.AgentClientMessage]]] = defaultdict(list)
        self.interaction: dict[str, list[pb.InteractionResponse]] = defaultdict(list)
        self.blobs: dict[bytes, bytes] = dict(capture.blobs)
        by_exec: dict[int, list[pb.AgentClientMessage]] = {}
        asked: dict[int, str] = {}
        gets: dict[int, bytes] = {}
        for raw in capture.server:
            message = parse_frame(raw)
            if message is None:
                continue
            if message.WhichOneof("message") == "exec_server_message":
                request = message.exec_server_message
                asked[request.id] = request.WhichOneof("message") or "?"
            elif message.kv_server_message.HasField("get_blob_args"):
                gets[message.kv_server_message.id] = message.kv_server_message.get_blob_args.blob_id
        for line in capture.client:
            client = pb.AgentClientMessage.FromString(line.raw) if line.raw else None
            if client is None:
                continue
            which = client.WhichOneof("message")
            if which in ("exec_client_message", "exec_client_control_message"):
                ident = (
                    client.exec_client_message.id
                    if which == "exec_client_message"
                    else client.exec_client_control_message.stream_close.id
                )
                if ident not in by_exec:
                    by_exec[ident] = []
                    self.exec[asked.get(ident, "?")].append(by_exec[ident])
                by_exec[ident].append(client)
            elif which == "interaction_response":
                response = client.interaction_response
                self.interaction[response.WhichOneof("result") or "?"].append(response)
            elif which == "kv_client_message" and client.kv_client_message.id in gets:
                result = client.kv_client_message.get_blob_result
                if result.HasField("blob_data"):
                    self.blobs[gets[client.kv_client_message.id]] = result.blob_data

    def answer(self, message: pb.AgentServerMessage) -> list[pb.AgentClientMessage]:
        which = message.WhichOneof("message")
        if which == "kv_server_message":
            kv = message.kv_server_message
            reply = pb.KvClientMessage(id=kv.id)
            if kv.HasField("set_blob_args"):
                reply.set_blob_result.SetInParent()
            else:
                reply.get_blob_result.SetInParent()
                data = self.blobs.get(kv.get_blob_args.blob_id)
                if data is not None:
                    reply.get_blob_result.blob_data = data
            return [pb.AgentClientMessage(kv_client_message=reply)]
        if which == "exec_server_message":
            request = message.exec_server_message
            queue = self.exec.get(request.WhichOneof("message") or "?")
            if not queue:
                return []  # nothing recorded to answer with: our server waits (reported)
            out = []
            for recorded in queue.pop(0):
                copy = pb.AgentClientMessage()
                copy.CopyFrom(recorded)
                if copy.HasField("exec_client_message"):
                    copy.exec_client_message.id = request.id
                    copy.exec_client_message.exec_id = request.exec_id
                else:
                    copy.exec_client_control_message.stream_close.id = request.id
                out.append(copy)
            return out
        if which == "interaction_query":
            query = message.interaction_query
            kind = (query.WhichOneof("query") or "").replace("_query", "_response")
            responses = self.interaction.get(kind)
            response = pb.InteractionResponse()
            if responses:
                response.CopyFrom(responses.pop(0))
            response.id = query.id
            return [pb.AgentClientMessage(interaction_response=response)]
        return []


@dataclass
class Compared:
    capture: RecordedTurn
    theirs: Structure
    ours: Structure
    frames: list[bytes] = field(default_factory=list)

    @property
    def differences(self) -> list[str]:
        return differences(self.theirs, self.ours)


async def compare_capture(capture: RecordedTurn, *, stall: float = 5.0) -> Compared:
    """Drive our server like their recording and compare the structures."""
    from cursor_byok import outbound
    from cursor_byok.store.blobs import BlobStore

    run = next((line for line in capture.client if line.kind == "run_request"), None)
    if run is None:
        raise ReplayError("the capture has no run request")
    ours_capture = dataclasses.replace(
        capture,
        meta={**capture.meta, "agent": "provider"},
        calls=model_calls(capture.server, capture.end),
    )
    agent = ReplayAgent(ours_capture)
    answers = _Answers(capture)
    with tempfile.TemporaryDirectory(prefix="cursor-byok-compare-") as tmp:
        root = Path(tmp)
        store = BlobStore(root / "data" / "blobs")
        for data in capture.blobs.values():
            store.put(data)
        async with (
            _proxy(agent, root / "conf", root / "data") as port,
            outbound.new_session(connect_timeout=stall + 30, read_timeout=stall + 30) as http,
        ):
            client = _Client(http, f"http://127.0.0.1:{port}", capture.request_id)
            frames, end = await client.run(run.raw, answers, stall)
    return Compared(capture, structure(capture.server, capture.end), structure(frames, end), frames)


class _Client:
    """Plays Cursor against our proxy: a RunSSE stream, the run request and the recorded
    answers as BidiAppends, all under one owner."""

    def __init__(self, http: Any, base: str, request_id: str) -> None:  # outbound.new_session
        self.http = http
        self.base = base
        self.request_id = request_id
        self.seqno = 0
        self.headers = {
            "connect-protocol-version": "1",
            "x-request-id": request_id,
            # one owner for the BidiAppends and the RunSSE, on connections of their own
            "authorization": "Bearer cursor-byok-replay",
        }

    async def send(self, message: bytes) -> None:
        body = encode_bidi_append(self.request_id, self.seqno, message, binary=True)
        self.seqno += 1
        async with self.http.post(
            self.base + BIDI_APPEND,
            data=body,
            headers={**self.headers, "content-type": "application/proto"},
        ) as reply:
            await reply.read()

    async def run(
        self, run_request: bytes, answers: _Answers, stall: float
    ) -> tuple[list[bytes], dict[str, Any] | None]:
        """Our frames (heartbeats left out) and end-stream; what came before a stall of
        `stall` seconds or a broken connection."""
        from cursor_byok import outbound

        frames: list[bytes] = []
        end: dict[str, Any] | None = None
        body = connect.encode_frame(encode_run_sse_request(self.request_id))
        async with self.http.post(
            self.base + RUN_SSE,
            data=body,
            headers={**self.headers, "content-type": "application/connect+proto"},
        ) as response:
            await self.send(run_request)
            decoder = connect.EnvelopeDecoder(
                encoding=response.headers.get("connect-content-encoding")
            )
            chunks = aiter(response.content.iter_any())
            with contextlib.suppress(TimeoutError, StopAsyncIteration, outbound.ClientError):
                while end is None:
                    chunk = await asyncio.wait_for(anext(chunks), stall)
                    for frame in decoder.feed(chunk):
                        if frame.is_end_stream:
                            end = scrub_end_stream(frame.payload)
                            break
                        message = parse_frame(frame.payload)
                        if message is not None and message.interaction_update.HasField("heartbeat"):
                            continue
                        frames.append(frame.payload)
                        for reply in answers.answer(message) if message else []:
                            await self.send(reply.SerializeToString())
        return frames, end


def report(results: list[Compared], console: Console) -> int:
    """One verdict per capture; 0 when our structure matches theirs, 1 otherwise."""
    same = 0
    for result in results:
        found = result.differences
        verdict = ("same    ", "bold green") if not found else ("DIFFERS ", "bold red")
        console.print(Text.assemble(verdict, f" {result.capture.name}"))
        kinds = client_kind(result.capture.client[0].raw) if result.capture.client else "-"
        console.print(
            Text(
                f"  theirs: {len(result.capture.server)} frames, ours: {len(result.frames)}; "
                f"driven by their {kinds} and recorded answers",
                style="dim",
            )
        )
        for line in found:
            console.print(Text("  " + line))
        same += not found
    console.print(Text(f"{same} of {len(results)} capture(s) structurally the same", style="bold"))
    return 0 if same == len(results) else 1


async def compare_files(paths: list[Path], *, stall: float = 5.0) -> list[Compared]:
    from cursor_byok.capture.format import capture_files
    from cursor_byok.capture.format import load_capture

    captures = [load_capture(p) for p in capture_files(paths)]
    return [await compare_capture(capture, stall=stall) for capture in captures]


def main(paths: list[Path], *, stall: float, console: Console) -> int:
    """`cursor-byok replay --compare`: 0 structurally the same, 1 different, 2 unusable."""
    from cursor_byok.capture.format import CaptureError
    from cursor_byok.outbound import ClientError

    try:
        results = asyncio.run(compare_files(paths, stall=stall))
    except (CaptureError, ReplayError, ClientError, OSError) as exc:
        console.print(Text(f"cursor-byok replay --compare: {exc}", style="red"))
        return 2
    return report(results, console)
