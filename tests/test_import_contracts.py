"""The import contracts can fail (issue 32 item 4): one violation of each rule is planted in a copy
of the package and `lint-imports`, run on the copy with the project's own contracts, must report
that rule broken by that very import. (CI's `lint-imports` on the real package shows they hold.)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "addon" / "cursor_byok"

SANS_IO = "The protocol core is sans-IO"
AIOHTTP = "aiohttp only behind the two HTTP faces"
H2_H11 = "h2 and h11 only in the loopback and the mitmproxy compat and patch modules"
PROVIDERS_FACE = "providers.base only through the providers package's face"
CURSOR_SIDE = "Providers and outbound HTTP import nothing of Cursor's side"
LAYERS = "Layers: each room imports only the rooms below it"

# (contract, package whose __init__ gets the import, the planted line, the import lint-imports
# names). Package faces, not modules: they outlive renames inside a room.
PLANTS = [
    *(
        (SANS_IO, package, f"import {name}", f"cursor_byok.{package} -> {name}")
        for package, name in (
            ("core", "time"),
            ("core", "datetime"),
            ("cursor", "random"),
            ("wire", "uuid"),
            ("conversation", "os"),
            ("core", "subprocess"),
        )
    ),
    (
        CURSOR_SIDE,
        "providers",
        "from cursor_byok.core import deadlines",
        "cursor_byok.providers -> cursor_byok.core.deadlines",
    ),
    # the run core and Cursor's side of a turn are siblings: neither imports the other
    (
        LAYERS,
        "core",
        "from cursor_byok.cursor import actions",
        "cursor_byok.core -> cursor_byok.cursor.actions",
    ),
    (AIOHTTP, "tools", "import aiohttp", "cursor_byok.tools -> aiohttp"),
    (AIOHTTP, "replay", "import aiohttp", "cursor_byok.replay -> aiohttp"),
    (H2_H11, "proxy", "import h2.connection", "cursor_byok.proxy -> h2"),
    (H2_H11, "cli", "import h11", "cursor_byok.cli -> h11"),
    (
        PROVIDERS_FACE,
        "agent",
        "from cursor_byok.providers.base import Usage",
        "cursor_byok.agent -> cursor_byok.providers.base",
    ),
]

pytestmark = pytest.mark.xdist_group("import_contracts")  # one lint-imports run per worker


def _lint_imports() -> str:
    return str(Path(sys.executable).parent / "lint-imports")


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> str:
    """lint-imports' report on a copy of the package with every plant in it."""
    root = tmp_path_factory.mktemp("planted")
    copy = root / "cursor_byok"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for _, module, line, _ in PLANTS:
        path = copy.joinpath(*module.split("."), "__init__.py")
        assert path.exists(), path
        path.write_text(path.read_text() + f"\n{line}  # planted by {Path(__file__).name}\n")
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    env = dict(os.environ, PYTHONPATH=str(root), COLUMNS="400", NO_COLOR="1")
    result = subprocess.run(
        [_lint_imports(), "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert str(root) in _analysed_from(root, env), "lint-imports must read the planted copy"
    return result.stdout


def _analysed_from(root: Path, env: dict[str, str]) -> str:
    """Where `cursor_byok` is imported from with the copy first on the path."""
    return subprocess.run(
        [sys.executable, "-c", "import cursor_byok; print(cursor_byok.__file__)"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def _section(report: str, contract: str) -> str:
    """The broken-contract section of `contract` in the report ("" when it is not broken)."""
    broken = report.split("Broken contracts", 1)[-1]
    parts = re.split(r"\n(?=\S[^\n]*\n-{5,}\n)", broken)
    return next((part for part in parts if part.startswith(contract)), "")


@pytest.mark.parametrize(
    ("contract", "module", "line", "named"), PLANTS, ids=[p[1] + ":" + p[2] for p in PLANTS]
)
def test_a_planted_import_breaks_its_contract(planted, contract, module, line, named) -> None:
    assert re.search(rf"^{re.escape(contract)}.* BROKEN", planted, re.M), planted
    assert named in _section(planted, contract), planted


def test_the_other_contracts_still_hold_with_the_plants(planted) -> None:
    """Each plant breaks only its own rule: the cycles and the older rules hold."""
    for contract in ("Providers know no Cursor protobuf", "No import cycles"):
        assert re.search(rf"^{re.escape(contract)}.* KEPT", planted, re.M), planted
