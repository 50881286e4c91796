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
