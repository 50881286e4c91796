"""The run journal (store/run_journal.py): what a run streamed since its last checkpoint, left
on disk for a retry after the proxy died."""

from __future__ import annotations

import os
from pathlib import Path

from cursor_byok.store import run_journal
from cursor_byok.store.run_journal import RunJournal
from cursor_byok.store.run_journal import RunStart

START = RunStart("run-1", "conv-1", "abc")


def test_records_read_back_in_order(tmp_path: Path) -> None:
    journal = RunJournal.open(tmp_path, START)
    assert journal is not None
    for piece in ("Hel", "lo, ", "wörld"):
        journal.text(piece)
    journal.thinking("hmm ")
    journal.thinking("ok")
    left = run_journal.read(tmp_path, "run-1")
    assert left is not None
    assert left.start == START
    assert left.text == "Hello, wörld"
    assert left.thinking == "hmm ok"
    # the file is named by a hash of the run id, private to the user
    assert journal.path.parent == tmp_path / "runs"
    assert "run-1" not in journal.path.name
    assert journal.path.stat().st_mode & 0o777 == 0o600


def test_a_checkpoint_empties_it_and_marks_the_resume(tmp_path: Path) -> None:
    journal = RunJournal.open(tmp_path, START)
    assert journal is not None
    journal.text("before the checkpoint")
    journal.checkpoint()
    left = run_journal.read(tmp_path, "run-1")
    assert left is not None and left.text == "" and left.start.after_checkpoint
    journal.text("after")
    left = run_journal.read(tmp_path, "run-1")
    assert left is not None and left.text == "after"
    assert left.start.action == "abc"


def test_the_end_deletes_it_unless_kept(tmp_path: Path) -> None:
    journal = RunJournal.open(tmp_path, START)
    assert journal is not None
    journal.text("x")
    journal.close()
    assert not journal.path.exists()
    assert run_journal.read(tmp_path, "run-1") is None
    kept = RunJournal.open(tmp_path, START)
    assert kept is not None
    kept.text("y")
    kept.close(keep=True)
    left = run_journal.read(tmp_path, "run-1")
    assert left is not None and left.text == "y"


def test_a_torn_last_record_is_ignored(tmp_path: Path) -> None:
    journal = RunJournal.open(tmp_path, START)
    assert journal is not None
    journal.text("whole ")
    journal.text("torn")
    journal.close(keep=True)
    data = journal.path.read_bytes()
    journal.path.write_bytes(data[:-2])  # the process died inside the last write
    left = run_journal.read(tmp_path, "run-1")
    assert left is not None and left.text == "whole "
    journal.path.write_bytes(data[:3])  # even the header torn: no journal
    assert run_journal.read(tmp_path, "run-1") is None


def test_another_run_id_or_garbage_is_no_journal(tmp_path: Path) -> None:
    journal = RunJournal.open(tmp_path, START)
    assert journal is not None
    journal.close(keep=True)
    assert run_journal.read(tmp_path, "run-2") is None
    journal.path.write_bytes(b"not a journal at all")
    assert run_journal.read(tmp_path, "run-1") is None


def test_past_the_bound_the_run_is_not_journaled(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(run_journal, "MAX_BYTES", 300)
    journal = RunJournal.open(tmp_path, START)
    assert journal is not None
    journal.text("a" * 100)
    assert journal.active
    journal.text("b" * 200)
    assert not journal.active
    assert not journal.path.exists()  # a retry starts again rather than trust a cut journal
    journal.text("more")  # no-ops from here
    journal.checkpoint()
    journal.close()


def test_prune_removes_old_journals_only(tmp_path: Path) -> None:
    old = RunJournal.open(tmp_path, START)
    new = RunJournal.open(tmp_path, RunStart("run-2", "conv-1", "abc"))
    assert old is not None and new is not None
    old.close(keep=True)
    new.close(keep=True)
    day_ago = old.path.stat().st_mtime - 2 * run_journal.MAX_AGE
    os.utime(old.path, (day_ago, day_ago))
    assert run_journal.prune(tmp_path) == 1
    assert not old.path.exists() and new.path.exists()
    assert run_journal.prune(tmp_path / "nowhere") == 0


def test_a_newer_journal_of_the_same_run_is_its_own_file(tmp_path: Path) -> None:
    """Two turns of one key (a forced follow-up in a conversation keyed by its id): the newer
    journal is a file of its own; the older turn's writes and its end do not touch it."""
    older = RunJournal.open(tmp_path, START)
    assert older is not None
    older.text("old ")
    newer = RunJournal.open(tmp_path, START)
    assert newer is not None
    older.text("still old")
    newer.text("new")
    older.close()
    left = run_journal.read(tmp_path, "run-1")
    assert left is not None and left.text == "new"
    newer.close()
    assert run_journal.read(tmp_path, "run-1") is None


def test_the_folder_is_made_again_when_it_was_removed(tmp_path: Path) -> None:
    """The folder is made once per process (not once per turn); removed by hand since, the next
    journal makes it again, private, instead of leaving its run unjournaled."""
    first = RunJournal.open(tmp_path, START)
    assert first is not None
    first.close()
    folder = first.path.parent
    folder.rmdir()
    again = RunJournal.open(tmp_path, RunStart("run-2", "conv-1", "abc"))
    assert again is not None and again.path.parent == folder
    assert folder.stat().st_mode & 0o777 == 0o700
    again.text("x")
    left = run_journal.read(tmp_path, "run-2")
    assert left is not None and left.text == "x"
    again.close()


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else set()


def test_a_paused_journal_holds_no_descriptor_and_goes_on_after(tmp_path: Path) -> None:
    """A turn waiting on the client lets go of the file (a reset storm's runs held one each);
    the next record opens it again and appends, a checkpoint and the end work as before."""
    before = _open_fds()
    journal = RunJournal.open(tmp_path, START)
    assert journal is not None and journal.holds_file
    journal.text("before the tool, ")
    journal.pause()
    assert not journal.holds_file and journal.active
    if before:
        assert _open_fds() == before
    journal.text("after it")
    assert journal.holds_file
    left = run_journal.read(tmp_path, "run-1")
    assert left is not None and left.text == "before the tool, after it"
    journal.pause()
    journal.checkpoint()  # opens it again to empty it
    left = run_journal.read(tmp_path, "run-1")
    assert left is not None and left.text == "" and left.start.after_checkpoint
    journal.pause()
    journal.close()
    assert not journal.path.exists()
    if before:
        assert _open_fds() == before


def test_a_paused_journal_replaced_by_a_newer_one_writes_nothing_into_it(tmp_path: Path) -> None:
    old = RunJournal.open(tmp_path, START)
    assert old is not None
    old.text("old ")
    old.pause()
    new = RunJournal.open(tmp_path, RunStart("run-1", "conv-1", "def"))
    assert new is not None
    new.text("new")
    old.text("late")  # the superseded run goes on streaming a little
    assert not old.active
    old.close()  # and ends: the newer run's file stays
    left = run_journal.read(tmp_path, "run-1")
    assert left is not None and left.start.action == "def" and left.text == "new"


def test_a_checkpoint_appends_a_header_and_cuts_the_file_only_once_it_is_long(
    tmp_path: Path, monkeypatch
) -> None:
    """A file truncated and written again is flushed by ext4 when it is closed, which made a
    turn's journal 5-7 times dearer to close and remove (bench/README.md, round 14): a
    checkpoint appends a header while the file is short, and `read` takes what follows the last
    one. Past COMPACT_BYTES it is cut back, and stays the journal's own across a pause."""
    cuts: list[int] = []
    ftruncate = os.ftruncate

    def counting_ftruncate(fd: int, length: int) -> None:
        cuts.append(length)
        ftruncate(fd, length)

    monkeypatch.setattr(run_journal.os, "ftruncate", counting_ftruncate)
    journal = RunJournal.open(tmp_path, START)
    assert journal is not None
    for n in range(3):
        journal.text(f"part {n} ")
        journal.checkpoint()
        journal.checkpoint()  # nothing since: no second header
    journal.text("after the third")
    assert cuts == []
    size = journal.path.stat().st_size
    left = run_journal.read(tmp_path, "run-1")
    assert left is not None and left.text == "after the third" and left.start.after_checkpoint
    monkeypatch.setattr(run_journal, "COMPACT_BYTES", size)
    journal.checkpoint()  # past the bound now: cut back to one header
    assert cuts == [0] and journal.path.stat().st_size < size
    journal.text("after the cut")
    journal.pause()
    left = run_journal.read(tmp_path, "run-1")
    assert left is not None and left.text == "after the cut" and left.start.after_checkpoint
    journal.close()  # recognised as its own by its new first header: removed
    assert not journal.path.exists()
