"""examples/sdk_byok.py, the README's example of an SDK agent on BYOK, run as a user would."""

from __future__ import annotations

import os
import subprocess

import pytest
from harness import MODEL
from harness import REPO
from harness import sdk_python

pytestmark = pytest.mark.timeout(180)


def test_the_example_script_runs_a_byok_turn(stack, transport, tmp_path) -> None:
    fp = stack.provider
    fp.script._steps.clear()
    first = len(fp.requests)
    fp.script.tool_calls([("call_read", "Read", {"path": str(tmp_path / "README.md")})])
    fp.script.text("The README says hello.")
    (tmp_path / "README.md").write_text("hello\n")
    (tmp_path / "home").mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("CURSOR_") and k.lower() not in ("http_proxy", "https_proxy")
    }
    env.update(
        HOME=str(tmp_path / "home"),
        CURSOR_BACKEND_URL=stack.url(transport),
        CURSOR_API_KEY="conformance-cursor-key",
        NO_PROXY="*",
    )
    if transport == "run":
        env["NODE_EXTRA_CA_CERTS"] = str(stack.proxy.ca_file)
    done = subprocess.run(
        [str(sdk_python()), str(REPO / "examples" / "sdk_byok.py"), MODEL, "What is in README?"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[read]" in done.stdout and "The README says hello." in done.stdout
    assert len(fp.requests) == first + 2
    assert "hello" in str(fp.requests[first + 1].json["messages"])
