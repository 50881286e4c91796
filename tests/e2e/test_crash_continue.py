"""A proxy killed mid-answer, restarted, continues the answer on the client's retry (issue 37
item 4; store/run_journal.py, agent/continuation.py).

The client (like the official one) keeps every delta the dead attempt showed it and retries the
run under a new request id with the same run id and the same user message. The restarted proxy
finds the run's journal in the data dir: the client gets only the rest of the answer, the
provider's second request carries the partial answer and the note to continue it, and the
final checkpoint holds the partial and the rest as one assistant message.
"""

from __future__ import annotations

import asyncio
import json
import signal
import uuid
from dataclasses import dataclass

import pytest
from cursor_client import CursorLikeClient
from cursor_client import TurnResult
from fakes.fake_provider import FakeProvider
from fakes.fake_provider import RecordedRequest
from fakes.fake_provider import Step
from mitm import start_mitmdump
from provider_config import MODEL
from provider_config import write_config

from cursor_byok.agent.continuation import CONTINUE_NOTE
from cursor_byok.pb import agent_v1_pb2 as pb

pytestmark = pytest.mark.timeout(120)

FIRST = "".join(f"w{n:02d} " for n in range(12))  # 4-character deltas: one per word
REST = "and the rest of it."
SHOWN = 4  # text deltas the client sees before the proxy dies


def _like_a_model(request: RecordedRequest) -> Step:
    """The second call, as a model would answer it: the rest when told to continue, else the
    whole answer again."""
    told = CONTINUE_NOTE in json.dumps(request.json)
    return Step("reply", text=REST if told else FIRST + REST, usage=(100, 20, 0))


THOUGHT = "".join(f"t{n:02d} " for n in range(12))


def _thinking_model(request: RecordedRequest) -> Step:
    """As `_like_a_model`, thinking first (its whole thought again)."""
    step = _like_a_model(request)
    step.reasoning = THOUGHT
    return step


@dataclass
class Crash:
    """One turn whose proxy is killed after SHOWN deltas of `kind` reached the client and
    started again on the same port and data dir before the client retries the run."""

    result: TurnResult
    shown: str  # the deltas of `kind` the dead attempt showed
    client: CursorLikeClient
    requests: list[RecordedRequest]
    log: str  # the restarted proxy's
    left: list[str]  # journal files in the data dir after the turn


async def _crash_turn(tmp_path, workspace, fp, transport: str, kind: str) -> Crash:
    config = write_config(tmp_path, fp, "openai-chat")
    env = {"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"}
    proxy = start_mitmdump(tmp_path / "proxy", agent="provider", config=config, env=env)
    proxies = [proxy]
    shown: list[str] = []

    def kill_after_deltas(message: pb.AgentServerMessage) -> bool:
        """The SHOWN-th delta reached the client: kill -9 the proxy there and then."""
        update = message.interaction_update
        if update.WhichOneof("message") == kind:
            shown.append(getattr(update, kind).text)
        if len(shown) < SHOWN:
            return False
        proxies[-1].process.send_signal(signal.SIGKILL)
        return True

    async def restart() -> None:
        """A new proxy where the dead one was, with its data dir, once the client saw the old
        connection gone (the SDK retries on that error)."""
        if client._h2 is not None:  # `Run`: the HTTP/2 connection died with the proxy
            await asyncio.wait_for(client._h2.closed.wait(), 10)
        proxies[-1].process.wait(timeout=10)
        # blocking: no heartbeat of the dead attempt reaches the new proxy meanwhile (it
        # would pass an unknown request id's append on to Cursor, which the SDK never sends)
        proxies.append(
            start_mitmdump(
                tmp_path / "proxy",
                agent="provider",
                config=config,
                env=env,
                port=proxy.port,  # where the client retries, as the SDK does
                data_dir=proxy.data_dir,
            )
        )

    client = CursorLikeClient.through(
        proxy,
        workspace,
        transport=transport,
        reconnect_new_id=True,
        replays=False,
        drop_on=kill_after_deltas,
        before_reconnect=restart,
    )
    run_id = str(uuid.uuid4())
    message = client.run_request(
        "say it", conversation_id=str(uuid.uuid4()), model=MODEL, workspace=workspace
    )
    message.run_request.run_id = run_id
    try:
        result = await client.turn(message, request_id=run_id)
    finally:
        await client.aclose()
        for each in proxies:
            each.stop()
    assert result.end.ok, result.end.error
    assert result.reconnects == 1 and len(proxies) == 2
    left = [p.name for p in (proxy.data_dir / "runs").glob("*.journal")]
    return Crash(result, "".join(shown), client, list(fp.requests), proxies[-1].log(), left)


def _answer_texts(crash: Crash) -> list[list[str]]:
    """The text parts of each assistant message of the final checkpoint."""
    roots = crash.result.checkpoints[-1].root_prompt_messages_json
    messages = [json.loads(crash.client.blobs[i]) for i in roots]
    return [
        [p["text"] for p in m["content"] if p["type"] == "text"]
        for m in messages
        if m.get("role") == "assistant"
    ]


async def test_a_killed_proxy_continues_the_answer_after_restart(
    tmp_path, workspace, transport
) -> None:
    async with FakeProvider(responder=_like_a_model) as fp:
        fp.script.text(FIRST).delay = 0.2  # slow: the kill lands between two deltas
        crash = await _crash_turn(tmp_path, workspace, fp, transport, "text_delta")
    partial = crash.shown
    assert partial == FIRST[: 4 * SHOWN]
    # every text delta the client got, across both attempts: the partial once, then the rest
    assert crash.result.text == partial + REST
    assert len(crash.requests) == 2
    sent = crash.requests[1].json["messages"]
    assert sent[-2] == {"role": "assistant", "content": partial}
    assert sent[-1]["role"] == "user" and CONTINUE_NOTE in json.dumps(sent[-1])
    assert _answer_texts(crash) == [[partial + REST]]  # one assistant message
    assert "continues after a dead attempt" in crash.log
    assert crash.left == []  # the run ended: its journal went


async def test_a_proxy_killed_while_the_model_thinks_does_not_show_thinking_twice(
    tmp_path, workspace
) -> None:
    """Killed while only thinking was shown: the retry's call starts afresh (thinking without
    its provider signature is not given back), its thinking is not shown (the client already
    shows a thinking step), and its text follows the partial thinking."""
    async with FakeProvider(responder=_thinking_model) as fp:
        fp.script.text(FIRST, reasoning=THOUGHT).delay = 0.2
        crash = await _crash_turn(tmp_path, workspace, fp, "bidi", "thinking_delta")
    assert crash.shown == THOUGHT[: 4 * SHOWN]
    shown_thinking = "".join(u.text for u in crash.result.updates("thinking_delta"))
    assert shown_thinking == crash.shown  # the retry's own thinking was not shown
    assert crash.result.text == FIRST + REST  # no text had been shown: the whole answer, once
    assert len(crash.requests) == 2
    assert CONTINUE_NOTE not in json.dumps(crash.requests[1].json)  # nothing to continue from
    assert _answer_texts(crash) == [[FIRST + REST]]
