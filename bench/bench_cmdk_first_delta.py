"""Cmd-K's time to the first edit delta against the provider's own first token (issue 34 item 4).

The same scripted answer is asked of the fake provider twice per round: directly (a streaming
Chat Completions request: the time to its first text delta is the provider's own first token),
and through a real mitmdump as Cmd-K (`StreamCmdK`: the time to the first `edit_stream`). The
difference is what cursor-byok adds: reading the request, building the prompt, one provider
connection (new or pooled), the loopback hop, mitmproxy. Everything on 127.0.0.1.

Also: how long after the client goes away mid-answer the provider's connection is closed (the
provider call cancelled), over 5 rounds.

Run: `uv run python bench/bench_cmdk_first_delta.py [ROUNDS]` (default 20).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "tests"))

from cursor_client import FAKE_TOKEN  # noqa: E402
from cursor_client import CursorLikeClient  # noqa: E402
from fakes.fake_cursor import FakeCursor  # noqa: E402
from fakes.fake_provider import FakeProvider  # noqa: E402
from mitm import start_in_front_of  # noqa: E402
from provider_config import write_config  # noqa: E402

from cursor_byok.pb import aiserver_features_pb2 as fpb  # noqa: E402
from cursor_byok.protocol import connect  # noqa: E402

ANSWER = "x2 = 4\nx3 = 6\n" * 20
CMDK = "/aiserver.v1.CmdKService/StreamCmdK"


def request() -> fpb.StreamCmdKRequest:
    C = fpb.ContextItem
    immediate = C.CmdKImmediateContext(relative_workspace_path="src/app.py")
    for number in range(1, 400):
        immediate.lines.add(line=f"x{number} = {number}", line_number=number)
    message = fpb.StreamCmdKRequest(session_id=str(uuid.uuid4()))
    for item in (
        C(cmd_k_query=C.CmdKQuery(query="double the values")),
        C(cmd_k_selection=C.CmdKSelection(lines=["x2 = 2", "x3 = 3"], start_line_number=2)),
        C(cmd_k_immediate_context=immediate),
    ):
        message.context_items.add(context_item=item)
    return message


async def direct_first_token(session: aiohttp.ClientSession, fp: FakeProvider) -> float:
    body = {
        "model": "fake-upstream-1",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": "double the values"}],
    }
    started = time.perf_counter()
    async with session.post(
        fp.base_url + "/chat/completions", json=body, headers={"authorization": "Bearer sk-test"}
    ) as response:
        async for line in response.content:
            if not line.startswith(b"data: {"):
                continue
            choices = json.loads(line[6:]).get("choices") or [{}]
            if choices[0].get("delta", {}).get("content"):
                first = time.perf_counter() - started
                async for _ in response.content:  # read it to its end, as the proxy does
                    pass
                return first
    raise RuntimeError("no text from the fake provider")


async def cancel_delay(client: CursorLikeClient, fp: FakeProvider) -> float:
    """Seconds from the client closing a Cmd-K stream after its first edit delta to the fake
    provider seeing its connection closed."""
    index = len(fp.requests)
    fp.script.hang(text="x2 = 4\n")
    body = connect.encode_frame(request().SerializeToString())
    headers = {
        "content-type": "application/connect+proto",
        "connect-protocol-version": "1",
        "authorization": FAKE_TOKEN,
    }
    decoder = connect.EnvelopeDecoder()
    async with client.http.stream(
        "POST", client.base_url + CMDK, content=body, headers=headers
    ) as response:
        async for chunk in response.aiter_raw():
            frames = decoder.feed(chunk)
            if any(
                fpb.StreamCmdKResponseContextWrapped.FromString(f.payload).real_response.WhichOneof(
                    "response"
                )
                == "edit_stream"
                for f in frames
                if not f.is_end_stream
            ):
                break
        closed = time.perf_counter()
    await fp.wait_for_disconnect(index, timeout=30)
    return time.perf_counter() - closed


async def cmd_k_first_delta(client: CursorLikeClient) -> float:
    body = connect.encode_frame(request().SerializeToString())
    headers = {
        "content-type": "application/connect+proto",
        "connect-protocol-version": "1",
        "authorization": FAKE_TOKEN,
    }
    decoder = connect.EnvelopeDecoder()
    first = None
    started = time.perf_counter()
    async with client.http.stream(
        "POST", client.base_url + CMDK, content=body, headers=headers
    ) as response:
        async for chunk in response.aiter_raw():
            for frame in decoder.feed(chunk):
                if frame.is_end_stream or first is not None:
                    continue
                message = fpb.StreamCmdKResponseContextWrapped.FromString(frame.payload)
                if message.real_response.WhichOneof("response") == "edit_stream":
                    first = time.perf_counter() - started
    if first is None:
        raise RuntimeError("no edit delta through the proxy")
    return first


async def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        workspace = tmp_path / "ws"
        workspace.mkdir()
        async with (
            FakeProvider(chunk_delay=0.005) as fp,
            FakeCursor(tmp_path / "backend") as backend,
            aiohttp.ClientSession() as session,
        ):
            config = write_config(tmp_path, fp, "openai-chat")
            proxy = start_in_front_of(
                backend, tmp_path / "proxy", config, "--set", "cursor_byok_status=false"
            )
            client = CursorLikeClient.to_backend(backend.port, proxy, workspace)
            direct, proxied = [], []
            try:
                for _ in range(rounds + 1):  # the first round warms both paths up
                    fp.script.text(ANSWER)
                    direct.append(await direct_first_token(session, fp))
                    fp.script.text(ANSWER)
                    proxied.append(await cmd_k_first_delta(client))
                cancels = [await cancel_delay(client, fp) for _ in range(5)]
            finally:
                await client.aclose()
                proxy.stop()
    direct, proxied = direct[1:], proxied[1:]
    added = [p - d for p, d in zip(proxied, direct, strict=True)]
    print(f"{rounds} rounds, one Cmd-K request of 400 lines each, fake provider on 127.0.0.1")
    for name, values in (
        ("provider's own first token", direct),
        ("Cmd-K first edit delta", proxied),
        ("added by cursor-byok", added),
    ):
        ms = sorted(v * 1000 for v in values)
        p90 = ms[min(len(ms) - 1, int(len(ms) * 0.9))]
        print(f"  {name:28s} median {statistics.median(ms):7.1f} ms   p90 {p90:7.1f} ms")
    worst = max(cancels) * 1000
    print(f"  client gone -> provider call closed: median {statistics.median(cancels) * 1000:.1f}"
          f" ms, worst of 5 {worst:.1f} ms")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20))
