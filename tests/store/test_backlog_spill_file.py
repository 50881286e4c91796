"""A run's spill file (store/backlog_spill.py): frames appended in one write, read back
byte-identical by offset, private, deleted with the run, stale ones pruned at start, and a write
that fails keeps the frames in memory (one warning, no more attempts)."""

from __future__ import annotations

import logging
import stat
import sys

from cursor_byok.store import backlog_spill
from cursor_byok.store.backlog_spill import BacklogSpill


def frames() -> list[bytes]:
    return [bytes([n]) * (1000 + n) for n in range(5)]


def test_frames_read_back_byte_identical(tmp_path) -> None:
    folder = backlog_spill.spill_folder(tmp_path)
    spill = BacklogSpill(folder, "run-1")
    assert spill.path is None and not folder.exists()  # nothing until the first batch
    first, second = frames()[:3], frames()[3:]
    stored = spill.write(first)
    assert stored is not None and spill.path is not None
    stored += spill.write(second) or []
    assert [s.load() for s in stored] == first + second
    assert spill.path.read_bytes() == b"".join(first + second)
    assert spill.size == sum(map(len, first + second))
    assert spill.path.name.endswith(".backlog") and "run-1" not in spill.path.name
    if sys.platform != "win32":
        assert stat.S_IMODE(spill.path.stat().st_mode) == 0o600
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    spill.close()


def test_discard_deletes_the_file_and_a_reader_reads_on_until_close(tmp_path) -> None:
    spill = BacklogSpill(backlog_spill.spill_folder(tmp_path), "run-2")
    stored = spill.write(frames())
    assert stored is not None and spill.path is not None
    path = spill.path
    spill.discard()
    assert not path.exists()
    if sys.platform != "win32":  # the open descriptor still reads it
        assert stored[2].load() == frames()[2]
    spill.close()
    assert stored[2].load() is None  # nothing reads it any more: the stream ends (LOST)


def test_two_runs_of_one_id_get_files_of_their_own(tmp_path) -> None:
    folder = backlog_spill.spill_folder(tmp_path)
    a, b = BacklogSpill(folder, "same"), BacklogSpill(folder, "same")
    a.write([b"a" * 10])
    b.write([b"b" * 10])
    assert a.path != b.path
    a.close()
    assert b.path is not None and b.path.read_bytes() == b"b" * 10
    b.close()
    assert list(folder.iterdir()) == []


def test_a_spill_forgotten_without_close_removes_its_file(tmp_path) -> None:
    spill = BacklogSpill(backlog_spill.spill_folder(tmp_path), "run-3")
    spill.write(frames())
    path = spill.path
    assert path is not None and path.exists()
    del spill
    assert not path.exists()


def test_prune_deletes_stale_spill_files_only(tmp_path) -> None:
    folder = backlog_spill.spill_folder(tmp_path)
    folder.mkdir()
    (folder / "abc-1234.backlog").write_bytes(b"old")
    (folder / "abc.journal").write_bytes(b"kept")
    assert backlog_spill.prune(tmp_path) == 1
    assert sorted(p.name for p in folder.iterdir()) == ["abc.journal"]
    assert backlog_spill.prune(tmp_path / "nowhere") == 0


def test_a_folder_that_cannot_be_made_keeps_the_frames(tmp_path, caplog) -> None:
    (tmp_path / "data").write_bytes(b"a file where the data dir should be")
    spill = BacklogSpill(backlog_spill.spill_folder(tmp_path / "data"), "run-4")
    with caplog.at_level(logging.WARNING):
        assert spill.write(frames()) is None
        assert spill.write(frames()) is None  # no second try, no second warning
    assert spill.failed and spill.size == 0 and spill.path is None
    assert len(caplog.records) == 1 and "run-4" in caplog.text
    spill.close()


def test_a_failed_write_keeps_the_frames_and_says_so_once(tmp_path, caplog, monkeypatch) -> None:
    spill = BacklogSpill(backlog_spill.spill_folder(tmp_path), "run-5")
    stored = spill.write(frames()[:1])
    assert stored is not None

    def full(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(backlog_spill, "_pwrite", full)
    with caplog.at_level(logging.WARNING):
        assert spill.write(frames()) is None
        assert spill.write(frames()) is None
    assert len(caplog.records) == 1 and "No space left" in caplog.text
    assert stored[0].load() == frames()[0]  # what went before still reads back
    spill.close()


def test_a_short_write_is_finished(tmp_path, monkeypatch) -> None:
    real = backlog_spill._pwrite
    monkeypatch.setattr(backlog_spill, "_pwrite", lambda fd, data, at: real(fd, data[:7], at))
    spill = BacklogSpill(backlog_spill.spill_folder(tmp_path), "run-6")
    stored = spill.write(frames())
    assert stored is not None and [s.load() for s in stored] == frames()
    spill.close()
