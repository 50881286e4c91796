"""What a BYOK run has streamed since its last checkpoint, kept on disk while the run lives.

A proxy killed mid-turn (`kill -9`, a crash, the machine's OOM killer) loses the run; the client
then retries it under a new request id with the same run id (protocol.md §19.1), re-sending the
action it started from, or a `resume_action` if a checkpoint reached it. The client keeps every
delta it was shown and cannot be made to drop them, so the retried run must continue after
them, not start again: this journal is what says where "after them" is.

One file per run under `<data dir>/runs/`, named by a hash of the run id (an id never becomes a
path). Records are length-prefixed (`kind`, 4-byte big-endian length, UTF-8 bytes), each one
`os.write` on an O_APPEND descriptor: a process killed at any point leaves every record it wrote
with the kernel, and at worst a torn last record, which `read` ignores. No fsync: the journal
only has to outlive the process, not the machine. Per delta that is one small write (no JSON);
the header is the one JSON record.

A checkpoint sent empties the journal (the retry starts from that checkpoint); the run's end,
any normal one, deletes it. Past `MAX_BYTES` a run stops being journaled (its file goes: a
retry then starts again, as it did before the journal). Files older than `MAX_AGE` are pruned
at start (a proxy killed and never restarted for that run).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import struct
import time
from dataclasses import dataclass
from pathlib import Path

from cursor_byok.store.files import MiB
from cursor_byok.store.files import private_dir

log = logging.getLogger(__name__)

MAX_BYTES = 8 * MiB  # one run's journal; past it the run is not journaled any more
MAX_AGE = 24 * 3600.0  # seconds; older journals are pruned at start
DIRNAME = "runs"
SUFFIX = ".journal"

_RECORD = struct.Struct(">cI")  # kind, length of the UTF-8 bytes that follow
HEADER = b"H"
TEXT = b"T"
THINKING = b"K"


@dataclass(frozen=True, slots=True)
class RunStart:
    """What a retried run must match to continue: the run, its conversation, the action it
    started from (a fingerprint) and whether a checkpoint went out since (then the retry is a
    `resume_action` from it)."""

    run_id: str
    conversation_id: str
    action: str
    after_checkpoint: bool = False

    def encode(self) -> bytes:
        return json.dumps(
            {
                "run_id": self.run_id,
                "conversation_id": self.conversation_id,
                "action": self.action,
                "after_checkpoint": self.after_checkpoint,
            },
            separators=(",", ":"),
        ).encode()

    @classmethod
    def decode(cls, data: bytes) -> RunStart | None:
        try:
            fields = json.loads(data)
            return cls(
                str(fields["run_id"]),
                str(fields["conversation_id"]),
                str(fields["action"]),
                bool(fields["after_checkpoint"]),
            )
        except (ValueError, KeyError, TypeError):
            return None


@dataclass(frozen=True, slots=True)
class Leftover:
    """A journal a dead process left: how its run started and what it had streamed since."""

    start: RunStart
    text: str
    thinking: str


def journal_path(data_dir: Path, run_id: str) -> Path:
    name = hashlib.sha256(run_id.encode()).hexdigest()[:32]
    return Path(data_dir) / DIRNAME / f"{name}{SUFFIX}"


def _record(kind: bytes, data: bytes) -> bytes:
    return _RECORD.pack(kind, len(data)) + data


class RunJournal:
    """The open journal of one running run (`open`); every method is a no-op once it was
    dropped (past the bound, or a write failed)."""

    __slots__ = ("_fd", "path", "size", "start")

    def __init__(self, path: Path, fd: int, start: RunStart) -> None:
        self.path = path
        self._fd = fd
        self.start = start
        self.size = 0

    @classmethod
    def open(cls, data_dir: Path, start: RunStart) -> RunJournal | None:
        """A new journal for `start`'s run (a file of its own: one left for the same run is
        unlinked first, so a run still writing it writes to nothing anyone reads); None when it
        cannot be written (the run then goes on unjournaled)."""
        path = journal_path(data_dir, start.run_id)
        try:
            fd = _create(path)
        except OSError as exc:
            log.warning("run %s: no journal (%s)", start.run_id, exc)
            return None
        journal = cls(path, fd, start)
        journal._write(_record(HEADER, start.encode()))
        return journal

    @property
    def active(self) -> bool:
        return self._fd >= 0

    def text(self, text: str) -> None:
        """Assistant text as it was streamed."""
        if self._fd >= 0:
            data = text.encode()
            self._write(_RECORD.pack(TEXT, len(data)) + data)

    def thinking(self, text: str) -> None:
        """Thinking as it was streamed."""
        if self._fd >= 0:
            data = text.encode()
            self._write(_RECORD.pack(THINKING, len(data)) + data)

    def checkpoint(self) -> None:
        """A checkpoint went out: what was streamed before it is in it, and a retry resumes
        from it (`after_checkpoint`)."""
        if self._fd < 0:
            return
        if not self.start.after_checkpoint:
            self.start = RunStart(
                self.start.run_id, self.start.conversation_id, self.start.action, True
            )
        elif self.size == len(_record(HEADER, self.start.encode())):
            return  # nothing since the last checkpoint
        try:
            os.ftruncate(self._fd, 0)
        except OSError as exc:
            self._drop(str(exc))
            return
        self.size = 0
        self._write(_record(HEADER, self.start.encode()))

    def close(self, *, keep: bool = False) -> None:
        """The run ended: the journal goes (`keep`: it stays for a retry to continue from)."""
        if self._fd < 0:
            return
        fd, self._fd = self._fd, -1
        try:
            if not keep and _same_file(os.fstat(fd), self.path):
                self.path.unlink()  # not a newer journal of the same key
        except OSError:
            pass
        finally:
            os.close(fd)

    def _write(self, record: bytes) -> None:
        if self.size + len(record) > MAX_BYTES:
            self._drop(f"over {MAX_BYTES // MiB} MiB")
            return
        try:
            written = os.write(self._fd, record)
        except OSError as exc:
            self._drop(str(exc))
            return
        if written != len(record):
            self._drop("short write")
            return
        self.size += written

    def _drop(self, why: str) -> None:
        """Stop journaling: a retry of this run then starts again (no partial to trust)."""
        log.info("run %s: journal dropped (%s)", self.start.run_id, why)
        self.close()


_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC
_made: set[Path] = set()  # journal folders this process made (or found) already


def _create(path: Path) -> int:
    """A new file at `path` (one left there unlinked first). The common case, once per turn, is
    one `open`: the folder is made the first time only (again if it was removed since), and
    an old file is unlinked only when there is one."""
    folder = path.parent
    if folder not in _made:
        private_dir(folder)
        _made.add(folder)
    try:
        return os.open(path, _FLAGS, 0o600)
    except FileExistsError:
        path.unlink(missing_ok=True)
    except FileNotFoundError:  # the folder went (removed by hand)
        _made.discard(folder)
        private_dir(folder)
        _made.add(folder)
    return os.open(path, _FLAGS, 0o600)


def _same_file(mine: os.stat_result, path: Path) -> bool:
    there = os.stat(path)
    return (mine.st_dev, mine.st_ino) == (there.st_dev, there.st_ino)


def read(data_dir: Path, run_id: str) -> Leftover | None:
    """The journal a dead process left for `run_id`, if any: its header and the text and
    thinking after it (a torn last record is ignored)."""
    path = journal_path(data_dir, run_id)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    records = list(_records(data))
    if not records or records[0][0] != HEADER:
        return None
    start = RunStart.decode(records[0][1])
    if start is None or start.run_id != run_id:
        return None
    text = b"".join(body for kind, body in records if kind == TEXT)
    thinking = b"".join(body for kind, body in records if kind == THINKING)
    return Leftover(start, text.decode(errors="replace"), thinking.decode(errors="replace"))


def _records(data: bytes):
    """The whole records of `data`, in order; stops at a torn one."""
    at, size = 0, _RECORD.size
    while at + size <= len(data):
        kind, length = _RECORD.unpack_from(data, at)
        end = at + size + length
        if end > len(data):
            return
        yield kind, data[at + size : end]
        at = end


def discard(data_dir: Path, run_id: str) -> None:
    journal_path(data_dir, run_id).unlink(missing_ok=True)


def prune(data_dir: Path, *, now: float | None = None, max_age: float = MAX_AGE) -> int:
    """Delete journals older than `max_age` (their runs will not be retried any more); how
    many went."""
    folder = Path(data_dir) / DIRNAME
    now = time.time() if now is None else now
    pruned = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        if not entry.name.endswith(SUFFIX):
            continue
        try:
            if now - entry.stat().st_mtime > max_age:
                os.unlink(entry.path)
                pruned += 1
        except OSError:
            continue
    return pruned
