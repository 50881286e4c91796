"""A mitmproxy script for bench/profile_addon.py: SIGUSR1 starts cProfile in mitmdump's main
thread (where the event loop runs), SIGUSR2 stops it and writes $BENCH_PROFILE_OUT. So the
profile covers the streaming only, not start-up (imports, certificates) or shutdown.

$BENCH_PROFILE_TIMER=cpu times functions by the process's CPU time (time.process_time_ns), not
the wall clock: on a machine shared with other work, time the process spends preempted is then
not charged to whatever function it was in, so two runs compare even under load. (Not the
thread's CPU time: Python 3.12's cProfile sees every thread, so per-thread clocks mix.)"""

import cProfile
import os
import signal
import time

_timer = time.process_time_ns if os.environ.get("BENCH_PROFILE_TIMER") == "cpu" else None
_profile = cProfile.Profile(_timer, 1e-9) if _timer else cProfile.Profile()


def _start(*_) -> None:
    _profile.enable()


def _stop(*_) -> None:
    _profile.disable()
    _profile.dump_stats(os.environ["BENCH_PROFILE_OUT"])


signal.signal(signal.SIGUSR1, _start)
signal.signal(signal.SIGUSR2, _stop)
