"""Connect envelope codec: round trips over arbitrary splits, limits, malformed input."""

from __future__ import annotations

import gzip
import json
import struct

import pytest
from bombs import gzip_zeros
from bombs import zstd_zeros
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from cursor_byok.wire import connect
from cursor_byok.wire.connect import EndStreamError
from cursor_byok.wire.connect import EnvelopeDecoder
from cursor_byok.wire.connect import ErrorDetail

payloads = st.lists(st.binary(max_size=300), max_size=8)
encodings = st.sampled_from([None, "gzip", "zstd"])


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces, last = [], 0
    for p in points:
        pieces.append(data[last:p])
        last = p
    pieces.append(data[last:])
    return pieces


@settings(max_examples=300, deadline=None)
@given(payloads, encodings, st.lists(st.integers(min_value=0, max_value=10_000), max_size=20))
def test_round_trip_any_split(messages: list[bytes], encoding: str | None, cuts: list[int]) -> None:
    stream = b"".join(connect.encode_frame(m, encoding=encoding) for m in messages)
    stream += connect.encode_end_stream()
    decoder = EnvelopeDecoder(encoding=encoding)
    frames = []
    for piece in _split(stream, cuts):
        frames += decoder.feed(piece)
    decoder.close()
    assert [f.payload for f in frames[:-1]] == messages
    assert all(f.was_compressed == (encoding is not None) for f in frames[:-1])
    assert frames[-1].is_end_stream
    assert connect.parse_end_stream(frames[-1].payload).ok
    assert decoder.ended


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=200), encodings, st.lists(st.integers(0, 300), max_size=6))
def test_malformed_input_raises_only_codec_errors(data: bytes, encoding, cuts) -> None:
    decoder = EnvelopeDecoder(encoding=encoding, max_frame_size=1000, max_decompressed_size=1000)
    try:
        for piece in _split(data, cuts):
            for frame in decoder.feed(piece):
                if frame.is_end_stream:
                    connect.parse_end_stream(frame.payload)
        decoder.close()
    except connect.ConnectError:
        pass


def test_end_stream_success_bytes() -> None:
    assert connect.encode_end_stream() == bytes.fromhex("02000000027b7d")


def test_end_stream_error_json_shape() -> None:
    detail = ErrorDetail("aiserver.v1.ErrorDetails", b"\x08\x39\x12\x03abc")
    frame = connect.encode_end_stream(EndStreamError("unavailable", "provider said no", (detail,)))
    assert frame[0] == 0x02
    body = json.loads(frame[5:])
    assert body["error"]["code"] == "unavailable"
    assert body["error"]["message"] == "provider said no"
    [d] = body["error"]["details"]
    assert d["type"] == "aiserver.v1.ErrorDetails"
    assert not d["value"].endswith("=")  # unpadded base64 per the Connect spec
    parsed = connect.parse_end_stream(frame[5:])
    assert parsed.error == EndStreamError("unavailable", "provider said no", (detail,))


def test_end_stream_accepts_padded_base64() -> None:
    body = b'{"error":{"code":"internal","message":"x","details":[{"type":"t","value":"AQ=="}]}}'
    assert connect.parse_end_stream(body).error.details[0].value == b"\x01"


@pytest.mark.parametrize(
    "payload",
    [b"not json", b"[]", b'{"error": null}', b'{"error": {}}', b'{"error":{"code":"nope"}}'],
)
def test_bad_end_stream(payload: bytes) -> None:
    with pytest.raises(connect.BadEndStream):
        connect.parse_end_stream(payload)


def test_unknown_error_code_rejected_when_encoding() -> None:
    with pytest.raises(ValueError):
        EndStreamError("teapot", "x")


def test_unknown_flag_bits() -> None:
    with pytest.raises(connect.UnknownFlags):
        EnvelopeDecoder().feed(b"\x80\x00\x00\x00\x00")


def test_frame_too_large_fails_on_the_header() -> None:
    decoder = EnvelopeDecoder(max_frame_size=1024)
    with pytest.raises(connect.FrameTooLarge):
        decoder.feed(struct.pack(">BI", 0, 1025))  # no payload needed to fail
    with pytest.raises(connect.FrameTooLarge):  # stays failed
        decoder.feed(b"")


def test_truncated_stream_on_close() -> None:
    decoder = EnvelopeDecoder()
    assert decoder.feed(connect.encode_frame(b"abc")[:-1]) == []
    with pytest.raises(connect.TruncatedStream):
        decoder.close()


def test_data_after_end_stream() -> None:
    with pytest.raises(connect.ProtocolViolation):
        EnvelopeDecoder().feed(connect.encode_end_stream() + connect.encode_frame(b"x"))


def test_gzip_bomb_fails_fast_with_bounded_memory() -> None:
    bomb = gzip_zeros(1 << 30)  # 1 GiB of zeros in ~1 MB
    assert len(bomb) < 2 << 20
    frame = struct.pack(">BI", 1, len(bomb)) + bomb
    decoder = EnvelopeDecoder(encoding="gzip", max_decompressed_size=4 << 20)
    with pytest.raises(connect.DecompressedTooLarge):
        decoder.feed(frame)


def test_zstd_bomb_fails() -> None:
    bomb = zstd_zeros(64 << 20)
    with pytest.raises(connect.DecompressedTooLarge):
        connect.decompress(bomb, "zstd", limit=1 << 20)


def test_concatenated_gzip_members() -> None:
    data = gzip.compress(b"ab") + gzip.compress(b"cd")
    assert connect.decompress(data, "gzip") == b"abcd"


@pytest.mark.parametrize("encoding", ["gzip", "zstd"])
def test_corrupt_compressed_payload(encoding: str) -> None:
    frame = struct.pack(">BI", 1, 6) + b"garbage"[:6]
    with pytest.raises(connect.DecompressionFailed):
        EnvelopeDecoder(encoding=encoding).feed(frame)


def test_unsupported_encoding() -> None:
    with pytest.raises(connect.UnsupportedEncoding):
        EnvelopeDecoder(encoding="br")


def test_pick_encoding() -> None:
    assert connect.pick_encoding("gzip") == "gzip"
    assert connect.pick_encoding("br, zstd;q=0.5") == "zstd"
    assert connect.pick_encoding("br") is None
    assert connect.pick_encoding(None) is None


@pytest.mark.parametrize("encoding", [None, "gzip", "zstd"])
def test_unary_body_plain_compressed_or_enveloped(encoding) -> None:
    message = b"\x0a\x04\x33\x61\x30\x30"
    body = connect.compress(message, encoding)
    assert (
        connect.decode_unary_body(body, content_type="application/proto", content_encoding=encoding)
        == message
    )
    enveloped = connect.encode_frame(message)
    assert connect.decode_unary_body(enveloped) == message
    assert connect.decode_unary_body(enveloped, content_type="application/connect+proto") == message


def test_unary_error() -> None:
    status, body = connect.unary_error("invalid_argument", "bad hex")
    assert status == 400
    assert json.loads(body) == {"code": "invalid_argument", "message": "bad hex"}
