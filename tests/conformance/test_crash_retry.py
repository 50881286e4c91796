"""Cursor's official SDK when the proxy is killed mid-answer (issue 37 item 4): `kill -9` while
the answer streams, a new proxy on the same port and data dir, and the SDK's own retry of the
run completes without showing any text twice (store/run_journal.py, agent/continuation.py).

The SDK keeps every delta it was shown and appends the retry's to them (protocol.md §19.1), so
the only way not to double the text is for the retried run to continue where the dead one
stopped. The provider here answers like a model: the rest of the answer when told to continue,
the whole answer again otherwise.
"""

from __future__ import annotations

import json
import signal

import pytest
from fakes.fake_provider import RecordedRequest
from fakes.fake_provider import Step
from harness import KEY_ENV
from harness import MODEL
from harness import PROVIDER_KEY
from mitm import start_mitmdump

from cursor_byok.agent.continuation import CONTINUE_NOTE

pytestmark = pytest.mark.timeout(240)

FIRST = "".join(f"w{n:02d} " for n in range(16))  # one 4-character delta per word
REST = "and the rest of it."
SHOWN = 4  # text deltas the SDK shows before the proxy dies


def _like_a_model(request: RecordedRequest) -> Step:
    told = CONTINUE_NOTE in json.dumps(request.json)
    return Step("reply", text=REST if told else FIRST + REST, usage=(100, 20, 0))


def _texts(event: dict) -> list[str]:
    if event.get("type") != "assistant":
        return []
    blocks = (event.get("message") or {}).get("content") or []
    return [b.get("text", "") for b in blocks if b.get("type") == "text"]


def _killer(stack, shown: list[str]):
    """At the SHOWN-th text the SDK reported: kill -9 the proxy, then a new one where it was,
    with its data dir."""
    old = stack.proxy

    def kill_mid_answer(event: dict) -> None:
        shown.extend(_texts(event))
        if len(shown) != SHOWN or stack.proxy is not old:
            return
        old.process.send_signal(signal.SIGKILL)
        old.process.wait(timeout=10)
        stack.proxy = start_mitmdump(
            old.confdir.parent,
            mode=f"reverse:{stack.account.base_url}",
            agent="provider",
            config=stack.root / "config.toml",
            env={KEY_ENV: PROVIDER_KEY},
            port=old.port,
            data_dir=old.data_dir,
        )

    return kill_mid_answer


def _assert_continued(stack, sdk, turn, shown: list[str], first: int, old) -> None:
    """The SDK's retry finished, its text has no repeat, the provider got the partial once."""
    assert stack.proxy is not old, "the proxy was not killed"
    assert turn.status == "finished", (turn.result, sdk.log_tail())
    partial = "".join(shown[:SHOWN])
    assert partial and FIRST.startswith(partial)
    # the stream events: the partial once, then the rest (no repeat of the partial)
    assert turn.text == partial + REST, turn.text
    # `run.wait()`'s result: the one assistant message, partial and rest
    assert turn.result.get("result") == partial + REST, turn.result
    # the retry continued: the provider got the partial answer and the note, once
    retried = stack.provider.requests[first:]
    assert len(retried) == 1, [r.json for r in retried]
    sent = retried[0].json["messages"]
    assert sent[-2] == {"role": "assistant", "content": partial}
    assert "continues after a dead attempt" in stack.proxy.log()


@pytest.mark.every_sdk
def test_a_killed_proxy_is_retried_by_the_sdk_without_doubled_text(stack, sdk, workspace) -> None:
    """No checkpoint reached the SDK before the kill: it re-sends the user message."""
    fp = stack.provider
    fp.script.text(FIRST).delay = 0.25  # slow: the kill lands between two deltas
    fp.fp.responder = _like_a_model
    shown: list[str] = []
    old = stack.proxy
    first = len(fp.requests) + 1
    agent = sdk.agent(MODEL, cwd=workspace)
    turn = sdk.send(agent, "Say it.", on_event=_killer(stack, shown), timeout=120)
    _assert_continued(stack, sdk, turn, shown, first, old)


@pytest.mark.every_sdk
def test_a_kill_after_a_checkpoint_is_resumed_without_doubled_text(stack, sdk, workspace) -> None:
    """A tool ran (its checkpoint reached the SDK) before the answer began: the SDK retries
    with a `resume_action` from that checkpoint, and the answer continues after the partial."""
    fp = stack.provider
    fp.script.tool_calls([("call_read", "Read", {"path": str(workspace / "notes.txt")})])
    fp.script.text(FIRST).delay = 0.25
    fp.fp.responder = _like_a_model
    shown: list[str] = []
    old = stack.proxy
    first = len(fp.requests) + 2
    agent = sdk.agent(MODEL, cwd=workspace)
    turn = sdk.send(agent, "Read the notes, then say it.", on_event=_killer(stack, shown))
    _assert_continued(stack, sdk, turn, shown, first, old)
    assert len(turn.tool_calls()) == 1  # the tool ran once
