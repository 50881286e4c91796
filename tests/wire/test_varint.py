"""The one varint reader and writer every hand-walked protobuf uses (wire/varint.py)."""

from __future__ import annotations

import pytest
from google.protobuf import descriptor_pb2
from hypothesis import given
from hypothesis import strategies as st

from cursor_byok.wire.varint import VarintError
from cursor_byok.wire.varint import read_varint
from cursor_byok.wire.varint import varint


@given(st.integers(min_value=0, max_value=2**64 - 1), st.binary(max_size=4))
def test_a_written_varint_reads_back_and_stops_where_it_ends(value: int, tail: bytes) -> None:
    data = b"\x07" + varint(value) + tail
    assert read_varint(data, 1) == (value, len(data) - len(tail))


@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_the_bytes_are_protobufs_own(value: int) -> None:
    # UninterpretedOption.positive_int_value: field 4, uint64, a plain varint after its tag
    option = descriptor_pb2.UninterpretedOption(positive_int_value=value)
    assert option.SerializeToString() == varint(4 << 3) + varint(value)


@pytest.mark.parametrize(
    "data",
    [b"", b"\x80", b"\xff\xff", b"\xff" * 10 + b"\x01"],
    ids=["empty", "cut", "cut-longer", "eleven-bytes"],
)
def test_bytes_that_end_inside_a_varint_or_run_past_ten_are_refused(data: bytes) -> None:
    with pytest.raises(VarintError):
        read_varint(data, 0)


def test_ten_bytes_is_the_longest_varint() -> None:
    assert read_varint(b"\xff" * 9 + b"\x01", 0) == (2**64 - 1, 10)
    assert varint(2**64 - 1) == b"\xff" * 9 + b"\x01"
