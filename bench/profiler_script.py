"""A mitmproxy script for bench/profile_addon.py: SIGUSR1 starts cProfile in mitmdump's main
thread (where the event loop runs), SIGUSR2 stops it and writes $BENCH_PROFILE_OUT. So the
profile covers the streaming only, not start-up (imports, certificates) or shutdown."""

import cProfile
import os
import signal

_profile = cProfile.Profile()


def _start(*_) -> None:
    _profile.enable()


def _stop(*_) -> None:
    _profile.disable()
    _profile.dump_stats(os.environ["BENCH_PROFILE_OUT"])


signal.signal(signal.SIGUSR1, _start)
signal.signal(signal.SIGUSR2, _stop)
