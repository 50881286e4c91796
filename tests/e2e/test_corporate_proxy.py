"""Provider calls through a corporate forward proxy: a plain mitmdump (no addon) on 127.0.0.1
that only tunnels (HTTP CONNECT, `--ignore-hosts .*`) and wants credentials (`--proxyauth`),
in front of an HTTPS provider whose certificate a company CA issued (`ca_file`).

The proxy records what it was asked to do (a script of a few lines), so the tests see that the
provider call went through it, and nothing else."""

from __future__ import annotations

import asyncio
import ssl
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cursor_client import CursorLikeClient
from fakes.certs import ca_and_server
from fakes.fake_provider import FakeProvider
from mitm import Mitm
from mitm import start_mitmdump
from mitm import start_plain_proxy

from cursor_byok.cli.doctor import check_providers
from cursor_byok.config import load_config
from cursor_byok.providers import ProviderError
from cursor_byok.providers.http import HttpClient

pytestmark = pytest.mark.timeout(120)
CREDENTIALS = "alice:corp-pw-1234"
RECORDER = """
import os
from mitmproxy import http

LOG = os.environ["CORP_PROXY_LOG"]


def http_connect(flow: http.HTTPFlow) -> None:
    refused = flow.response is not None and flow.response.status_code == 407
    with open(LOG, "a") as f:
        f.write(f"CONNECT {flow.request.host}:{flow.request.port} {'407' if refused else 'ok'}\\n")
"""


@dataclass
class Corp:
    proxy: Mitm
    log: Path
    ca: Path
    server_context: ssl.SSLContext

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.proxy.port}"

    def seen(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


@pytest.fixture(scope="module")
def corp(tmp_path_factory) -> Iterator[Corp]:
    tmp = tmp_path_factory.mktemp("corp")
    log = tmp / "connects.log"
    ca, cert, key = ca_and_server("127.0.0.1")
    (tmp / "company-ca.pem").write_bytes(ca)
    (tmp / "cert.pem").write_bytes(cert)
    (tmp / "key.pem").write_bytes(key)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tmp / "cert.pem", tmp / "key.pem")
    proxy = start_plain_proxy(
        tmp, RECORDER, {"CORP_PROXY_LOG": str(log)}, "--proxyauth", CREDENTIALS
    )
    yield Corp(proxy, log, tmp / "company-ca.pem", context)
    proxy.stop()


def write_config(tmp: Path, fp: FakeProvider, corp: Corp, **extra: str) -> Path:
    lines = "\n".join(f"{k} = {v}" for k, v in extra.items())
    path = tmp / "config.toml"
    path.write_text(
        f"""
default_model = "Corp Model"

[providers.corp]
kind = "openai-chat"
base_url = "{fp.base_url}"
api_key_env = "FAKE_PROVIDER_KEY"
ca_file = "{corp.ca}"
max_retries = 0
{lines}

[[models]]
name = "Corp Model"
provider = "corp"
model = "fake-upstream-1"
"""
    )
    return path


async def test_a_turn_through_the_corporate_proxy(tmp_path, workspace, corp) -> None:
    before = len(corp.seen())
    async with FakeProvider(ssl_context=corp.server_context) as fp:
        fp.script.text("answered through the proxy")
        config = write_config(
            tmp_path,
            fp,
            corp,
            proxy=f'"{corp.url}"',
            proxy_auth='{ env = "CORP_PROXY_AUTH" }',
        )
        proxy = start_mitmdump(
            tmp_path / "byok",
            agent="provider",
            config=config,
            env={"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key", "CORP_PROXY_AUTH": CREDENTIALS},
        )
        client = CursorLikeClient.through(proxy, workspace)
        try:
            result = await client.turn(
                client.run_request("hello", conversation_id=str(uuid.uuid4()), model="Corp Model")
            )
        finally:
            await client.aclose()
            proxy.stop()
        requests = list(fp.requests)
    assert result.end.ok, result.end.error
    assert result.text == "answered through the proxy"
    assert corp.seen()[before:] == [f"CONNECT 127.0.0.1:{fp.port} ok"]
    assert len(requests) == 1 and requests[0].path == "/v1/chat/completions"
    assert "corp-pw-1234" not in proxy.log() and "Traceback" not in proxy.log()


async def post(http: HttpClient, url: str) -> bytes:
    try:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
        async with http.post_stream(url + "/chat/completions", {}, body) as r:
            return b"".join([c async for c in r.iter_bytes()])
    finally:
        await http.aclose()


async def test_wrong_proxy_credentials_are_a_clear_error(corp) -> None:
    async with FakeProvider(ssl_context=corp.server_context, strict=False) as fp:
        http = HttpClient(
            provider="corp",
            connect_timeout=5,
            read_timeout=5,
            proxy=corp.url,
            proxy_auth="alice:wrong",
            ca_file=str(corp.ca),
        )
        with pytest.raises(ProviderError) as caught:
            await post(http, fp.base_url)
    message = str(caught.value)
    assert "the proxy refused the tunnel: HTTP 407" in message and "\n" not in message
    assert caught.value.kind == "network" and not caught.value.retryable
    assert "wrong" not in message


async def test_proxy_from_env_is_read_only_when_asked(corp, monkeypatch) -> None:
    user, password = CREDENTIALS.split(":")
    monkeypatch.setenv("HTTPS_PROXY", f"http://{user}:{password}@127.0.0.1:{corp.proxy.port}")
    for name in ("NO_PROXY", "no_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    async with FakeProvider(ssl_context=corp.server_context) as fp:
        fp.script.text("a")
        fp.script.text("b")
        fp.script.text("c")

        def client(from_env: bool) -> HttpClient:
            return HttpClient(
                provider="corp",
                connect_timeout=5,
                read_timeout=5,
                proxy_from_env=from_env,
                ca_file=str(corp.ca),
            )

        before = len(corp.seen())
        assert b"data: [DONE]" in await post(client(False), fp.base_url)  # direct
        assert corp.seen()[before:] == []
        assert b"data: [DONE]" in await post(client(True), fp.base_url)  # HTTPS_PROXY
        assert corp.seen()[before:] == [f"CONNECT 127.0.0.1:{fp.port} ok"]
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        assert b"data: [DONE]" in await post(client(True), fp.base_url)  # NO_PROXY
        assert len(corp.seen()) == before + 1


def test_the_doctor_checks_the_provider_through_the_same_proxy(tmp_path, corp, monkeypatch):
    """The doctor runs its own event loop (asyncio.run), so the fake provider serves from a
    thread of its own here."""
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-test")
    monkeypatch.setenv("CORP_PROXY_AUTH", CREDENTIALS)
    fp = FakeProvider(ssl_context=corp.server_context)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(fp.start())
    runner = threading.Thread(target=loop.run_forever, daemon=True)
    runner.start()
    try:
        fp.script.text("pong")
        config = write_config(
            tmp_path, fp, corp, proxy=f'"{corp.url}"', proxy_auth='{ env = "CORP_PROXY_AUTH" }'
        )
        before = len(corp.seen())
        [ok] = check_providers(load_config(config))
        fp.script.text("pong")
        monkeypatch.setenv("CORP_PROXY_AUTH", "alice:wrong")
        [refused] = check_providers(load_config(config))
    finally:
        asyncio.run_coroutine_threadsafe(fp.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        runner.join(10)
        loop.close()
    assert ok.status == "ok", ok
    assert ok.detail == f"answered a one-word request through the proxy {corp.url}"
    assert corp.seen()[before] == f"CONNECT 127.0.0.1:{fp.port} ok"
    assert refused.status == "fail" and "407" in refused.detail
    assert "proxy_auth" in refused.fix
