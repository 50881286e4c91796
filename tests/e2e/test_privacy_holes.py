"""Issue 33 item 8: the holes the third attack round found in "nothing of a BYOK conversation goes
to Cursor", each through a real mitmdump in front of the stand-in backend, with the marker
harness of test_privacy.py: the backend must receive the marker 0 times in any encoding.

- an IngestConversation naming the model by its stable `byok-…` id, its conversation unknown;
- a conversation's route after a restart of the proxy (kept in the data dir);
- bodies with `content-encoding: deflate` or `br` (decoded by our bounded inflater), and one in
  a coding nobody can read (refused, never forwarded unread);
- analytics events that carry the prompt's text but no id, or the id 40 levels deep;
- a NameAgent with one invalid UTF-8 byte.
"""

from __future__ import annotations

import json
import uuid
import zlib

import brotli
import pytest
from fakes.fake_cursor import FakeCursor
from fakes.fake_provider import FakeProvider
from leaks import ENCODINGS
from leaks import marker_counts
from provider_config import MODEL
from test_privacy import ANALYTICS
from test_privacy import Call
from test_privacy import Conversation
from test_privacy import Stack
from test_privacy import census
from test_privacy import received
from test_privacy import track_event

from cursor_byok.config import load_config
from cursor_byok.config.catalog import model_id
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.pb import aiserver_v1_pb2 as aipb

pytestmark = pytest.mark.timeout(120)
AGENT = "/agent.v1.AgentService/"
NOTHING = dict.fromkeys(ENCODINGS, 0)
SHORT_WAIT = ("--set", "cursor_byok_route_wait_ms=300")


async def send_encoded(stack: Stack, path: str, message, coding: str):
    """`message` as a protobuf body compressed with `coding` (whatever the bytes say)."""
    raw = message.SerializeToString()
    if coding == "deflate":
        body = zlib.compress(raw)
    elif coding == "raw-deflate":  # what some clients send as "deflate"
        deflater = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        body = deflater.compress(raw) + deflater.flush()
    elif coding == "br":
        body = brotli.compress(raw)
    else:  # a coding we do not decode: the bytes do not matter
        body = raw
    header = "deflate" if coding == "raw-deflate" else coding
    return await stack.client.http.post(
        stack.client.base_url + path,
        content=body,
        headers={
            "connect-protocol-version": "1",
            "content-type": "application/proto",
            "content-encoding": header,
        },
    )


async def test_calls_before_any_run_that_name_our_model_or_cannot_be_read(
    tmp_path, workspace
) -> None:
    """No run of the conversation yet (or ever): an IngestConversation that names the model by
    its stable id is ours; a NameAgent with one invalid UTF-8 byte, and a body in a coding
    nobody decodes, are refused here."""
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        byok = Conversation(MODEL, workspace)
        stack = Stack(tmp_path, workspace, fp, backend, "local", *SHORT_WAIT)
        ours = model_id(next(m for m in load_config(tmp_path / "config.toml").models))
        try:
            ingest = await stack.send(
                Call(
                    ANALYTICS + "IngestConversation",
                    aipb.IngestConversationRequest(
                        conversation_id=byok.id, transcript=byok.message, model=ours
                    ),
                    aipb.IngestConversationResponse,
                    "json",
                )
            )
            variant = await stack.send(
                Call(
                    ANALYTICS + "IngestConversation",
                    aipb.IngestConversationRequest(
                        conversation_id=str(uuid.uuid4()),
                        transcript=byok.message,
                        model=f"{ours}:high",
                    ),
                )
            )
            text = f"name this: {byok.marker}".encode() + b"\xff"
            name = await stack.send(Call(AGENT + "NameAgent", b"\x0a" + bytes([len(text)]) + text))
            unknown = await send_encoded(
                stack,
                AGENT + "UpdateConversationMetadata",
                pb.UpdateConversationMetadataRequest(conversation_id=byok.id, name=byok.marker),
                "compress",
            )
        finally:
            await stack.close()
    assert ingest.status_code == 200 and variant.status_code == 200
    assert aipb.IngestConversationResponse.FromString(variant.content).success
    assert name.status_code == 400 and name.json()["code"] == "invalid_argument"
    assert unknown.status_code == 400 and "compress" in unknown.json()["message"]
    assert marker_counts(received(backend), byok.marker) == NOTHING
    assert not any(r.path.endswith(("IngestConversation", "NameAgent")) for r in backend.requests)


async def test_encodings_prompt_text_and_deep_ids_of_a_byok_conversation(
    tmp_path, workspace
) -> None:
    """After a BYOK turn: its calls compressed with deflate (zlib or raw) or br are read and
    answered here; analytics events carrying its prompt's text (no id), or its id 40 levels
    deep, are taken out; what is not about it still goes on; the census says 0 B."""
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        byok = Conversation(MODEL, workspace)
        fp.script.text("hello")
        stack = Stack(tmp_path, workspace, fp, backend, "local", *SHORT_WAIT)
        try:
            turn = await stack.client.turn(
                stack.client.run_request(byok.message, conversation_id=byok.id, model=MODEL)
            )
            metadata = pb.UpdateConversationMetadataRequest(
                conversation_id=byok.id, name=f"About {byok.marker}"
            )
            encoded = [
                await send_encoded(stack, AGENT + "UpdateConversationMetadata", metadata, coding)
                for coding in ("deflate", "raw-deflate", "br")
            ]
            tracked = aipb.TrackEventsRequest(
                events=[
                    track_event("composer.prompt", text=byok.message),  # no id at all
                    byok.unrelated,
                ]
            )
            prompt_event = await send_encoded(stack, ANALYTICS + "TrackEvents", tracked, "br")
            deep: dict = {"id": byok.id, "draft": byok.marker}
            for level in range(40):
                deep = {f"level{level}": deep}
            batch = {
                "events": [
                    {"event": "composer.deep", "properties": deep},
                    {"event": "composer.typed", "properties": {"text": byok.message}},
                    {"event": "window.focused", "properties": {"window": 1}},
                ]
            }
            batched = await stack.client.http.post(
                stack.client.base_url + ANALYTICS + "Batch",
                content=json.dumps(batch).encode(),
                headers={"connect-protocol-version": "1", "content-type": "application/json"},
            )
        finally:
            await stack.close()
        counted = census(stack)
    assert turn.end.ok
    assert [r.status_code for r in encoded] == [200, 200, 200]
    assert prompt_event.status_code == 200 and batched.status_code == 200
    assert marker_counts(received(backend), byok.marker) == NOTHING
    assert not any(byok.id.encode() in data for data in received(backend))
    forwarded = {r.path: r.body for r in backend.requests}
    assert byok.unrelated.SerializeToString() in forwarded[ANALYTICS + "TrackEvents"]
    assert b"window.focused" in forwarded[ANALYTICS + "Batch"]
    assert AGENT + "UpdateConversationMetadata" not in forwarded
    mine = counted["privacy"]["conversations"][byok.id]
    assert mine["sent_bytes"] == 0 and mine["answered"] == 3 and mine["dropped"] == 3


async def test_a_byok_conversation_is_still_private_after_a_restart(tmp_path, workspace) -> None:
    """The proxy restarts on the same data dir: an analytics event naming the conversation
    (which does not wait for a route) is still taken out, and its content calls are answered
    here at once."""
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        byok = Conversation(MODEL, workspace)
        fp.script.text("hello")
        first = Stack(tmp_path, workspace, fp, backend, "local", *SHORT_WAIT)
        try:
            turn = await first.client.turn(
                first.client.run_request("hi", conversation_id=byok.id, model=MODEL)
            )
        finally:
            await first.close()
        second = Stack(tmp_path, workspace, fp, backend, "local", *SHORT_WAIT)
        try:
            events = aipb.TrackEventsRequest(
                events=[
                    track_event("composer.closed", composer_id=byok.id, draft=byok.marker),
                    byok.unrelated,
                ]
            )
            tracked = await second.send(
                Call(ANALYTICS + "TrackEvents", events, aipb.TrackEventsResponse)
            )
            ingest = await second.send(
                Call(
                    ANALYTICS + "IngestConversation",
                    aipb.IngestConversationRequest(
                        conversation_id=byok.id, transcript=byok.marker, model="Some Label"
                    ),
                )
            )
        finally:
            await second.close()
    assert turn.end.ok
    assert tracked.status_code == 200 and ingest.status_code == 200
    assert marker_counts(received(backend), byok.marker) == NOTHING
    assert (tmp_path / "proxy" / "data" / "routes.log").read_text().split() == ["local", byok.id]
