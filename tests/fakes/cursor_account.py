"""A stand-in for Cursor's account endpoints on 127.0.0.1, for clients that need them besides the
Agent RPCs (Cursor's SDK calls them on every turn: docs/protocol.md §13.1).

    with CursorAccount() as account:          # a thread, port 0
        ... reverse-proxy to account.base_url ...
        account.calls("POST", "/auth/exchange_user_api_key")

It answers what the official client needs and no more, as Cursor's backend would:
- `POST /auth/exchange_user_api_key` → `{"accessToken": <unsigned JWT, 1 h>}` (the API key is
  checked against `api_key` when one is set: 401 otherwise);
- `GetServerConfig` → an empty `GetServerConfigResponse` (or `http2_config` when set);
- any other Connect unary, proto → 200 and an empty message; JSON (`BootstrapStatsig`) → `{}`;
- anything else (`GET /v1/models` included: Cursor's API host has no such path) → 404 JSON.
The Agent RPCs (`RunSSE`, `Run`, `BidiAppend`) are recorded and refused with 404: the proxy in
front must never pass one through.

Every request is logged (`requests`): method, path, status, body size, the body itself and the
headers without credentials, so tests can say exactly what reached "Cursor" and whether any of it
carried conversation content.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from typing import Any

AGENT_RPCS = (
    "/agent.v1.AgentService/Run",
    "/agent.v1.AgentService/RunSSE",
    "/aiserver.v1.BidiService/BidiAppend",
)
_SECRET_HEADERS = ("authorization", "x-blob-encryption-key", "cookie")


@dataclass(frozen=True)
class AccountRequest:
    method: str
    path: str
    status: int
    content_type: str
    body: bytes
    headers: dict[str, str]

    @property
    def size(self) -> int:
        return len(self.body)


def fake_jwt(lifetime: int = 3600) -> str:
    """An unsigned JWT whose `exp` the client reads to schedule its refresh."""

    def part(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    claims = {"sub": "stand-in|user", "exp": int(time.time()) + lifetime}
    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}.sig"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # the log is `requests`
        pass

    def _read_body(self) -> bytes:
        length = self.headers.get("content-length")
        if length:
            return self.rfile.read(int(length))
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            parts = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            self.rfile.readline()
            return b"".join(parts)
        return b""

    def _answer(self, path: str, body: bytes) -> tuple[int, bytes, str]:
        account = self.server.account
        ctype = (self.headers.get("content-type") or "").lower()
        if path in AGENT_RPCS:
            return (
                404,
                b'{"code":"not_found","message":"agent RPC reached the stand-in"}',
                ("application/json"),
            )
        if path == "/auth/exchange_user_api_key" and self.command == "POST":
            key = (self.headers.get("authorization") or "").removeprefix("Bearer ")
            if account.api_key is not None and key != account.api_key:
                return 401, b'{"error":"invalid api key"}', "application/json"
            token = fake_jwt()
            return (
                200,
                json.dumps({"accessToken": token, "refreshToken": token}).encode(),
                ("application/json"),
            )
        if self.command == "POST" and path.startswith("/aiserver.v1."):
            if path.endswith("/GetServerConfig") and account.http2_config:
                # GetServerConfigResponse.http2_config = 7 (varint): the client's transport
                return 200, bytes([0x38, account.http2_config]), "application/proto"
            if "json" in ctype:
                return 200, b"{}", "application/json"
            return 200, b"", "application/proto"
        return (
            404,
            b'{"code":"not_found","message":"stand-in: no such endpoint"}',
            ("application/json"),
        )

    def _serve(self) -> None:
        body = self._read_body() if self.command in ("POST", "PUT", "PATCH") else b""
        path = self.path.split("?", 1)[0]
        status, out, ctype = self._answer(path, body)
        self.server.account.record(
            AccountRequest(
                self.command,
                path,
                status,
                self.headers.get("content-type") or "",
                body,
                {k.lower(): v for k, v in self.headers.items() if k.lower() not in _SECRET_HEADERS},
            )
        )
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    account: CursorAccount


class CursorAccount:
    """The server (see the module docstring)."""

    def __init__(self, *, api_key: str | None = None, http2_config: int = 0) -> None:
        self.api_key = api_key
        self.http2_config = http2_config
        self.requests: list[AccountRequest] = []
        self._lock = threading.Condition()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> CursorAccount:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.account = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def port(self) -> int:
        assert self._server is not None
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def record(self, request: AccountRequest) -> None:
        with self._lock:
            self.requests.append(request)
            self._lock.notify_all()

    def wait_for(self, method: str, path: str, since: int = 0, timeout: float = 30) -> None:
        """Until a request for `method path` has come after mark `since` (AssertionError after
        `timeout` seconds)."""
        with self._lock:
            came = self._lock.wait_for(
                lambda: any(r.method == method and r.path == path for r in self.requests[since:]),
                timeout,
            )
        assert came, f"no {method} {path} within {timeout:.0f} s"

    def snapshot(self) -> list[AccountRequest]:
        with self._lock:
            return list(self.requests)

    def mark(self) -> int:
        """How many requests came so far: `since(mark)` reads what came after."""
        with self._lock:
            return len(self.requests)

    def since(self, mark: int) -> list[AccountRequest]:
        with self._lock:
            return self.requests[mark:]

    def calls(self, method: str, path: str) -> int:
        return sum(1 for r in self.snapshot() if r.method == method and r.path == path)
