"""Cancel latency with Cursor's official client: from `run.cancel()` to the provider's abort.

Run: `uv run python bench/bench_cancel.py [RUNS] [SDK_VENV]` (default 10 runs, the SDK venv of
the conformance suite: `.cache/cursor-sdk-1.1.0` or CURSOR_SDK_VENV). The proxy runs with its
DEFAULT settings (no `cursor_byok_detached_call_ms`), as a user's does. Each run: a fresh agent,
a provider answer that streams a little then waits for its client to leave, the SDK's
`run.cancel()` the moment the first assistant text arrives; the latency is from that call (the
driver's `time.monotonic()`) to the fake provider seeing its connection closed (same clock). Then
the next turn on the same agent must work. Printed per transport: median and worst of RUNS.
Everything on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for sub in ("tests/e2e", "tests", "tests/conformance"):  # the first found wins: conformance
    sys.path.insert(0, str(ROOT / sub))

from conftest import Stack  # noqa: E402
from conftest import write_config  # noqa: E402
from fakes.cursor_account import CursorAccount  # noqa: E402
from harness import KEY_ENV  # noqa: E402
from harness import MODEL  # noqa: E402
from harness import PROVIDER_KEY  # noqa: E402
from harness import ThreadedProvider  # noqa: E402
from mitm import start_mitmdump  # noqa: E402


def one_cancel(stack: Stack, transport: str, workspace: Path) -> float:
    """Seconds from the SDK's cancel to the provider's abort (and the next turn works)."""
    fp = stack.provider
    sdk = stack.driver(transport)
    first = len(fp.requests)
    fp.script.hang(text="Counting: one, two, ")
    agent = sdk.agent(MODEL, cwd=workspace)
    turn = sdk.send(agent, "Count to a million.", cancel_on="assistant")
    assert turn.status == "cancelled", turn.result
    assert turn.cancelled_at is not None
    fp.wait_for_disconnect(first, timeout=60)
    aborted_at = fp.requests[first].disconnected_at
    assert aborted_at is not None
    fp.script.text("Stopped.")
    again = sdk.send(agent, "Stop.")
    assert again.status == "finished" and again.text == "Stopped.", again.result
    sdk.close_agent(agent)
    return aborted_at - turn.cancelled_at


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("runs", nargs="?", type=int, default=10, help="cancels per transport")
    parser.add_argument("sdk_venv", nargs="?", help="the SDK's venv (default CURSOR_SDK_VENV)")
    args = parser.parse_args()
    runs = args.runs
    if args.sdk_venv:
        os.environ["CURSOR_SDK_VENV"] = args.sdk_venv
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        account = CursorAccount()
        account.start()
        provider = ThreadedProvider(api_key=PROVIDER_KEY)
        proxy = start_mitmdump(
            root / "proxy",
            mode=f"reverse:{account.base_url}",
            agent="provider",
            config=write_config(root / "config.toml", provider.base_url),
            env={KEY_ENV: PROVIDER_KEY},
        )
        stack = Stack(root, account, provider, proxy)
        (root / "ws").mkdir()
        (root / "ws" / "README.md").write_text("# Demo\n")
        try:
            for transport in ("runsse", "run"):
                latencies = [one_cancel(stack, transport, root / "ws") for _ in range(runs)]
                ms = sorted(1000 * x for x in latencies)
                print(
                    f"{transport:7s} cancel -> provider abort, {runs} runs: "
                    f"median {statistics.median(ms):.0f} ms, worst {ms[-1]:.0f} ms "
                    f"(all: {', '.join(f'{x:.0f}' for x in ms)})"
                )
        finally:
            for driver in stack.drivers.values():
                driver.stop()
            proxy.stop()
            provider.close()
            account.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
