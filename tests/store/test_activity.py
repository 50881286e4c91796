"""The activity record (written by the proxy) and `doctor --watch` (reading it from outside)."""

from __future__ import annotations

import json
import stat
import threading
import time

import pytest

from cursor_byok.cli.doctor import check_activity
from cursor_byok.store.activity import ACTIVITY_FILE
from cursor_byok.store.activity import Activity
from cursor_byok.store.activity import read_activity


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_agent_calls_are_written_at_once_private_and_whole(tmp_path) -> None:
    clock = Clock()
    activity = Activity(tmp_path / "data", clock=clock, monotonic=clock, background=False)
    for n in range(1, 4):
        clock.now += 0.01  # well within a second: each Agent call is still written
        activity.note("agent", "RunSSE", "regular proxy")
        record, _ = read_activity(tmp_path / "data")
        assert record["agent_calls"] == n and record["last_agent_at"] == clock.now
    assert record["last_transport"] == "RunSSE" and record["last_route"] == "regular proxy"
    path = tmp_path / "data" / ACTIVITY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == [ACTIVITY_FILE]  # no temp files left


def test_other_calls_are_written_at_most_once_a_second(tmp_path) -> None:
    clock = Clock()
    activity = Activity(tmp_path, clock=clock, monotonic=clock, background=False)
    activity.note("other")
    activity.note("other")
    assert read_activity(tmp_path)[0]["other_cursor_calls"] == 1
    clock.now += 1.5
    activity.note("other")
    assert read_activity(tmp_path)[0]["other_cursor_calls"] == 3
    with pytest.raises(ValueError):
        activity.note("bogus")


def test_the_writer_thread_writes_the_latest_record_without_blocking_the_caller(tmp_path) -> None:
    activity = Activity(tmp_path)
    for _ in range(50):
        activity.note("agent", "BidiAppend", "regular proxy")
    assert activity.flush(10)
    record, _ = read_activity(tmp_path)
    assert record["agent_calls"] == 50 and record["last_transport"] == "BidiAppend"
    assert stat.S_IMODE((tmp_path / ACTIVITY_FILE).stat().st_mode) == 0o600


def test_an_unwritable_data_dir_never_breaks_a_call(tmp_path) -> None:
    (tmp_path / "file").write_text("")
    Activity(tmp_path / "file" / "sub", background=False).note(
        "agent", "RunSSE", "x"
    )  # logs, does not raise


def test_watch_ignores_calls_from_before_it_started(tmp_path) -> None:
    clock = Clock()
    Activity(tmp_path, clock=clock, background=False).note(
        "agent", "RunSSE", "regular proxy"
    )  # an old session
    clock.now += 60
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.now += seconds

    check = check_activity(tmp_path, watch=2, sleep=sleep, clock=clock)
    assert check.status == "fail" and check.title == "no new Agent call in 2s"
    assert "no Cursor call reached the proxy" in check.detail
    assert sum(slept) == pytest.approx(2.0)
    # Without --watch the old record is still reported (as the last call seen).
    assert check_activity(tmp_path, watch=0).status == "ok"


def test_watch_returns_when_a_new_call_arrives_and_names_its_route(tmp_path) -> None:
    clock = Clock()
    proxy = Activity(tmp_path, clock=clock, background=False)
    proxy.note("agent", "RunSSE", "old")

    def sleep(seconds: float) -> None:
        clock.now += seconds
        if clock.now > 1_000_000.9:
            proxy.note("agent", "BidiAppend", "reverse")

    check = check_activity(tmp_path, watch=30, sleep=sleep, clock=clock)
    assert check.status == "ok", check
    assert check.title == "a new Agent call arrived"
    assert "via BidiAppend / reverse" in check.detail
    assert clock.now < 1_000_002  # returned right after the call, not at the deadline


def test_watch_diagnoses_http2_when_only_other_calls_arrive(tmp_path) -> None:
    clock = Clock()
    proxy = Activity(tmp_path, clock=clock, monotonic=clock, background=False)
    proxy.started(listen_port=1)  # what a running proxy writes at start

    def sleep(seconds: float) -> None:
        clock.now += seconds
        proxy.note("other")

    check = check_activity(tmp_path, watch=1, sleep=sleep, clock=clock)
    assert check.status == "fail" and "bypass the proxy" in check.fix
    assert "other Cursor calls arrived" in check.detail


def test_watch_without_a_proxy_says_to_start_one(tmp_path) -> None:
    check = check_activity(tmp_path / "none", watch=0.3)  # real clock and sleep: a short deadline
    assert check.status == "fail" and "start the proxy" in check.fix


def test_watch_reads_a_real_writer_in_another_thread(tmp_path) -> None:
    """Real clock, real file, another thread: the record a proxy writes is seen at once."""
    proxy = Activity(tmp_path)
    proxy.started(listen_port=1)  # what a running proxy writes at start
    proxy.flush(5)
    started = threading.Event()

    def doctor_sleep(seconds: float) -> None:
        started.set()
        threading.Event().wait(seconds)

    def call() -> None:
        started.wait(10)
        proxy.note("agent", "RunSSE", "regular proxy")

    thread = threading.Thread(target=call)
    thread.start()
    check = check_activity(tmp_path, watch=20, sleep=doctor_sleep)
    thread.join()
    assert check.status == "ok", check


def test_legacy_records_without_times_still_count_when_new(tmp_path) -> None:
    (tmp_path / ACTIVITY_FILE).write_text(json.dumps({"agent_calls": 1}))

    def sleep(seconds: float) -> None:
        (tmp_path / ACTIVITY_FILE).write_text(json.dumps({"agent_calls": 2}))

    assert check_activity(tmp_path, watch=5, sleep=sleep).status == "ok"


def test_route_label() -> None:
    from cursor_byok.store.activity import route_label

    assert route_label(["regular"], "HTTP/1.1") == "regular proxy, HTTP/1.1"
    assert route_label(["reverse:https://api2.cursor.sh@8443"]) == "reverse"
    assert route_label(["local:Cursor"], "HTTP/2.0") == "local, HTTP/2.0"
    assert route_label([]) == "regular proxy"


def test_the_writer_thread_writes_at_most_once_an_interval(tmp_path, monkeypatch) -> None:
    """A burst of Agent calls: the first is on disk at once, the rest in one later write."""
    from cursor_byok.store import activity as module

    monkeypatch.setattr(module, "WRITE_INTERVAL", 0.3)
    writes: list[tuple[float, int]] = []  # (when, agent calls in the record written)
    written = threading.Condition()
    proxy = Activity(tmp_path)
    real_write = proxy._write

    def counting_write(data: bytes) -> None:
        real_write(data)
        with written:
            writes.append((time.monotonic(), json.loads(data)["agent_calls"]))
            written.notify_all()

    monkeypatch.setattr(proxy, "_write", counting_write)
    proxy.note("agent", "Run (HTTP/2 stream)", "regular proxy")
    with written:  # the first call: written without waiting
        assert written.wait_for(lambda: writes, timeout=30)
    with proxy._changed:  # the burst, all at once for the writer (however slow this machine)
        for _ in range(20):
            proxy.note("agent", "BidiAppend", "regular proxy")
    with written:
        assert written.wait_for(lambda: len(writes) >= 2, timeout=30)
    assert proxy.flush(30)  # a write too many would be pending: flush would make it now
    assert [count for _, count in writes] == [1, 21]  # the burst: one write, the latest record
    assert writes[1][0] - writes[0][0] >= 0.29  # not before the interval had passed
    assert read_activity(tmp_path)[0]["last_transport"] == "BidiAppend"


def test_flush_writes_at_once_whatever_the_interval(tmp_path, monkeypatch) -> None:
    from cursor_byok.store import activity as module

    monkeypatch.setattr(module, "WRITE_INTERVAL", 60.0)
    proxy = Activity(tmp_path)
    proxy.note("agent", "RunSSE", "regular proxy")
    assert proxy.flush(10)
    proxy.note("agent", "BidiAppend", "regular proxy")  # within the minute: held...
    started = time.monotonic()
    assert proxy.flush(10)  # ...until a flush (the proxy's shutdown) asks for it
    assert time.monotonic() - started < 5
    assert read_activity(tmp_path)[0]["agent_calls"] == 2
