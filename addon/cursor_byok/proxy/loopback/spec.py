"""What the addon tells the loopback server about a stream it points there, and the original
request the server forwards to Cursor itself when a run turns out to be on a Cursor model.

The spec travels in one internal header, guarded by a per-process secret; the server and the
relay both read these types, so they live apart from either.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from dataclasses import dataclass

STREAM_HEADER = "x-cursor-byok-stream"

RELAY_RESET = object()  # in a `Forward.upload` queue: the client reset its stream


@dataclass(frozen=True, slots=True)
class Forward:
    """The original request of a RunSSE flow whose route was not known when it arrived: if its
    run turns out to be on one of Cursor's models, the streamer sends it to Cursor itself."""

    scheme: str
    host: str
    port: int
    path: str
    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes
    upload: asyncio.Queue | None = None  # `Run`: the upload's bytes as they come (None: end)
    authority: str = ""
    sni: str = ""  # the name the certificate must carry (transparent mode: host is an IP)


@dataclass(frozen=True, slots=True)
class StreamSpec:
    """What the addon tells the streamer about one response stream."""

    request_id: str
    owner: bytes = b""
    encoding: str | None = None
    content_type: str = "text/event-stream"
    grpc_web: bool = False
    transport: str = "bidi"
    error: tuple[str, str] | None = None  # answer only this (code, message), read nothing
    error_stream: bool = False  # as a stream end (`Run`), else as a unary Connect error
    forward: str = ""  # token of a held `Forward`: the route is decided while streaming
    client: str = ""  # the client connection (fairness of the live-request bound)

    def encode(self, secret: str) -> str:
        body = {
            "r": self.request_id,
            "o": self.owner.hex(),
            "e": self.encoding or "",
            "c": self.content_type,
            "g": self.grpc_web,
            "t": self.transport,
            "x": list(self.error) if self.error else None,
            "s": self.error_stream,
            "f": self.forward,
            "k": self.client,
        }
        return secret + ":" + json.dumps(body, separators=(",", ":"))

    @classmethod
    def decode(cls, value: str, secret: str) -> StreamSpec | None:
        given, _, body = value.partition(":")
        if not secrets.compare_digest(given.encode(), secret.encode()):
            return None
        try:
            data = json.loads(body)
            return cls(
                request_id=str(data["r"]),
                owner=bytes.fromhex(data["o"]),
                encoding=data["e"] or None,
                content_type=str(data["c"]),
                grpc_web=bool(data["g"]),
                transport=str(data["t"]),
                error=(str(data["x"][0]), str(data["x"][1])) if data["x"] else None,
                error_stream=bool(data["s"]),
                forward=str(data.get("f", "")),
                client=str(data.get("k", "")),
            )
        except (ValueError, KeyError, TypeError):
            return None
