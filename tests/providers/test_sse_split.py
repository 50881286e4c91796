"""The bytes-level SSE parser against a plain reference reading of the spec, split every way.

The parser normalises line ends per chunk and keeps `data:` values as bytes until dispatch;
these tests pin what that must not change: every byte boundary, CR/LF/CRLF (and a CR ending
one chunk with the LF starting the next), comments, multi-line data, UTF-8 split inside a
character, a last event without its blank line at EOF, and fields other than data.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from test_sse import EXPECTED
from test_sse import FIXTURE
from test_sse import parse

from cursor_byok.providers.sse import SseEvent
from cursor_byok.providers.sse import SseParser


def reference(raw: bytes) -> list[SseEvent]:
    """The whole stream at once, line by line, as the EventSource spec reads it (plus our
    delivery of an unterminated last event at EOF)."""
    text = raw.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = re.split(r"\r\n|\r|\n", text)
    events: list[SseEvent] = []
    data: list[str] = []
    has_data = False
    name = ""
    last_id: str | None = None
    retry: int | None = None
    for line in [*lines, ""]:
        if line == "":
            if has_data:
                events.append(SseEvent("\n".join(data), name or "message", last_id, retry))
            data, has_data, name = [], False, ""
            continue
        if line.startswith(":"):
            continue
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            data.append(value)
            has_data = True
        elif field == "event":
            name = value
        elif field == "id" and "\0" not in value:
            last_id = value
        elif field == "retry" and value.isdigit():
            retry = int(value)
    return events


def test_reference_agrees_with_the_fixture() -> None:
    assert reference(FIXTURE) == EXPECTED


def test_every_two_way_split() -> None:
    for cut in range(len(FIXTURE) + 1):
        assert parse([FIXTURE[:cut], FIXTURE[cut:]]) == EXPECTED, cut


def test_one_byte_at_a_time() -> None:
    assert parse([FIXTURE[i : i + 1] for i in range(len(FIXTURE))]) == EXPECTED


def test_every_three_way_split_of_a_cr_lf_stream() -> None:
    raw = b"event: a\r\ndata: x\r\rdata: y\r\n\r\ndata: z\n\r\n:c\rdata: w"
    expected = reference(raw)
    assert [e.data for e in expected] == ["x", "y", "z", "w"]
    for i in range(len(raw) + 1):
        for j in range(i, len(raw) + 1):
            assert parse([raw[:i], raw[i:j], raw[j:]]) == expected, (i, j)


def test_utf8_split_at_every_byte_of_every_character() -> None:
    raw = "data: é✓🚀日\n\n".encode()
    for cut in range(len(raw) + 1):
        assert parse([raw[:cut], raw[cut:]]) == [SseEvent("é✓🚀日")], cut


def test_last_event_without_blank_line_at_eof() -> None:
    for tail in (b"data: last", b"data: last\n", b"data: last\r", b"data: last\r\n"):
        raw = b"data: first\n\n" + tail
        assert parse([raw]) == [SseEvent("first"), SseEvent("last")], tail
        assert parse([raw[:-1], raw[-1:]]) == [SseEvent("first"), SseEvent("last")], tail


def test_multi_line_data_and_fields_without_colon() -> None:
    raw = b"data\ndata:\ndata: a\ndata:  b\nevent\nid: 7\nretry: x\n\n"
    assert parse([raw]) == [SseEvent("\n\na\n b", "message", "7", None)] == reference(raw)


def test_comments_are_counted_not_dispatched() -> None:
    parser = SseParser()
    assert parser.feed(b": ping\r\n\r\n:\n\n: x") == []
    assert parser.close() == []
    assert parser.comments == 3


def test_a_line_of_exactly_the_limit_passes_one_more_byte_fails() -> None:
    line = b"data: " + b"x" * 94  # 100 bytes
    assert SseParser(max_line=100).feed(line + b"\r\n\r\n") == [SseEvent("x" * 94)]
    try:
        SseParser(max_line=99).feed(line + b"\r\n\r\n")
    except ValueError as exc:
        assert "SSE line" in str(exc)
    else:
        raise AssertionError("a 100-byte line passed a 99-byte limit")


_piece = st.sampled_from(
    [
        "data: ",
        "data:",
        "data",
        "event: ",
        "id: ",
        "retry: ",
        ": ",
        ":",
        "1500",
        "x",
        "é",
        "🚀",
        "\0",
        "{}",
        " ",
        "\n",
        "\r",
        "\r\n",
        "\n\n",
        "\r\n\r\n",
        "\ufeff",
    ]
)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(_piece, max_size=40),
    st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
)
def test_property_matches_the_reference(pieces: list[str], cuts: list[int]) -> None:
    raw = "".join(pieces).encode()
    points = sorted({c % (len(raw) + 1) for c in cuts})
    chunks = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
    assert parse(chunks) == reference(raw)
