"""Frames the outbox makes without a protobuf message: byte for byte what upb serialises."""

from __future__ import annotations

import pytest

from cursor_byok.core.outbox import set_blob_frame
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire import connect


@pytest.mark.parametrize("kv_id", [0, 1, 127, 128, 300, 2**31])
@pytest.mark.parametrize(
    ("blob_id", "data"),
    [
        (b"", b""),
        (b"\x01" * 32, b""),
        (b"", b"x"),
        (b"\xaa" * 32, b"d" * 200),
        (b"i", b"z" * 70000),
    ],
)
def test_set_blob_frame_is_upbs_bytes(kv_id: int, blob_id: bytes, data: bytes) -> None:
    message = pb.AgentServerMessage()
    message.kv_server_message.id = kv_id
    message.kv_server_message.set_blob_args.blob_id = blob_id
    message.kv_server_message.set_blob_args.blob_data = data
    message.kv_server_message.set_blob_args.SetInParent()
    expected = connect.encode_frame_raw(0, message.SerializeToString())
    assert set_blob_frame(kv_id, blob_id, data) == expected
