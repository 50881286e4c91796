"""Protobuf base-128 varints, for the protobuf bytes we walk or build without a schema.

One reader and one writer: the capture decoder and redactor walk unknown messages, the
analytics filter drops events by field, the checkpoint builds two messages our generated schema
lacks, the outbox joins KV SET frames around a blob. Sans-IO, importing only the error
root, so every room can use it.
"""

from __future__ import annotations

from cursor_byok.errors import ByokError
from cursor_byok.errors import Code

MAX_VARINT_BYTES = 10
"""A 64-bit value takes at most ten bytes; a longer run is not a varint."""


class VarintError(ByokError, ValueError):
    """Bytes that do not hold a whole varint at the given position."""

    code = Code.INVALID_ARGUMENT


def varint(value: int) -> bytes:
    """`value` (not negative) as a varint."""
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """The varint at `data[pos:]` and the position after it; `VarintError` when the bytes end
    inside it or it runs past ten bytes."""
    value = shift = 0
    end = min(len(data), pos + MAX_VARINT_BYTES)
    while pos < end:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
    raise VarintError("a varint runs past the end of the message")
