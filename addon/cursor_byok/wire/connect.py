"""Connect protocol framing, sans-IO: envelopes, compression with hard limits, end-stream trailers.

Everything here takes bytes and returns bytes or frames. No sockets, no asyncio, no clocks, so the
same code serves the addon, the decoder CLI, the replay tool and the tests.

Envelope layout (protocol.md §2.4): 1 flag byte, 4-byte big-endian length, payload.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import struct
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from urllib.parse import quote

from cursor_byok.errors import ByokError
from cursor_byok.errors import Code
from cursor_byok.wire import inflate

FLAG_COMPRESSED = 0x01
FLAG_END_STREAM = 0x02
_KNOWN_FLAGS = FLAG_COMPRESSED | FLAG_END_STREAM
HEADER_SIZE = 5

# A first-turn run_request is ~0.7 MB of protobuf (1.4 MB as hex); leave generous headroom but stay
# bounded so a hostile or broken peer cannot make us buffer gigabytes.
DEFAULT_MAX_FRAME_SIZE = 32 * 1024 * 1024
DEFAULT_MAX_DECOMPRESSED_SIZE = 64 * 1024 * 1024

ENCODINGS = ("gzip", "zstd")

# Connect error codes and the HTTP status a unary error answer carries (Connect spec).
CONNECT_CODE_HTTP_STATUS: dict[str, int] = {
    "canceled": 499,
    "unknown": 500,
    "invalid_argument": 400,
    "deadline_exceeded": 504,
    "not_found": 404,
    "already_exists": 409,
    "permission_denied": 403,
    "resource_exhausted": 429,
    "failed_precondition": 400,
    "aborted": 409,
    "out_of_range": 400,
    "unimplemented": 501,
    "internal": 500,
    "unavailable": 503,
    "data_loss": 500,
    "unauthenticated": 401,
}


class ConnectError(ByokError):
    """Base of every error this module raises; the addon maps it to `invalid_argument`."""

    code = Code.INVALID_ARGUMENT


class UnknownFlags(ConnectError):
    """An envelope used reserved flag bits."""


class FrameTooLarge(ConnectError):
    """An envelope declared a payload larger than the configured maximum."""


class DecompressedTooLarge(ConnectError):
    """A compressed payload expanded beyond the configured maximum (e.g. a gzip bomb)."""


class UnsupportedEncoding(ConnectError):
    """A payload is compressed with an encoding we do not speak, or none was negotiated."""


class DecompressionFailed(ConnectError):
    """A compressed payload is corrupt."""


class TruncatedStream(ConnectError):
    """The stream ended in the middle of an envelope."""


class ProtocolViolation(ConnectError):
    """Framing that is well-formed bytes but breaks the protocol (data after end-stream...)."""


class BadEndStream(ConnectError):
    """An end-stream payload that is not the JSON object the Connect spec requires."""


# --- compression -------------------------------------------------------------------------------


def normalise_encoding(name: str | None) -> str | None:
    """Map a header value to "gzip", "zstd" or None (identity); raise for anything else."""
    if name is None:
        return None
    value = name.strip().lower()
    if value in ("", "identity"):
        return None
    if value in ENCODINGS:
        return value
    raise UnsupportedEncoding(f"unsupported encoding {name!r}")


def pick_encoding(accept_header: str | None, *, preferred: Iterable[str] = ENCODINGS) -> str | None:
    """Choose a response encoding from a `connect-accept-encoding` list, or None for identity."""
    if not accept_header:
        return None
    offered = {part.split(";")[0].strip().lower() for part in accept_header.split(",")}
    for name in preferred:
        if name in offered:
            return name
    return None


def compress(data: bytes, encoding: str | None) -> bytes:
    """Compress one payload; each Connect message is compressed on its own."""
    encoding = normalise_encoding(encoding)
    if encoding is None:
        return data
    if encoding == "gzip":
        return gzip.compress(data, compresslevel=6, mtime=0)
    return inflate.zstd_compress(data, level=3)


def decompress(
    data: bytes, encoding: str | None, *, limit: int = DEFAULT_MAX_DECOMPRESSED_SIZE
) -> bytes:
    """Decompress with a hard output cap; memory stays bounded by `limit` whatever the input
    (the bounded decoder the provider client uses too, `inflate.py`, with a total cap)."""
    encoding = normalise_encoding(encoding)
    if encoding is None:
        return data
    if not data and encoding == "gzip":  # as before: a gzip stream has at least its header
        raise DecompressionFailed("gzip payload is truncated")
    try:
        return inflate.decompress_capped(data, encoding, limit)
    except inflate.TooLarge as exc:
        raise DecompressedTooLarge(str(exc)) from None
    except inflate.InflateError as exc:
        raise DecompressionFailed(f"{encoding} payload: {exc}") from None


def decompress_body(
    data: bytes, encoding: str | None, *, limit: int = DEFAULT_MAX_DECOMPRESSED_SIZE
) -> bytes:
    """An HTTP body by its `content-encoding`: any coding a client may use (gzip, deflate, br,
    zstd; Connect's own envelopes know only gzip and zstd), with the same hard output cap.
    A body in a coding we cannot read raises `UnsupportedEncoding`: the caller refuses it
    rather than forward what nobody read (issue 33 item 8)."""
    try:
        coding = inflate.normalise(encoding)
    except inflate.Unsupported as exc:
        raise UnsupportedEncoding(str(exc)) from None
    if coding is None:
        return data
    if not data:
        raise DecompressionFailed(f"{coding} body is empty")
    try:
        return inflate.decompress_capped(data, coding, limit)
    except inflate.TooLarge as exc:
        raise DecompressedTooLarge(str(exc)) from None
    except inflate.InflateError as exc:
        raise DecompressionFailed(f"{coding} body: {exc}") from None


# --- envelopes ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Frame:
    """One decoded envelope. `payload` is always decompressed; `flags` are as sent."""

    flags: int
    payload: bytes

    @property
    def is_end_stream(self) -> bool:
        return bool(self.flags & FLAG_END_STREAM)

    @property
    def was_compressed(self) -> bool:
        return bool(self.flags & FLAG_COMPRESSED)


class EnvelopeDecoder:
    """Incremental envelope decoder: feed it bytes split anywhere, get whole frames back.

    Limits are checked on the header, before the payload is buffered, so an absurd length fails
    fast. After an error the decoder stays failed: framing cannot be resynchronised.
    """

    def __init__(
        self,
        *,
        encoding: str | None = None,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    ) -> None:
        self._encoding = normalise_encoding(encoding)
        self._max_frame = max_frame_size
        self._max_decompressed = max_decompressed_size
        self._buffer = bytearray()
        self._ended = False
        self._failed: ConnectError | None = None

    @property
    def ended(self) -> bool:
        """True once an end-stream frame has been decoded."""
        return self._ended

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def feed(self, data: bytes) -> list[Frame]:
        if self._failed is not None:
            raise self._failed
        try:
            return self._feed(data)
        except ConnectError as exc:
            self._failed = exc
            raise

    def _feed(self, data: bytes) -> list[Frame]:
        if data and self._ended:
            raise ProtocolViolation("data after the end-stream frame")
        self._buffer += data
        frames: list[Frame] = []
        while len(self._buffer) >= HEADER_SIZE:
            flags, length = struct.unpack_from(">BI", self._buffer)
            if flags & ~_KNOWN_FLAGS:
                raise UnknownFlags(f"unknown envelope flags 0x{flags:02x}")
            if length > self._max_frame:
                raise FrameTooLarge(f"envelope of {length} bytes exceeds {self._max_frame}")
            end = HEADER_SIZE + length
            if len(self._buffer) < end:
                break
            payload = bytes(self._buffer[HEADER_SIZE:end])
            del self._buffer[:end]
            frames.append(Frame(flags, self._open(flags, payload)))
            if flags & FLAG_END_STREAM:
                self._ended = True
                if self._buffer:
                    raise ProtocolViolation("data after the end-stream frame")
                break
        return frames

    def _open(self, flags: int, payload: bytes) -> bytes:
        if not flags & FLAG_COMPRESSED:
            return payload
        if self._encoding is None:
            # Cursor compresses with gzip when it compresses at all; assume it rather than fail
            # when a capture lost its headers.
            return decompress(payload, "gzip", limit=self._max_decompressed)
        return decompress(payload, self._encoding, limit=self._max_decompressed)

    def close(self) -> None:
        """Declare the end of input; raise if a partial envelope is left over."""
        if self._failed is None and self._buffer:
            self._failed = TruncatedStream(
                f"stream ended inside an envelope ({len(self._buffer)} bytes left over)"
            )
        if self._failed is not None:
            raise self._failed


def decode_envelopes(data: bytes, **kwargs: object) -> list[Frame]:
    """Decode a complete byte string of envelopes (a whole captured stream)."""
    decoder = EnvelopeDecoder(**kwargs)  # type: ignore[arg-type]
    frames = decoder.feed(data)
    decoder.close()
    return frames


def encode_frame_raw(flags: int, payload: bytes) -> bytes:
    """An envelope around an already prepared payload."""
    return struct.pack(">BI", flags, len(payload)) + payload


def encode_frame(payload: bytes, *, encoding: str | None = None) -> bytes:
    """One data envelope; compressed (flag 0x01) when an encoding is given."""
    if normalise_encoding(encoding) is None:
        return encode_frame_raw(0, payload)
    return encode_frame_raw(FLAG_COMPRESSED, compress(payload, encoding))


# --- end-stream --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ErrorDetail:
    """A typed error detail: fully qualified message name plus its serialised bytes."""

    type: str
    value: bytes


@dataclass(frozen=True, slots=True)
class EndStreamError:
    code: str
    message: str
    details: tuple[ErrorDetail, ...] = ()

    def __post_init__(self) -> None:
        if self.code not in CONNECT_CODE_HTTP_STATUS:
            raise ValueError(f"not a Connect error code: {self.code!r}")

    def to_json(self) -> dict[str, object]:
        body: dict[str, object] = {"code": self.code, "message": self.message}
        if self.details:
            body["details"] = [
                {"type": d.type, "value": base64.b64encode(d.value).decode().rstrip("=")}
                for d in self.details
            ]
        return body


@dataclass(frozen=True, slots=True)
class EndStream:
    error: EndStreamError | None = None
    metadata: Mapping[str, list[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None


def encode_end_stream(
    error: EndStreamError | None = None, metadata: Mapping[str, list[str]] | None = None
) -> bytes:
    """The 0x02 trailer envelope: `{}` on success, `{"error": {...}}` on failure."""
    if error is None and not metadata:
        return _END_STREAM_OK  # every RunPoll answer but the last ends with it
    body: dict[str, object] = {}
    if error is not None:
        body["error"] = error.to_json()
    if metadata:
        body["metadata"] = {k: list(v) for k, v in metadata.items()}
    payload = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    return encode_frame_raw(FLAG_END_STREAM, payload)


_END_STREAM_OK = encode_frame_raw(FLAG_END_STREAM, b"{}")


# gRPC status numbers for Connect codes, for clients that speak gRPC-Web (grpc-web+proto).
GRPC_STATUS: dict[str, int] = {
    "canceled": 1,
    "unknown": 2,
    "invalid_argument": 3,
    "deadline_exceeded": 4,
    "not_found": 5,
    "already_exists": 6,
    "permission_denied": 7,
    "resource_exhausted": 8,
    "failed_precondition": 9,
    "aborted": 10,
    "out_of_range": 11,
    "unimplemented": 12,
    "internal": 13,
    "unavailable": 14,
    "data_loss": 15,
    "unauthenticated": 16,
}
FLAG_GRPC_WEB_TRAILER = 0x80


def grpc_web_trailers(error: EndStreamError | None) -> list[tuple[str, str]]:
    """`grpc-status` / `grpc-message` for an end of stream (percent-encoded message)."""
    if error is None:
        return [("grpc-status", "0")]
    return [
        ("grpc-status", str(GRPC_STATUS[error.code])),
        ("grpc-message", quote(error.message, safe=" !\"#$&'()*+,-./:;<=>?@[]^_`{|}~")),
    ]


def encode_grpc_web_trailer(error: EndStreamError | None = None) -> bytes:
    """The gRPC-Web trailer frame (flag 0x80): HTTP/1-style header lines."""
    body = "".join(f"{k}: {v}\r\n" for k, v in grpc_web_trailers(error)).encode()
    return encode_frame_raw(FLAG_GRPC_WEB_TRAILER, body)


def parse_end_stream(payload: bytes) -> EndStream:
    """Parse an end-stream payload; accepts padded or unpadded base64 detail values."""
    try:
        body = json.loads(payload.decode("utf-8")) if payload else {}
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadEndStream(f"end-stream payload is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise BadEndStream("end-stream payload is not a JSON object")
    metadata = body.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise BadEndStream("end-stream metadata is not an object")
    raw_error = body.get("error")
    if raw_error is None:
        if "error" in body:
            raise BadEndStream('"error": null is not a valid end-stream')
        return EndStream(None, metadata)
    if not isinstance(raw_error, dict) or "code" not in raw_error:
        raise BadEndStream("end-stream error has no code")
    details = []
    for item in raw_error.get("details") or []:
        try:
            value = item.get("value", "")
            value += "=" * (-len(value) % 4)
            details.append(ErrorDetail(str(item["type"]), base64.b64decode(value)))
        except (AttributeError, KeyError, TypeError, binascii.Error) as exc:
            raise BadEndStream(f"bad error detail: {exc}") from None
    try:
        error = EndStreamError(
            str(raw_error["code"]), str(raw_error.get("message", "")), tuple(details)
        )
    except ValueError as exc:
        raise BadEndStream(str(exc)) from None
    return EndStream(error, metadata)


# --- unary bodies ------------------------------------------------------------------------------


def looks_enveloped(body: bytes) -> bool:
    """True when a unary body is one data envelope: flag 0/1 and a length matching the rest."""
    if len(body) < HEADER_SIZE or body[0] not in (0, FLAG_COMPRESSED):
        return False
    (length,) = struct.unpack_from(">I", body, 1)
    return length == len(body) - HEADER_SIZE


def decode_unary_body(
    body: bytes,
    *,
    content_type: str | None = None,
    content_encoding: str | None = None,
    max_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> bytes:
    """The protobuf bytes of a unary request: undo HTTP compression and an optional envelope.

    mitmproxy already undoes `Content-Encoding`; the CLI and replay tools may not have.
    """
    if len(body) > max_size:
        raise FrameTooLarge(f"request body of {len(body)} bytes exceeds {max_size}")
    body = decompress(body, content_encoding, limit=max_size)
    ctype = (content_type or "").split(";")[0].strip().lower()
    # A BidiAppendRequest starts with a field tag (never 0x00/0x01), so the envelope check is
    # safe whatever the content type says.
    enveloped_type = ctype.startswith(("application/connect+", "application/grpc-web"))
    if enveloped_type or looks_enveloped(body):
        frames = decode_envelopes(body, max_decompressed_size=max_size)
        if len(frames) != 1 or frames[0].is_end_stream:
            raise ProtocolViolation("a unary request must be exactly one data envelope")
        return frames[0].payload
    return body


def unary_error(code: str, message: str) -> tuple[int, bytes]:
    """HTTP status and JSON body of a Connect unary error answer."""
    error = EndStreamError(code, message)
    body = json.dumps(error.to_json(), separators=(",", ":"), ensure_ascii=False).encode()
    return CONNECT_CODE_HTTP_STATUS[code], body


def write_batches(frames: list[bytes], large: int = 64 * 1024) -> Iterator[bytes]:
    """Frames ready together, as few writes as can be made without copying a large one: small
    frames joined, a large frame (a blob SET, a checkpoint) written as it is."""
    small: list[bytes] = []
    for frame in frames:
        if len(frame) < large:
            small.append(frame)
            continue
        if small:
            yield b"".join(small)
            small = []
        yield frame
    if small:
        yield b"".join(small)
