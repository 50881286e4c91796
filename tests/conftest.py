"""Shared by every test: each test process (each xdist worker) gets a home of its own.

Code under test that is not given a path falls back to the user's: the data dir
(`~/.local/share/cursor-byok`: blobs, usage.sqlite3, activity.json), the config
(`~/.config/cursor-byok`), mitmproxy's CA (`~/.mitmproxy`). Two workers sharing those would see
each other's usage rows and race to create one CA, and the suite would write into the
developer's own files. So HOME points into a temp dir per process and the XDG variables are
unset (they follow HOME), while the tools the tests start keep finding what is installed: uv's
cache and Pythons, pyenv.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

_made: list[Path] = []


def _keep(name: str, path: Path) -> None:
    """Pin a tool's directory that is derived from HOME today, if it is not set already."""
    if name not in os.environ and path.exists():
        os.environ[name] = str(path)


def pytest_configure(config) -> None:
    real = Path.home()
    data = Path(os.environ.get("XDG_DATA_HOME") or real / ".local" / "share")
    cache = Path(os.environ.get("XDG_CACHE_HOME") or real / ".cache")
    _keep("UV_CACHE_DIR", cache / "uv")
    _keep("UV_PYTHON_INSTALL_DIR", data / "uv" / "python")
    _keep("PYENV_ROOT", real / ".pyenv")
    home = Path(tempfile.mkdtemp(prefix="cursor-byok-tests-home-"))
    _made.append(home)
    os.environ["HOME"] = str(home)
    # Unset, not pointed into the temp home: a test that gives a child process a HOME of its own
    # (the tmux status test) must not have the child find this worker's directories instead.
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        os.environ.pop(name, None)


def pytest_unconfigure(config) -> None:
    for home in _made:
        shutil.rmtree(home, ignore_errors=True)


def pytest_collection_modifyitems(config, items) -> None:
    """Under xdist (`--dist loadgroup`), the tests of a module that share a fixture wider than a
    test (a module's stack of servers, a tool install) run on one worker: it is built once."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None and _shares_a_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))


def _shares_a_fixture(item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(
        fixture.scope != "function" and fixture.baseid  # ours (a test file's or conftest's)
        for fixtures in info.name2fixturedefs.values()
        for fixture in fixtures
    )
