"""Fixtures of the tool tests: a small workspace and FakeToolContext factories."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

# The e2e client's local executor (workspace_exec) runs our execs against a tmp workspace.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
# The shared fakes (tests/fakes: a JSON endpoint on 127.0.0.1 for web search and images).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fake_context import FakeToolContext


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "README.md").write_text("# Demo\nline two\nline three\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    return 1\n\n\nprint(main())\n")
    (root / "src" / "util.py").write_text("VALUE = 1\nOTHER = 2\nvalue = 3\n")
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("Guide\nTODO: write more\n")
    return root


@pytest.fixture
def make_ctx(workspace: Path) -> Callable[..., FakeToolContext]:
    def make(**kwargs: Any) -> FakeToolContext:
        return FakeToolContext(workspace, **kwargs)

    return make


@pytest.fixture
def ctx(make_ctx: Callable[..., FakeToolContext]) -> FakeToolContext:
    return make_ctx()
