"""Recording turns through a real mitmdump, and replaying them offline (`cursor-byok replay`).

Also the helper that (re)generates the shipped captures in `captures/`:

    CURSOR_BYOK_REGENERATE_CAPTURES=1 uv run pytest tests/e2e/test_record_replay.py -k regenerate
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from cursor_client import FAKE_TOKEN
from cursor_client import CursorLikeClient
from cursor_client import TurnResult
from fakes.fake_provider import FakeProvider
from mitm import REPO
from mitm import TEST_HOST
from mitm import start_mitmdump
from provider_config import MODEL
from provider_config import write_config

from cursor_byok.capture.format import load_capture
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.replay import engine as replay
from cursor_byok.secrets import scrub

pytestmark = pytest.mark.timeout(120)

CAPTURES = REPO / "captures"
PROVIDER_KEY = "sk-" + "test-not-a-real-key-0123456789"
REGENERATE = os.environ.get("CURSOR_BYOK_REGENERATE_CAPTURES") == "1"
CLI = str(Path(sys.executable).with_name("cursor-byok"))
PLANTED_JWT = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJwbGFudGVkIn0.c2lnbmF0dXJl"


def make_workspace(root: Path) -> Path:
    workspace = root / "workspace"
    workspace.mkdir(parents=True)
    (workspace / "README.md").write_text("# Demo project\nline two\nline three\n")
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    return workspace


async def record(
    tmp: Path,
    workspace: Path,
    record_dir: Path,
    messages: list[str],
    *,
    fp: FakeProvider | None = None,
    kind: str = "openai-chat",
    during: Callable | None = None,
) -> list[TurnResult]:
    """Run turns of one conversation through mitmdump with recording on."""
    tmp.mkdir(parents=True, exist_ok=True)
    extra = {}
    if fp is not None:
        extra = {
            "agent": "provider",
            "config": write_config(tmp, fp, kind),
            "env": {"FAKE_PROVIDER_KEY": PROVIDER_KEY},
        }
    proxy = start_mitmdump(tmp / "proxy", "--set", f"cursor_byok_record_dir={record_dir}", **extra)
    client = CursorLikeClient(
        base_url=f"https://{TEST_HOST}",
        workspace=workspace,
        proxy=proxy.proxy_url,
        ca_file=proxy.ca_file,
    )
    results: list[TurnResult] = []
    conversation = str(uuid.uuid4())
    try:
        for text in messages:
            state = results[-1].checkpoints[-1] if results else None
            request = client.run_request(
                text,
                conversation_id=conversation,
                model=MODEL,
                workspace=workspace,
                state=state,
            )
            results.append(await client.turn(request, during=during))
    finally:
        await client.aclose()
        proxy.stop()
    assert PROVIDER_KEY not in proxy.log()
    return results


def captures_in(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.jsonl"))  # names start with the time: recording order


def script_read_edit_shell(fp: FakeProvider, workspace: Path) -> None:
    notes = str(workspace / "notes.txt")
    fp.script.tool_calls([("call_read", "Read", {"path": notes})], reasoning="Look first.")
    fp.script.tool_calls(
        [("call_edit", "StrReplace", {"path": notes, "old_string": "beta", "new_string": "gamma"})]
    )
    fp.script.tool_calls([("call_sh", "Shell", {"command": "cat notes.txt"})])
    fp.script.text("Done: beta is now gamma.")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CLI, *args], capture_output=True, text=True, timeout=110, cwd=REPO, check=False
    )


# --- recording then replaying ------------------------------------------------------------------


async def test_scripted_turn_is_recorded_without_secrets_and_replays(tmp_path) -> None:
    record_dir = tmp_path / "rec"
    [result] = await record(
        tmp_path, make_workspace(tmp_path), record_dir, ["read notes.txt please"]
    )
    assert result.end.ok
    [path] = captures_in(record_dir)
    data = path.read_bytes()
    token = FAKE_TOKEN.split()[1]
    assert token.encode() not in data and b'"authorization":"<redacted>"' in data
    capture = load_capture(path)
    assert capture.agent == "scripted"
    assert len(capture.server) == len(result.frames)
    assert capture.server == result.frames  # recorded exactly what the client received
    [replayed] = await replay.replay_files([path])
    assert replayed.ok, replayed.divergence
    assert replayed.frames and not replayed.stalled


async def test_provider_turn_with_tools_replays(tmp_path) -> None:
    workspace = make_workspace(tmp_path)
    async with FakeProvider() as fp:
        script_read_edit_shell(fp, workspace)
        [result] = await record(
            tmp_path, workspace, tmp_path / "rec", ["rename beta"], fp=fp, kind="anthropic"
        )
    assert result.end.ok and result.text.endswith("Done: beta is now gamma.")
    [path] = captures_in(tmp_path / "rec")
    assert PROVIDER_KEY.encode() not in path.read_bytes()
    capture = load_capture(path)
    assert len(capture.calls) == 4 and all(c.finished for c in capture.calls)
    assert capture.meta["config"]["models"][0]["name"] == MODEL
    (workspace / "notes.txt").write_text("changed since\n")  # replay never touches the workspace
    [replayed] = await replay.replay_files([path])
    assert replayed.ok, replayed.divergence
    assert replayed.request_note() == "model requests: the same 4 as recorded"


async def test_second_turn_replays_on_its_own(tmp_path) -> None:
    """The run meta carries the stored blobs the turn reads, so turn 2 needs no turn 1."""
    async with FakeProvider() as fp:
        fp.script.text("The answer is 42.", reasoning="Think.")
        fp.script.text("You asked about the answer.")
        results = await record(
            tmp_path,
            make_workspace(tmp_path),
            tmp_path / "rec",
            ["what is the answer?", "what did I ask?"],
            fp=fp,
        )
    assert all(r.end.ok for r in results)
    _first, second = captures_in(tmp_path / "rec")
    assert load_capture(second).blobs  # the history blobs of turn 1
    replayed = await replay.replay_files([second])
    assert [r.ok for r in replayed] == [True], replayed[0].divergence


async def test_cancelled_turn_replays(tmp_path) -> None:
    """A cancel is sent when as many frames are in as when it was recorded."""

    def cancel_on_text(run) -> None:
        def on_message(message: pb.AgentServerMessage) -> None:
            if message.interaction_update.WhichOneof("message") == "text_delta":
                action = pb.AgentClientMessage()
                action.conversation_action.cancel_action.reason = "stop"
                run.spawn(run.append(action))
                run.on_message = None

        run.on_message = on_message

    async with FakeProvider() as fp:
        fp.script.hang(text="thinking out loud")
        [result] = await record(
            tmp_path,
            make_workspace(tmp_path),
            tmp_path / "rec",
            ["write a novel"],
            fp=fp,
            during=cancel_on_text,
        )
    assert result.end.error.code == "canceled"
    [replayed] = await replay.replay_files([tmp_path / "rec"])
    assert replayed.ok, replayed.divergence
    assert replayed.end["error"]["code"] == "canceled"


async def test_provider_error_replays(tmp_path) -> None:
    async with FakeProvider() as fp:
        fp.script.error(429, retry_after=0, message="slow down")
        fp.script.text("made it")
        [result] = await record(tmp_path, make_workspace(tmp_path), tmp_path / "rec", ["hi"], fp=fp)
    assert result.end.ok and result.text == "made it"
    capture = load_capture(captures_in(tmp_path / "rec")[0])
    assert capture.calls[0].error["kind"] == "rate_limit" and capture.calls[1].finished
    [replayed] = await replay.replay_files([tmp_path / "rec"])
    assert replayed.ok, replayed.divergence


async def test_record_command_writes_replayable_captures(tmp_path) -> None:
    record_dir = tmp_path / "captured"
    command = [
        CLI,
        "record",
        "--port",
        "0",
        "--agent",
        "scripted",
        "--confdir",
        str(tmp_path / "mitmconf"),
        "--data-dir",
        str(tmp_path / "data"),
        "--quiet",
        "--dir",
        str(record_dir),
        "--",
        "--allow-hosts",
        r"^api2\.cursor\.test:443$",
        "--set",
        f"cursor_byok_hosts={TEST_HOST}",
    ]
    proxy = start_mitmdump(tmp_path, command=command)
    workspace = make_workspace(tmp_path)
    client = CursorLikeClient(
        base_url=f"https://{TEST_HOST}",
        workspace=workspace,
        proxy=proxy.proxy_url,
        ca_file=proxy.ca_file,
    )
    try:
        result = await client.turn(
            client.run_request("read notes.txt", conversation_id=str(uuid.uuid4()))
        )
    finally:
        await client.aclose()
        proxy.stop()
    assert result.end.ok
    assert f"Recording Agent turns into {record_dir}" in proxy.log()
    [path] = captures_in(record_dir)
    done = await asyncio.to_thread(run_cli, "replay", str(path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 of 1 capture(s) match" in done.stdout


# --- the shipped captures ----------------------------------------------------------------------


def shipped() -> list[Path]:
    return sorted(CAPTURES.glob("*.jsonl"))


def test_shipped_captures_exist_and_are_small() -> None:
    paths = shipped()
    assert len(paths) >= 2
    agents = {load_capture(p).agent for p in paths}
    assert agents == {"scripted", "provider"}
    for path in paths:
        assert path.stat().st_size < 100_000, path
        for text in path.read_text().splitlines():
            line = json.loads(text)
            payload = base64.b64decode(line.pop("raw", ""))
            assert scrub(json.dumps(line)) == json.dumps(line), text  # no token shapes
            for secret in (FAKE_TOKEN.split()[1], "sk-test", PLANTED_JWT):
                assert secret.encode() not in payload and secret not in text


def test_shipped_captures_replay_and_match() -> None:
    done = run_cli("replay", str(CAPTURES))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(shipped())} of {len(shipped())} capture(s) match" in done.stdout


def test_tampered_capture_is_a_mismatch(tmp_path) -> None:
    source = CAPTURES / "provider-read-edit-shell.jsonl"
    lines = source.read_text().splitlines()
    for index, text in enumerate(lines):
        line = json.loads(text)
        if line["type"] == "provider_event" and line["event"]["type"] == "text":
            original = line["event"]["text"]
            line["event"]["text"] = "TAMPERED"
            lines[index] = json.dumps(line)
            break
    else:
        raise AssertionError("no provider text event in the shipped capture")
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("\n".join(lines) + "\n")
    done = run_cli("replay", str(tampered))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "MISMATCH" in done.stdout and "first divergence at frame" in done.stdout
    # Both sides are shown: the recorded frame has the original text, the replayed the new one.
    assert repr(original)[1:-1] in done.stdout and "TAMPERED" in done.stdout


# --- regenerating the shipped captures ---------------------------------------------------------


@pytest.mark.skipif(not REGENERATE, reason="set CURSOR_BYOK_REGENERATE_CAPTURES=1 to regenerate")
async def test_regenerate_shipped_captures(tmp_path) -> None:
    """Record the shipped captures again (a neutral temp workspace path, no user name)."""
    root = Path(tempfile.mkdtemp(prefix="cursor-byok-capture-"))
    try:
        made: dict[str, Path] = {}

        workspace = make_workspace(root / "scripted")
        await record(tmp_path / "a", workspace, tmp_path / "a-rec", ["read notes.txt"])
        made["scripted-read.jsonl"] = captures_in(tmp_path / "a-rec")[0]

        workspace = make_workspace(root / "provider")
        async with FakeProvider() as fp:
            script_read_edit_shell(fp, workspace)
            await record(tmp_path / "b", workspace, tmp_path / "b-rec", ["rename beta"], fp=fp)
        made["provider-read-edit-shell.jsonl"] = captures_in(tmp_path / "b-rec")[0]

        workspace = make_workspace(root / "error")
        async with FakeProvider() as fp:
            # A token-shaped string the adapter does not know: the recorder scrubs it.
            fp.script.error(401, message=f"Incorrect API key provided: {PLANTED_JWT}")
            await record(tmp_path / "c", workspace, tmp_path / "c-rec", ["hi"], fp=fp)
        made["provider-auth-error.jsonl"] = captures_in(tmp_path / "c-rec")[0]

        for name, path in made.items():
            shutil.copyfile(path, CAPTURES / name)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for name in made:
        assert PLANTED_JWT.encode() not in (CAPTURES / name).read_bytes()
        [result] = await replay.replay_files([CAPTURES / name])
        assert result.ok, (name, result.divergence)
