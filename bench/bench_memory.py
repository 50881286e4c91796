"""Memory follows the bytes (issue 27 item 1): the proxy's RSS growth per MB of streamed text.

    uv run python bench/bench_memory.py [--tiny-mib 1.2] [--kb-mib 8] [--endless-mib 17]
        [--endless-seconds 40] [--only tiny,kb,endless] [--tree PATH]
        [--provider openai-chat|anthropic|openai-responses]

Each case gets a fresh mitmdump with the addon (defaults: coalescing 15 ms, the provider agent)
and one warm-up turn of the same shape (64 KiB of text), then one measured Agent turn over
Cursor's default transport (one HTTP/2 `Run` stream; KV acks on the open upload). The model is
an endpoint in this process (OpenAI Chat, or --provider's wire format: each adapter keeps a
part's text its own way) that streams as fast as the proxy reads:

- tiny: deltas of 20 characters, --tiny-mib MiB of text (the issue: 1.2 MB of bursts grew the
  proxy by +261 MiB);
- kb: deltas of 1 KiB, --kb-mib MiB;
- endless: 100-character deltas without end, paced to --endless-mib MiB in --endless-seconds s
  (the issue: 17 MiB in 40 s took the proxy from 89 to 375 MiB); once the client has received
  --endless-mib MiB it presses stop (a cancel action) and waits for the end of the turn.

Growth = VmHWM during the turn (reset to the current RSS just before it, /proc/<pid>/clear_refs)
minus VmRSS before it, per MiB of text the client received; "after" is VmRSS once the turn is
over (the finished run keeps its frames for reconnects for cursor_byok_linger_ms). The goal
printed is the issue's: growth ≤ 3 MB per MB of text, whatever the delta sizes.

--tree PATH measures another checkout (its .venv's mitmdump and its addon/main.py), e.g. the
tree before the fix. Linux only (/proc), 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import re
import signal
import string
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(HERE))

import h2.settings  # noqa: E402
from mitm import Mitm  # noqa: E402
from mitm import start_mitmdump  # noqa: E402
from provider_config import KEY_ENV  # noqa: E402
from results import DEFAULT  # noqa: E402
from results import record  # noqa: E402
from streamlib import _CHAT_HEAD  # noqa: E402
from streamlib import _CHAT_TAIL  # noqa: E402
from streamlib import RUN  # noqa: E402
from streamlib import _chat_event  # noqa: E402
from streamlib import _chunk  # noqa: E402
from streamlib import _Envelopes  # noqa: E402
from streamlib import _headers  # noqa: E402
from streamlib import client_tls_h2  # noqa: E402
from streamlib import open_h2  # noqa: E402
from streamlib import read_body  # noqa: E402
from streamlib import reset_peak  # noqa: E402
from streamlib import run_request  # noqa: E402
from streamlib import status_kib  # noqa: E402

from cursor_byok.pb import agent_v1_pb2 as pb  # noqa: E402
from cursor_byok.wire import connect  # noqa: E402

MiB = 1 << 20
GOAL = 3.0  # MB of growth per MB of text
ASK = re.compile(rb"bench-mem chars=(\d+) bytes=(\d+) rate=([\d.]+)")
POOL = "".join(random.Random(27).choices(string.ascii_letters + " ", k=MiB))  # text to slice


def _sse(event: str, body: dict) -> bytes:
    return b"event: %s\ndata: %s\n\n" % (
        event.encode(),
        json.dumps(body, separators=(",", ":")).encode(),
    )


def _anthropic_delta(text: str) -> bytes:
    return _sse(
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
    )


def _responses_delta(text: str) -> bytes:
    return _sse(
        "response.output_text.delta",
        {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
         "content_index": 0, "delta": text},
    )  # fmt: skip


_ANTHROPIC_HEAD = _sse(
    "message_start",
    {"type": "message_start", "message": {"id": "msg_bench", "type": "message",
     "role": "assistant", "model": "bench", "content": [],
     "usage": {"input_tokens": 100, "output_tokens": 1}}},
) + _sse(
    "content_block_start",
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
)  # fmt: skip
_ANTHROPIC_TAIL = (
    _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    + _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 200},
        },
    )
    + _sse("message_stop", {"type": "message_stop"})
)
_RESPONSES_HEAD = _sse(
    "response.created",
    {"type": "response.created", "response": {"id": "resp_bench", "status": "in_progress"}},
) + _sse(
    "response.output_item.added",
    {"type": "response.output_item.added", "output_index": 0,
     "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}},
)  # fmt: skip
_RESPONSES_TAIL = _sse(
    "response.completed",
    {"type": "response.completed", "response": {"id": "resp_bench", "status": "completed",
     "usage": {"input_tokens": 100, "output_tokens": 200, "total_tokens": 300}}},
)  # fmt: skip
_END = b"0\r\n\r\n"


@dataclass(frozen=True)
class WireFormat:
    """What the fake provider sends for one provider kind (--provider)."""

    path: bytes  # the request path it answers
    head: bytes  # the HTTP head and the opening events
    delta: Callable[[str], bytes]  # one text delta's event
    tail: bytes  # the closing events and the chunked body's end


FORMATS = {
    "openai-chat": WireFormat(b"/chat/completions", _CHAT_HEAD, _chat_event, _CHAT_TAIL),
    "anthropic": WireFormat(
        b"/messages",
        _CHAT_HEAD + _chunk(_ANTHROPIC_HEAD),
        _anthropic_delta,
        _chunk(_ANTHROPIC_TAIL) + _END,
    ),
    "openai-responses": WireFormat(
        b"/responses",
        _CHAT_HEAD + _chunk(_RESPONSES_HEAD),
        _responses_delta,
        _chunk(_RESPONSES_TAIL) + _END,
    ),
}
KIND = "openai-chat"  # --provider: the wire format the fake provider speaks


class Provider:
    """A provider endpoint (`--provider`: OpenAI Chat by default) streaming what the user's
    message asks: `bench-mem chars=N bytes=B rate=R` is B bytes of N-character deltas (B = 0:
    without end), paced to R bytes a second (0: as fast as the reader takes them)."""

    def __init__(self) -> None:
        self.server: asyncio.Server | None = None
        self.sent = 0  # text bytes of the current stream

    async def start(self) -> str:
        self.server = await asyncio.start_server(self.serve, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/v1"

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(
            ConnectionError, asyncio.IncompleteReadError, ValueError, asyncio.CancelledError
        ):
            while line := await reader.readline():
                headers: dict[str, str] = {}
                while (raw := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = raw.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await read_body(reader, headers)
                match = ASK.search(body)
                if not line.split()[1].endswith(FORMATS[KIND].path) or match is None:
                    writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                    continue
                chars, total, rate = int(match[1]), int(match[2]), float(match[3])
                await self.stream(writer, chars, total, rate)
        writer.close()

    async def stream(self, writer, chars: int, total: int, rate: float) -> None:
        wire = FORMATS[KIND]
        writer.write(wire.head)
        self.sent = 0
        start = time.monotonic()
        offset = 0
        while not total or self.sent < total:
            batch = []
            for _ in range(max(1, 32768 // chars)):  # ~32 KiB of text a write
                if offset + chars > len(POOL):
                    offset = 0
                batch.append(wire.delta(POOL[offset : offset + chars]))
                offset += chars
                self.sent += chars
                if total and self.sent >= total:
                    break
            writer.write(_chunk(b"".join(batch)))
            await writer.drain()
            if rate:  # paced: never ahead of the clock
                ahead = self.sent / rate - (time.monotonic() - start)
                if ahead > 0:
                    await asyncio.sleep(ahead)
        writer.write(wire.tail)
        await writer.drain()


def write_config(tmp: Path, base_url: str) -> Path:
    path = tmp / "config.toml"
    path.write_text(
        f"""
default_model = "Fake Model"

[providers.bench]
kind = "{KIND}"
base_url = "{base_url}"
api_key_env = "{KEY_ENV}"
max_retries = 0

[[models]]
name = "Fake Model"
provider = "bench"
model = "bench-1"
context_window = 1000000
"""
    )
    path.chmod(0o600)
    return path


RSS_PROBE = False  # --rss-probe: the trace is rss_probe_script.py's timeline, not tracemalloc's


def start_proxy(
    tmp: Path, base_url: str, tree: Path | None, trace: Path | None = None, linger_ms: int = 0
) -> Mitm:
    tmp.mkdir(parents=True, exist_ok=True)
    command = None
    script = "rss_probe_script.py" if RSS_PROBE else "memory_script.py"
    extra = ["-s", str(HERE / script)] if trace is not None else []
    if linger_ms:
        extra += ["--set", f"cursor_byok_linger_ms={linger_ms}"]
    if tree is not None:  # another checkout: its own mitmdump, its own addon
        command = [
            str(tree / ".venv" / "bin" / "mitmdump"),
            "--listen-host", "127.0.0.1", "-p", "0",
            "--set", f"confdir={tmp / 'mitmconf'}",
            "--set", "connection_strategy=lazy",
            "--set", f"cursor_byok_data_dir={tmp / 'data'}",
            "--set", "cursor_byok_hosts=api2.cursor.test",
            "--set", "cursor_byok_agent=provider",
            "--set", f"cursor_byok_config={write_config(tmp, base_url)}",
            "-s", str(tree / "addon" / "main.py"),
            *extra,
        ]  # fmt: skip
    return start_mitmdump(
        tmp,
        *extra,
        agent="provider",
        config=write_config(tmp, base_url),
        env={KEY_ENV: "sk-bench-not-a-key", "BENCH_TRACE_OUT": str(trace or "")},
        command=command,
    )


@dataclass
class Turn:
    chars: int = 0  # text characters received (ASCII: bytes)
    frames: int = 0
    end: str = ""  # "ok" or the error
    seconds: float = 0.0
    request_id: str = ""


async def one_turn(
    proxy: Mitm, workspace: Path, ask: str, *, stop_at: int = 0, timeout: float = 600
) -> Turn:
    """One Agent turn on a `Run` stream of its own connection; with `stop_at`, the client
    presses stop once it has received that many characters."""
    loop = asyncio.get_running_loop()
    tls = client_tls_h2(proxy.ca_file)
    conn = await open_h2(proxy.port, tunnel="api2.cursor.test:443", tls=tls)
    assert conn.conn is not None  # a reader as fast as the proxy: a 16 MiB stream window
    conn.conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 16 * MiB})
    conn._flush()
    turn = Turn()
    done = loop.create_future()
    stream_id = 0
    stopped = False

    def send(message: pb.AgentClientMessage) -> None:
        conn.send(stream_id, connect.encode_frame(message.SerializeToString()))

    def frame(flags: int, payload: bytes, now: int) -> None:
        nonlocal stopped
        if flags & connect.FLAG_END_STREAM:
            end = connect.parse_end_stream(payload)
            turn.end = "ok" if end.ok else f"{end.error.code}: {end.error.message}"
            if not done.done():
                done.set_result(None)
            return
        turn.frames += 1
        message = pb.AgentServerMessage.FromString(payload)
        kind = message.WhichOneof("message")
        if kind == "interaction_update":
            if message.interaction_update.WhichOneof("message") == "text_delta":
                turn.chars += len(message.interaction_update.text_delta.text)
                if stop_at and turn.chars >= stop_at and not stopped:
                    stopped = True
                    action = pb.AgentClientMessage()
                    action.conversation_action.cancel_action.reason = "stop"
                    send(action)
        elif kind == "kv_server_message":
            kv = message.kv_server_message
            reply = pb.KvClientMessage(id=kv.id)
            if kv.WhichOneof("message") == "set_blob_args":
                reply.set_blob_result.SetInParent()
            else:
                reply.get_blob_result.SetInParent()
            send(pb.AgentClientMessage(kv_client_message=reply))

    envelopes = _Envelopes(frame)
    started = time.monotonic()
    try:
        turn.request_id = str(uuid.uuid4())
        headers = _headers(turn.request_id, "application/connect+proto")
        headers["te"] = "trailers"
        stream_id, _, ended = conn.request(RUN, headers, envelopes.feed)
        send(run_request(ask, workspace))
        async with asyncio.timeout(timeout):
            await asyncio.wait([done, ended], return_when=asyncio.FIRST_COMPLETED)
        if not done.done():
            try:
                ended.result()
                turn.end = "the stream ended without an end-stream envelope"
            except Exception as exc:
                turn.end = f"{type(exc).__name__}: {exc}"
            turn.end += f" after {turn.chars} characters, {turn.frames} frames"
        conn.send(stream_id, b"", end=True)
    finally:
        turn.seconds = time.monotonic() - started
        conn.close()
    return turn


@dataclass
class Case:
    name: str
    chars: int  # characters a delta
    mib: float  # text to stream (endless: where the client presses stop)
    seconds: float = 0.0  # pacing (0: as fast as the proxy reads)
    endless: bool = False


async def dropped_rss(pid: int, turns: int, ask: str, proxy: Mitm, workspace: Path, linger: int):
    """--turns: that many more turns of the same shape, then VmRSS once every run was dropped
    (the linger is over: the run's frames, turn and transcript are garbage)."""
    for _ in range(turns):
        turn = await one_turn(proxy, workspace, ask)
        assert turn.end == "ok", turn.end
    await asyncio.sleep(linger / 1000 + 3)  # the drop runs on the linger timer
    return status_kib(pid, "VmRSS")


async def measure(
    case: Case,
    tmp: Path,
    workspace: Path,
    tree: Path | None,
    trace: Path | None = None,
    turns: int = 0,
    linger_ms: int = 0,
) -> dict:
    provider = Provider()
    base_url = await provider.start()
    proxy = start_proxy(tmp / case.name, base_url, tree, trace, linger_ms)
    pid = proxy.process.pid
    try:
        warm = await one_turn(
            proxy, workspace, f"bench-mem chars={case.chars} bytes={64 * 1024} rate=0"
        )
        assert warm.end == "ok", warm.end
        total = int(case.mib * MiB)
        if trace is not None:
            proxy.process.send_signal(signal.SIGUSR1)
        reset_peak(pid)
        before = status_kib(pid, "VmRSS")
        rate = total / case.seconds if case.seconds else 0
        ask = f"bench-mem chars={case.chars} bytes={0 if case.endless else total} rate={rate:.0f}"
        turn = await one_turn(
            proxy,
            workspace,
            ask,
            stop_at=total if case.endless else 0,
        )
        peak = status_kib(pid, "VmHWM")
        after = status_kib(pid, "VmRSS")
        dropped = 0
        if turns:
            dropped = await dropped_rss(pid, turns - 1, ask, proxy, workspace, linger_ms)
        if trace is not None:
            proxy.process.send_signal(signal.SIGUSR2)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not (trace.exists() and trace.stat().st_size):
                await asyncio.sleep(0.2)
            print(trace.read_text() if trace.exists() else "no trace written")
    finally:
        proxy.stop()
        assert provider.server is not None
        provider.server.close()
    text_mib = turn.chars / MiB
    growth = (peak - before) / 1024
    return {
        "case": case,
        "turn": turn,
        "before": before / 1024,
        "peak": peak / 1024,
        "after": after / 1024,
        "dropped": dropped / 1024,
        "growth": growth,
        "text_mib": text_mib,
        "per_mib": growth / text_mib if text_mib else float("nan"),
    }


def report(results: list[dict], tree: Path | None) -> None:
    print(f"\nproxy: {tree or ROOT}")
    print("| case | delta | text | turn | frames | RSS before | peak | after | growth | per MB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        case, turn = r["case"], r["turn"]
        end = "ok" if turn.end == "ok" else turn.end[:60]
        if turn.end != "ok":
            print(turn.end, file=sys.stderr)
        goal = "✔" if r["per_mib"] <= GOAL else "✘"
        print(
            f"| {case.name} | {case.chars} ch | {r['text_mib']:.1f} MiB in {turn.seconds:.1f} s "
            f"| {end} | {turn.frames} | {r['before']:.0f} MiB | {r['peak']:.0f} MiB "
            f"| {r['after']:.0f} MiB | +{r['growth']:.0f} MiB | {r['per_mib']:.2f} {goal} |"
        )
        if r["dropped"]:
            print(f"{case.name}: VmRSS once every run was dropped: {r['dropped']:.0f} MiB")


async def run(args: argparse.Namespace) -> None:
    cases = {
        "tiny": Case("tiny", 20, args.tiny_mib),
        "kb": Case("kb", 1024, args.kb_mib),
        "endless": Case("endless", 100, args.endless_mib, args.endless_seconds, endless=True),
    }
    chosen = [cases[name] for name in args.only.split(",")]
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp_name:
        tmp = Path(tmp_name)
        workspace = tmp / "workspace"
        workspace.mkdir()
        (workspace / "README.md").write_text("# bench\n")
        global RSS_PROBE, KIND
        RSS_PROBE = args.rss_probe
        KIND = args.provider
        for case in chosen:
            print(f"{case.name}: {case.mib:g} MiB of {case.chars}-character deltas ...", flush=True)
            for repeat in range(args.repeats):
                trace = (args.tracemalloc or args.rss_probe) and tmp / f"trace-{case.name}.txt"
                results.append(
                    await measure(
                        case,
                        tmp / f"r{repeat}",
                        workspace,
                        args.tree,
                        trace or None,
                        args.turns,
                        args.linger_ms,
                    )
                )
    report(results, args.tree)
    if args.json is not None:
        record(args.json, "memory", figures(results))


def figures(results: list[dict]) -> dict[str, dict]:
    """Each case's figures for the JSON file: of several runs, the median one by MB per MB, with
    the range beside it (a small case's growth is a few MiB, and moves by one from run to run)."""
    by_case: dict[str, list[dict]] = {}
    for r in results:
        by_case.setdefault(r["case"].name, []).append(r)
    out = {}
    for name, runs in by_case.items():
        ranked = sorted(runs, key=lambda r: r["per_mib"])
        r = ranked[(len(ranked) - 1) // 2]
        out[name] = {
            "ok": all(run["turn"].end == "ok" for run in runs),
            "runs": len(runs),
            "text_mib": round(r["text_mib"], 2),
            "growth_mib": round(r["growth"], 1),
            "mb_per_mb": round(r["per_mib"], 2),
            "mb_per_mb_range": [round(ranked[0]["per_mib"], 2), round(ranked[-1]["per_mib"], 2)],
            "after_minus_before_mib": round(r["after"] - r["before"], 1),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny-mib", type=float, default=1.2)
    parser.add_argument("--kb-mib", type=float, default=8.0)
    parser.add_argument("--endless-mib", type=float, default=17.0)
    parser.add_argument("--endless-seconds", type=float, default=40.0)
    parser.add_argument("--only", default="tiny,kb,endless")
    parser.add_argument(
        "--provider",
        choices=sorted(FORMATS),
        default="openai-chat",
        help="the wire format the fake provider streams (each adapter keeps the text its own way)",
    )
    parser.add_argument(
        "--turns",
        type=int,
        default=0,
        help="measured turns in a row (issue 33 item 10: RSS once the runs are dropped)",
    )
    parser.add_argument("--linger-ms", type=int, default=0, help="cursor_byok_linger_ms")
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="measure each case this many times, each in a fresh proxy (the JSON file gets the "
        "median run and the range)",
    )
    parser.add_argument("--tree", type=Path, default=None, help="another checkout to measure")
    parser.add_argument(
        "--tracemalloc",
        action="store_true",
        help="print who holds the bytes at the turn's peak (bench/memory_script.py; slow, and "
        "the RSS figures then include tracemalloc's own)",
    )
    parser.add_argument(
        "--rss-probe",
        action="store_true",
        help="print when the RSS grew by each MiB during the turn and what the main thread was "
        "running then (bench/rss_probe_script.py)",
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=DEFAULT,
        help=f"merge the figures into this JSON file (default {DEFAULT})",
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
