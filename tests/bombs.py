"""Compression bombs for the tests, cheap to build and built once per test process.

Compressing a GiB of zeros costs seconds per test (zlib at level 9 runs at ~130 MiB/s, brotli at
its default quality at ~20 MiB/s, zstd at level 19 at ~90 MiB/s); these bombs are the same bytes
a decoder sees from a real one at a few milliseconds each: gzip as concatenated members of 1 MiB
of zeros (valid gzip, what `gzip -c a b` writes; every decoder here reads all members), brotli and
zstd as one stream at a level that compresses zeros as well as the slowest one does.
"""

from __future__ import annotations

import functools
import gzip

import brotli

from cursor_byok.wire.inflate import zstd_compress

MiB = 1 << 20


@functools.cache
def gzip_zeros(expanded: int) -> bytes:
    """Gzip that inflates to `expanded` zero bytes (a multiple of 1 MiB), ~1 KB per MiB."""
    if expanded % MiB:
        raise ValueError("a gzip bomb is made of 1 MiB members")
    return gzip.compress(bytes(MiB), compresslevel=9) * (expanded // MiB)


@functools.cache
def zstd_zeros(expanded: int) -> bytes:
    """One zstd frame of `expanded` zero bytes (~32 bytes per MiB, level 3: as small as 19)."""
    return zstd_compress(bytes(expanded), level=3)


@functools.cache
def brotli_zeros(expanded: int) -> bytes:
    """One brotli stream of `expanded` zero bytes (quality 4: ~100 bytes, as small as 11)."""
    return brotli.compress(bytes(expanded), quality=4)
