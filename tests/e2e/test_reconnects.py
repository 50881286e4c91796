"""A run is not a request: reconnects, retries and duplicates never repeat work (issue 10).

Each test runs one tool-using turn undisturbed, then the same turn with its stream dropped at one
point and reconnected the way the captures show (a new request id re-sending the same run request,
whose `run_id` names the first attempt). The disturbed turn must end with the same answer, ask the
provider as often and run every tool exactly once on the client.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from mitm import start_mitmdump
from provider_config import MODEL
from provider_config import write_config

from cursor_byok.pb import agent_v1_pb2 as pb

pytestmark = pytest.mark.timeout(120)
ANSWER = "Done: beta is now gamma."
EXECS = 4  # read; the edit's read and write; the shell


def script_turn(fp: FakeProvider, workspace: Path) -> None:
    notes = str(workspace / "notes.txt")
    fp.script.tool_calls([("call_read", "Read", {"path": notes})], reasoning="Look first.")
    fp.script.tool_calls(
        [("call_edit", "StrReplace", {"path": notes, "old_string": "beta", "new_string": "gamma"})]
    )
    fp.script.tool_calls([("call_sh", "Shell", {"command": "cat notes.txt"})])
    fp.script.text(ANSWER)


def make_workspace(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "notes.txt").write_text("alpha\nbeta\n")
    return root


def frame_kinds(messages: list[pb.AgentServerMessage]) -> list[str]:
    out = []
    for m in messages:
        kind = m.WhichOneof("message")
        if kind == "interaction_update":
            kind = m.interaction_update.WhichOneof("message")
        elif kind == "exec_server_message":
            kind = "exec:" + (m.exec_server_message.WhichOneof("message") or "?")
        out.append(kind)
    return out


def drop_index(kinds: list[str], point: str) -> int:
    """How many frames the client reads before its stream drops, for each drop point."""
    completed = [i for i, k in enumerate(kinds) if k == "tool_call_completed"]
    if point == "before-first-tool":
        return kinds.index("tool_call_started")
    if point == "after-read-answered":
        return completed[0] + 1
    if point == "after-edit":
        return completed[1] + 1
    if point == "during-final-text":
        last_step = max(i for i, k in enumerate(kinds) if k == "step_started")
        return kinds.index("text_delta", last_step) + 1
    raise AssertionError(point)


def request(client: CursorLikeClient, workspace: Path, run_id: str) -> pb.AgentClientMessage:
    message = client.run_request(
        "rename beta", conversation_id=str(uuid.uuid4()), model=MODEL, workspace=workspace
    )
    message.run_request.run_id = run_id  # names the first attempt, as Cursor's does
    return message


POINTS = ["before-first-tool", "after-read-answered", "after-edit", "during-final-text"]


@pytest.mark.parametrize("point", POINTS)
async def test_dropped_stream_reconnected_under_a_new_request_id(
    tmp_path, transport, point
) -> None:
    calm_ws = make_workspace(tmp_path / "calm")
    rough_ws = make_workspace(tmp_path / "rough")
    async with FakeProvider() as fp:
        script_turn(fp, calm_ws)
        proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=write_config(tmp_path, fp, "openai-chat"),
            env={"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"},
        )
        try:
            calm = CursorLikeClient.through(proxy, calm_ws, transport=transport)
            try:
                run_id = str(uuid.uuid4())
                baseline = await calm.turn(request(calm, calm_ws, run_id), request_id=run_id)
            finally:
                await calm.aclose()
            calm_calls = len(fp.requests)
            script_turn(fp, rough_ws)
            drop = drop_index(frame_kinds(baseline.messages), point)
            rough = CursorLikeClient.through(
                proxy, rough_ws, transport=transport, drop_after=[drop], reconnect_new_id=True
            )
            try:
                run_id = str(uuid.uuid4())
                result = await rough.turn(request(rough, rough_ws, run_id), request_id=run_id)
            finally:
                await rough.aclose()
        finally:
            proxy.stop()
        rough_calls = len(fp.requests) - calm_calls
    assert baseline.end.ok and result.end.ok, result.end.error
    assert result.reconnects == 1
    assert result.text == baseline.text and result.text.endswith(ANSWER)
    assert rough_calls == calm_calls == 4  # the provider was asked exactly as often
    kinds = [e.WhichOneof("message") for e in rough.exec_log]
    assert kinds == [e.WhichOneof("message") for e in calm.exec_log]
    assert len(rough.exec_log) == len(calm.exec_log)  # every tool ran once on the client
    assert (rough_ws / "notes.txt").read_text() == "alpha\ngamma\n"
    assert "superseded" not in proxy.log()


async def test_same_request_id_reopen_repeats_nothing(tmp_path) -> None:
    ws = make_workspace(tmp_path / "ws")
    async with FakeProvider() as fp:
        script_turn(fp, ws)
        proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=write_config(tmp_path, fp, "anthropic"),
            env={"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"},
        )
        client = CursorLikeClient.through(proxy, ws, drop_after=[6, 14])
        try:
            result = await client.turn(request(client, ws, "same-id-run"), request_id="same-id-run")
        finally:
            await client.aclose()
            proxy.stop()
        calls = len(fp.requests)
    assert result.end.ok and result.reconnects == 2
    assert calls == 4 and len(client.exec_log) == EXECS


async def test_retry_after_the_end_runs_nothing_again(tmp_path, transport) -> None:
    ws = make_workspace(tmp_path / "ws")
    async with FakeProvider() as fp:
        script_turn(fp, ws)
        proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=write_config(tmp_path, fp, "openai-responses"),
            env={"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"},
        )
        client = CursorLikeClient.through(proxy, ws, transport=transport)
        try:
            first = request(client, ws, "retried-run")
            done = await client.turn(first, request_id="retried-run")
            again = await client.turn(first, request_id=str(uuid.uuid4()))  # Cursor's retry
        finally:
            await client.aclose()
            proxy.stop()
        calls = len(fp.requests)
    assert done.end.ok and again.end.ok
    assert again.text == done.text
    assert calls == 4 and len(client.exec_log) == EXECS
