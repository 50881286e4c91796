"""The start-up heap is frozen once per proxy process, whatever addon instances come later."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_the_heap_is_frozen_once_when_running() -> None:
    code = textwrap.dedent(
        """
        import gc
        from cursor_byok.proxy import script  # the addons mitmdump loads
        from cursor_byok.proxy.memory import MemoryGuards

        [freezer] = [a for a in script.addons if isinstance(a, MemoryGuards)]
        before = gc.get_freeze_count()
        freezer.running()
        frozen = gc.get_freeze_count()
        assert frozen > before + 1000, (before, frozen)  # the modules, classes, options...
        later = [[n] for n in range(5000)]  # made while serving: stays collectable
        MemoryGuards().running()  # e.g. a reloaded script's new instance
        assert gc.get_freeze_count() == frozen
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_a_large_runs_drop_collects_its_cycles() -> None:
    """Issue 33 item 10: what a finished large turn left in reference cycles goes when its run
    is dropped, not at the next full collection CPython happens to make."""
    import gc
    import weakref

    from cursor_byok.proxy import memory

    class Held:
        pass

    def cycle() -> weakref.ref:
        held = Held()
        held.me = held  # a cycle: only a full collection frees it
        return weakref.ref(held)

    gc.disable()
    try:
        small, large = cycle(), cycle()
        assert not memory.run_dropped(memory.LARGE_RUN - 1)
        assert small() is not None
        assert memory.run_dropped(memory.LARGE_RUN)
        assert small() is None and large() is None
    finally:
        gc.enable()
