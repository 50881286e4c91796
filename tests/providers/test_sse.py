"""The SSE parser gives the same events for every way the bytes can be chunked."""

from __future__ import annotations

import json

from fakes.sse_wire import splits
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from cursor_byok.providers.sse import SseEvent
from cursor_byok.providers.sse import SseParser

FIXTURE = (
    "\ufeff"  # BOM, ignored at the very start
    ": keep-alive\n\n"
    'data: {"choices":[{"index":0,"delta":{"content":"ab"}}]}\r\n\r\n'
    "event: content_block_delta\r"
    'data: {"text":"héllo wörld ✓ 日本語 🚀"}\r'
    "\r"
    "data: line one\n"
    "data:line two\n"
    "data\n"
    "data:  two spaces\n"
    ": comment inside an event\n"
    "id: 42\n"
    "retry: 1500\n"
    "\n"
    "event: ping\n\n"  # no data: not dispatched
    "event: error\r\n"
    'data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded 😵"}}\r\n'
    "\r\n"
    "data: [DONE]\n\n"
).encode()

EXPECTED = [
    SseEvent('{"choices":[{"index":0,"delta":{"content":"ab"}}]}'),
    SseEvent('{"text":"héllo wörld ✓ 日本語 🚀"}', event="content_block_delta"),
    SseEvent("line one\nline two\n\n two spaces", id="42", retry=1500),
    SseEvent(
        '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded 😵"}}',
        event="error",
        id="42",
        retry=1500,
    ),
    SseEvent("[DONE]", id="42", retry=1500),
]


def parse(chunks: list[bytes]) -> list[SseEvent]:
    parser = SseParser()
    events: list[SseEvent] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    return events + parser.close()


def test_fixture_whole() -> None:
    assert parse([FIXTURE]) == EXPECTED


def test_every_split_gives_identical_events() -> None:
    count = 0
    for chunks in splits(FIXTURE, seed=7, rounds=500):
        assert b"".join(chunks) == FIXTURE
        assert parse(chunks) == EXPECTED, [c[:20] for c in chunks]
        count += 1
    assert count > 500


def test_cr_at_chunk_end_then_lf_is_one_line_end() -> None:
    parser = SseParser()
    assert parser.feed(b"data: a\r") == []
    # the LF completing "\r\n" must not be read as an empty line (= dispatch)...
    assert parser.feed(b"\ndata: b\r") == []
    # ...but a real blank line after it dispatches
    assert parser.feed(b"\n\r\n") == [SseEvent("a\nb")]


def test_bare_cr_then_cr_is_blank_line() -> None:
    parser = SseParser()
    assert parser.feed(b"data: x\r") == []
    assert parser.feed(b"\r") == [SseEvent("x")]


def test_utf8_split_inside_character() -> None:
    raw = 'data: {"t":"🚀"}\n\n'.encode()
    cut = raw.index("🚀".encode()) + 2
    parser = SseParser()
    assert parser.feed(raw[:cut]) == []
    assert parser.feed(raw[cut:]) == [SseEvent('{"t":"🚀"}')]


def test_close_delivers_unterminated_last_event() -> None:
    parser = SseParser()
    assert parser.feed(b"data: [DONE]") == []
    assert parser.close() == [SseEvent("[DONE]")]


def test_close_without_pending_data() -> None:
    parser = SseParser()
    assert parser.feed(b"data: a\n\n: trailing comment\n") == [SseEvent("a")]
    assert parser.close() == []
    assert parser.comments == 1


def test_long_line_in_many_chunks() -> None:
    payload = json.dumps({"x": "y" * 200_000})
    raw = f"data: {payload}\n\n".encode()
    parser = SseParser()
    events: list[SseEvent] = []
    for i in range(0, len(raw), 7):
        events += parser.feed(raw[i : i + 7])
    assert events == [SseEvent(payload)]


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    assert parse([b"data: \xff\xfe ok\n\n"]) == [SseEvent("\ufffd\ufffd ok")]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(FIXTURE)), max_size=40))
def test_property_any_split_of_fixture(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    chunks = [FIXTURE[a:b] for a, b in zip([0, *points], [*points, len(FIXTURE)], strict=True)]
    assert parse(chunks) == EXPECTED


_text = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\r\n\x00"),
    max_size=30,
)
_event = st.tuples(
    st.sampled_from([None, "message_start", "content_block_delta", "error"]),
    st.lists(_text, min_size=1, max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_event, max_size=8),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.lists(st.integers(min_value=0, max_value=10_000), max_size=30),
)
def test_property_roundtrip(events, eol: str, cuts: list[int]) -> None:
    """Events written with any line ending and split anywhere come back unchanged."""
    parts = []
    expected = []
    for name, lines in events:
        head = [f"event: {name}"] if name else []
        parts.append(eol.join([*head, *(f"data: {line}" for line in lines)]) + eol + eol)
        expected.append(SseEvent("\n".join(lines), event=name or "message"))
    raw = ("".join(parts)).encode()
    points = sorted({c % (len(raw) + 1) for c in cuts})
    chunks = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
    assert parse(chunks) == expected
