"""The pure catalog and the agent stay free of mitmproxy (they run outside the proxy too)."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("module", ["cursor_byok.agent.loop", "cursor_byok.config.catalog"])
def test_module_does_not_import_mitmproxy(module: str) -> None:
    code = f"import sys, {module}; print('mitmproxy' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "False", out.stderr
