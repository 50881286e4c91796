"""Token meter, compaction planning and the checkpoint fields compaction writes (pure parts)."""

from __future__ import annotations

from fakes.cursor_checkpoint import read_summary

from cursor_byok.agent.compaction import is_summary
from cursor_byok.agent.compaction import render_transcript
from cursor_byok.agent.compaction import split
from cursor_byok.agent.compaction import summary_message
from cursor_byok.agent.compaction import truncate_tool_results
from cursor_byok.agent.tokens import TokenMeter
from cursor_byok.cursor.checkpoint import Transcript
from cursor_byok.cursor.checkpoint import encode_message
from cursor_byok.cursor.context_meter import CATEGORIES
from cursor_byok.cursor.context_meter import breakdown
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire.blob_ids import blob_id


def user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def call(call_id: str, text: str = "") -> dict:
    parts = [{"type": "text", "text": text}] if text else []
    parts.append({"type": "tool-call", "toolCallId": call_id, "toolName": "Read", "args": {}})
    return {"role": "assistant", "content": parts}


def result(call_id: str, text: str) -> dict:
    return {
        "role": "tool",
        "content": [
            {"type": "tool-result", "toolCallId": call_id, "toolName": "Read", "result": text}
        ],
    }


def answer(text: str) -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def conversation(turns: int, result_size: int = 400) -> list[dict]:
    out = []
    for i in range(turns):
        out += [
            user(f"question {i}"),
            call(f"c{i}"),
            result(f"c{i}", "r" * result_size),
            answer(f"a{i}"),
        ]
    return out


# --- meter


def test_meter_estimates_then_calibrates_from_reported_usage() -> None:
    meter = TokenMeter()
    assert meter.estimate(4000) == 1000  # 4 bytes a token before any report
    meter.observe(4000, 2000, 50, answer_bytes=200)  # this provider: 2 bytes a token
    assert meter.ratio == 0.5
    assert meter.used(4200) == 2050  # exactly the report right after the call
    assert meter.used(5200) == 2050 + 500  # plus the estimate of what was appended
    meter.reset_report()
    assert meter.used(1000) == 500


def test_meter_seeds_its_ratio_from_the_previous_checkpoint() -> None:
    meter = TokenMeter()
    meter.seed(3000, 9000)
    assert abs(meter.ratio - 1 / 3) < 1e-9
    meter.observe(1000, 500, 1)
    meter.seed(100, 100_000)  # a real report wins over the seed
    assert meter.ratio == 0.5


def test_breakdown_uses_cursor_categories_and_adds_up_to_used() -> None:
    rows = breakdown(1001, {"system_prompt": 300, "tools": 600, "conversation": 3100}, 64000)
    assert [r[0] for r in rows] == [c for c, _ in CATEGORIES]
    assert sum(r[2] for r in rows) == 1001
    assert dict((r[0], r[3]) for r in rows)["tools"] == 600


# --- planning


def test_split_keeps_the_recent_tail_that_fits_and_never_orphans_tool_results() -> None:
    messages = conversation(10)
    older, recent = split(messages, keep_bytes=2500)
    assert older + recent == messages
    assert recent[0]["role"] in ("user", "assistant")
    assert 0 < len(recent) < len(messages)
    for i, m in enumerate(recent):
        if m["role"] == "tool":
            assert recent[i - 1]["role"] == "assistant"


def test_split_keeps_the_latest_user_message_verbatim_mid_turn() -> None:
    messages = [user("old"), answer("ok"), user("current request")]
    for i in range(6):
        messages += [call(f"k{i}"), result(f"k{i}", "x" * 3000)]
    older, recent = split(messages, keep_bytes=4000)
    assert recent[0] == user("current request")
    assert user("current request") not in older
    assert recent[-1] == messages[-1]


def test_old_tool_results_are_truncated_but_the_recent_tail_is_not() -> None:
    messages = conversation(3, result_size=10_000)
    cut = truncate_tool_results(messages, limit=100, protect=4)
    assert len(cut[2]["content"][0]["result"]) < 200
    assert "truncated" in cut[2]["content"][0]["result"]
    assert cut[-2]["content"][0]["result"] == "r" * 10_000
    assert messages[2]["content"][0]["result"] == "r" * 10_000  # input untouched


def test_transcript_for_the_summariser_keeps_an_earlier_summary_when_clipped() -> None:
    messages = [summary_message("FACT: the code word is heliotrope"), *conversation(30)]
    text = render_transcript(messages, max_chars=3000)
    assert "heliotrope" in text
    assert "question 29" in text and "question 0\n" not in text
    assert len(text) < 3500


# --- checkpoint


def test_compacted_checkpoint_rewrites_roots_and_carries_the_summary() -> None:
    base = pb.ConversationStateStructure()
    history = conversation(3)
    base.root_prompt_messages_json.extend(blob_id(encode_message(m)) for m in history)
    transcript = Transcript(base=base, history=list(history), request_id="r")
    transcript.append(user("next"))
    summary = "## Goals\nthe code word is heliotrope"
    older, recent = history[:8], [*history[8:], user("next")]
    transcript.compact(summary, summary_message(summary), older, recent)
    transcript.append(answer("fine"))
    transcript.used_tokens = 1234
    transcript.category_bytes = {"system_prompt": 100, "summarized_conversation": 50}
    state, blobs = transcript.checkpoint()

    roots = [blobs.get(i) for i in state.root_prompt_messages_json]
    assert is_summary(_decode(roots[0]))
    assert len(state.root_prompt_messages_json) == 1 + len(recent) + 1
    assert read_summary(blobs[state.summary]) == summary
    assert state.self_summary_count == 1 and len(state.summary_archives) == 1
    archive = blobs[state.summary_archives[0]]
    for message in older:  # the archive points at every summarised message
        assert blob_id(encode_message(message)) in archive
    assert state.token_details.used_tokens == 1234
    cats = {c.id: c.estimated_tokens for c in state.token_details.breakdown.categories}
    assert cats["summarized_conversation"] > 0 and sum(cats.values()) == 1234

    # the next turn starts from the rewritten roots; a later checkpoint appends again
    later = Transcript(base=state, history=[_decode(r) for r in roots], request_id="r2")
    later.append(user("again"))
    state2, _ = later.checkpoint()
    assert list(state2.root_prompt_messages_json[: len(roots)]) == list(
        state.root_prompt_messages_json
    )
    assert state2.self_summary_count == 1


def _decode(data: bytes | None) -> dict:
    import json

    assert data is not None
    return json.loads(data)


def test_compaction_is_not_repeated_until_the_prompt_has_grown_again() -> None:
    from cursor_byok.agent.compaction import Compactor
    from cursor_byok.agent.compaction import SummaryModel

    compactor = Compactor(
        SummaryModel(provider=None, model="m", context_window=10_000),  # type: ignore[arg-type]
        context_window=10_000,
        compact_at=0.8,
    )
    assert not compactor.needed(8_000)
    assert compactor.needed(8_001)
    compactor.compacted(8_500)  # the fixed part alone is above the threshold
    assert not compactor.needed(9_000)
    assert compactor.needed(9_501)
