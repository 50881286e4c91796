"""An addon that keeps the proxy's memory to what it holds (mitmproxy_compat.py says why).

The start-up heap is frozen once the proxy runs, so full collections skip ~100,000 objects that
live for the whole run (GC CPU per turn: Run 1.2 -> 0.6 ms, RunSSE + BidiAppend 2.1 -> 1.1 ms);
and a full collection runs once per 16 MiB of large request bodies, which mitmproxy's message
constructors otherwise keep alive in reference cycles until CPython gets round to it. A large
run (its frames past `LARGE_RUN`) gets a full collection when it is dropped, for the same
reason: three finished 128 MiB turns held 1.3 GB until a full collection came by chance; then
glibc is asked to give the freed heap back (`give_back`), once the run is not held any more.
"""

from __future__ import annotations

import ctypes
import gc
import sys

from mitmproxy import http

from cursor_byok.proxy.mitmproxy_compat import LargeBodies
from cursor_byok.proxy.mitmproxy_compat import freeze_startup_heap

LARGE_RUN = 16 * 1024 * 1024  # bytes of a run's frames: its drop is worth a full collection
M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
# 1 MiB, not glibc's initial 128 KiB: every socket read in asyncio asks for a 256 KiB buffer
# (then shrunk to what came), so at 128 KiB each read was an mmap, a page fault and an munmap,
# ~10 µs of proxy CPU per streamed delta on RunSSE + BidiAppend (issue 38: 205-209 against
# 196 µs, system time 12-19 against 7.5 µs, 20 streams, /proc per-thread CPU). The blocks that
# matter for memory (a long answer's checkpoint and blob frames) are megabytes.
_MMAP_THRESHOLD = 1024 * 1024


def return_large_blocks() -> bool:
    """glibc only: every allocation of 1 MiB or more gets pages of its own, given back when
    it is freed. glibc's default raises that threshold to the largest block freed so far, so
    after a long answer (its checkpoint and blob frames are megabytes each) later large blocks
    come from the heap, whose top a small live block pins: a turn of 8 MiB of text left the
    proxy 40 MiB larger than what it held. Returns whether the setting took."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        return bool(libc.mallopt(M_MMAP_THRESHOLD, _MMAP_THRESHOLD))
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False


class MemoryGuards:
    def __init__(self) -> None:
        self.large_bodies = LargeBodies()

    def running(self) -> None:
        freeze_startup_heap()
        return_large_blocks()

    def request(self, flow: http.HTTPFlow) -> None:
        if self.large_bodies.seen(len(flow.request.raw_content or b"")):
            gc.collect()


def run_dropped(size: int) -> bool:
    """A run with `size` bytes of frames was dropped: a full collection now when it was large
    (its turn, transcript and frames may sit in reference cycles), then the freed heap goes
    back to the system (`give_back`). Whether one ran."""
    if size < LARGE_RUN:
        return False
    gc.collect()
    give_back()
    return True


def give_back() -> bool:
    """glibc only: `malloc_trim(0)`, the free pages of every malloc arena back to the system.

    A long turn's frames are blocks under the 1 MiB mmap threshold, so they come from the heap;
    once freed glibc keeps them for later, and RSS never comes down after a large run is
    dropped (three turns of 24 MiB: 444 MiB held). Costs a walk of the free lists (a few ms
    after a large run), so it runs only when one is dropped. Whether the call took."""
    trim = _malloc_trim()
    return trim is not None and bool(trim(0))


def _malloc_trim():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
