"""A blob too large to copy whole: its id and size known, its bytes made piece by piece.

A long answer ends its turn as several blobs at once (the assistant-text step, the history
message's JSON), each as large as the answer. Made whole, each is one more copy of the answer
in memory beside the ones the turn already holds (issue 38: memory that follows the bytes).
A `BlobPieces` refers to what the bytes are made of (the text's strings, the message) and
makes them again each time they are read: once for the id, once into the data dir; the SET
frame is then read back from there (`store.blobs.BlobFrame`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator

from cursor_byok.wire.varint import varint

LARGE_BLOB = 256 * 1024
"""Blobs from this size on are made in pieces (smaller ones cost less as bytes)."""


class BlobPieces:
    """A blob's id, its size and a way to make its bytes in pieces (as often as needed)."""

    __slots__ = ("_make", "ident", "size")

    def __init__(self, ident: bytes, size: int, make: Callable[[], Iterable[bytes]]) -> None:
        self.ident = ident
        self.size = size
        self._make = make

    @classmethod
    def of(cls, make: Callable[[], Iterable[bytes]]) -> BlobPieces:
        """The blob `make` makes, its id and size taken in one pass over the pieces."""
        digest = hashlib.sha256()
        size = 0
        for piece in make():
            digest.update(piece)
            size += len(piece)
        return cls(digest.digest(), size, make)

    def rebase(self, make: Callable[[], Iterable[bytes]]) -> None:
        """Make the same bytes from elsewhere from now on (the data dir, once written there):
        whatever this was made of (a long text's strings) is let go by this holder."""
        self._make = make

    def pieces(self) -> Iterator[bytes]:
        return iter(self._make())

    def join(self) -> bytes:
        """The whole blob as bytes: only where nothing else will do (a failed disk write)."""
        return b"".join(self.pieces())


def utf8_pieces(parts: Iterable[str], slice_chars: int = 1 << 16) -> Iterator[bytes]:
    """`parts` encoded as UTF-8, at most `slice_chars` characters at a time."""
    for part in parts:
        for start in range(0, len(part), slice_chars):
            yield part[start : start + slice_chars].encode()


Make = Callable[[], Iterator[bytes]]


def string_field(number: int, parts: list[str]) -> tuple[int, Make]:
    """Protobuf string field `number` holding `parts` joined: its encoded size and its pieces
    (proto3: nothing for an empty string). The UTF-8 size is counted in a first pass."""
    size = sum(len(piece) for piece in utf8_pieces(parts))
    if not size:
        return 0, lambda: iter(())
    head = varint(number << 3 | 2) + varint(size)

    def make() -> Iterator[bytes]:
        yield head
        yield from utf8_pieces(parts)

    return len(head) + size, make


def message_field(number: int, size: int, body: Make) -> tuple[int, Make]:
    """Protobuf message field `number` whose encoded body (`size` bytes) `body` makes: its
    encoded size and its pieces (present even when empty, as a set oneof member is)."""
    head = varint(number << 3 | 2) + varint(size)

    def make() -> Iterator[bytes]:
        yield head
        yield from body()

    return len(head) + size, make
