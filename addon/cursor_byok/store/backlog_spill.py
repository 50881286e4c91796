"""The older frames of a run's backlog, on disk while the run lives (issue 38 item 2).

A run keeps every frame of its turn for reconnects and retries (protocol.md §7): a long answer
would keep its whole text in memory as frames, beside the turn's own copies. Past a bound
(`RunConfig.backlog_memory`) the edge appends the oldest final frames to one file of the run
and the backlog keeps, per frame, where its bytes are (`SpilledFrame`); a replay reads them
back, byte for byte, with one `pread`.

One file per run that spills (most never do), `<data dir>/runs/<hash of the run id>-<random>
.backlog` beside the run journals, 0600 in the 0700 folder; made by the first batch, deleted
when the run is dropped. The descriptor stays open while anything may read the file, so a
stream still reading a dropped run reads on, and the path may go first. Files a killed proxy
left are deleted at start (`prune`): they are only ever read by the process that wrote them,
and one proxy uses a data dir at a time (`store.files.lock_data_dir`).

A write that fails (a full disk, a read-only data dir) keeps the frames in memory: the run
spills no more, the turn goes on, one warning says so. Reading back happens on the event loop
(a replay is rare, and it reads what it sends).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
from pathlib import Path

from cursor_byok.store.files import private_dir
from cursor_byok.store.run_journal import DIRNAME
from cursor_byok.store.run_journal import run_file_stem

log = logging.getLogger(__name__)

SUFFIX = ".backlog"
_FLAGS = (
    os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)


def spill_folder(data_dir: Path) -> Path:
    """Where the spill files live: the run journals' folder."""
    return Path(data_dir) / DIRNAME


class BacklogSpill:
    """The spill file of one run: frames appended in batches (`write`), read back by offset."""

    __slots__ = ("_fd", "failed", "folder", "path", "run_id", "size")

    def __init__(self, folder: Path, run_id: str) -> None:
        self.folder = Path(folder)
        self.run_id = run_id
        self.path: Path | None = None  # made by the first `write`
        self._fd = -1
        self.size = 0  # bytes written
        self.failed = False  # a write failed: this run spills no more

    def write(self, frames: list[bytes]) -> list[SpilledFrame] | None:
        """Append `frames` in one write; where each is now, or None when they could not be
        written (then they must stay in memory, and this spill takes no more)."""
        if self.failed:
            return None
        data = b"".join(frames)
        try:
            if self._fd < 0:
                self._open()
            _write_all(self._fd, data, self.size)
        except OSError as exc:
            self.failed = True
            log.warning(
                "run %s: its backlog stays in memory (could not write %s: %s)",
                self.run_id,
                self.path or self.folder,
                exc.strerror or exc,
            )
            return None
        del data
        out: list[SpilledFrame] = []
        offset = self.size
        for frame in frames:
            out.append(SpilledFrame(self, offset, len(frame)))
            offset += len(frame)
        self.size = offset
        return out

    def _open(self) -> None:
        name = run_file_stem(self.run_id)
        private_dir(self.folder)
        path = self.folder / f"{name}-{secrets.token_hex(4)}{SUFFIX}"
        self._fd = os.open(path, _FLAGS, 0o600)
        self.path = path

    def read(self, offset: int, length: int) -> bytes | None:
        """`length` bytes at `offset`, as written; None when they cannot be read any more."""
        if self._fd < 0:
            return None
        parts: list[bytes] = []
        left = length
        try:
            while left:
                part = _pread(self._fd, left, offset + length - left)
                if not part:
                    return None  # shorter than written: not these bytes any more
                parts.append(part)
                left -= len(part)
        except OSError as exc:
            log.warning("run %s: its backlog file cannot be read (%s)", self.run_id, exc)
            return None
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def discard(self) -> None:
        """The run was dropped: its file goes (a stream still reading it reads on, from the
        open descriptor, until `close`)."""
        path = self.path
        if path is None:
            return
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError:  # (Windows) still open: `close` tries again, else the next start prunes it
            return
        self.path = None

    def close(self) -> None:
        """Nothing reads the file any more: the descriptor goes, and the file if still there."""
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)
        self.discard()

    def __del__(self) -> None:
        """The last frame that could read the file went (a run forgotten without `close`)."""
        with contextlib.suppress(Exception):  # (at exit the modules may be gone already)
            self.close()


class SpilledFrame:
    """One frame in a run's spill file (`core.outbox.StoredFrame`)."""

    __slots__ = ("length", "offset", "spill")

    def __init__(self, spill: BacklogSpill, offset: int, length: int) -> None:
        self.spill = spill
        self.offset = offset
        self.length = length

    def load(self) -> bytes | None:
        """The frame's bytes, read on the event loop (a replay is rare, and a `pread` of what
        it is about to send costs less than a thread hop); None once the file is closed."""
        return self.spill.read(self.offset, self.length)


def _write_all(fd: int, data: bytes, offset: int) -> None:
    """All of `data` at `offset` (one `pwrite` but for a short one; OSError when it cannot)."""
    view = memoryview(data)
    while view:
        written = _pwrite(fd, view, offset)
        if written <= 0:
            raise OSError("short write")
        view = view[written:]
        offset += written


def _pwrite(fd: int, data: memoryview, offset: int) -> int:
    if hasattr(os, "pwrite"):
        return os.pwrite(fd, data, offset)
    os.lseek(fd, offset, os.SEEK_SET)  # Windows: one thread writes, the event loop's
    return os.write(fd, data)


def _pread(fd: int, length: int, offset: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, length, offset)
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, length)


def prune(data_dir: Path) -> int:
    """Delete the spill files a proxy that was killed left (none is ever read by another
    process); how many went. Run at start, before any run spills."""
    pruned = 0
    try:
        entries = list(os.scandir(spill_folder(data_dir)))
    except OSError:
        return 0
    for entry in entries:
        if entry.name.endswith(SUFFIX):
            try:
                os.unlink(entry.path)
                pruned += 1
            except OSError:
                continue
    return pruned
