"""The unary calls Cursor makes around an Agent run (issue 25 items 3, 5, 6), end to end: a real
mitmdump between a Cursor-like client and a stand-in for Cursor's backend that records every
request (tests/fakes/fake_cursor.py), and the fake provider behind BYOK turns."""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import uuid

import pytest
from cursor_client import FAKE_TOKEN
from cursor_client import CursorLikeClient
from fakes.fake_cursor import FakeCursor
from fakes.fake_provider import FakeProvider
from mitm import start_in_front_of
from provider_config import MODEL
from provider_config import write_config

from cursor_byok.pb import agent_v1_pb2 as pb

pytestmark = pytest.mark.timeout(120)
AGENT = "/agent.v1.AgentService/"
IS_CONNECTED = "/aiserver.v1.NetworkService/IsConnected"
# A 1x1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d4944415478da63f8cfc0f01f0005000201a5d6dd3c0000000049454e44ae426082"
)
FILE = b"def marker_function():\n    return 'UPLOADED-FILE-MARKER'\n"


class Setup:
    def __init__(self, tmp_path, workspace, fp, backend, route: str = "") -> None:
        config = write_config(tmp_path, fp, "openai-chat")
        text = config.read_text().replace(
            "context_window = 64000", "context_window = 64000\nsupports_images = true"
        )
        config.write_text((f'route_other_models = "{route}"\n' if route else "") + text)
        self.backend = backend
        backend.held_streams = 0  # Cursor's own runs answer at once
        self.proxy = start_in_front_of(
            backend,
            tmp_path / "proxy",
            config,
        )
        self.client = CursorLikeClient.to_backend(
            backend.port,
            self.proxy,
            workspace,
        )

    async def call(self, path: str, message, *, json_body: bool = False):
        body = message.SerializeToString()
        ctype = "application/proto"
        if json_body:
            from google.protobuf import json_format

            body = json.dumps(json_format.MessageToDict(message)).encode()
            ctype = "application/json"
        return await self.client.http.post(
            self.client.base_url + path,
            content=body,
            headers={
                "content-type": ctype,
                "connect-protocol-version": "1",
                "authorization": FAKE_TOKEN,
            },
        )

    async def close(self) -> None:
        await self.client.aclose()
        self.proxy.stop()


def upload(conversation: str, *values: bytes, bad: int | None = None):
    request = pb.UploadConversationBlobsRequest(
        conversation_id=conversation, chunk_index=0, total_chunks=1
    )
    for index, value in enumerate(values):
        ident = hashlib.sha256(value).digest()
        if index == bad:
            ident = hashlib.sha256(b"something else").digest()
        request.blobs.add(id=ident, value=value)
    return request


def paths(backend: FakeCursor) -> list[str]:
    return [r.path for r in backend.requests]


async def test_uploaded_file_and_image_reach_the_provider_without_kv(tmp_path, workspace) -> None:
    """Cursor uploads an @-mentioned file and an image, then names them by id in the run
    request: the provider's first request of that turn has both, and no KV GET was needed."""
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        fp.script.text("first")
        fp.script.text("I see the file and the picture")
        setup = Setup(tmp_path, workspace, fp, backend)
        conversation = str(uuid.uuid4())
        try:
            one = await setup.client.turn(
                setup.client.run_request("hi", conversation_id=conversation, model=MODEL)
            )
            uploaded = await setup.call(
                AGENT + "UploadConversationBlobs", upload(conversation, FILE, PNG)
            )
            request = setup.client.run_request(
                "what is in these?",
                conversation_id=conversation,
                model=MODEL,
                state=one.checkpoints[-1],
            )
            selected = request.run_request.action.user_message_action.user_message
            selected.selected_context.extra_context_entries.add(
                blob_id=hashlib.sha256(FILE).digest()
            )
            selected.selected_context.selected_images.add(
                blob_id=hashlib.sha256(PNG).digest(), uuid="img-1"
            )
            two = await setup.client.turn(request)
        finally:
            await setup.close()
        requests = list(fp.requests)
    assert uploaded.status_code == 200 and uploaded.content == b""
    assert two.end.ok and two.text == "I see the file and the picture"
    assert "kv:get_blob_args" not in two.kinds()  # resolved from the upload, not the client
    last_user = requests[1].json["messages"][-1]
    parts = last_user["content"]
    assert any("UPLOADED-FILE-MARKER" in p.get("text", "") for p in parts)
    images = [p for p in parts if p.get("type") == "image_url"]
    assert images and images[0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert AGENT + "UploadConversationBlobs" not in paths(backend)  # a BYOK conversation's


async def test_upload_bad_input_and_cursor_conversations(tmp_path, workspace) -> None:
    """A blob whose id is not its SHA-256: invalid_argument naming it (the good ones kept); more
    blobs than one call may carry: resource_exhausted. A Cursor-model conversation's upload goes
    to Cursor as it came, and is not kept here (issue 33 item 4: the data dir holds only what
    conversations served here need)."""
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        fp.script.text("first")
        setup = Setup(tmp_path, workspace, fp, backend)
        byok, cursor = str(uuid.uuid4()), str(uuid.uuid4())
        try:
            await setup.client.turn(
                setup.client.run_request("hi", conversation_id=byok, model=MODEL)
            )
            mismatch = await setup.call(
                AGENT + "UploadConversationBlobs", upload(byok, b"good", b"bad", bad=1)
            )
            flood = upload(byok)
            for index in range(4097):
                value = index.to_bytes(4, "big")
                flood.blobs.add(id=hashlib.sha256(value).digest(), value=value)
            too_many = await setup.call(AGENT + "UploadConversationBlobs", flood)
            await setup.client.turn(
                setup.client.run_request("hi", conversation_id=cursor, model="composer-1")
            )
            passed = await setup.call(
                AGENT + "UploadConversationBlobs", upload(cursor, b"for cursor"), json_body=True
            )
        finally:
            await setup.close()
        blobs = setup.proxy.data_dir / "blobs"
        stored = {p.name for p in blobs.rglob("*") if p.is_file()}
    assert mismatch.status_code == 400 and mismatch.json()["code"] == "invalid_argument"
    assert "blob 1" in mismatch.json()["message"]
    assert hashlib.sha256(b"good").hexdigest() in stored  # nothing good is lost
    assert hashlib.sha256(b"bad").hexdigest() not in stored
    assert too_many.status_code == 429 and too_many.json()["code"] == "resource_exhausted"
    assert passed.status_code == 200
    forwarded = [r for r in backend.requests if r.path == AGENT + "UploadConversationBlobs"]
    assert len(forwarded) == 1  # as it came (JSON: the value in base64)
    assert base64.b64encode(b"for cursor") in forwarded[0].body
    assert hashlib.sha256(b"for cursor").hexdigest() not in stored


async def test_context_ring_warm_up_and_fork_of_a_byok_conversation(tmp_path, workspace) -> None:
    """GetPromptContextUsage of a BYOK conversation is answered from our own accounting (the
    numbers of its checkpoint's meter); WarmUp and NotifyConversationClone are answered here;
    none of them reaches Cursor. A Cursor conversation's context ring goes to Cursor."""
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        fp.script.text("a short answer")
        setup = Setup(tmp_path, workspace, fp, backend)
        byok, cursor = str(uuid.uuid4()), str(uuid.uuid4())
        try:
            one = await setup.client.turn(
                setup.client.run_request("hi", conversation_id=byok, model=MODEL)
            )
            roots = list(one.checkpoints[-1].root_prompt_messages_json)
            usage = await setup.call(
                AGENT + "GetPromptContextUsage",
                pb.GetPromptContextUsageRequest(
                    conversation_id=byok, root_prompt_messages_json=roots
                ),
            )
            warm = await setup.call(AGENT + "WarmUp", pb.WarmUpRequest())
            fork = await setup.call(
                AGENT + "NotifyConversationClone",
                pb.NotifyConversationCloneRequest(
                    conversation_id=str(uuid.uuid4()), source_conversation_id=byok
                ),
            )
            byok_calls = list(paths(backend))
            await setup.client.turn(
                setup.client.run_request("hi", conversation_id=cursor, model="composer-1")
            )
            cursor_usage = await setup.call(
                AGENT + "GetPromptContextUsage",
                pb.GetPromptContextUsageRequest(conversation_id=cursor),
            )
        finally:
            await setup.close()
    assert byok_calls == []  # nothing of the BYOK conversation went to Cursor
    answer = pb.GetPromptContextUsageResponse.FromString(usage.content)
    meter = one.checkpoints[-1].token_details
    assert answer.unavailable_blob_count == 0
    root = answer.tree.nodes[0]
    assert root.estimated_tokens == meter.used_tokens > 0
    categories = {n.category_id: n.estimated_tokens for n in answer.tree.nodes[1:]}
    assert "conversation" in categories and "system_prompt" in categories
    assert sum(categories.values()) == meter.used_tokens
    assert warm.status_code == 200 and fork.status_code == 200
    assert cursor_usage.status_code == 200
    assert AGENT + "GetPromptContextUsage" in paths(backend)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_is_connected_is_answered_while_cursor_is_unreachable(tmp_path, workspace) -> None:
    """Cursor probes NetworkService/IsConnected during a slow request and aborts on an error:
    with its API unreachable the probe is answered here (200), so a BYOK turn goes on; while it
    is reachable the probe goes to Cursor."""
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        fp.script.text("still here")
        setup = Setup(tmp_path, workspace, fp, backend)
        try:
            online = await setup.call(IS_CONNECTED, pb.WarmUpRequest())
            setup.client.base_url = f"https://127.0.0.1:{closed_port()}"  # Cursor is gone
            offline = await setup.call(IS_CONNECTED, pb.WarmUpRequest())
            offline_json = await setup.call(IS_CONNECTED, pb.WarmUpRequest(), json_body=True)
            turn = await setup.client.turn(
                setup.client.run_request("hi", conversation_id=str(uuid.uuid4()), model=MODEL)
            )
        finally:
            await setup.close()
        log = setup.proxy.log()
    assert online.status_code == 200 and paths(backend) == [IS_CONNECTED]  # reachable: Cursor's
    assert offline.status_code == 200 and offline.content == b""
    assert offline_json.status_code == 200 and offline_json.json() == {}
    assert log.count("cannot be reached; answered here") == 1  # said once
    assert turn.end.ok and turn.text == "still here"
