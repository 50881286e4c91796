"""`cursor-byok run --transparent` on Linux: install the redirect, run mitmdump, remove it.

The rules themselves come from `transparent.py`; this module resolves Cursor's hosts, runs
nft (or iptables), starts mitmdump as a child with the group the rules exempt, keeps the address
sets current while it runs and removes the rules when it exits. A run killed with SIGKILL cannot
clean up: its rules carry its pid, and the next start removes them before installing its own.
"""

from __future__ import annotations

import ctypes
import grp
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cursor_byok.cli import transparent
from cursor_byok.cli.transparent import Redirect
from cursor_byok.errors import ByokError

log = logging.getLogger(__name__)

REFRESH_SECONDS = 60.0  # how often Cursor's hosts are resolved again while running
FIREWALL_ENV = "CURSOR_BYOK_FIREWALL"  # force "nft" or "iptables"


class FirewallError(ByokError):
    """A redirect cannot be set up; the message says why and what to do."""


def resolve(hosts: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...], list[str]]:
    """IPv4 and IPv6 addresses of `hosts` (system resolver), and the hosts that did not resolve."""
    found: list[str] = []
    missing: list[str] = []
    for host in hosts:
        try:
            infos = socket.getaddrinfo(host, transparent.PORT, type=socket.SOCK_STREAM)
        except OSError:
            missing.append(host)
            continue
        found += [str(info[4][0]) for info in infos]
    v4, v6 = transparent.split_addresses(found)
    return v4, v6, missing


def mitmdump_gid() -> int:
    """The group mitmdump runs with: `cursor-byok` if the system has one, else a fixed gid."""
    try:
        return grp.getgrnam(transparent.GROUP).gr_gid
    except KeyError:
        return transparent.FALLBACK_GID


def _run(command: Sequence[str], stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(list(command), input=stdin, capture_output=True, text=True)


def _check(result: subprocess.CompletedProcess, what: str) -> str:
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip()
        raise FirewallError(f"{what} failed: {detail}")
    return result.stdout


class Nft:
    """nftables: one `inet cursor_byok` table, replaced and deleted as a whole."""

    name = "nftables"

    def listing(self) -> str | None:
        result = _run(["nft", "list", "table", "inet", transparent.TABLE])
        return result.stdout if result.returncode == 0 else None

    def install(self, r: Redirect) -> None:
        _check(_run(["nft", "-f", "-"], transparent.nft_install(r)), "nft (installing rules)")

    def add(self, v4: Sequence[str], v6: Sequence[str], port: int) -> None:
        script = transparent.nft_add_addresses(v4, v6)
        if script:
            _check(_run(["nft", "-f", "-"], script), "nft (adding addresses)")

    def remove(self) -> None:
        if self.listing() is not None:
            _check(_run(["nft", "-f", "-"], transparent.nft_remove()), "nft (removing rules)")

    def text(self, r: Redirect) -> str:
        return "# nft -f - <<'EOF'\n" + transparent.nft_install(r) + "# EOF\n"


class Iptables:
    """iptables (and ip6tables when present): a CURSOR_BYOK chain in the nat table."""

    name = "iptables"

    def __init__(self) -> None:
        self.binaries = ["iptables"] + (["ip6tables"] if shutil.which("ip6tables") else [])

    def listing(self) -> str | None:
        texts = [_run([f"{b}-save", "-t", "nat"]).stdout for b in self.binaries]
        found = [t for t in texts if f":{transparent.CHAIN} " in t]
        return "".join(found) if found else None

    def _apply(self, commands: list[list[str]]) -> None:
        for command in commands:
            _check(_run(command), " ".join(command))

    def install(self, r: Redirect) -> None:
        for binary in self.binaries:
            self._apply(transparent.iptables_install(r, binary))

    def add(self, v4: Sequence[str], v6: Sequence[str], port: int) -> None:
        for binary in self.binaries:
            addresses = v6 if binary.startswith("ip6") else v4
            self._apply(transparent.iptables_add_addresses(addresses, port, binary))

    def remove(self) -> None:
        for binary in self.binaries:
            save = _run([f"{binary}-save", "-t", "nat"]).stdout
            self._apply(transparent.iptables_remove(save, binary))

    def text(self, r: Redirect) -> str:
        commands = [c for b in self.binaries for c in transparent.iptables_install(r, b)]
        return transparent.shell_lines(commands)


def _sbin_on_path() -> None:
    """Firewall tools live in /usr/sbin, which a user's PATH (or sudo's) may lack."""
    parts = os.environ.get("PATH", "").split(os.pathsep)
    extra = [d for d in ("/usr/sbin", "/sbin") if d not in parts and os.path.isdir(d)]
    if extra:
        os.environ["PATH"] = os.pathsep.join([*parts, *extra])


def backend(env: dict[str, str] | None = None) -> Nft | Iptables:
    """nftables where `nft` is on PATH, else iptables; $CURSOR_BYOK_FIREWALL forces one."""
    _sbin_on_path()
    forced = (env if env is not None else os.environ).get(FIREWALL_ENV, "").strip()
    if forced and forced not in ("nft", "iptables"):
        raise FirewallError(f"{FIREWALL_ENV}={forced!r}: use nft or iptables")
    for tool, make in (("nft", Nft), ("iptables", Iptables)):
        if forced and tool != forced:
            continue
        if shutil.which(tool):
            return make()
    wanted = forced or "nft or iptables"
    raise FirewallError(
        f"{wanted} not found (looked on PATH and in /usr/sbin): install nftables "
        "(Debian/Ubuntu: apt-get install nftables, Fedora: dnf install nftables) or iptables, "
        "or set up the redirect yourself (cursor-byok run --transparent --print-rules)"
    )


def _alive_cursor_byok(pid: int) -> bool:
    if pid in (0, os.getpid()):
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"cursor-byok" in cmdline or b"cursor_byok" in cmdline


def remove_stale(fw: Nft | Iptables, say: Callable[[str], None]) -> None:
    """Remove rules a killed run left behind; refuse when their owner still runs."""
    listing = fw.listing()
    if listing is None:
        return
    pid = transparent.owner_pid(listing) or 0
    if _alive_cursor_byok(pid):
        raise FirewallError(
            f"cursor-byok (pid {pid}) is running in transparent mode already; stop it first"
        )
    fw.remove()
    say(f"Removed {fw.name} redirect rules left by an earlier run (pid {pid or '?'}).")


def _die_with_parent() -> None:
    """In the child: SIGTERM when the supervisor dies (even by SIGKILL), so no orphan proxy."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def run_transparent(
    args: list[str],
    *,
    port: int,
    hosts: Sequence[str],
    say: Callable[[str], None],
    refresh: float = REFRESH_SECONDS,
) -> int:
    """Install the redirect, run mitmdump (`args`) until it exits, remove the redirect."""
    if os.geteuid() != 0:
        raise FirewallError(
            "transparent mode installs firewall rules and needs root: "
            "sudo cursor-byok run --transparent (or --print-rules to see them)"
        )
    if not 0 < port < 65536:
        raise FirewallError("transparent mode redirects to a fixed port: give --port 1-65535")
    fw = backend()
    remove_stale(fw, say)
    redirect = _install(fw, port, hosts, say)
    child: subprocess.Popen | None = None
    previous = {}
    try:
        child = subprocess.Popen(
            args, group=redirect.gid, start_new_session=True, preexec_fn=_die_with_parent
        )
        previous = _forward_signals(child)
        known = set(redirect.v4) | set(redirect.v6)
        while True:
            try:
                child.wait(timeout=refresh)
                break
            except subprocess.TimeoutExpired:
                known |= _refresh(fw, hosts, known, port)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if child is not None and child.poll() is None:
            child.terminate()
            child.wait()
        fw.remove()
        say(f"Removed the {fw.name} redirect rules.")
    code = child.returncode
    return code if code >= 0 else 128 - code


def _install(
    fw: Nft | Iptables, port: int, hosts: Sequence[str], say: Callable[[str], None]
) -> Redirect:
    """Redirect port 443 of the addresses `hosts` resolve to now (mitmdump's group exempt)."""
    v4, v6, missing = resolve(hosts)
    if missing:
        say(f"Not redirected (does not resolve): {', '.join(missing)}")
    if not v4 and not v6:
        raise FirewallError(f"none of {', '.join(hosts)} resolves; check DNS")
    redirect = Redirect(port=port, gid=mitmdump_gid(), v4=v4, v6=v6, owner_pid=os.getpid())
    try:
        fw.install(redirect)
    except FirewallError:
        fw.remove()  # what got in before the failure (iptables applies rule by rule)
        raise
    say(
        f"Redirecting port 443 of {', '.join(hosts)} ({len(v4) + len(v6)} addresses) to "
        f"port {port} with {fw.name}; mitmdump runs with group {redirect.gid}, which is exempt."
    )
    return redirect


def _forward_signals(child: subprocess.Popen) -> dict[int, Any]:
    """SIGINT, SIGTERM and SIGHUP go to mitmdump (its own session: the terminal's do not reach
    it); the handlers they replace, to put back."""

    def forward(signum: int, _frame: object) -> None:
        if child.poll() is None:
            child.send_signal(signal.SIGINT if signum == signal.SIGINT else signal.SIGTERM)

    return {
        signum: signal.signal(signum, forward)
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    }


def _refresh(fw: Nft | Iptables, hosts: Sequence[str], known: set[str], port: int) -> set[str]:
    """Add addresses Cursor's hosts resolve to now; old ones stay redirected."""
    v4, v6, _missing = resolve(hosts)
    new4 = [a for a in v4 if a not in known]
    new6 = [a for a in v6 if a not in known]
    if not new4 and not new6:
        return set()
    try:
        fw.add(new4, new6, port)
    except FirewallError as exc:
        log.warning("could not add new addresses of Cursor's hosts: %s", exc)
        return set()
    log.info("redirecting new addresses: %s", ", ".join(new4 + new6))
    return set(new4) | set(new6)


def rules_text(port: int, hosts: Sequence[str], platform: str = sys.platform) -> str:
    """What `--print-rules` shows: the rules for this platform, nothing applied."""
    v4, v6, missing = resolve(hosts)
    redirect = Redirect(port=port, gid=mitmdump_gid(), v4=v4, v6=v6, owner_pid=0)
    head = f"# Cursor's hosts: {', '.join(hosts)}\n"
    if missing:
        head += f"# not resolved (left out): {', '.join(missing)}\n"
    if platform == "darwin":
        return head + transparent.pf_rules(redirect)
    if platform.startswith("win"):
        return head + "# Windows: mitmproxy's transparent mode redirects by itself; no rules.\n"
    try:
        fw = backend()
    except FirewallError:
        fw = Nft()
        head += "# (nft not installed; these are the nftables rules cursor-byok would use)\n"
    head += f"# mitmdump runs with group {redirect.gid}: its own connections are not redirected\n"
    return head + fw.text(redirect)
