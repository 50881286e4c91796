"""Issue 12 end to end: 40 turns with tool calls through a real mitmdump stay under a small
context window by compacting; facts from before a compaction are still answered; `/summarize`
works; a provider `context_length_exceeded` compacts and retries once, then gives Cursor's
"Context Too Large After Compaction" error; checkpoints carry the provider's usage as
`token_details`."""

from __future__ import annotations

import uuid

import pytest
from cursor_client import CursorLikeClient
from fakes.cursor_checkpoint import read_summary
from fakes.fake_provider import FakeProvider
from long_session import KEY_ENV
from long_session import MODEL
from long_session import WINDOW
from long_session import Responder
from long_session import is_summary_request
from long_session import make_workspace
from long_session import note
from long_session import question
from long_session import script
from long_session import summarize_request
from long_session import word
from long_session import write_config
from mitm import start_mitmdump

from cursor_byok.agent.compaction import is_summary
from cursor_byok.cursor.checkpoint import decode_message
from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.store.usage import UsageStore

pytestmark = pytest.mark.timeout(400)


class Session:
    def __init__(self, tmp_path, fp: FakeProvider, kind: str, *, window: int = WINDOW) -> None:
        self.workspace = make_workspace(tmp_path / "ws")
        self.proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=write_config(tmp_path, fp, kind, window=window),
            env={KEY_ENV: "sk-test-not-a-real-key"},
        )
        self.client = CursorLikeClient.through(self.proxy, self.workspace)
        self.conversation = str(uuid.uuid4())
        self.state = None
        self.blobs: dict[bytes, bytes] = {}

    async def turn(self, text: str):
        message = self.client.run_request(
            text,
            conversation_id=self.conversation,
            model=MODEL,
            workspace=self.workspace,
            state=self.state,
        )
        return await self._run(message)

    async def summarize(self):
        message = summarize_request(self.client, self.conversation, self.state, self.workspace)
        return await self._run(message)

    async def _run(self, message):
        result = await self.client.turn(message)
        if result.end.ok and result.checkpoints:
            self.state = result.checkpoints[-1]
        return result

    async def close(self) -> None:
        await self.client.aclose()
        self.proxy.stop()


@pytest.mark.parametrize("kind", ["openai-chat", "anthropic"])
async def test_forty_turns_compact_and_remember(tmp_path, kind) -> None:
    async with FakeProvider(usage_from_prompt=True, context_window=WINDOW) as fp:
        fp.responder = Responder(tmp_path / "ws")
        session = Session(tmp_path, fp, kind)
        results = []
        last_calls = []  # the last model request of each turn
        try:
            for text in script(40):
                results.append((text, await session.turn(text)))
                last_calls.append(fp.requests[-1])
            summarized = await session.summarize()
            after = await session.turn(question(1))
        finally:
            await session.close()
        requests = list(fp.requests)
        store = UsageStore(session.proxy.data_dir)
        rows = store.rows()
        store.close()

    for text, result in results:
        assert result.end.ok, (text, result.end.error)
    # every call stayed under the provider's window: nothing was refused
    assert not any(r.overflowed for r in requests)
    model_calls = [r for r in requests if not is_summary_request(r)]
    assert max(r.prefix.prompt_bytes for r in model_calls) // 4 <= WINDOW
    compactions = [r for r in requests if is_summary_request(r)]
    assert len(compactions) >= 2  # automatic ones plus /summarize

    compacted = [(t, r) for t, r in results if "summary_started" in _update_kinds(r)]
    assert compacted, "no turn compacted automatically"
    for _, result in compacted:
        kinds = _update_kinds(result)
        start = kinds.index("summary_started")
        assert kinds[start : start + 3] == ["summary_started", "summary", "summary_completed"]
        [summary] = result.updates("summary")
        assert "## Facts to remember" in summary.summary
        state = result.checkpoints[-1]
        assert state.self_summary_count >= 1 and state.HasField("summary")

    # questions about facts recorded before a compaction are answered from the summary
    first_compaction = results.index(compacted[0])
    asked_later = [(t, r) for t, r in results[first_compaction + 1 :] if t.startswith("Question")]
    assert asked_later
    for text, result in asked_later:
        n = int(text.rsplit(" ", 1)[1].rstrip("?"))
        assert result.text == f"The code for item {n} is {word(n)}.", text

    # token_details.used is the provider-reported usage (input + output) of the turn's last call
    for (_, result), call in zip(results, last_calls, strict=True):
        state = result.checkpoints[-1]
        inp, out, _ = call.step.usage
        assert state.token_details.used_tokens == inp + out
        assert state.token_details.max_tokens == WINDOW
        ended = result.updates("turn_ended")[0]
        assert ended.input_tokens > 0
        categories = {c.id for c in state.token_details.breakdown.categories}
        assert {"system_prompt", "tools", "conversation"} <= categories
    last_call = requests[-1]
    inp, out, _ = last_call.step.usage
    assert after.checkpoints[-1].token_details.used_tokens == inp + out

    # /summarize: summary updates, the roots start with the summary, the next turn continues
    assert summarized.end.ok, summarized.end.error
    assert "summary_started" in _update_kinds(summarized)
    state = summarized.checkpoints[-1]
    first_root = session.client.blobs[state.root_prompt_messages_json[0]]
    assert is_summary(decode_message(first_root))
    assert word(1) in read_summary(session.client.blobs[state.summary])
    assert after.end.ok and after.text == f"The code for item 1 is {word(1)}."

    # `cursor-byok usage`: one row per turn holds what the provider reported, and the context
    billed = [r.step.usage for r in requests if r.step is not None]
    assert {row["conversation"] for row in rows} == {session.conversation} and len(rows) == 42
    assert sum(row["input_tokens"] for row in rows) == sum(u[0] for u in billed)
    cached = sum(row["cache_read_tokens"] for row in rows)
    assert cached == sum(u[2] for u in billed)
    assert cached / sum(row["input_tokens"] for row in rows) > 0.85
    assert rows[-1]["context_used"] == after.checkpoints[-1].token_details.used_tokens
    assert rows[-1]["context_max"] == WINDOW


async def test_context_length_exceeded_compacts_and_retries_once(tmp_path) -> None:
    async with FakeProvider(usage_from_prompt=True) as fp:
        fp.responder = Responder(tmp_path / "ws")
        session = Session(tmp_path, fp, "openai-chat")
        try:
            for n in range(6):
                assert (await session.turn(note(n))).end.ok
            biggest = max(r.prefix.prompt_bytes for r in fp.requests) // 4
            # the provider's real window is smaller than the configured one: the next call
            # overflows before our own 80 % threshold is reached
            fp.context_window = biggest + 20
            before = len(fp.requests)
            result = await session.turn(question(0))
        finally:
            await session.close()
        new = fp.requests[before:]
    assert result.end.ok, result.end.error
    assert [r.overflowed for r in new][:1] == [True]
    assert sum(1 for r in new if is_summary_request(r)) == 1
    assert not new[-1].overflowed
    assert "summary_started" in _update_kinds(result)
    assert result.text == f"The code for item 0 is {word(0)}."


async def test_still_too_large_after_compaction_is_cursors_error(tmp_path) -> None:
    async with FakeProvider(usage_from_prompt=True) as fp:
        fp.responder = Responder(tmp_path / "ws")
        session = Session(tmp_path, fp, "openai-chat")
        try:
            for n in range(4):
                assert (await session.turn(note(n))).end.ok
            fp.context_window = 1500  # smaller than system prompt + tools: nothing can fit
            before = len(fp.requests)
            result = await session.turn(question(0))
        finally:
            await session.close()
        new = fp.requests[before:]
    assert not result.end.ok
    assert result.end.error.code == "invalid_argument"
    [detail] = result.end.error.details
    details = aipb.ErrorDetails.FromString(detail.value)
    assert details.details.title == "Context Too Large After Compaction"
    assert details.error == 29  # CUSTOM_MESSAGE
    # one compaction, one retry, no more
    assert sum(1 for r in new if is_summary_request(r)) == 1
    assert sum(1 for r in new if r.overflowed) == 2


def _update_kinds(result) -> list[str]:
    out = []
    for message in result.messages:
        if message.WhichOneof("message") == "interaction_update":
            out.append(message.interaction_update.WhichOneof("message"))
    return out


async def test_compaction_model_writes_the_summary(tmp_path) -> None:
    async with FakeProvider(usage_from_prompt=True) as fp, FakeProvider() as summariser:
        fp.responder = Responder(tmp_path / "ws")
        summariser.responder = Responder(tmp_path / "ws")
        session = Session(tmp_path, fp, "openai-chat")
        config = tmp_path / "config.toml"
        config.write_text(
            config.read_text().replace(
                "context_window = 16000",
                'context_window = 16000\ncompaction_model = "Summariser"',
            )
            + f"""
[providers.cheap]
kind = "anthropic"
base_url = "{summariser.base_url}"
api_key_env = "{KEY_ENV}"

[[models]]
name = "Summariser"
provider = "cheap"
model = "fake-small"
context_window = 32000
"""
        )
        try:
            for n in range(3):
                assert (await session.turn(note(n))).end.ok
            summarized = await session.summarize()
            after = await session.turn(question(0))
        finally:
            await session.close()
    assert summarized.end.ok, summarized.end.error
    assert not any(is_summary_request(r) for r in fp.requests)
    [request] = summariser.requests
    assert is_summary_request(request) and request.json["model"] == "fake-small"
    assert after.text == f"The code for item 0 is {word(0)}."
