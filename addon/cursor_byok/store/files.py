"""Files private to the user: the data directory holds conversations, usage and keys' traces.

Everything cursor-byok writes under its data and config directories goes through here, so
the modes (0700 directories, 0600 files, atomic replace) are decided once.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

MiB = 1024 * 1024


def default_data_dir() -> Path:
    """Where cursor-byok keeps blobs, usage and its activity record (XDG_DATA_HOME honoured)."""
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "cursor-byok"


def private_dir(path: Path) -> Path:
    """Create `path` (and missing parents) readable by the user only: 0700.

    `mkdir(mode=...)` applies the mode to the last directory only (and through the umask), so
    each directory made here is chmodded; existing directories are left as the user set them."""
    path = Path(path)
    missing = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        probe = probe.parent
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    for made in missing:
        os.chmod(made, 0o700)
    return path


def write_private(path: Path, data: bytes) -> None:
    """Atomically replace `path` with `data`, readable and writable by the user only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file:  # mkstemp creates the file 0600
            file.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def short_of_space(directory: Path, minimum: float, adding: int = 0) -> int | None:
    """The bytes free in `directory` when writing `adding` more would leave less than `minimum`
    bytes free there, else None (the one free-space check: turns, uploads, attached media).
    Raises OSError when the free space cannot be read."""
    free = shutil.disk_usage(directory).free
    return free if free - adding < minimum else None


def low_space(directory: Path, minimum_mib: float, what: str = "a turn") -> str | None:
    """Why a turn should not start with `directory` this full (less than `minimum_mib` MiB
    free), or None. A directory whose free space cannot be read passes: its writes will say."""
    try:
        free = short_of_space(directory, minimum_mib * MiB)
    except OSError:
        return None
    if free is None:
        return None
    return (
        f"only {free / MiB:.1f} MiB free in cursor-byok's data directory {directory}; {what} "
        f"needs {minimum_mib:.0f} MiB there to keep the conversation. Free some space there, or "
        "lower cursor_byok_min_free_mb"
    )


LOCK_FILE = "proxy.lock"
_held: dict[Path, int] = {}  # data dir -> the descriptor holding its lock (for the process's life)


def lock_data_dir(directory: Path) -> str | None:
    """Take the data dir for this process (one proxy per data dir: two would share its blob
    store, usage database and activity record, and the doctor would read one as the other's).
    None when taken (or already ours), else who holds it. The lock (flock) goes with the
    process, however it ends."""
    import fcntl

    directory = Path(directory).expanduser().absolute()
    if directory in _held:
        return None
    private_dir(directory)
    path = directory / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        try:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip()
        finally:
            os.close(fd)
        return f"pid {holder}" if holder else "another process"
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    _held[directory] = fd
    return None
