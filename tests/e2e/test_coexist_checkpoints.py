"""Mixed conversations: a BYOK turn continues from the checkpoint Cursor's own backend wrote.

Same harness as test_coexist.py (a real mitmdump between the Cursor-like client and the loopback
stand-in for Cursor's backend, BYOK models answered by the fake provider), with the stand-in
closing its runs as Cursor's backend does (`FakeCursor(checkpoints=True)`): it SETs the blobs
of its own checkpoint on the client, waits for the acknowledgements and publishes a checkpoint
in Cursor's layout (tests/fakes/cursor_checkpoint.py). The client keeps every blob it
acknowledged and answers the proxy's KV GETs from them, like Cursor's client.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest
from cursor_client import CursorLikeClient
from cursor_client import TurnResult
from fakes.fake_cursor import FakeCursor
from fakes.fake_provider import FakeProvider
from mitm import start_in_front_of
from provider_config import MODEL
from provider_config import write_config

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire import connect

pytestmark = pytest.mark.timeout(120)
CURSOR_MODEL = "composer-1"
REPLY = "cursor says hi from its own model"
THOUGHT = "the user wants Cursor's view"


class Setup:
    """One proxy that treats the stand-in's host as Cursor's, and clients through it."""

    def __init__(self, tmp: Path, workspace: Path, fp: FakeProvider, backend: FakeCursor):
        self.proxy = start_in_front_of(
            backend,
            tmp / "proxy",
            write_config(tmp, fp, "openai-chat"),
        )
        self.workspace = workspace
        self.port = backend.port

    def client(self, transport: str) -> CursorLikeClient:
        return CursorLikeClient.to_backend(
            self.port,
            self.proxy,
            self.workspace,
            heartbeat_interval=3600,
            transport=transport,
            h2_target=("127.0.0.1", self.port),
        )

    def stored(self) -> set[str]:
        """Names (hex blob ids) of every blob in the proxy's store."""
        root = self.proxy.data_dir / "blobs"
        return {p.name for p in root.rglob("*") if p.is_file()} if root.exists() else set()


def kv_gets(result: TurnResult) -> list[bytes]:
    return [
        m.kv_server_message.get_blob_args.blob_id
        for m in result.messages
        if m.WhichOneof("message") == "kv_server_message"
        and m.kv_server_message.WhichOneof("message") == "get_blob_args"
    ]


def backend(tmp_path: Path) -> FakeCursor:
    # Not held after the first frame; closes each run with a checkpoint of its own.
    return FakeCursor(tmp_path / "backend", held_streams=0, checkpoints=True, thinking=THOUGHT)


async def test_a_byok_turn_continues_from_the_checkpoint_cursor_wrote(
    tmp_path, workspace, transport
) -> None:
    """BYOK → Cursor (the stand-in writes its own checkpoint) → BYOK reading that checkpoint."""
    async with FakeProvider() as fp, backend(tmp_path) as cursor:
        fp.script.text("The answer is 42.")
        fp.script.text("First the answer, then Cursor's opinion.")
        setup = Setup(tmp_path, workspace, fp, cursor)
        client = setup.client(transport)
        conversation = str(uuid.uuid4())

        def ask(text: str, model: str, state=None) -> pb.AgentClientMessage:
            return client.run_request(
                text, conversation_id=conversation, model=model, workspace=workspace, state=state
            )

        try:
            one = await client.turn(ask("what is the answer?", MODEL))
            ours = one.checkpoints[-1]
            stored_after_one = setup.stored()
            two = await client.turn(ask("and in Cursor?", CURSOR_MODEL, ours))
            stored_after_two = setup.stored()
            cursors = two.checkpoints[-1]
            three = await client.turn(ask("what did I ask?", MODEL, cursors))
        finally:
            await client.aclose()
            setup.proxy.stop()
    log = setup.proxy.log()
    assert one.end.ok and two.end.ok and three.end.ok, (one.end, two.end, three.end)

    # A Cursor turn after a BYOK turn receives our checkpoint unchanged.
    [received] = cursor.run_requests
    assert received.conversation_state == ours
    # Cursor's close reached the client byte for byte, in Cursor's order (protocol.md §4.5):
    # SETs, acknowledged before turn_ended, staged checkpoint, settled checkpoint twice.
    [written] = cursor.written
    assert [connect.encode_frame(f) for f in two.frames] == cursor.sent[:-1]
    assert two.text == REPLY
    sets = len(written.blobs)
    assert two.kinds() == ["text_delta"] + ["kv:set_blob_args"] * sets + [
        "turn_ended",
        *["conversation_checkpoint_update"] * 3,
    ]
    assert cursor.timeline.index("turn_ended") > max(
        cursor.timeline.index(f"ack {i}") for i in range(sets)
    )
    assert two.checkpoints == [written.staged, written.settled, written.settled]
    assert all(client.blobs[i] == data for i, data in written.blobs.items())  # kept by the client
    # Cursor's checkpoint extends ours: our roots and turns first, then its own.
    assert cursors.root_prompt_messages_json[: len(ours.root_prompt_messages_json)] == list(
        ours.root_prompt_messages_json
    )
    assert list(cursors.turns[:-1]) == list(ours.turns)
    cursor_roots = list(cursors.root_prompt_messages_json[len(ours.root_prompt_messages_json) :])
    assert cursor_roots == written.new_roots and len(cursor_roots) == 2
    # Nothing of the relayed run was stored by the proxy.
    assert stored_after_two == stored_after_one
    assert not {i.hex() for i in written.blobs} & stored_after_two

    # The BYOK turn after it: the blobs it lacked (Cursor's two history roots) came by KV GET,
    # each once; Cursor's turn structures were not needed for the model's history.
    assert sorted(kv_gets(three)) == sorted(cursor_roots)
    assert {i.hex() for i in cursor_roots} <= setup.stored()  # kept, so no second GET
    assert len(fp.requests) == 2  # the Cursor turn never reached the provider
    messages = fp.requests[1].json["messages"]
    text = json.dumps(messages)
    history = ["what is the answer?", "The answer is 42.", "and in Cursor?", REPLY]
    positions = [text.find(part) for part in [*history, "what did I ask?"]]
    assert -1 not in positions and positions == sorted(positions), positions
    assert [m["role"] for m in messages if m["role"] != "system"] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    # Cursor's reasoning is bound to Cursor's model: its signature never reaches our provider.
    assert cursor.signature not in text and THOUGHT not in text
    assert three.text == "First the answer, then Cursor's opinion."
    # And our next checkpoint keeps Cursor's roots and turns (append-only), adding our turn.
    last = three.checkpoints[-1]
    assert last.root_prompt_messages_json[: len(cursors.root_prompt_messages_json)] == list(
        cursors.root_prompt_messages_json
    )
    assert list(last.turns[: len(cursors.turns)]) == list(cursors.turns)
    assert len(last.turns) == len(cursors.turns) + 1
    assert "Traceback" not in log


async def test_a_conversation_started_on_cursor_continues_on_byok(tmp_path, workspace) -> None:
    """Cursor first (its checkpoint opens with its system prompt and injected context), then
    BYOK: the system prompt is replaced by ours, the rest is history."""
    async with FakeProvider() as fp, backend(tmp_path) as cursor:
        fp.script.text("Carrying on.")
        setup = Setup(tmp_path, workspace, fp, cursor)
        client = setup.client("bidi")
        conversation = str(uuid.uuid4())
        try:
            two = await client.turn(
                client.run_request(
                    "and in Cursor?", conversation_id=conversation, model=CURSOR_MODEL
                )
            )
            cursors = two.checkpoints[-1]
            three = await client.turn(
                client.run_request(
                    "go on", conversation_id=conversation, model=MODEL, state=cursors
                )
            )
        finally:
            await client.aclose()
            setup.proxy.stop()
    assert two.end.ok and three.end.ok, (two.end, three.end)
    assert len(cursors.root_prompt_messages_json) == 4  # system, context, user, assistant
    assert sorted(kv_gets(three)) == sorted(cursors.root_prompt_messages_json)
    messages = fp.requests[0].json["messages"]
    text = json.dumps(messages)
    assert "stand-in system prompt" not in text  # Cursor's system prompt is not ours to send
    assert "and in Cursor?" in text and REPLY in text and "go on" in text
    assert three.text == "Carrying on."


async def test_a_blob_missing_on_both_sides_ends_the_turn_with_a_clear_error(
    tmp_path, workspace
) -> None:
    async with FakeProvider() as fp, backend(tmp_path) as cursor:
        fp.script.text("The answer is 42.")
        setup = Setup(tmp_path, workspace, fp, cursor)
        client = setup.client("bidi")
        conversation = str(uuid.uuid4())
        try:
            one = await client.turn(
                client.run_request("what is the answer?", conversation_id=conversation, model=MODEL)
            )
            two = await client.turn(
                client.run_request(
                    "and in Cursor?",
                    conversation_id=conversation,
                    model=CURSOR_MODEL,
                    state=one.checkpoints[-1],
                )
            )
            cursors = two.checkpoints[-1]
            [written] = cursor.written
            lost = written.new_roots[0]  # Cursor's user message, e.g. a cleared client cache
            del client.blobs[lost]
            three = await client.turn(
                client.run_request(
                    "what did I ask?", conversation_id=conversation, model=MODEL, state=cursors
                )
            )
            # The turn's own lines, before shutdown: Python 3.12.1's asyncio logs a spurious
            # CancelledError traceback for a connection mitmproxy is still closing at SIGINT.
            async with asyncio.timeout(10):
                while f"conversation {conversation}: error not_found" not in setup.proxy.log():
                    await asyncio.sleep(0.01)
            log = setup.proxy.log()
        finally:
            await client.aclose()
            setup.proxy.stop()
    assert two.end.ok
    assert kv_gets(three) == [lost]  # asked the client for it, once
    assert three.end.error is not None
    assert three.end.error.code == "not_found"
    message = three.end.error.message
    assert lost.hex() in message and "history" in message, message
    assert len(fp.requests) == 1  # the model was not called with a hole in the history
    assert "Traceback" not in log
