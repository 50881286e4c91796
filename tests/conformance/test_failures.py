"""Cursor's official SDK through our proxy when a turn does not end well: cancel mid-stream, a
provider error, on both transports."""

from __future__ import annotations

import pytest
from harness import CANCEL_DEADLINE
from harness import MODEL
from harness import SdkDriver
from harness import SdkError
from harness import provider_user_texts

pytestmark = pytest.mark.timeout(180)


@pytest.mark.every_sdk
def test_cancel_mid_stream_aborts_the_provider_call(stack, sdk, workspace) -> None:
    """The SDK cancels by ending its stream (RST_STREAM(CANCEL) on `Run`, the connection closed
    on RunSSE; no cancel_action): with the DEFAULT settings the provider call is aborted at once
    (goal: within a second, bench/bench_cancel.py), long before the next turn, and the agent
    goes on."""
    fp = stack.provider
    first = len(fp.requests)
    fp.script.hang(text="Counting: one, two, ")  # streams, then waits for its client to leave
    agent = sdk.agent(MODEL, cwd=workspace)
    turn = sdk.send(agent, "Count to a million.", cancel_on="assistant")
    assert turn.status == "cancelled", turn.result
    assert turn.text and "Counting: one, two, ".startswith(turn.text)
    assert turn.cancelled_at is not None
    # the provider's client went away without a next turn superseding the run: the deadline is
    # generous for a busy machine, and still half of what the old default (10 s) took
    fp.wait_for_disconnect(first, timeout=CANCEL_DEADLINE + 5)
    aborted_at = fp.requests[first].disconnected_at
    assert aborted_at is not None and aborted_at - turn.cancelled_at < CANCEL_DEADLINE
    assert len(fp.requests) == first + 1  # aborted, not made again: nobody reconnected
    # and the agent goes on: the next turn works and its provider request is well formed
    fp.script.text("Fine, I stopped.")
    again = sdk.send(agent, "Stop counting.")
    assert again.status == "finished", again.result
    assert again.text == "Fine, I stopped."
    assert "Stop counting." in provider_user_texts(fp.requests[-1])
    assert len(fp.requests) == first + 2
    assert fp.requests[first + 1].disconnected_at is None


@pytest.mark.every_sdk
def test_provider_401_is_shown_with_its_message_and_not_retried(stack, sdk, workspace) -> None:
    fp = stack.provider
    first = len(fp.requests)
    runs_before = stack.run_calls()
    fp.script.error(401, message="Incorrect API key provided: sk-live-****")
    agent = sdk.agent(MODEL, cwd=workspace)
    turn = sdk.send(agent, "Hello?")
    assert turn.status == "error", turn.result
    assert "Incorrect API key provided" in turn.error_message, turn.result
    assert len(fp.requests) == first + 1  # the proxy did not retry a 401
    # and the SDK did not retry the run: its retries would all have come before its result
    stack.wait_for_run_calls(runs_before + 1)
    assert stack.run_calls() - runs_before == 1


def test_tls_to_the_proxy_is_really_verified(stack, tmp_path) -> None:
    """The https:// transport's URL is spelled 127.1 so the SDK keeps verifying certificates:
    without our CA it must refuse the proxy (else the `Run` tests would prove nothing of TLS)."""
    driver = SdkDriver.start("run", stack.url("run"), tmp_path / "no-ca", ca_file=None)
    try:
        with pytest.raises(SdkError) as refused:
            driver.agent(MODEL)
    finally:
        driver.stop()
    assert "Network request failed" in refused.value.message
    # mitmproxy saw why: the client rejected the certificate in the TLS handshake
    assert "does not trust the proxy's certificate" in stack.proxy.log()
