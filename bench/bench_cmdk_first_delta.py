"""Cmd-K's time to the first edit delta against the provider's own first token (issue 34 item 4).

The same scripted answer is asked of the fake provider twice per round: directly (the very
streaming Chat Completions request cursor-byok sends it for this Cmd-K, prompt included: the time
to its first text delta is the provider's own first token), and through a real mitmdump as Cmd-K
(`StreamCmdK`: the time to the first `edit_stream`). Also one provider round trip (a request it
answers at once, on the pooled connection) per round: the issue's yardstick. The
difference is what cursor-byok adds: reading the request, building the prompt, one provider
connection (new or pooled), the loopback hop, mitmproxy. Everything on 127.0.0.1.

Also: how long after the client goes away mid-answer the provider's connection is closed (the
provider call cancelled), over 5 rounds.

Run: `uv run python bench/bench_cmdk_first_delta.py [ROUNDS]` (default 20).
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
import uuid
from pathlib import Path
from typing import Any

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
from cursor_byok.wire import connect  # noqa: E402

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


async def direct_first_token(
    session: aiohttp.ClientSession, fp: FakeProvider, body: dict[str, Any]
) -> float:
    """The provider's own first token for `body`: the very request cursor-byok sent it for
    Cmd-K (the same prompt: a provider reads a long prompt before it answers)."""
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


# The same direct request from a process of its own, as mitmdump is: on a loaded machine each
# hop between processes waits for a core, which a request from the provider's own process (the
# fake provider lives in this one) never does. One line in ("go"), one line out (ms).
CHILD = """
import asyncio, json, sys, time, aiohttp
async def main(url, body):
    async with aiohttp.ClientSession() as session:
        for _ in sys.stdin:
            started = time.perf_counter()
            headers = {"authorization": "Bearer sk-test"}
            async with session.post(url, json=body, headers=headers) as r:
                first = None
                async for line in r.content:
                    if first is None and line.startswith(b"data: {"):
                        choices = json.loads(line[6:]).get("choices") or [{}]
                        if choices[0].get("delta", {}).get("content"):
                            first = time.perf_counter() - started
            print(first, flush=True)
asyncio.run(main(sys.argv[1], json.load(open(sys.argv[2]))))
"""


class ChildClient:
    """Direct requests to the fake provider from another process."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls, url: str, body: dict[str, Any], tmp: Path) -> ChildClient:
        path = tmp / "body.json"
        path.write_text(json.dumps(body))
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", CHILD, url, str(path),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        return cls(process)

    async def first_token(self) -> float:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(b"go\n")
        await self.process.stdin.drain()
        return float(await self.process.stdout.readline())

    async def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        await self.process.wait()


async def provider_round_trip(session: aiohttp.ClientSession, fp: FakeProvider) -> float:
    """One request and its whole (immediate) answer on the pooled connection: what "one
    provider round trip" is on this machine."""
    fp.script.error(400, message="round trip")
    started = time.perf_counter()
    async with session.post(
        fp.base_url + "/chat/completions", json={"model": "fake-upstream-1", "messages": []},
        headers={"authorization": "Bearer sk-test"},
    ) as response:  # fmt: skip
        await response.read()
    return time.perf_counter() - started


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


async def proxy_floor(client: CursorLikeClient) -> float:
    """A Cmd-K that needs no model (`request_is_for_caching`: the end-stream at once), through
    the same mitmdump and loopback hop: what any answer from this proxy costs at this load."""
    message = request()
    message.cmd_k_options.request_is_for_caching = True
    headers = {
        "content-type": "application/connect+proto",
        "connect-protocol-version": "1",
        "authorization": FAKE_TOKEN,
    }
    started = time.perf_counter()
    response = await client.http.post(
        client.base_url + CMDK,
        content=connect.encode_frame(message.SerializeToString()),
        headers=headers,
    )
    assert connect.decode_envelopes(response.content)[-1].is_end_stream
    return time.perf_counter() - started


async def hook_floor(client: CursorLikeClient) -> float:
    """`RerankCmdKContext`, answered in the request hook itself (no loopback hop): the floor of
    mitmproxy alone (TLS, parsing, every addon's hooks) at this load."""
    headers = {
        "content-type": "application/proto",
        "connect-protocol-version": "1",
        "authorization": FAKE_TOKEN,
    }
    started = time.perf_counter()
    response = await client.http.post(
        client.base_url + "/aiserver.v1.CmdKService/RerankCmdKContext",
        content=fpb.RerankCmdKContextRequest().SerializeToString(),
        headers=headers,
    )
    assert response.status_code == 200
    return time.perf_counter() - started


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
            direct, proxied, trips, apart, floor, hooks = [], [], [], [], [], []
            load = os.getloadavg()[0]
            try:
                fp.script.text(ANSWER)
                await cmd_k_first_delta(client)  # the request cursor-byok sends the provider
                body = fp.requests[-1].json
                child = await ChildClient.start(fp.base_url + "/chat/completions", body, tmp_path)
                for _ in range(rounds + 1):  # the first round warms both paths up
                    trips.append(await provider_round_trip(session, fp))
                    fp.script.text(ANSWER)
                    direct.append(await direct_first_token(session, fp, body))
                    fp.script.text(ANSWER)
                    apart.append(await child.first_token())
                    fp.script.text(ANSWER)
                    proxied.append(await cmd_k_first_delta(client))
                    floor.append(await proxy_floor(client))
                    hooks.append(await hook_floor(client))
                cancels = [await cancel_delay(client, fp) for _ in range(5)]
                await child.stop()
            finally:
                await client.aclose()
                proxy.stop()
    direct, proxied, trips, apart = direct[1:], proxied[1:], trips[1:], apart[1:]
    floor, hooks = floor[1:], hooks[1:]
    added = [p - d for p, d in zip(proxied, direct, strict=True)]
    added_apart = [p - d for p, d in zip(proxied, apart, strict=True)]
    loads = f"load average {load:.1f} -> {os.getloadavg()[0]:.1f}"
    print(f"{rounds} rounds, one Cmd-K request of 400 lines each, fake provider on 127.0.0.1, "
          f"{os.cpu_count()} cores, {loads}")  # fmt: skip
    for name, values in (
        ("provider round trip", trips),
        ("provider's own first token", direct),
        ("  from another process", apart),
        ("Cmd-K first edit delta", proxied),
        ("answer with no model call", floor),
        ("  answered in the hook", hooks),
        ("added by cursor-byok", added),
        ("  over the other process's", added_apart),
    ):
        ms = sorted(v * 1000 for v in values)
        p90 = ms[min(len(ms) - 1, int(len(ms) * 0.9))]
        print(f"  {name:28s} median {statistics.median(ms):7.1f} ms   p90 {p90:7.1f} ms")
    worst = max(cancels) * 1000
    print(f"  client gone -> provider call closed: median {statistics.median(cancels) * 1000:.1f}"
          f" ms, worst of 5 {worst:.1f} ms")  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("n", nargs="?", type=int, default=20, help="rounds (default 20)")
    asyncio.run(main(parser.parse_args().n))
