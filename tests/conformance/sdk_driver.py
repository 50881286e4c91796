"""Drives Cursor's official Python SDK (`cursor-sdk`) for the conformance suite.

Runs under the SDK's own interpreter (the venv `.ci/run` builds, never the project's), so the
client under test is exactly the published one. One process keeps one SDK bridge (one backend
URL, one HOME) and serves JSON-lines commands on stdin; it answers each on stdout:

    {"op": "agent", "name": "a", "options": {...AgentOptions keys...}}
        -> {"agent": "a", "agent_id": "...", "model": "..."} | {"error": "...", "type": "..."}
    {"op": "send", "agent": "a", "text": "...", "images": [{"path": P, "mime": M}],
     "cancel_on": "assistant" | "tool_call" | null,
     "force_on": <event type> | null, "force_text": "..."}
        -> {"event": {...}} for every SDK message, {"update": "<type name>"} for every
           interaction update, {"cancelling": <time.monotonic()>} just before it cancels,
           then {"result": {...}}; with force_on, at that event a forced follow-up is sent
           (`send(text, {"local": {"force": True}})`) and read to its end first:
           {"follow_up_event": ...}, {"follow_up_result": ...}
    {"op": "usage", "agent": "a"}  -> {"usage": {...AgentUsage}}  (agent.get_usage())
    {"op": "close", "agent": "a"}  -> {"closed": "a"}
    {"op": "quit"}                 -> exits

`options.local.setting_sources` takes the SDK's enum names (`SETTING_SOURCE_PROJECT`); the SDK
drops anything else without a word. Cancel is the SDK's own `run.cancel()`, called from the event
loop the moment the named event arrives (no timer: the test decides by events).
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import os
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any


def _plain(value: Any) -> Any:
    """An SDK object as JSON-able data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, default=str) + "\n")
    sys.stdout.flush()


def _drain(stream, path: str) -> None:
    """Copy the bridge's stderr to a file, so its pipe never fills up."""
    with open(path, "a", encoding="utf-8") as out:
        for line in stream:
            out.write(line)
            out.flush()


def _follow(run: Any, command: dict[str, Any], agent: Any, prefix: str = "") -> None:
    """Report a run's events and result; cancel it, or send a forced follow-up, on the named
    event (the follow-up's events are reported with the `follow_up_` prefix, before the rest of
    the first run's)."""
    cancel_on = command.get("cancel_on")
    force_on = command.get("force_on")
    acted = False
    for event in run.events():
        if event.kind == "interaction_update" and event.interaction_update:
            _say({prefix + "update": type(event.interaction_update).__name__})
            continue
        if event.kind != "sdk_message" or event.sdk_message is None:
            continue
        data = _plain(event.sdk_message)
        _say({prefix + "event": data})
        if acted:
            continue
        if cancel_on and data.get("type") == cancel_on:
            acted = True
            _say({"cancelling": time.monotonic()})  # one clock for all processes
            run.cancel()
        elif force_on and data.get("type") == force_on:
            acted = True  # the SDK's "send now": the running run is expired, a new one starts
            follow_up = agent.send(command["force_text"], {"local": {"force": True}})
            _follow(follow_up, {}, agent, "follow_up_")
    _say({prefix + "result": _plain(run.wait())})


def _tokens_never_look_like_flags() -> None:
    """cursor-sdk up to at least 0.1.9 passes its callback tokens (`secrets.token_urlsafe`) to the
    bridge as arguments, and the bridge refuses a value that starts with "-" ("Missing value for
    --tool-callback-auth-token"): one launch in ~32 failed for the SDK, not for the proxy. Tokens
    drawn here never start with "-"; the SDK's own use of them is unchanged."""
    import secrets

    draw = secrets.token_urlsafe

    def token_urlsafe(nbytes: int | None = None) -> str:
        while True:
            token = draw(nbytes)
            if not token.startswith("-"):
                return token

    secrets.token_urlsafe = token_urlsafe


def main() -> int:
    workspace = Path(os.environ["SDK_DRIVER_WORKSPACE"])
    bridge_log = os.environ.get("SDK_DRIVER_BRIDGE_LOG", os.devnull)
    from cursor_sdk import Client
    from cursor_sdk import SDKImage
    from cursor_sdk import UserMessage

    _tokens_never_look_like_flags()
    # The bridge (node) inherits fd 0 and reads it: keep the commands to ourselves.
    commands = os.fdopen(os.dup(0), "r", encoding="utf-8")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    client = Client.launch_bridge(
        workspace=str(workspace), state_root=str(workspace.parent / "sdk-state")
    )
    bridge = client._owned_bridge  # its stderr must be read, or the bridge blocks on it
    if bridge is not None and bridge.process.stderr is not None:
        threading.Thread(
            target=_drain, args=(bridge.process.stderr, bridge_log), daemon=True
        ).start()
    _say({"ready": True})
    agents: dict[str, Any] = {}
    try:
        for line in commands:
            if not line.strip():
                continue
            command = json.loads(line)
            op = command.get("op")
            try:
                if op == "quit":
                    break
                if op == "agent":
                    agent = client.create_agent(command["options"])
                    agents[command["name"]] = agent
                    _say(
                        {
                            "agent": command["name"],
                            "agent_id": agent.agent_id,
                            "model": str(agent.model),
                        }
                    )
                elif op == "usage":
                    _say({"usage": _plain(agents[command["agent"]].get_usage())})
                elif op == "close":
                    agents.pop(command["agent"]).close()
                    _say({"closed": command["agent"]})
                elif op == "send":
                    message: Any = command["text"]
                    images = [
                        SDKImage(
                            data=base64.b64encode(Path(i["path"]).read_bytes()).decode(),
                            mime_type=i["mime"],
                        )
                        for i in command.get("images") or []
                    ]
                    if images:
                        message = UserMessage(text=command["text"], images=images)
                    run = agents[command["agent"]].send(message)
                    _follow(run, command, agents[command["agent"]])
                else:
                    _say({"error": f"unknown op {op!r}", "type": "usage"})
            except Exception as exc:  # the test reads the error; the driver keeps serving
                _say(
                    {
                        "error": str(exc),
                        "type": type(exc).__name__,
                        "trace": traceback.format_exc(limit=3),
                    }
                )
    finally:
        for agent in agents.values():
            with contextlib.suppress(Exception):
                agent.close()
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
