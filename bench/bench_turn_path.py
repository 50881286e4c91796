"""Our own CPU per delta and per turn, without mitmproxy: the Agent turn in one process.

    uv run python bench/bench_turn_path.py [--turns 20] [--deltas 200] [--rounds 8]
                                           [--interval 0.005] [--floor]

`bench_streaming.py` measures the whole proxy against plain mitmproxy, and its rounds spread
by ±10–15 %: a cut of a few per cent of the addon's own work cannot show there. This bench runs
only what is ours, in this process: the run core's asyncio shell (`RunRegistry`, `LiveRun`, the
write pump), `run_turn` with the real `ProviderAgent` reading the feeder's OpenAI-Chat stream
(bench/streamlib.py, another process, `--interval` between deltas) on aiohttp, and an
in-process client that reads every frame and acknowledges each blob SET as Cursor does. No
mitmproxy, no TLS, no loopback hop. Each round runs `--turns` turns at once and reports this
process's CPU (`time.process_time`, the worker threads that write blobs included) per delta;
the figures are medians over `--rounds`. `--deltas 1` gives the fixed cost of a turn.

`--floor`: the same provider streams read, parsed (our SSE parser, `json`) and thrown away,
in the same process: what any addon pays for the provider's side; the rest is the turn's.
Compare two trees with PYTHONPATH=<tree>/addon (the bench itself stays this one).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import aiohttp
from provider_config import KEY_ENV
from provider_config import MODEL
from provider_config import write_config
from streamlib import EDGE
from streamlib import STAMP_RE
from streamlib import FeederProcess
from streamlib import by_place
from streamlib import percentile_ms

from cursor_byok.agent.loop import ProviderAgent
from cursor_byok.agent.turn import TurnOptions
from cursor_byok.agent.turn import run_turn
from cursor_byok.config.load import load_config
from cursor_byok.core.runs import RunConfig
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.providers.pool import ProviderPool
from cursor_byok.providers.sse import SseParser
from cursor_byok.proxy.run_registry import RunRegistry
from cursor_byok.store.blobs import BlobStore
from cursor_byok.wire import connect

OWNER = b"bench"


def run_request(request_id: str) -> pb.AgentClientMessage:
    message = pb.AgentClientMessage()
    run = message.run_request
    run.conversation_id = request_id
    run.run_id = request_id
    run.action.user_message_action.user_message.text = "stream"
    run.action.user_message_action.request_context.SetInParent()  # inline: no KV GET for it
    run.model_details.model_id = MODEL
    run.conversation_state.SetInParent()
    return message


class Client:
    """One attempt read to its end, each blob SET acknowledged (Cursor's side, in process)."""

    def __init__(self, registry: RunRegistry, request_id: str) -> None:
        self.registry = registry
        self.request_id = request_id
        self.seqno = 0
        self.texts = 0
        self.ok = False
        self.latencies: list[int] = []  # ns, feeder write → this client's read, in order

    def send(self, message: pb.AgentClientMessage) -> None:
        raw = message.SerializeToString()
        self.registry.receive(self.request_id, self.seqno, message, raw=raw, owner=OWNER)
        self.seqno += 1

    def _frames(self, chunk: bytes) -> bool:
        for frame in connect.decode_envelopes(chunk):
            if frame.is_end_stream:
                self.ok = connect.parse_end_stream(frame.payload).ok
                return True
            message = pb.AgentServerMessage.FromString(frame.payload)
            kv = message.kv_server_message
            if message.HasField("kv_server_message") and kv.HasField("set_blob_args"):
                answer = pb.AgentClientMessage()
                answer.kv_client_message.id = kv.id
                answer.kv_client_message.set_blob_result.SetInParent()
                self.send(answer)
            elif message.interaction_update.HasField("text_delta"):
                self.texts += 1
                now = time.monotonic_ns()
                for stamp in STAMP_RE.finditer(message.interaction_update.text_delta.text):
                    self.latencies.append(now - int(stamp.group(1)))
        return False

    async def run(self) -> None:
        sub = self.registry.subscribe(self.request_id, owner=OWNER)
        done = asyncio.get_running_loop().create_future()

        def write(chunk: bytes) -> None:
            if self._frames(chunk) and not done.done():
                done.set_result(None)

        self.send(run_request(self.request_id))
        pump = asyncio.ensure_future(self.registry.stream_to(sub, write, until=done))
        await asyncio.wait_for(asyncio.shield(done), 60)
        pump.cancel()


async def turns_round(registry: RunRegistry, names: list[str], latencies: list[list[int]]) -> int:
    clients = [Client(registry, name) for name in names]
    await asyncio.gather(*(c.run() for c in clients))
    if not all(c.ok for c in clients):
        raise SystemExit("a turn did not end ok")
    latencies.extend(c.latencies for c in clients)
    return sum(c.texts for c in clients)


def p99_by_place(latencies: list[list[int]]) -> str:
    """p99 of the deltas' latency: all, each turn's first EDGE, the rest, its last EDGE."""
    first, middle, last = (percentile_ms(part, 0.99) for part in by_place(latencies))
    every = percentile_ms([x for turn in latencies for x in turn], 0.99)
    return (
        f"latency p99 {every:.1f} ms (first {EDGE} {first:.1f} / the rest {middle:.1f} / "
        f"last {EDGE} {last:.1f})"
    )


async def floor_round(base_url: str, count: int, session: aiohttp.ClientSession) -> int:
    async def one() -> int:
        body = {"model": "x", "stream": True, "messages": [{"role": "user", "content": "s"}]}
        parser, events = SseParser(), 0
        async with session.post(f"{base_url}/chat/completions", json=body) as response:
            async for chunk in response.content.iter_any():
                for event in parser.feed(chunk):
                    if event.data != "[DONE]":
                        json.loads(event.data)
                        events += 1
        return events

    return sum(await asyncio.gather(*(one() for _ in range(count))))


async def main_async(args: argparse.Namespace) -> None:
    feeder = FeederProcess(args.deltas, args.interval)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ[KEY_ENV] = "sk-bench-not-a-key"
            config = load_config(write_config(Path(tmp), feeder, "openai-chat"))
            pool = ProviderPool()
            blobs = BlobStore(Path(tmp) / "data" / "blobs")

            async def runner(live, request) -> None:
                agent = ProviderAgent(config, pool=pool)
                await run_turn(
                    live, request, blobs=blobs, agent=agent, options=TurnOptions(journal=True)
                )

            registry = RunRegistry(
                runner,
                config=RunConfig(
                    max_owner_turns=10**6, max_owner_attempts=10**6, max_attempts=10**6
                ),
            )
            registry.start()
            session = aiohttp.ClientSession()
            per_delta: list[float] = []
            per_turn: list[float] = []
            latencies: list[list[int]] = []
            for round_ in range(args.rounds + 1):  # the first warms up
                names = [f"r{round_}-{i}" for i in range(args.turns)]
                cpu = time.process_time()
                if args.floor:
                    deltas = await floor_round(feeder.base_url, args.turns, session)
                else:
                    deltas = await turns_round(registry, names, latencies if round_ else [])
                spent = time.process_time() - cpu
                if deltas < args.turns:  # text frames (coalesced) or provider events
                    raise SystemExit(f"only {deltas} text frames for {args.turns} turns")
                if round_:
                    per_delta.append(spent / (args.turns * args.deltas) * 1e6)
                    per_turn.append(spent / args.turns * 1e3)
            await session.close()
            await registry.stop()
            await pool.aclose()
    finally:
        feeder.stop()
    what = "floor (provider read and parsed)" if args.floor else "turn path"
    print(
        f"{what}: {args.turns} turns × {args.deltas} deltas {args.interval * 1000:g} ms apart, "
        f"{args.rounds} rounds: CPU {statistics.median(per_delta):.1f} µs per delta "
        f"[{min(per_delta):.1f}–{max(per_delta):.1f}], {statistics.median(per_turn):.2f} ms per "
        f"turn; load {os.getloadavg()[0]:.2f}"
    )
    if latencies and args.deltas > 50:
        print(p99_by_place(latencies))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--deltas", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--interval", type=float, default=0.005)
    parser.add_argument("--floor", action="store_true")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
