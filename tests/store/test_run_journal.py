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
    monkeypatch.setattr(run_journal, "MAX_BYTES", 200)
    journal = RunJournal.open(tmp_path, START)
    assert journal is not None
    journal.text("a" * 100)
    assert journal.active
    journal.text("b" * 100)
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
