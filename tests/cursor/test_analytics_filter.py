"""Analytics events about private conversations taken out of a batch (cursor/analytics.py):
the rest goes on as the very bytes that came."""

from __future__ import annotations

import pytest

from cursor_byok.cursor import analytics
from cursor_byok.pb import aiserver_v1_pb2 as aipb

PRIVATE = {"conv-byok": "conv-byok", "Fake Model": ""}


def private(value: str) -> str | None:
    return PRIVATE.get(value)


def event(name: str, **data) -> aipb.AnalyticsEvent:
    out = aipb.AnalyticsEvent(event_name=name, timestamp=1)
    for key, value in data.items():
        if isinstance(value, str):
            out.event_data[key].string_value = value
        else:
            out.event_data[key].int_value = value
    return out


def test_private_events_go_and_the_others_keep_their_exact_bytes() -> None:
    keep_one = event("app.opened", os="linux", count=3).SerializeToString()
    keep_two = event("sdk.executor.startup", total_ms=53).SerializeToString()
    by_model = event("sdk.run.created", model="Fake Model", prompt_length=10).SerializeToString()
    by_id = event("sdk.run.completed", agent_id="conv-byok", model="Fake Model")
    body = b"".join(
        b"\x0a" + bytes([len(e)]) + e
        for e in (keep_one, by_model, keep_two, by_id.SerializeToString())
    )
    body += b"\x10\x07"  # a field our schema does not have: kept as it is
    filtered = analytics.filter_events(body, analytics.track_event_strings, private)
    assert (filtered.kept, filtered.dropped) == (2, 2)
    assert filtered.owners == {"": 1, "conv-byok": 1}  # the id wins over the model name
    expected = b"".join(b"\x0a" + bytes([len(e)]) + e for e in (keep_one, keep_two))
    assert filtered.body == expected + b"\x10\x07"
    kept = aipb.TrackEventsRequest.FromString(filtered.body)
    assert [e.event_name for e in kept.events] == ["app.opened", "sdk.executor.startup"]


def test_nothing_private_leaves_the_body_alone_and_nothing_left_is_empty() -> None:
    plain = aipb.TrackEventsRequest(events=[event("app.opened")]).SerializeToString()
    assert analytics.filter_events(plain, analytics.track_event_strings, private).body is None
    only = aipb.TrackEventsRequest(events=[event("x", model="Fake Model")]).SerializeToString()
    filtered = analytics.filter_events(only, analytics.track_event_strings, private)
    assert filtered.body == b"" and filtered.kept == 0 and filtered.dropped == 1


def test_batch_events_are_judged_by_every_string_in_their_properties() -> None:
    nested = aipb.BatchEvent(event="composer.submitted")
    nested.properties.update({"outer": {"list": [1, {"composerId": "conv-byok"}]}})
    plain = aipb.BatchEvent(event="window.focused")
    plain.properties.update({"composerId": "conv-cursor"})
    body = aipb.BatchRequest(events=[nested, plain]).SerializeToString()
    filtered = analytics.filter_events(body, analytics.batch_event_strings, private)
    assert filtered.dropped == 1 and filtered.owners == {"conv-byok": 1}
    assert [e.event for e in aipb.BatchRequest.FromString(filtered.body).events] == [
        "window.focused"
    ]


def test_json_batches_lose_their_private_events_only() -> None:
    document = {
        "events": [
            {"eventName": "a", "eventData": {"model": {"stringValue": "Fake Model"}}},
            {"eventName": "b", "eventData": {"os": {"stringValue": "linux"}}},
        ],
        "other": 1,
    }
    left, counts = analytics.filter_json_events(document, private)
    assert left == {"events": [document["events"][1]], "other": 1}
    assert counts.dropped == 1 and counts.kept == 1
    same, counts = analytics.filter_json_events({"events": []}, private)
    assert counts.dropped == 0 and same == {"events": []}


@pytest.mark.parametrize(
    "body",
    [b"\x0a\x05ab", b"\x0b\x01", b"\x80", b"\x00\x01"],
    ids=["truncated", "group", "varint", "field-0"],
)
def test_bytes_that_are_not_a_message_are_refused(body: bytes) -> None:
    with pytest.raises(analytics.WireError):
        analytics.filter_events(body, analytics.track_event_strings, private)
