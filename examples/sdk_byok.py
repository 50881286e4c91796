"""An agent built with Cursor's SDK, running on your own provider through cursor-byok.

    pip install cursor-sdk==1.1.0              # in the environment your agent runs in
    cursor-byok run --reverse                  # another terminal: 127.0.0.1:8443
    CURSOR_BACKEND_URL=http://127.0.0.1:8443 CURSOR_API_KEY=<your Cursor API key> \\
        python examples/sdk_byok.py "Claude Sonnet (BYOK)" "What does README.md say?"

The model is one of the names in your cursor-byok config (`[[models]] name`). cursor-byok
serves the agent's runs with that model on your provider's key; the account calls the SDK makes
besides (key exchange, settings, analytics: docs/protocol.md §13.1) pass through to Cursor,
which is why the SDK still needs a Cursor API key. The agent works in the current directory:
its reads, edits and shell commands run here, on this machine.
"""

from __future__ import annotations

import os
import sys

from cursor_sdk import Client


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    model, prompt = sys.argv[1], sys.argv[2]
    if not os.environ.get("CURSOR_BACKEND_URL"):
        print("set CURSOR_BACKEND_URL to cursor-byok's address, e.g. http://127.0.0.1:8443")
        return 2
    workspace = os.getcwd()
    client = Client.launch_bridge(workspace=workspace)
    try:
        agent = client.create_agent({"model": model, "local": {"cwd": workspace}})
        try:
            run = agent.send(prompt)
            for message in run.stream():
                if message.type == "assistant":
                    for block in message.message.content:
                        if block.type == "text":
                            print(block.text, end="", flush=True)
                elif message.type == "tool_call" and message.status == "completed":
                    print(f"\n[{message.name}]", flush=True)
            result = run.wait()
        finally:
            agent.close()
    finally:
        client.close()
    print()
    if result.status != "finished":
        print(f"run {result.status}: {result.error_message or ''}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
