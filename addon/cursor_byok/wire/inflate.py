"""Bounded, incremental decompression of HTTP and Connect bodies (gzip, deflate, br, zstd). Sans-IO.

Why our own, and why bounded: a compressed body is the cheapest memory bomb there is (1 MB of
gzip is 1 GB of zeros, a few KB of zstd as much). Every decoder here hands out the output in
pieces of at most about `step` bytes (brotli may overshoot to twice that) and holds none of them
back, so the consumer's own bound is what decides: the SSE parser's line and event limits for a
provider stream, a total cap for an error body or a Connect payload (`decompress_capped`). The
HTTP client's own decompression is off for that reason (aiohttp's `auto_decompress=False`), and
`connect.decompress` (Connect envelopes, BidiAppend bodies) is this module with a total cap.

`Inflater(encoding)` is one body: `feed(data)` yields output pieces as the input allows,
`finish()` yields what is left and raises `Truncated` when the body stopped inside a
compressed stream. gzip accepts concatenated members and zstd concatenated frames, as their
specifications allow; "deflate" is the zlib format, or raw deflate as some servers send it.
"""

from __future__ import annotations

import sys
import zlib
from collections.abc import Iterator
from typing import Protocol

import brotli

from cursor_byok.errors import ByokError

if sys.version_info >= (3, 14):
    from compression.zstd import ZstdDecompressor
    from compression.zstd import ZstdError
    from compression.zstd import compress as zstd_compress
else:  # the standard library's API, from its backport (mitmproxy needs it too)
    from backports.zstd import ZstdDecompressor
    from backports.zstd import ZstdError
    from backports.zstd import compress as zstd_compress

STEP = 1 << 20
ENCODINGS = ("gzip", "deflate", "br", "zstd")
_ALIASES = {"x-gzip": "gzip", "x-deflate": "deflate"}


class InflateError(ByokError):
    """A body that cannot be decompressed (corrupt, truncated, or an unknown coding)."""


class Unsupported(InflateError):
    """A content coding we do not decode."""


class Corrupt(InflateError):
    """The compressed data is not valid for its coding."""


class Truncated(InflateError):
    """The body ended inside a compressed stream."""


class TooLarge(InflateError):
    """`decompress_capped`: the output exceeded its cap."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"decompressed payload exceeds {limit} bytes")
        self.limit = limit


def normalise(encoding: str | None) -> str | None:
    """A `content-encoding` value as one of ENCODINGS, or None for identity."""
    value = (encoding or "").strip().lower()
    if value in ("", "identity"):
        return None
    value = _ALIASES.get(value, value)
    if value not in ENCODINGS:
        raise Unsupported(f"unsupported content-encoding {encoding!r}")
    return value


class _Codec(Protocol):
    def feed(self, data: bytes) -> Iterator[bytes]: ...

    def finish(self) -> Iterator[bytes]: ...


class Inflater:
    """One compressed body, decoded as its bytes arrive, in pieces of at most ~`step` bytes."""

    __slots__ = ("_codec", "encoding")

    def __init__(self, encoding: str, *, step: int = STEP) -> None:
        coding = normalise(encoding)
        if coding is None:
            raise ValueError("identity needs no Inflater")
        self.encoding = coding
        self._codec: _Codec
        if coding == "br":
            self._codec = _Brotli(step)
        elif coding == "zstd":
            self._codec = _Zstd(step)
        else:
            self._codec = _Zlib(step, gzip=coding == "gzip")

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The output `data` completes, piece by piece (a generator: consume it before the
        next feed)."""
        return self._codec.feed(data)

    def finish(self) -> Iterator[bytes]:
        """The end of the body: what is left, or `Truncated`."""
        return self._codec.finish()


def decompress_capped(data: bytes, encoding: str | None, limit: int, *, step: int = STEP) -> bytes:
    """All of a compressed payload, or `TooLarge` as soon as the output passes `limit` (memory
    stays within `limit` plus one step whatever the input)."""
    coding = normalise(encoding)
    if coding is None:
        return data
    inflater = Inflater(coding, step=step)
    out = bytearray()
    for source in (inflater.feed(data), inflater.finish()):
        for piece in source:
            out += piece
            if len(out) > limit:
                out.clear()  # free it now: a traceback may keep this frame alive
                raise TooLarge(limit)
    return bytes(out)


class _Zlib:
    """gzip (members one after another) and deflate (zlib format, else raw) on zlib, whose
    `max_length` bounds each output piece; what it did not consume waits in `unconsumed_tail`."""

    __slots__ = ("_gzip", "_head", "_obj", "_started", "_step")

    def __init__(self, step: int, *, gzip: bool) -> None:
        self._step = step
        self._gzip = gzip
        self._obj: zlib._Decompress | None = zlib.decompressobj(31) if gzip else None
        self._head = b""  # deflate: the first bytes, until the zlib header can be told apart
        self._started = False  # gzip: some byte of the current member was fed

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self._obj is None:
            self._head += data
            if len(self._head) < 2:
                return
            data, self._head = self._head, b""
            cmf, flg = data[0], data[1]
            zlib_format = cmf & 0x0F == 8 and (cmf << 8 | flg) % 31 == 0
            self._obj = zlib.decompressobj(zlib.MAX_WBITS if zlib_format else -zlib.MAX_WBITS)
        yield from self._run(data)

    def _run(self, pending: bytes) -> Iterator[bytes]:
        obj = self._obj
        assert obj is not None
        step = self._step
        try:
            while True:
                if obj.eof:
                    if not self._gzip:
                        return  # bytes after a deflate stream: ignored
                    obj = self._obj = zlib.decompressobj(31)  # the next gzip member
                    self._started = False
                if not pending:
                    return
                self._started = True
                out = obj.decompress(pending, step)
                if out:
                    yield out
                pending = obj.unused_data if obj.eof else obj.unconsumed_tail
                while len(out) == step and not pending and not obj.eof:
                    # a full piece: zlib may hold back more output with no input left
                    out = obj.decompress(b"", step)
                    if out:
                        yield out
                    pending = obj.unconsumed_tail
        except zlib.error as exc:
            raise Corrupt(f"corrupt {'gzip' if self._gzip else 'deflate'} data: {exc}") from None

    def finish(self) -> Iterator[bytes]:
        if self._obj is None:
            if self._head:
                raise Truncated("deflate body is truncated")
            return iter(())
        if not self._obj.eof and (self._started or not self._gzip):
            raise Truncated(f"{'gzip' if self._gzip else 'deflate'} body is truncated")
        return iter(())


class _Brotli:
    """br on brotli's `output_buffer_limit` (its buffer may reach twice the limit); input and
    output it holds back are drained with empty calls."""

    __slots__ = ("_obj", "_started", "_step")

    def __init__(self, step: int) -> None:
        self._step = step
        self._obj = brotli.Decompressor()
        self._started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        obj = self._obj
        try:
            if obj.is_finished() or not data:
                return  # bytes after the end of the stream: ignored
            self._started = True
            step = self._step
            out = obj.process(data, output_buffer_limit=step)
            while True:
                if out:
                    yield out
                if obj.is_finished():
                    return
                # a piece short of the limit: the input ran out (more output needs more input)
                if len(out) < step and obj.can_accept_more_data():
                    return
                out = obj.process(b"", output_buffer_limit=step)
        except brotli.error as exc:
            raise Corrupt(f"corrupt brotli data: {exc}") from None

    def finish(self) -> Iterator[bytes]:
        if self._started and not self._obj.is_finished():
            raise Truncated("br body is truncated")
        return iter(())


class _Zstd:
    """zstd on the standard library's decompressor (`max_length`; input it could not take yet
    waits inside it), one per frame."""

    __slots__ = ("_obj", "_started", "_step")

    def __init__(self, step: int) -> None:
        self._step = step
        self._obj = ZstdDecompressor()
        self._started = False  # some byte of the current frame was fed

    def feed(self, data: bytes) -> Iterator[bytes]:
        obj = self._obj
        step = self._step
        pending = data
        try:
            while True:
                if obj.eof:
                    obj = self._obj = ZstdDecompressor()  # the next frame
                    self._started = False
                if pending:
                    self._started = True
                elif obj.needs_input:
                    return
                out = obj.decompress(pending, step)
                pending = obj.unused_data if obj.eof else b""
                if out:
                    yield out
                if not pending and not obj.eof and obj.needs_input:
                    return
        except ZstdError as exc:
            raise Corrupt(f"corrupt zstd data: {exc}") from None

    def finish(self) -> Iterator[bytes]:
        if self._started and not self._obj.eof:
            raise Truncated("zstd body is truncated")
        return iter(())


__all__ = [
    "ENCODINGS",
    "STEP",
    "Corrupt",
    "InflateError",
    "Inflater",
    "TooLarge",
    "Truncated",
    "Unsupported",
    "decompress_capped",
    "normalise",
    "zstd_compress",
]
