"""Transparent mode end to end, inside a private network + mount namespace.

The hosts file there maps Cursor's (test) API host and a second host to an address on the
namespace's loopback; `cursor-byok trust install` puts the CA into a private copy of the system
store; `cursor-byok run --transparent` installs its own redirect; a Cursor-like client with no
proxy setting completes a provider-backed turn, and a pass-through connection to the other host
reaches its server instead of looping through the proxy. The rules are gone after the proxy exits,
and rules left by a SIGKILLed run are removed by the next start.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fakes.fake_provider import FakeProvider
from mitm import start_mitmdump
from netns import TEST_ADDRESS
from netns import TEST_ADDRESS6
from netns import Namespace
from netns import nat_unavailable_reason
from netns import unavailable_reason
from provider_config import KEY_ENV
from provider_config import MODEL
from provider_config import write_config

pytestmark = pytest.mark.timeout(240)

E2E = Path(__file__).resolve().parent
API_HOST = "api2.cursor.test"
API_HOST6 = "api6.cursor.test"  # IPv6 only: the ip6 rules and mitmdump's ::1 listener
OTHER_HOST = "downloads.cursor.test"  # redirected too, but not decrypted: passed through
PORT = 8080
KEY = "sk-transparent-test"
REPLY = "Hello through the kernel's redirect."


def cursor_byok(*args: str) -> list[str]:
    return [str(Path(sys.executable).with_name("cursor-byok")), *args]


class ProviderInNamespace:
    """The fake provider, listening on the namespace's 127.0.0.1 (a thread moved into it)."""

    def __init__(self, ns: Namespace, replies: int) -> None:
        self.ns = ns
        self.replies = replies
        self.fp: FakeProvider | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._main, daemon=True)

    def __enter__(self) -> FakeProvider:
        self.thread.start()
        assert self.ready.wait(10), "fake provider did not start"
        assert self.fp is not None
        return self.fp

    def __exit__(self, *exc) -> None:
        assert self.loop is not None
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    def _main(self) -> None:
        self.ns.enter_net()
        self.loop = asyncio.new_event_loop()
        self.fp = FakeProvider(api_key=KEY)
        for _ in range(self.replies):
            self.fp.script.text(REPLY)
        self.loop.run_until_complete(self.fp.start())
        self.ready.set()
        self.loop.run_forever()
        self.loop.run_until_complete(self.fp.stop())
        self.loop.close()


def start_proxy(ns: Namespace, tmp: Path, config: Path):
    command = cursor_byok(
        "run",
        "--transparent",
        "--port",
        str(PORT),
        "--confdir",
        str(tmp / "mitmconf"),
        "--data-dir",
        str(tmp / "data"),
        "--config",
        str(config),
        "--quiet",
        "--redirect-host",
        API_HOST,
        "--redirect-host",
        OTHER_HOST,
        "--redirect-host",
        API_HOST6,
        "--",
        "--allow-hosts",
        r"^api[26]\.cursor\.test:443$",
        "--set",
        "cursor_byok_hosts=api[26].cursor.test",
    )
    return start_mitmdump(tmp, command=ns.prefix + command, env={KEY_ENV: KEY})


def client_turn(ns: Namespace, workspace: Path, host: str, *passthrough: str) -> dict:
    client = [sys.executable, str(E2E / "transparent_client.py"), str(workspace), MODEL, host]
    result = ns.run(*client, *passthrough, timeout=120)
    return json.loads(result.stdout.strip().splitlines()[-1])


def redirect_rules(ns: Namespace, firewall: str) -> str:
    """Our rules as the firewall lists them ("" when there are none)."""
    if firewall == "nft":
        listing = ns.run("nft", "list", "ruleset").stdout
        return listing if "cursor_byok" in listing else ""
    listing = ns.run("iptables-save", "-t", "nat").stdout
    return listing if "CURSOR_BYOK" in listing else ""


def child_pids(parent: int) -> list[int]:
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent:
            pids.append(int(stat.parent.name))
    return pids


def wait_gone(pid: int, timeout: float = 20) -> None:
    """Until process `pid` has exited (a zombie counts as exited)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return
        if state in ("Z", "X"):
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} still runs")


@pytest.fixture
def namespace(tmp_path, request):
    firewall = request.param
    tools = (firewall, "iptables-save" if firewall == "iptables" else firewall)
    reason = unavailable_reason(*tools, "update-ca-certificates")
    reason = reason or nat_unavailable_reason(firewall)
    if reason:
        pytest.skip(f"transparent-mode namespace test: {reason}")
    hosts = {API_HOST: TEST_ADDRESS, OTHER_HOST: TEST_ADDRESS, API_HOST6: TEST_ADDRESS6}
    ns = Namespace(tmp_path, hosts)
    ns.private_ca_store()
    yield ns, firewall
    ns.close()


@pytest.mark.parametrize("namespace", ["nft", "iptables"], indirect=True)
def test_transparent_mode_in_a_network_namespace(namespace, tmp_path, workspace, monkeypatch):
    ns, firewall = namespace
    monkeypatch.setenv("CURSOR_BYOK_FIREWALL", firewall)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the NSS database goes there
    monkeypatch.delenv("SUDO_USER", raising=False)  # else the real user's NSS database
    (tmp_path / "home").mkdir()

    # The CA goes into the (private) system store the way a user puts it there.
    trusted = ns.run(*cursor_byok("trust", "install", "--confdir", str(tmp_path / "mitmconf")))
    assert "added to Debian/Ubuntu" in trusted.stdout, trusted.stdout
    status = ns.run(*cursor_byok("trust", "status", "--confdir", str(tmp_path / "mitmconf")))
    assert status.stdout.startswith("✔ Debian/Ubuntu"), status.stdout
    if shutil.which("certutil"):  # NSS for Chromium/Electron, in $HOME/.pki/nssdb
        assert "\n✔ NSS (Chromium/Electron)" in status.stdout, status.stdout

    # --print-rules shows the rules for this machine and applies none.
    show = ("run", "--transparent", "--print-rules", "-p", str(PORT), "--redirect-host", API_HOST)
    printed = ns.run(*cursor_byok(*show))
    assert TEST_ADDRESS in printed.stdout and str(PORT) in printed.stdout, printed.stdout
    assert redirect_rules(ns, firewall) == ""

    cert = tmp_path / "upstream-cert.pem"
    server = [sys.executable, str(E2E / "tls_upstream.py"), TEST_ADDRESS, "443", OTHER_HOST]
    upstream = subprocess.Popen(
        [*ns.prefix, *server, str(cert)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert upstream.stdout is not None and upstream.stdout.readline().strip() == "ready"
        with ProviderInNamespace(ns, replies=2) as fp:
            config = write_config(tmp_path, fp, "anthropic")
            proxy = start_proxy(ns, tmp_path, config)
            try:
                rules = redirect_rules(ns, firewall)
                assert "meta skgid" in rules or "--gid-owner" in rules, rules
                outcome = client_turn(ns, workspace, API_HOST, f"https://{OTHER_HOST}/", str(cert))
                if ns.ipv6:
                    outcome6 = client_turn(ns, workspace, API_HOST6)
            finally:
                proxy.stop()
            assert proxy.process.returncode == 0, proxy.log()
        assert outcome["turn"] == {"ok": True, "error": "None", "text": REPLY}, proxy.log()
        assert fp.requests[0].path.endswith("/messages")
        if ns.ipv6:
            assert outcome6["turn"] == {"ok": True, "error": "None", "text": REPLY}, proxy.log()
        assert len(fp.requests) == (2 if ns.ipv6 else 1)
        # Passed through to the real server (its own certificate), not looped into the proxy.
        assert outcome["passthrough"] == {"status": 200, "body": f"upstream {OTHER_HOST}"}
        assert redirect_rules(ns, firewall) == "", "rules left after a clean exit"
        assert "Removed the" in proxy.log()

        # SIGKILL: no chance to clean up; mitmdump follows its parent; the next start cleans up.
        proxy = start_proxy(ns, tmp_path, config)
        killed = proxy.process.pid
        children = child_pids(killed)
        assert children, "mitmdump runs as a child of cursor-byok"
        proxy.process.kill()
        proxy.process.wait()
        for child in children:
            wait_gone(child)
        assert f"pid {killed}" in redirect_rules(ns, firewall)
        proxy = start_proxy(ns, tmp_path, config)
        try:
            assert f"left by an earlier run (pid {killed})" in proxy.log()
            rules = redirect_rules(ns, firewall)
            assert f"pid {proxy.process.pid}" in rules and f"pid {killed}" not in rules
        finally:
            proxy.process.send_signal(signal.SIGTERM)  # as systemd or `kill` stop it
            proxy.process.wait(timeout=30)
            proxy.stop()
        assert redirect_rules(ns, firewall) == ""
    finally:
        upstream.kill()
        upstream.wait()

    removed = ns.run(*cursor_byok("trust", "uninstall", "--confdir", str(tmp_path / "mitmconf")))
    assert "removed from Debian/Ubuntu" in removed.stdout, removed.stdout
    status = ns.run(
        *cursor_byok("trust", "status", "--confdir", str(tmp_path / "mitmconf")), check=False
    )
    assert status.returncode == 1, status.stdout  # not trusted any more: status fails
    assert status.stdout.startswith("✘ Debian/Ubuntu"), status.stdout
    if shutil.which("certutil"):
        assert "\n✘ NSS (Chromium/Electron)" in status.stdout, status.stdout
