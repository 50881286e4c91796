"""A private network + mount namespace for tests that install firewall rules or change /etc.

Nothing done inside reaches the machine: the namespace has only its own loopback (with the test
address on it), its own nftables/iptables rules, and bind mounts over /etc/hosts and the CA store
directories that exist only in its mount namespace. A holder process keeps the namespaces alive;
every command enters them with nsenter.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

TEST_ADDRESS = "192.0.2.10"  # TEST-NET-1 (RFC 5737), only ever on the namespace's loopback
TEST_ADDRESS6 = "2001:db8::10"  # documentation prefix (RFC 3849), likewise
CA_DIRS = ("/etc/ssl/certs", "/usr/local/share/ca-certificates")
HOOK_DIRS = ("/etc/ca-certificates/update.d",)  # e.g. Java's keystore: not run in tests


def unavailable_reason(*tools: str) -> str | None:
    """Why namespace tests cannot run here, or None."""
    if not sys.platform.startswith("linux"):
        return "network namespaces are Linux only"
    if os.geteuid() != 0:
        return "needs root (network namespace and firewall rules)"
    for tool in ("unshare", "nsenter", "ip", "mount", *tools):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    probe = subprocess.run(["unshare", "--net", "--mount", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"cannot create namespaces here: {probe.stderr.strip()}"
    return None


NAT_PROBES = {
    "nft": "nft add table inet probe && "
    "nft 'add chain inet probe c { type nat hook output priority -100; }'",
    "iptables": "iptables -t nat -N PROBE && iptables -t nat -A OUTPUT -j PROBE",
}


def nat_unavailable_reason(firewall: str) -> str | None:
    """Why `firewall` cannot create NAT rules here (tried in a throwaway namespace), or None."""
    probe = subprocess.run(
        ["unshare", "--net", "sh", "-c", NAT_PROBES[firewall]], capture_output=True, text=True
    )
    if probe.returncode != 0:
        return f"{firewall} cannot create NAT rules here: {probe.stderr.strip()}"
    return None


class Namespace:
    """Network + mount namespaces held open by a child process; `run` enters both."""

    def __init__(self, tmp: Path, hosts: dict[str, str]) -> None:
        self.tmp = tmp
        unshare = ["unshare", "--net", "--mount", "--propagation", "private"]
        hold = [sys.executable, "-c", "import sys; sys.stdin.read()"]  # until stdin closes
        self.holder = subprocess.Popen([*unshare, *hold], stdin=subprocess.PIPE)
        self.pid = self.holder.pid
        self._wait_until_entered()
        self.run("ip", "link", "set", "lo", "up")
        self.run("ip", "addr", "add", f"{TEST_ADDRESS}/32", "dev", "lo")
        added6 = self.run("ip", "addr", "add", f"{TEST_ADDRESS6}/128", "dev", "lo", check=False)
        self.ipv6 = added6.returncode == 0  # False where IPv6 is disabled
        lines = ["127.0.0.1 localhost", "::1 localhost"]
        lines += [f"{address} {name}" for name, address in hosts.items()]
        hosts_file = tmp / "hosts"
        hosts_file.write_text("\n".join(lines) + "\n")
        self.run("mount", "--bind", str(hosts_file), "/etc/hosts")

    def _wait_until_entered(self, timeout: float = 10) -> None:
        ours = os.readlink("/proc/self/ns/net")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if os.readlink(f"/proc/{self.pid}/ns/net") != ours:
                    return
            except OSError:
                pass
            if self.holder.poll() is not None:
                break
            time.sleep(0.02)
        raise RuntimeError("unshare did not create the namespaces")

    @property
    def prefix(self) -> list[str]:
        return ["nsenter", f"--target={self.pid}", "--net", "--mount", f"--wd={self.tmp}", "--"]

    def run(self, *command: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
        kwargs.setdefault("timeout", 120)
        result = subprocess.run(
            [*self.prefix, *command], capture_output=True, text=True, check=False, **kwargs
        )
        if check and result.returncode != 0:
            raise AssertionError(f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}")
        return result

    def private_ca_store(self) -> None:
        """Bind private copies over the system CA store, so `trust install` changes only those."""
        for number, directory in enumerate(CA_DIRS + HOOK_DIRS):
            if not Path(directory).is_dir():
                continue
            copy = self.tmp / f"ca-store-{number}"
            if directory in HOOK_DIRS:
                copy.mkdir()
            else:
                shutil.copytree(directory, copy, symlinks=True)
            self.run("mount", "--bind", str(copy), directory)

    def enter_net(self) -> None:
        """Move the calling thread (only) into the network namespace."""
        fd = os.open(f"/proc/{self.pid}/ns/net", os.O_RDONLY)
        try:
            os.setns(fd, os.CLONE_NEWNET)
        finally:
            os.close(fd)

    def close(self) -> None:
        if self.holder.stdin:
            self.holder.stdin.close()
        try:
            self.holder.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.holder.kill()
            self.holder.wait()
