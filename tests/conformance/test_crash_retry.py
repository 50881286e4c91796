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


def test_a_killed_proxy_is_retried_by_the_sdk_without_doubled_text(stack, sdk, workspace) -> None:
    fp = stack.provider
    first = len(fp.requests)
    fp.script.text(FIRST).delay = 0.25  # slow: the kill lands between two deltas
    fp.fp.responder = _like_a_model
    shown: list[str] = []
    old = stack.proxy

    def kill_mid_answer(event: dict) -> None:
        """At the SHOWN-th text the SDK reported: kill -9, then a new proxy where it was."""
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

    agent = sdk.agent(MODEL, cwd=workspace)
    turn = sdk.send(agent, "Say it.", on_event=kill_mid_answer, timeout=120)
    assert stack.proxy is not old, "the proxy was not killed"
    assert turn.status == "finished", (turn.result, sdk.log_tail())
    partial = "".join(shown[:SHOWN])
    assert partial and FIRST.startswith(partial)
    # the stream events: the partial once, then the rest (no repeat of the partial)
    assert turn.text == partial + REST, turn.text
    # `run.wait()`'s result: the one assistant message, partial and rest
    assert turn.result.get("result") == partial + REST, turn.result
    # the retry continued: the provider got the partial answer and the note
    retried = fp.requests[first + 1 :]
    assert len(retried) == 1, [r.json for r in retried]
    sent = retried[0].json["messages"]
    assert sent[-2] == {"role": "assistant", "content": partial}
    assert "continues after a dead attempt" in stack.proxy.log()
