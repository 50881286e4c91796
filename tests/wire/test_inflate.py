"""The bounded incremental decoder (inflate.py): every coding, any split, pieces never larger
than a step, bombs refused by the consumer's cap, truncated and corrupt bodies named."""

from __future__ import annotations

import gzip
import zlib

import brotli
import pytest
from bombs import brotli_zeros
from bombs import gzip_zeros
from bombs import zstd_zeros

from cursor_byok.wire import inflate
from cursor_byok.wire.inflate import Inflater
from cursor_byok.wire.inflate import zstd_compress

TEXT = b"".join(b'data: {"n": %d, "text": "%s"}\n\n' % (i, b"x" * (i % 50)) for i in range(400))


def raw_deflate(data: bytes) -> bytes:
    obj = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return obj.compress(data) + obj.flush()


ENCODED = {
    "gzip": gzip.compress(TEXT),
    "x-gzip": gzip.compress(TEXT),
    "deflate": zlib.compress(TEXT),
    "br": brotli.compress(TEXT),
    "zstd": zstd_compress(TEXT),
}


def decode(encoding: str, data: bytes, split: int, step: int = inflate.STEP) -> list[bytes]:
    inflater = Inflater(encoding, step=step)
    out: list[bytes] = []
    for i in range(0, len(data), split):
        out += inflater.feed(data[i : i + split])
    out += inflater.finish()
    return out


@pytest.mark.parametrize("encoding", list(ENCODED))
def test_every_coding_gives_the_same_bytes_for_any_split(encoding: str) -> None:
    data = ENCODED[encoding]
    for split in (1, 2, 3, 7, 100, len(data)):
        assert b"".join(decode(encoding, data, split)) == TEXT, split


def test_raw_deflate_is_read_too_as_some_servers_send_it() -> None:
    for split in (1, 5, 10_000):
        assert b"".join(decode("deflate", raw_deflate(TEXT), split)) == TEXT


def test_concatenated_gzip_members_and_zstd_frames() -> None:
    members = gzip.compress(b"ab") + gzip.compress(b"cd") + gzip.compress(b"ef")
    frames = zstd_compress(b"ab") + zstd_compress(b"cd")
    for split in (1, 3, 100):
        assert b"".join(decode("gzip", members, split)) == b"abcdef"
        assert b"".join(decode("zstd", frames, split)) == b"abcd"


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd"])
def test_a_bomb_comes_out_in_bounded_pieces(encoding: str) -> None:
    """64 MiB of zeros from a few KB: no piece is larger than (about) a step, whatever the
    input chunk, so the consumer's bound holds."""
    expanded = 64 << 20
    data = {
        "gzip": lambda: gzip_zeros(expanded),
        "deflate": lambda: zlib.compress(bytes(expanded), 9),
        "br": lambda: brotli_zeros(expanded),
        "zstd": lambda: zstd_zeros(expanded),
    }[encoding]()
    step = 64 * 1024
    inflater = Inflater(encoding, step=step)
    total = 0
    largest = 0
    for piece in inflater.feed(data):  # the whole bomb in one read
        largest = max(largest, len(piece))
        total += len(piece)
    list(inflater.finish())
    assert total == expanded
    assert largest <= 2 * step  # brotli's buffer may reach twice its limit


def test_decompress_capped_stops_at_the_cap() -> None:
    bomb = gzip_zeros(64 << 20)
    with pytest.raises(inflate.TooLarge, match="exceeds 1048576 bytes"):
        inflate.decompress_capped(bomb, "gzip", 1 << 20)
    assert inflate.decompress_capped(ENCODED["br"], "br", 1 << 20) == TEXT
    assert inflate.decompress_capped(b"plain", None, 1) == b"plain"


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd"])
def test_a_truncated_body_is_an_error_at_the_end(encoding: str) -> None:
    data = ENCODED[encoding]
    inflater = Inflater(encoding)
    list(inflater.feed(data[: len(data) // 2]))
    with pytest.raises(inflate.Truncated, match="truncated"):
        list(inflater.finish())


def test_an_empty_body_is_no_error() -> None:
    """204s, HEAD answers: a coding named on no bytes at all."""
    for encoding in ("gzip", "deflate", "br", "zstd"):
        assert decode(encoding, b"", 1) == []


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd"])
def test_corrupt_data_is_an_error(encoding: str) -> None:
    garbage = b"\x1f\x8b\x08\x00garbage-garbage" if encoding == "gzip" else b"\xff" * 40
    with pytest.raises(inflate.InflateError):
        decode(encoding, garbage, 40)


def test_codings_are_named_as_in_http() -> None:
    assert inflate.normalise(" GZIP ") == "gzip" and inflate.normalise("identity") is None
    assert inflate.normalise("") is None and inflate.normalise(None) is None
    with pytest.raises(inflate.Unsupported, match="compress"):
        inflate.normalise("compress")
    with pytest.raises(inflate.Unsupported):
        inflate.normalise("gzip, br")  # stacked codings: not sent by providers
