"""Fixtures of the conformance suite: one stack per test module (stand-in, fake provider, proxy),
one SDK bridge per transport on it, a fresh agent and workspace per test.

The SDK comes from its own venv (`.ci/run` builds it: `.cache/cursor-sdk-<version>`, or the
CURSOR_SDK_VENV given). Without it the suite skips with the reason, except in CI (CI=true), where
a missing SDK on a platform that has its wheel is a failure.

Every case runs on the newest SDK we support; a test (or module) marked `every_sdk` runs on the
oldest too (its venv: `.cache/cursor-sdk-0.1.9`, or CURSOR_SDK_OLDEST_VENV), with the version in
its id: `test_shell_turn[runsse-0.1.9]`.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `fakes`
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))  # for `mitm`

from fakes.cursor_account import CursorAccount
from harness import CLAUDE
from harness import KEY_ENV
from harness import MODEL
from harness import PROVIDER_KEY
from harness import SDK_NEWEST
from harness import SDK_OLDEST
from harness import SMALL
from harness import SdkDriver
from harness import ThreadedProvider
from harness import sdk_installed
from harness import sdk_venv
from harness import wheel_missing_reason
from mitm import Mitm
from mitm import start_mitmdump

_checked: dict[str, bool] = {}


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers", f"every_sdk: run on the oldest supported cursor-sdk ({SDK_OLDEST}) too"
    )


def pytest_generate_tests(metafunc) -> None:
    """`sdk_version`: the newest SDK, and the oldest too for tests marked `every_sdk`."""
    if "sdk_version" not in metafunc.fixturenames:
        return
    versions = [SDK_NEWEST]
    if metafunc.definition.get_closest_marker("every_sdk"):
        versions.append(SDK_OLDEST)
    metafunc.parametrize("sdk_version", versions, scope="function")


def require_sdk(version: str = SDK_NEWEST) -> None:
    """Skip (or, in CI, fail) when that SDK release cannot run here."""
    reason = wheel_missing_reason()
    if reason is not None:
        pytest.skip(reason)
    if version not in _checked:
        _checked[version] = sdk_installed(version)
    if not _checked[version]:
        venv = f".cache/cursor-sdk-{version}"
        message = (
            f"cursor-sdk {version} is not installed in {sdk_venv(version)} "
            f"(.ci/run installs it; or: uv venv {venv} && "
            f"uv pip install --python {venv}/bin/python cursor-sdk=={version})"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def write_config(path: Path, base_url: str) -> Path:
    path.write_text(
        f"""
default_model = "{MODEL}"
max_steps = 8

[providers.fake]
kind = "openai-chat"
base_url = "{base_url}"
api_key_env = "{KEY_ENV}"
max_retries = 2

[providers.claude]
kind = "anthropic"
base_url = "{base_url}"
api_key_env = "{KEY_ENV}"
max_retries = 2

[[models]]
name = "{MODEL}"
provider = "fake"
model = "fake-upstream-1"
context_window = 64000

[[models]]
name = "{CLAUDE}"
provider = "claude"
model = "fake-claude-1"
context_window = 64000
supports_images = true

[[models]]
name = "{SMALL}"
provider = "fake"
model = "fake-small-1"
context_window = 16000
"""
    )
    return path


@dataclass
class Stack:
    """The servers of one module and the SDK drivers on them (started on first use)."""

    root: Path
    account: CursorAccount
    provider: ThreadedProvider
    proxy: Mitm
    drivers: dict[str, SdkDriver] = field(default_factory=dict)

    def url(self, transport: str) -> str:
        if transport == "runsse":
            return f"http://127.0.0.1:{self.proxy.port}"
        # 127.1, not 127.0.0.1: the SDK turns TLS verification off for a backend spelled
        # localhost/127.0.0.1; spelled so, our CA (NODE_EXTRA_CA_CERTS) is really checked.
        return f"https://127.1:{self.proxy.port}"

    def driver(self, transport: str, version: str = SDK_NEWEST) -> SdkDriver:
        key = transport if version == SDK_NEWEST else f"{transport}-{version}"
        if key not in self.drivers:
            ca = self.proxy.ca_file if transport == "run" else None
            self.drivers[key] = SdkDriver.start(
                transport,
                self.url(transport),
                self.root / f"sdk-{key}",
                ca_file=ca,
                version=version,
            )
        return self.drivers[key]

    def run_calls(self) -> int:
        """Agent run streams (Run or RunSSE attempts) the proxy opened, from its log lines."""
        return sum(1 for line in self.proxy.log_lines if _OPENED.search(line))

    def wait_for_run_calls(self, count: int) -> None:
        self.proxy.wait_for_log(lambda lines: sum(bool(_OPENED.search(x)) for x in lines) >= count)


_OPENED = re.compile(r"\] (RunSSE|Run) \S+ opened")


@pytest.fixture(scope="module")
def account() -> CursorAccount:
    """The stand-in for Cursor's account endpoints (a module may override it)."""
    return CursorAccount()


@pytest.fixture(scope="module")
def stack(tmp_path_factory, account: CursorAccount) -> Iterator[Stack]:
    require_sdk()
    root = tmp_path_factory.mktemp("conformance")
    account.start()
    provider = ThreadedProvider(api_key=PROVIDER_KEY)
    proxy = start_mitmdump(  # the default settings, as a user's (cancel is measured on them)
        root / "proxy",
        mode=f"reverse:{account.base_url}",
        agent="provider",
        config=write_config(root / "config.toml", provider.base_url),
        env={KEY_ENV: PROVIDER_KEY},
    )
    stack = Stack(root, account, provider, proxy)
    try:
        yield stack
    finally:
        for driver in stack.drivers.values():
            driver.stop()
        proxy.stop()
        violations = provider.close()
        account.stop()
    assert not violations, "the fake provider saw invalid requests:\n" + "\n".join(violations)


@pytest.fixture(params=["runsse", "run"])
def transport(request) -> str:
    """RunSSE + BidiAppend (an http:// backend URL) and HTTP/2 `Run` (https://)."""
    return request.param


@pytest.fixture
def sdk(stack: Stack, transport: str, sdk_version: str) -> SdkDriver:
    require_sdk(sdk_version)
    stack.provider.script._steps.clear()  # a failed test's leftovers must not answer this one
    stack.provider.fp.responder = None
    stack.provider.fp.usage_from_prompt = False
    return stack.driver(transport, sdk_version)


@pytest.fixture
def workspace(sdk: SdkDriver, request) -> Path:
    """A fresh workspace (the agent's cwd) per test."""
    name = request.node.name.replace("[", "-").replace("]", "")
    root = sdk.workspace.parent / "workspaces" / name
    root.mkdir(parents=True)
    (root / "README.md").write_text("# Demo project\nline two\nline three\n")
    (root / "notes.txt").write_text("alpha\nbeta\n")
    return root
