"""The long-session scenario: a 40-turn conversation with tool calls through a real mitmdump.

Shared by `test_long_session.py` (assertions) and `bench/bench_prompt_cache.py` (figures).

The fake provider is driven by a responder that reads what the model was actually sent:

- "Note fact N: the code for item N is WORD. …" → the model reads a workspace file (a tool
  call), then answers "Noted fact N.";
- "Question: what is the code for item N?" → it answers from the prompt: the word if the fact
  is anywhere in what it was sent (verbatim history or a summary), else "I do not know.";
- a summary request (our compaction prompt) → a structured summary that lists every
  "code for item N is WORD" fact present in the text it was given.

So an answer after compaction is right only if compaction carried the fact forward.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from fakes.fake_provider import FakeProvider
from fakes.fake_provider import RecordedRequest
from fakes.script import Step

from cursor_byok.pb import agent_v1_pb2 as pb

MODEL = "Fake Model"
KEY_ENV = "FAKE_PROVIDER_KEY"
WINDOW = 16_000  # tokens (the fake counts 4 bytes a token)
WORDS = [
    "heliotrope",
    "quartz",
    "marigold",
    "obsidian",
    "saffron",
    "tundra",
    "juniper",
    "cobalt",
    "lantern",
    "meridian",
]
_FACT = re.compile(r"code for item (\d+) is (\w+)")
_MARK = re.compile(r"(Note fact (\d+)|Question: what is the code for item (\d+)\?)")
SUMMARY_MARK = "You summarise a coding-agent conversation"


def word(n: int) -> str:
    return f"{WORDS[n % len(WORDS)]}{n}"


def write_config(tmp: Path, fp: FakeProvider, kind: str, *, window: int = WINDOW) -> Path:
    path = tmp / "config.toml"
    path.write_text(
        f"""
default_model = "{MODEL}"
max_steps = 8

[providers.fake]
kind = "{kind}"
base_url = "{fp.base_url}"
api_key_env = "{KEY_ENV}"
max_retries = 1
first_token_timeout = 30

[[models]]
name = "{MODEL}"
provider = "fake"
model = "fake-upstream-1"
context_window = {window}
"""
    )
    return path


def make_workspace(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(3):
        lines = [
            f"file {i} line {n}: some source text to make the result realistic" for n in range(40)
        ]
        (root / f"f{i}.txt").write_text("\n".join(lines) + "\n")
    return root


def is_summary_request(record: RecordedRequest) -> bool:
    return SUMMARY_MARK in json.dumps(record.json)


def _last_is_tool_result(record: RecordedRequest) -> bool:
    body = record.json
    if record.format == "chat":
        return body["messages"][-1]["role"] == "tool"
    if record.format == "responses":
        return body["input"][-1].get("type") == "function_call_output"
    last = body["messages"][-1]
    return last["role"] == "user" and any(
        b.get("type") == "tool_result" for b in last["content"] if isinstance(b, dict)
    )


@dataclass
class Responder:
    """Computes the fake model's answer from the request it was sent."""

    workspace: Path
    calls: int = 0
    summaries: int = 0

    def __call__(self, record: RecordedRequest) -> Step:
        text = json.dumps(record.json, ensure_ascii=False)
        if SUMMARY_MARK in text:
            self.summaries += 1
            facts = sorted(set(_FACT.findall(text)), key=lambda f: int(f[0]))
            lines = "\n".join(f"- the code for item {n} is {w}" for n, w in facts)
            return Step(
                "reply",
                text="## Goals\nRecord facts and answer questions about them.\n"
                "## Decisions\nNone.\n## Files touched\nf0.txt, f1.txt, f2.txt (read)\n"
                f"## Open tasks\nNone.\n## Facts to remember\n{lines}\n",
            )
        marks = _MARK.findall(text)
        if not marks:
            return Step("reply", text="I do not understand.")
        _, noted, asked = marks[-1]
        if asked:
            found = dict(_FACT.findall(text)).get(asked)
            reply = f"The code for item {asked} is {found}." if found else "I do not know."
            return Step("reply", text=reply)
        if _last_is_tool_result(record):
            return Step("reply", text=f"Noted fact {noted}.")
        self.calls += 1
        path = str(self.workspace / f"f{int(noted) % 3}.txt")
        return Step(
            "reply",
            tool_calls=[(f"call_{self.calls}_{uuid.uuid4().hex[:6]}", "Read", {"path": path})],
        )


def note(n: int) -> str:
    return f"Note fact {n}: the code for item {n} is {word(n)}. Read f{n % 3}.txt as well."


def question(n: int) -> str:
    return f"Question: what is the code for item {n}?"


def script(turns: int = 40) -> list[str]:
    """Mostly notes; every 7th turn asks about an early fact (likely summarised by then)."""
    out = []
    for i in range(turns):
        out.append(question(i // 7) if i % 7 == 6 else note(i))
    return out


def summarize_request(client, conversation: str, state, workspace: Path) -> pb.AgentClientMessage:
    message = client.run_request(
        "", conversation_id=conversation, model=MODEL, workspace=workspace, state=state
    )
    action = message.run_request.action
    action.ClearField("user_message_action")
    action.summarize_action.SetInParent()
    return message


@dataclass
class TurnLog:
    prompt: str
    result: object
    requests: list[RecordedRequest] = field(default_factory=list)
