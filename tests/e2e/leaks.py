"""How often a marker reached a stand-in backend, per encoding: as it is, in gzip-, deflate- or
br-compressed bodies (or gzip Connect frames; all counted as "gzip"), base64 (standard or
URL-safe, any alignment), hex (either case), or as its SHA-256. Everything is decoded, never
guessed: every base64 or hex run in what was received is decoded at every alignment and
searched, so an encoding of the marker anywhere is found."""

from __future__ import annotations

import base64
import binascii
import contextlib
import gzip
import hashlib
import re
import zlib

import brotli

from cursor_byok.wire import connect

_B64 = re.compile(rb"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX = re.compile(rb"[0-9a-fA-F]{16,}")
ENCODINGS = ("raw", "gzip", "base64", "hex", "sha256")


def _gunzipped(body: bytes) -> list[bytes]:
    """The plain bytes of a gzip (or zlib) body, or of gzip-compressed Connect frames."""
    out = []
    for start in (m.start() for m in re.finditer(rb"\x1f\x8b\x08", body)):
        with contextlib.suppress(zlib.error):
            out.append(zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(body[start:]))
    if body[:1] in (b"\x00", b"\x01", b"\x02", b"\x03"):
        try:
            frames = connect.decode_envelopes(body, encoding="gzip")
        except connect.ConnectError:
            frames = []
        out.extend(f.payload for f in frames if f.was_compressed)
    with contextlib.suppress(zlib.error):
        out.append(zlib.decompress(body))
    with contextlib.suppress(zlib.error):  # raw deflate, as some clients send "deflate"
        out.append(zlib.decompressobj(-zlib.MAX_WBITS).decompress(body))
    with contextlib.suppress(brotli.error):
        out.append(brotli.decompress(body))
    return out


def _base64_decoded(data: bytes) -> list[bytes]:
    out = []
    for match in _B64.finditer(data):
        run = match.group().rstrip(b"=")
        for skip in range(4):
            part = run[skip:]
            part = part[: len(part) - len(part) % 4]
            for decode in (base64.b64decode, base64.urlsafe_b64decode):
                with contextlib.suppress(binascii.Error, ValueError):
                    out.append(decode(part + b"=" * (-len(part) % 4)))
    return out


def _hex_decoded(data: bytes) -> list[bytes]:
    out = []
    for match in _HEX.finditer(data):
        run = match.group()
        for skip in (0, 1):
            part = run[skip:]
            part = part[: len(part) - len(part) % 2]
            out.append(binascii.unhexlify(part))
    return out


def marker_counts(received: list[bytes], marker: str) -> dict[str, int]:
    """Occurrences of `marker` in each encoding over everything `received` (paths, header
    lines, bodies: one bytes object each)."""
    raw = marker.encode()
    digest = hashlib.sha256(raw).hexdigest().encode()
    counts = dict.fromkeys(ENCODINGS, 0)
    for data in received:
        counts["raw"] += data.count(raw)
        plain = [data, *_gunzipped(data)]
        counts["gzip"] += sum(p.count(raw) for p in plain[1:])
        for text in plain:
            counts["base64"] += sum(d.count(raw) for d in _base64_decoded(text))
            counts["hex"] += sum(d.count(raw) for d in _hex_decoded(text))
            counts["sha256"] += text.lower().count(digest)
    return counts


def gzip_body(body: bytes) -> bytes:
    return gzip.compress(body, mtime=0)
