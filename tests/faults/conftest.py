"""The fault suite: what a hostile client, a broken provider or a tired machine does to a real
mitmdump running the addon. Small by default (CI); `FAULT_SCALE=large` (`just fuzz`) runs the
sizes the hardening issue measured."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from mitm import start_mitmdump  # noqa: E402


@pytest.fixture
def workspace(tmp_path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "README.md").write_text("# Demo project\nline two\nline three\n")
    (root / "notes.txt").write_text("alpha\nbeta\n")
    return root


@pytest.fixture
def mitm(tmp_path):
    proxy = start_mitmdump(tmp_path, "--set", "cursor_byok_heartbeat_ms=300")
    yield proxy
    proxy.stop()


@pytest.fixture(params=["bidi", "run"], ids=["runsse", "run"])
def transport(request) -> str:
    """Both of Cursor's Agent transports: RunSSE + BidiAppend, and the HTTP/2 `Run` stream."""
    return request.param
