"""`uv tool install --python 3.12 <checkout>` (the README's install line) gives a working
`cursor-byok` that runs without the checkout.

The tool goes into temp dirs (UV_TOOL_DIR, UV_TOOL_BIN_DIR); the proxy is started from a temp
dir, with `cursor-byok run`, with the tool's own mitmdump and `addon-path` (composition with other
addons), and with the README's composition line as written, run by a shell whose PATH has the
tool's bin dir and the system's, nothing else; each serves an Agent turn.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from cursor_client import CursorLikeClient
from mitm import REPO
from mitm import TEST_HOST
from mitm import start_mitmdump

pytestmark = pytest.mark.timeout(300)
OFFLINE_HINTS = ("network", "offline", "dns error", "failed to fetch", "connection refused")


@pytest.fixture(scope="module")
def tool(tmp_path_factory) -> Path:
    """The bin dir of a fresh tool install of this checkout."""
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not on PATH")
    root = tmp_path_factory.mktemp("tool")
    env = dict(os.environ, UV_TOOL_DIR=str(root / "tools"), UV_TOOL_BIN_DIR=str(root / "bin"))
    env.pop("VIRTUAL_ENV", None)
    result = subprocess.run(
        [uv, "tool", "install", "--python", "3.12", str(REPO)],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=240,
    )
    if result.returncode != 0 and any(h in result.stderr.lower() for h in OFFLINE_HINTS):
        pytest.skip(f"no package index reachable: {result.stderr[-300:]}")
    assert result.returncode == 0, result.stderr
    return root / "bin"


async def _turn(proxy, workspace) -> str:
    client = CursorLikeClient.through(proxy, workspace)
    try:
        result = await client.turn(
            client.run_request("read notes.txt", conversation_id=str(uuid.uuid4()))
        )
    finally:
        await client.aclose()
        proxy.stop()
    assert result.end.ok, result.end.error
    return result.text


def test_help_and_addon_path_come_from_the_tool(tool) -> None:
    exe = tool / "cursor-byok"
    assert "init" in subprocess.run([exe, "--help"], capture_output=True, text=True).stdout
    path = Path(subprocess.check_output([exe, "addon-path"], text=True).strip())
    assert path.is_file() and path.name == "script.py"
    assert REPO not in path.parents  # the installed copy, not the checkout


async def test_run_from_outside_the_checkout(tool, tmp_path, workspace) -> None:
    command = [
        str(tool / "cursor-byok"),
        "run", "--port", "0", "--agent", "scripted", "--quiet",
        "--confdir", str(tmp_path / "mitmconf"), "--data-dir", str(tmp_path / "data"),
        "--", "--allow-hosts", r"^api2\.cursor\.test:443$",
        "--set", f"cursor_byok_hosts={TEST_HOST}",
    ]  # fmt: skip
    proxy = start_mitmdump(tmp_path, command=command)
    assert "alpha" in await _turn(proxy, workspace)


async def test_mitmdump_with_addon_path_composes_with_other_addons(tool, tmp_path, workspace):
    exe = tool / "cursor-byok"
    script = subprocess.check_output([exe, "addon-path"], text=True).strip()
    # The tool's own mitmdump (the tool venv's bin dir, found through the entry point script).
    mitmdump = Path(exe.resolve()).with_name("mitmdump")
    assert mitmdump.exists()
    other = tmp_path / "other_addon.py"
    other.write_text(
        "import logging\n"
        "class Other:\n"
        "    def running(self):\n"
        "        logging.warning('other addon loaded')\n"
        "addons = [Other()]\n"
    )
    command = [
        str(mitmdump), "--listen-host", "127.0.0.1", "-p", "0",
        "--set", f"confdir={tmp_path / 'mitmconf'}", "--set", "connection_strategy=lazy",
        "-s", script, "-s", str(other),
        "--set", f"cursor_byok_data_dir={tmp_path / 'data'}",
        "--set", f"cursor_byok_hosts={TEST_HOST}", "--set", "cursor_byok_agent=scripted",
    ]  # fmt: skip
    proxy = start_mitmdump(tmp_path, command=command)
    assert "alpha" in await _turn(proxy, workspace)
    assert "other addon loaded" in proxy.log()


def _readme_composition_line() -> str:
    """The README's line for composing with other addons (the tool-install one)."""
    readme = (REPO / "README.md").read_text()
    match = re.search(r"`(cursor-byok mitmdump [^`]*-s your_addon\.py[^`]*)`", readme)
    assert match, "README has no `cursor-byok mitmdump ... -s your_addon.py` line"
    return match[1]


async def test_the_readmes_composition_line_works_from_a_tool_install(tool, tmp_path, workspace):
    line = _readme_composition_line()
    assert "uv run" not in line and "addon/main.py" not in line  # nothing from a checkout
    other = tmp_path / "your_addon.py"
    other.write_text(
        "import logging\n"
        "class Yours:\n"
        "    def running(self):\n"
        "        logging.warning('your addon loaded')\n"
        "addons = [Yours()]\n"
    )
    test_args = (
        f"-p 0 --set confdir={tmp_path / 'mitmconf'} --set cursor_byok_data_dir={tmp_path / 'd'}"
        f" --set cursor_byok_hosts={TEST_HOST} --set cursor_byok_agent=scripted"
    )
    # the line as written, run where your_addon.py is; only the tool and the system on PATH
    command = ["bash", "-c", f"exec {line} {test_args}"]
    env = {"PATH": f"{tool}:/usr/bin:/bin", "HOME": str(tmp_path)}
    proxy = start_mitmdump(tmp_path, command=command, env=env)
    assert "alpha" in await _turn(proxy, workspace)
    assert "your addon loaded" in proxy.log()
