"""Transparent mode's rules as text, the choice of firewall tool, and the refusals (no root, no
tools). Applying the rules is proven in tests/e2e/test_transparent.py (network namespace)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cursor_byok.cli import redirect
from cursor_byok.cli import transparent
from cursor_byok.cli.launch import mitmdump_args
from cursor_byok.cli.main import build_parser
from cursor_byok.cli.main import main
from cursor_byok.cli.proxy_commands import run_options
from cursor_byok.cli.transparent import Redirect

R = Redirect(port=8080, gid=4242, v4=("192.0.2.1", "192.0.2.2"), v6=("2001:db8::1",), owner_pid=77)


def test_nft_rules_exempt_mitmdump_first_and_redirect_only_port_443_of_the_sets() -> None:
    text = transparent.nft_install(R)
    chain = text[text.index("chain output") :]
    lines = [line.strip() for line in chain.splitlines()]
    assert lines[2] == "meta skgid 4242 return"  # before any redirect
    assert lines[3] == "ip daddr @v4 tcp dport 443 redirect to :8080"
    assert lines[4] == "ip6 daddr @v6 tcp dport 443 redirect to :8080"
    assert "elements = { 192.0.2.1, 192.0.2.2 }" in text
    assert "elements = { 2001:db8::1 }" in text
    assert 'comment "cursor-byok transparent redirect pid 77"' in text
    # Replaces a stale table in the same transaction.
    assert text.startswith("table inet cursor_byok {}\ndelete table inet cursor_byok\n")


def test_nft_empty_sets_and_added_addresses() -> None:
    text = transparent.nft_install(Redirect(port=1, gid=2))
    assert "elements" not in text
    assert transparent.nft_add_addresses(["192.0.2.9"], []) == (
        "add element inet cursor_byok v4 { 192.0.2.9 }\n"
    )
    assert transparent.nft_add_addresses([], []) == ""


def test_iptables_rules_and_their_removal_from_iptables_save_output() -> None:
    commands = transparent.iptables_install(R)
    assert commands[0] == ["iptables", "-t", "nat", "-N", "CURSOR_BYOK"]
    assert commands[1][-6:] == ["-m", "owner", "--gid-owner", "4242", "-j", "RETURN"]
    assert [c[6] for c in commands[2:4]] == ["192.0.2.1", "192.0.2.2"]
    assert commands[-1][4] == "OUTPUT" and commands[-1][-2:] == ["-j", "CURSOR_BYOK"]
    six = transparent.iptables_install(R, "ip6tables")
    assert [c[6] for c in six if "-d" in c] == ["2001:db8::1"]
    save = (
        "*nat\n:OUTPUT ACCEPT [0:0]\n:CURSOR_BYOK - [0:0]\n"
        '-A OUTPUT -p tcp -m tcp --dport 443 -m comment --comment "cursor-byok transparent '
        'redirect pid 77" -j CURSOR_BYOK\n'
        "-A OUTPUT -p tcp --dport 80 -j ACCEPT\n"
        "-A CURSOR_BYOK -m owner --gid-owner 4242 -j RETURN\nCOMMIT\n"
    )
    assert transparent.owner_pid(save) == 77
    removal = transparent.iptables_remove(save)
    assert removal == [
        [
            *("iptables", "-t", "nat", "-D", "OUTPUT", "-p", "tcp", "-m", "tcp", "--dport", "443"),
            *("-m", "comment", "--comment", "cursor-byok transparent redirect pid 77"),
            *("-j", "CURSOR_BYOK"),
        ],
        ["iptables", "-t", "nat", "-F", "CURSOR_BYOK"],
        ["iptables", "-t", "nat", "-X", "CURSOR_BYOK"],
    ]
    assert transparent.iptables_remove("*nat\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n") == []


def test_pf_rules_for_macos() -> None:
    text = transparent.pf_rules(R)
    assert "table <cursor_byok> { 192.0.2.1, 192.0.2.2 }" in text
    rdr = "rdr pass on lo0 inet proto tcp from any to <cursor_byok> port 443 -> 127.0.0.1 port 8080"
    assert rdr in text
    assert "route-to (lo0 127.0.0.1)" in text and "group != 4242" in text


def test_addresses_are_split_sorted_and_deduplicated() -> None:
    found = ["192.0.2.2", "fe80::1%eth0", "192.0.2.1", "192.0.2.2", "x"]
    v4, v6 = transparent.split_addresses(found)
    assert v4 == ("192.0.2.1", "192.0.2.2")
    assert v6 == ("fe80::1",)


def test_print_rules_shows_the_rules_of_each_platform(monkeypatch, capsys) -> None:
    monkeypatch.setattr(redirect, "resolve", lambda hosts: (("192.0.2.7",), (), ["gone.example"]))
    text = redirect.rules_text(8080, ["api2.cursor.sh", "gone.example"], platform="darwin")
    assert "table <cursor_byok> { 192.0.2.7 }" in text
    assert "not resolved (left out): gone.example" in text
    monkeypatch.setenv("CURSOR_BYOK_FIREWALL", "iptables")
    monkeypatch.setattr(redirect.shutil, "which", lambda tool: f"/usr/sbin/{tool}")
    linux = redirect.rules_text(8080, ["api2.cursor.sh"], platform="linux")
    assert "iptables -t nat -A CURSOR_BYOK -d 192.0.2.7" in linux
    assert "ip6tables -t nat -N CURSOR_BYOK" in linux


def test_firewall_tool_choice_and_a_clear_error_when_none_is_installed(monkeypatch) -> None:
    monkeypatch.setattr(redirect.shutil, "which", lambda tool: None)
    with pytest.raises(redirect.FirewallError, match="nft or iptables not found"):
        redirect.backend({})
    with pytest.raises(redirect.FirewallError, match="use nft or iptables"):
        redirect.backend({"CURSOR_BYOK_FIREWALL": "pf"})
    monkeypatch.setattr(redirect.shutil, "which", lambda tool: f"/usr/sbin/{tool}")
    assert isinstance(redirect.backend({}), redirect.Nft)
    assert isinstance(redirect.backend({"CURSOR_BYOK_FIREWALL": "iptables"}), redirect.Iptables)


def test_transparent_mode_listens_on_both_loopbacks() -> None:
    opts = run_options(build_parser().parse_args(["run", "--transparent", "-p", "8099"]))
    args = mitmdump_args(opts, ipv6=True)
    modes = [args[i + 1] for i, a in enumerate(args) if a == "--mode"]
    assert modes == ["transparent", "transparent@::1:8099"]
    assert mitmdump_args(opts).count("--mode") == 1
    assert opts.redirect_hosts == transparent.DEFAULT_REDIRECT_HOSTS
    custom = ["run", "--transparent", "--redirect-host", "a.test", "--redirect-host", "b.test"]
    assert run_options(build_parser().parse_args(custom)).redirect_hosts == ("a.test", "b.test")


@pytest.mark.skipif(sys.platform != "linux", reason="transparent setup runs on Linux")
def test_without_root_it_refuses_and_says_how(monkeypatch, capsys, tmp_path) -> None:
    """`cursor-byok run --transparent` as an unprivileged user: one line, exit 2, no rules."""

    def never(*args):
        raise AssertionError("reached the firewall without root")

    monkeypatch.setattr(redirect.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(redirect, "backend", never)
    code = main(["run", "--transparent", "--confdir", str(tmp_path), "--redirect-host", "x.test"])
    assert code == 2
    assert "needs root: sudo cursor-byok run --transparent" in capsys.readouterr().err


class FakeFirewall:
    name = "fake"

    def __init__(self, listing: str | None = None) -> None:
        self._listing = listing
        self.removed = 0
        self.added: list[tuple[list[str], list[str], int]] = []

    def listing(self) -> str | None:
        return self._listing

    def remove(self) -> None:
        self.removed += 1
        self._listing = None

    def add(self, v4, v6, port) -> None:
        self.added.append((list(v4), list(v6), port))


def test_new_addresses_of_cursors_hosts_are_added_and_old_ones_kept(monkeypatch) -> None:
    fw = FakeFirewall()
    monkeypatch.setattr(
        redirect, "resolve", lambda hosts: (("192.0.2.1", "192.0.2.3"), ("2001:db8::3",), [])
    )
    known = {"192.0.2.1", "192.0.2.2"}
    new = redirect._refresh(fw, ["api2.cursor.sh"], known, 8080)
    assert new == {"192.0.2.3", "2001:db8::3"}
    assert fw.added == [(["192.0.2.3"], ["2001:db8::3"], 8080)]
    assert redirect._refresh(fw, ["api2.cursor.sh"], known | new, 8080) == set()
    assert len(fw.added) == 1


def test_stale_rules_are_removed_unless_their_owner_still_runs(tmp_path) -> None:
    said: list[str] = []
    fw = FakeFirewall(
        'table inet cursor_byok { comment "cursor-byok transparent redirect pid 999999999"'
    )
    redirect.remove_stale(fw, said.append)
    assert fw.removed == 1 and "left by an earlier run (pid 999999999)" in said[0]
    redirect.remove_stale(fw, said.append)  # nothing there: nothing done
    assert fw.removed == 1
    owner = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()", "cursor-byok"], stdin=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 10
        while b"cursor-byok" not in Path(f"/proc/{owner.pid}/cmdline").read_bytes():
            assert time.monotonic() < deadline, "the stand-in owner did not start"
            time.sleep(0.01)
        fw = FakeFirewall(
            f'-A OUTPUT -m comment --comment "cursor-byok transparent redirect pid {owner.pid}"'
        )
        with pytest.raises(redirect.FirewallError, match=f"pid {owner.pid}.*running"):
            redirect.remove_stale(fw, said.append)
        assert fw.removed == 0
    finally:
        owner.stdin.close()
        owner.wait()


def test_print_rules_needs_transparent_mode(capsys) -> None:
    assert main(["run", "--print-rules"]) == 2
    assert "--print-rules goes with --transparent" in capsys.readouterr().err


class RecordingFirewall(FakeFirewall):
    def __init__(self, fail_install: bool = False) -> None:
        super().__init__()
        self.fail_install = fail_install
        self.installed: list[Redirect] = []

    def install(self, r: Redirect) -> None:
        self.installed.append(r)
        if self.fail_install:
            raise redirect.FirewallError("iptables -t nat -A ... failed: no such table")


@pytest.fixture
def fake_system(monkeypatch):
    """run_transparent with a recording firewall and resolver (no rules touch this machine)."""
    fw = RecordingFirewall()
    monkeypatch.setattr(redirect.os, "geteuid", lambda: 0)
    monkeypatch.setattr(redirect, "backend", lambda: fw)
    monkeypatch.setattr(redirect, "resolve", lambda hosts: (("192.0.2.5",), (), []))
    return fw


@pytest.mark.skipif(sys.platform != "linux" or os.geteuid() != 0, reason="setgid needs root")
def test_supervisor_runs_the_proxy_with_the_exempt_group_and_removes_rules_after(
    fake_system,
) -> None:
    said: list[str] = []
    child = [sys.executable, "-c", "import os, sys; sys.exit(os.getgid() % 200)"]
    code = redirect.run_transparent(child, port=8080, hosts=["api2.cursor.sh"], say=said.append)
    (installed,) = fake_system.installed
    assert code == installed.gid % 200  # the child ran with the group the rules exempt
    assert installed.v4 == ("192.0.2.5",) and installed.owner_pid == os.getpid()
    assert fake_system.removed == 1 and said[-1] == "Removed the fake redirect rules."


def test_a_failed_install_removes_what_got_in_and_says_why(fake_system) -> None:
    fake_system.fail_install = True
    with pytest.raises(redirect.FirewallError, match="no such table"):
        redirect.run_transparent(["true"], port=8080, hosts=["api2.cursor.sh"], say=print)
    assert fake_system.removed == 1
    with pytest.raises(redirect.FirewallError, match="fixed port"):
        redirect.run_transparent(["true"], port=0, hosts=["api2.cursor.sh"], say=print)
