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
the headers are the JSON records.

A checkpoint sent empties the journal (the retry starts from that checkpoint): it appends a new
header, and `read` takes what follows the last one. The file is cut back to one header only
once it has grown past `COMPACT_BYTES`: on ext4 a file truncated and written again is flushed
when it is closed (`auto_da_alloc`), which made closing and removing a turn's journal 5 to 7
times dearer (bench/README.md, round 14). The run's end, any normal one, deletes it. Past
`MAX_BYTES` a run stops being journaled (its file goes: a retry then starts again, as it did
before the journal). Files older than `MAX_AGE` are pruned at start (a proxy killed and never
restarted for that run).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import struct
import time
from dataclasses import dataclass
from pathlib import Path

from cursor_byok.store.files import MiB
from cursor_byok.store.files import private_dir

log = logging.getLogger(__name__)

MAX_BYTES = 8 * MiB  # one run's journal; past it the run is not journaled any more
COMPACT_BYTES = 256 * 1024  # a checkpoint past this cuts the file back to its header
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

    def encode(self, nonce: str = "") -> bytes:
        """The header's JSON; `nonce` tells this journal's file from a newer one of the same
        key (`decode` ignores it)."""
        fields: dict[str, object] = {
            "run_id": self.run_id,
            "conversation_id": self.conversation_id,
            "action": self.action,
            "after_checkpoint": self.after_checkpoint,
        }
        if nonce:
            fields["nonce"] = nonce
        return json.dumps(fields, separators=(",", ":")).encode()

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


def run_file_stem(run_id: str) -> str:
    """A run's files in the runs folder are named by this (the run id itself may be anything)."""
    return hashlib.sha256(run_id.encode()).hexdigest()[:32]


def journal_path(data_dir: Path, run_id: str) -> Path:
    return Path(data_dir) / DIRNAME / f"{run_file_stem(run_id)}{SUFFIX}"


def _record(kind: bytes, data: bytes) -> bytes:
    return _RECORD.pack(kind, len(data)) + data


class RunJournal:
    """The open journal of one running run (`open`); every method is a no-op once it was
    dropped (past the bound, or a write failed).

    Its descriptor is held only while the turn streams: `pause` lets go of it while the turn
    waits on the client (a tool, a question), and the next record opens the file again, so
    runs waiting on a client that went away (a reset storm, a closed laptop) hold no file."""

    __slots__ = ("_checkpointed", "_dropped", "_fd", "_first", "_nonce", "path", "size", "start")

    def __init__(self, path: Path, fd: int, start: RunStart) -> None:
        self.path = path
        self._fd = fd
        self._nonce = secrets.token_hex(8)  # which file is ours, across pauses (`_mine`)
        self._dropped = False
        self.start = start
        self.size = 0
        self._first = self._header()  # the file's first record: whose file it is (`_mine`)
        self._checkpointed = 0  # the file's size after its last header

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
        journal._write(journal._first)
        journal._checkpointed = journal.size
        return journal

    @property
    def active(self) -> bool:
        return not self._dropped

    @property
    def holds_file(self) -> bool:
        """Whether a descriptor is open now (between a record and the next `pause`)."""
        return self._fd >= 0

    def text(self, text: str) -> None:
        """Assistant text as it was streamed."""
        if self._fd >= 0 or self._reopen():
            data = text.encode()
            self._write(_RECORD.pack(TEXT, len(data)) + data)

    def thinking(self, text: str) -> None:
        """Thinking as it was streamed."""
        if self._fd >= 0 or self._reopen():
            data = text.encode()
            self._write(_RECORD.pack(THINKING, len(data)) + data)

    def pause(self) -> None:
        """The turn waits on the client: close the descriptor, keep the file."""
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)

    def _reopen(self) -> bool:
        """The paused file again, if it is still ours (a newer run of the same key makes a file
        of its own: then this one is dropped and writes nothing)."""
        if self._dropped:
            return False
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
        except OSError as exc:
            self._drop(f"reopen: {exc.strerror or exc}")
            return False
        if not self._mine(fd):
            os.close(fd)
            self._drop("replaced by a newer run's journal")
            return False
        self._fd = fd
        return True

    def checkpoint(self) -> None:
        """A checkpoint went out: what was streamed before it is in it, and a retry resumes
        from it (`after_checkpoint`). A header appended says so; past `COMPACT_BYTES` the file
        is cut back to that header instead (see the module's doc)."""
        if self._fd < 0 and not self._reopen():
            return
        if not self.start.after_checkpoint:
            self.start = RunStart(
                self.start.run_id, self.start.conversation_id, self.start.action, True
            )
        elif self.size == self._checkpointed:
            return  # nothing since the last checkpoint
        header = self._header()
        if self.size + len(header) > COMPACT_BYTES:
            try:
                os.ftruncate(self._fd, 0)
            except OSError as exc:
                self._drop(str(exc))
                return
            self.size = 0
            self._first = header
        self._write(header)
        self._checkpointed = self.size

    def close(self, *, keep: bool = False) -> None:
        """The run ended: the journal goes (`keep`: it stays for a retry to continue from)."""
        if self._dropped:
            return
        self._dropped = True
        if keep:
            self.pause()
            return
        try:
            if self._fd >= 0:  # held open, its inode cannot have gone to another file
                mine = _same_inode(os.fstat(self._fd), os.stat(self.path))
            else:
                fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
                try:
                    mine = self._mine(fd)
                finally:
                    os.close(fd)
            if mine:
                self.path.unlink()  # not a newer journal of the same key
        except OSError:
            pass  # gone already
        finally:
            self.pause()

    def _header(self) -> bytes:
        return _record(HEADER, self.start.encode(self._nonce))

    def _mine(self, fd: int) -> bool:
        """Whether the file just opened at `fd` is this journal's (its first header, nonce
        included; once our descriptor was closed, an inode number is no proof: a newer file may
        get it)."""
        header = self._first
        try:
            return os.pread(fd, len(header), 0) == header
        except OSError:
            return False

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


_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC
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


def read(data_dir: Path, run_id: str) -> Leftover | None:
    """The journal a dead process left for `run_id`, if any: its last header and the text and
    thinking after it (a torn last record is ignored)."""
    path = journal_path(data_dir, run_id)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    records = list(_records(data))
    if not records or records[0][0] != HEADER:
        return None
    last = max(i for i, (kind, _) in enumerate(records) if kind == HEADER)
    start = RunStart.decode(records[last][1])
    if start is None or start.run_id != run_id:
        return None
    after = records[last + 1 :]
    text = b"".join(body for kind, body in after if kind == TEXT)
    thinking = b"".join(body for kind, body in after if kind == THINKING)
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


def _same_inode(mine: os.stat_result, there: os.stat_result) -> bool:
    return (mine.st_dev, mine.st_ino) == (there.st_dev, there.st_ino)
