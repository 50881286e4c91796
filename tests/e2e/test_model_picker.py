"""The model picker through a real mitmdump in reverse mode, against a loopback stand-in for
Cursor's API that answers the catalog calls with real protobuf bodies."""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

import httpx
import pytest
from mitm import Mitm
from mitm import start_mitmdump

from cursor_byok.config import load_config
from cursor_byok.config.catalog import model_id
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.pb import aiserver_v1_pb2 as aipb

pytestmark = pytest.mark.timeout(90)

AVAILABLE = "/aiserver.v1.AiService/AvailableModels"
USABLE_AI = "/aiserver.v1.AiService/GetUsableModels"
USABLE_AGENT = "/agent.v1.AgentService/GetUsableModels"
DEFAULT_CLI = "/aiserver.v1.AiService/GetDefaultModelForCli"
CPP_AVAILABLE = "/aiserver.v1.CppService/AvailableModels"
UNKNOWN_FIELD = b"\xb8\x3e\x07"  # field 999 = 7, unknown to our schema
PROTO = {"content-type": "application/proto", "connect-protocol-version": "1"}

CURSOR_AVAILABLE = (
    aipb.AvailableModelsResponse(
        model_names=["gpt-5"],
        models=[aipb.AvailableModelsResponse.AvailableModel(name="gpt-5", supports_agent=True)],
    ).SerializeToString()
    + UNKNOWN_FIELD
)
CURSOR_USABLE = (
    pb.GetUsableModelsResponse(models=[pb.ModelDetails(model_id="gpt-5")]).SerializeToString()
    + UNKNOWN_FIELD
)
CURSOR_DEFAULT = pb.GetDefaultModelForCliResponse(
    model=pb.ModelDetails(model_id="gpt-5")
).SerializeToString()
BODIES = {
    AVAILABLE: CURSOR_AVAILABLE,
    USABLE_AI: CURSOR_USABLE,
    USABLE_AGENT: CURSOR_USABLE,
    DEFAULT_CLI: CURSOR_DEFAULT,
    CPP_AVAILABLE: b"\x0a\x03tab" + UNKNOWN_FIELD,
}

CONFIG = """
default_model = "Local Coder"

[providers.local]
kind = "openai-chat"
base_url = "http://127.0.0.1:9/v1"

[[models]]
name = "Local Coder"
provider = "local"
model = "coder-7b"
context_window = 32768
"""


@dataclass
class CursorStub:
    """Answers picker paths with protobuf; `x-stub-status` asks for an error status."""

    server: asyncio.Server | None = None
    port: int = 0
    seen: list[str] = field(default_factory=list)

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            try:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
            except asyncio.IncompleteReadError:
                return  # the picker's reachability probe: connects and closes
            lines = head.split("\r\n")
            path = lines[0].split(" ")[1]
            headers = {
                k.strip().lower(): v.strip()
                for k, _, v in (line.partition(":") for line in lines[1:] if line)
            }
            await reader.readexactly(int(headers.get("content-length", "0")))
            self.seen.append(path)
            status = int(headers.get("x-stub-status", "200"))
            if status != 200:
                body, ctype = b'{"code":"unavailable","message":"stub says no"}', "application/json"
            else:
                body, ctype = BODIES.get(path, b""), "application/proto"
            writer.write(
                b"HTTP/1.1 %d X\r\ncontent-type: %s\r\ncontent-length: %d\r\n"
                b"connection: close\r\n\r\n%s" % (status, ctype.encode(), len(body), body)
            )
            await writer.drain()
        finally:
            writer.close()


def start(tmp: Path, target_port: int, *extra: str) -> Mitm:
    tmp.mkdir(parents=True, exist_ok=True)
    config = tmp / "config.toml"
    config.write_text(CONFIG)
    return start_mitmdump(
        tmp,
        *extra,
        mode=f"reverse:http://127.0.0.1:{target_port}",
        agent="provider",
        config=config,
    )


def our_id(tmp: Path) -> str:
    return model_id(load_config(tmp / "config.toml").models[0])


async def call(proxy: Mitm, path: str, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as client:
        return await client.post(
            proxy.proxy_url + path, content=b"\x18\x01", headers=PROTO | headers
        )


@pytest.fixture
async def stub():
    server = CursorStub()
    await server.start()
    yield server
    await server.stop()


async def test_merge_adds_our_models_to_cursors_answers(tmp_path, stub) -> None:
    proxy = start(tmp_path, stub.port)
    try:
        available = await call(proxy, AVAILABLE)
        usable = {path: await call(proxy, path) for path in (USABLE_AI, USABLE_AGENT)}
        default = await call(proxy, DEFAULT_CLI)
        cpp = await call(proxy, CPP_AVAILABLE)
        failed = await call(proxy, AVAILABLE, **{"x-stub-status": "503"})
    finally:
        proxy.stop()
    ours = our_id(tmp_path)
    assert available.status_code == 200
    assert available.content.startswith(CURSOR_AVAILABLE)  # Cursor's bytes, unknown field kept
    catalog = aipb.AvailableModelsResponse.FromString(available.content)
    assert list(catalog.model_names) == ["gpt-5", ours]
    assert [m.name for m in catalog.models] == ["gpt-5", ours]
    assert catalog.models[1].client_display_name == "Local Coder"
    assert catalog.models[1].supports_agent
    for response_type, response in zip(
        (aipb.GetUsableModelsResponse, pb.GetUsableModelsResponse), usable.values(), strict=True
    ):
        assert response.content.startswith(CURSOR_USABLE)
        assert [m.model_id for m in response_type.FromString(response.content).models] == [
            "gpt-5",
            ours,
        ]
    assert pb.GetDefaultModelForCliResponse.FromString(default.content).model.model_id == ours
    assert cpp.content == BODIES[CPP_AVAILABLE]  # not ours to touch
    assert failed.status_code == 503
    assert failed.content == b'{"code":"unavailable","message":"stub says no"}'
    assert stub.seen == [AVAILABLE, USABLE_AI, USABLE_AGENT, DEFAULT_CLI, CPP_AVAILABLE, AVAILABLE]
    assert "Traceback" not in proxy.log()


async def test_replace_never_reaches_cursor(tmp_path, stub) -> None:
    proxy = start(tmp_path, stub.port, "--set", "cursor_byok_models_mode=replace")
    try:
        responses = {
            path: await call(proxy, path) for path in (AVAILABLE, USABLE_AGENT, DEFAULT_CLI)
        }
    finally:
        proxy.stop()
    ours = our_id(tmp_path)
    assert all(r.status_code == 200 for r in responses.values())
    catalog = aipb.AvailableModelsResponse.FromString(responses[AVAILABLE].content)
    assert [m.name for m in catalog.models] == [ours]
    usable = pb.GetUsableModelsResponse.FromString(responses[USABLE_AGENT].content)
    assert [m.model_id for m in usable.models] == [ours]
    cli = pb.GetDefaultModelForCliResponse.FromString(responses[DEFAULT_CLI].content)
    assert cli.model.display_name == "Local Coder"
    assert stub.seen == []


async def test_unreachable_cursor_then_local_answers_with_the_last_list(tmp_path, stub) -> None:
    proxy = start(tmp_path, stub.port)
    try:
        first = await call(proxy, AVAILABLE)
        await stub.stop()  # Cursor goes away
        offline = await call(proxy, AVAILABLE)
        never_seen = await call(proxy, USABLE_AGENT)
    finally:
        proxy.stop()
    ours = our_id(tmp_path)
    assert first.status_code == 200
    assert offline.status_code == 200  # at once: no 502 for the first call after it went
    assert offline.content == first.content  # Cursor's last list plus ours
    usable = pb.GetUsableModelsResponse.FromString(never_seen.content)
    assert [m.model_id for m in usable.models] == [ours]
    assert "answering model-picker calls locally" in proxy.log()


async def test_cursor_unreachable_from_the_start_is_answered_locally_at_once(tmp_path) -> None:
    # Cursor's port is bound and never listens: every connection to it is refused, and no other
    # test's server can be given it (a port a stopped server freed could be, and answer 404)
    with socket.socket() as refusing:
        refusing.bind(("127.0.0.1", 0))
        proxy = start(tmp_path, refusing.getsockname()[1])
        try:
            available = await call(proxy, AVAILABLE)
            usable = await call(proxy, USABLE_AGENT)
        finally:
            proxy.stop()
    assert available.status_code == usable.status_code == 200
    catalog = aipb.AvailableModelsResponse.FromString(available.content)
    assert [m.name for m in catalog.models] == [our_id(tmp_path)]
    assert catalog.models[0].supports_max_mode and catalog.models[0].supports_non_max_mode
    assert "probe connection failed" in proxy.log()


async def test_broken_config_passes_cursors_answer_through(tmp_path, stub) -> None:
    proxy = start(tmp_path, stub.port)
    (tmp_path / "config.toml").write_text("[[models]\n")
    try:
        available = await call(proxy, AVAILABLE)
        again = await call(proxy, AVAILABLE)
    finally:
        proxy.stop()
    assert available.content == again.content == CURSOR_AVAILABLE
    assert proxy.log().count("Cursor's model lists pass through unchanged") == 1
