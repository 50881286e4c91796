"""The HTTP/2 `Run` transport: round trips and first frames, through mitmdump and without it.

Run: `uv run python bench/bench_run_transport.py [TURNS]` (part of `just bench`). Each turn of the
scripted agent has one exec round trip: the client answers the read exec, and the round trip ends
when the next server frame arrives. Printed side by side:

- `Run` through a real mitmdump (our h2 client, one connection);
- the same scripted turn straight against the in-process loopback streamer (no mitmproxy), the
  client answering through the session registry: what the proxy adds is the difference;
- time from the run request to the first frame, on `Run` and on RunSSE + BidiAppend.
Everything on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "tests"))

import httpx  # noqa: E402
from cursor_client import CursorLikeClient  # noqa: E402
from cursor_client import CursorTurn  # noqa: E402
from mitm import start_mitmdump  # noqa: E402

from cursor_byok.agent.scripted import ScriptedAgent  # noqa: E402
from cursor_byok.agent.turn import run_turn  # noqa: E402
from cursor_byok.pb import agent_v1_pb2 as pb  # noqa: E402
from cursor_byok.proxy.loopback.server import STREAM_HEADER  # noqa: E402
from cursor_byok.proxy.loopback.server import Streamer  # noqa: E402
from cursor_byok.proxy.loopback.server import StreamSpec  # noqa: E402
from cursor_byok.proxy.run_registry import RunRegistry  # noqa: E402
from cursor_byok.store.blobs import BlobStore  # noqa: E402
from cursor_byok.wire import connect  # noqa: E402


class TimedTurn(CursorTurn):
    """Notes when the exec result left and when the next frame came back."""

    first_sent = 0.0
    first_frame = 0.0
    answered_at: float | None = None
    round_trip: float | None = None

    async def append(self, message: pb.AgentClientMessage) -> None:
        kind = message.WhichOneof("message")
        if kind == "run_request" and not self.first_sent:
            self.first_sent = time.perf_counter()
        await super().append(message)
        if kind == "exec_client_message":
            self.answered_at = time.perf_counter()

    def _handle(self, message: pb.AgentServerMessage) -> None:
        now = time.perf_counter()
        if not self.first_frame:
            self.first_frame = now
        if self.answered_at is not None and self.round_trip is None:
            self.round_trip = now - self.answered_at
        super()._handle(message)


def ms(values: list[float]) -> str:
    if not values:
        return "n/a"
    values = sorted(values)
    p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
    return f"p50 {statistics.median(values) * 1000:6.2f} ms   p99 {p99 * 1000:6.2f} ms"


async def through_proxy(tmp: Path, workspace: Path, turns: int, transport: str):
    proxy = start_mitmdump(tmp / transport)
    client = CursorLikeClient.through(proxy, workspace, transport=transport, heartbeat_interval=5)
    round_trips, first_frames = [], []
    try:
        for _ in range(turns):
            turn = TimedTurn(client, str(uuid.uuid4()))
            await turn.run(client.run_request("read notes.txt", conversation_id=str(uuid.uuid4())))
            if turn.round_trip is not None:
                round_trips.append(turn.round_trip)
            first_frames.append(turn.first_frame - turn.first_sent)
    finally:
        await client.aclose()
        proxy.stop()
    return round_trips, first_frames


async def direct(tmp: Path, turns: int):
    """The same turns against the loopback streamer in this process: no mitmproxy at all."""
    blobs = BlobStore(tmp / "direct-blobs")

    async def runner(live, request) -> None:
        await run_turn(live, request, blobs=blobs, agent=ScriptedAgent())

    registry = RunRegistry(runner)
    registry.start()
    streamer = Streamer(registry)
    port = await streamer.start()
    round_trips = []
    async with httpx.AsyncClient(trust_env=False) as http:
        for _ in range(turns):
            request_id = str(uuid.uuid4())
            seqno = 0

            def send(message: pb.AgentClientMessage, request_id: str = request_id) -> None:
                nonlocal seqno
                raw = message.SerializeToString()
                registry.receive(request_id, seqno, message, raw=raw)
                seqno += 1

            spec = StreamSpec(request_id)
            answered = None
            trip = None
            async with http.stream(
                "POST",
                f"http://127.0.0.1:{port}/",
                headers={STREAM_HEADER: streamer.header_value(spec)},
            ) as response:
                first = CursorLikeClient.run_request("read notes.txt", conversation_id=request_id)
                send(first)
                decoder = connect.EnvelopeDecoder()
                async for chunk in response.aiter_raw():
                    for frame in decoder.feed(chunk):
                        if frame.is_end_stream:
                            continue
                        now = time.perf_counter()
                        if answered is not None and trip is None:
                            trip = now - answered
                        message = pb.AgentServerMessage.FromString(frame.payload)
                        if message.HasField("exec_server_message"):
                            reply = pb.AgentClientMessage()
                            reply.exec_client_message.id = message.exec_server_message.id
                            reply.exec_client_message.read_result.success.content = "alpha\n"
                            send(reply)
                            answered = time.perf_counter()
                        elif message.HasField("kv_server_message"):
                            reply = pb.AgentClientMessage()
                            reply.kv_client_message.id = message.kv_server_message.id
                            reply.kv_client_message.set_blob_result.SetInParent()
                            send(reply)
            if trip is not None:
                round_trips.append(trip)
    await streamer.stop()
    await registry.stop()
    return round_trips


async def main(turns: int) -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        workspace = tmp / "ws"
        workspace.mkdir()
        (workspace / "notes.txt").write_text("alpha\nbeta\n")
        run_trips, run_first = await through_proxy(tmp, workspace, turns, "run")
        _, sse_first = await through_proxy(tmp, workspace, turns, "bidi")
        direct_trips = await direct(tmp, turns)
    print(f"Run transport, {turns} scripted turns (exec answer → next frame):")
    print(f"  through mitmdump (Run, h2):     {ms(run_trips)}")
    print(f"  straight to the loopback:       {ms(direct_trips)}")
    print("first frame after the run request:")
    print(f"  Run:                            {ms(run_first)}")
    print(f"  RunSSE + BidiAppend:            {ms(sse_first)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "n", nargs="?", type=int, default=30, help="scripted turns per transport (default 30)"
    )
    asyncio.run(main(parser.parse_args().n))
