"""What `cursor-byok trust` does on each platform, as data; the Debian store and NSS are changed
for real in tests/e2e/test_transparent.py (inside a private mount namespace)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from cursor_byok.cli import trust
from cursor_byok.cli.doctor import OK
from cursor_byok.cli.doctor import WARN
from cursor_byok.cli.doctor import check_local_capture
from cursor_byok.cli.doctor import check_nss
from cursor_byok.cli.trust import Action

CONF = Path("/home/u/.mitmproxy")
PEM = str(CONF / "mitmproxy-ca-cert.pem")


def test_platform_detection() -> None:
    assert trust.system_store("darwin") is trust.MACOS
    assert trust.system_store("win32") is trust.WINDOWS
    debian = {"/usr/sbin/update-ca-certificates"}
    assert trust.system_store("linux", debian.__contains__) is trust.DEBIAN
    fedora = {"/etc/pki/ca-trust/source/anchors"}
    assert trust.system_store("linux", fedora.__contains__) is trust.FEDORA
    arch = {"/etc/ca-certificates/trust-source/anchors"}
    assert trust.system_store("linux", arch.__contains__) is trust.ARCH
    assert trust.system_store("linux", lambda path: False) is None


def test_linux_stores_copy_the_anchor_and_refresh() -> None:
    install = trust.plan_system(trust.DEBIAN, CONF, install=True)
    assert install[1] == Action(
        "copy", (PEM, "/usr/local/share/ca-certificates/cursor-byok-mitmproxy.crt")
    )
    assert install[2] == Action("run", ("update-ca-certificates",))
    uninstall = trust.plan_system(trust.DEBIAN, CONF, install=False)
    assert uninstall == [
        Action("remove", ("/usr/local/share/ca-certificates/cursor-byok-mitmproxy.crt",)),
        Action("run", ("update-ca-certificates", "--fresh")),
    ]
    fedora = trust.plan_system(trust.FEDORA, CONF, install=True)
    assert fedora[1].args[1] == "/etc/pki/ca-trust/source/anchors/cursor-byok-mitmproxy.pem"
    assert fedora[2].args == ("update-ca-trust", "extract")


def test_macos_and_windows_commands() -> None:
    (mac,) = trust.plan_system(trust.MACOS, CONF, install=True)
    assert mac.args == (
        "security",
        "add-trusted-cert",
        "-d",
        "-r",
        "trustRoot",
        "-k",
        "/Library/Keychains/System.keychain",
        PEM,
    )
    (win,) = trust.plan_system(trust.WINDOWS, CONF, install=True)
    assert win.args == ("certutil", "-addstore", "-f", "Root", str(CONF / "mitmproxy-ca-cert.cer"))
    (win_off,) = trust.plan_system(trust.WINDOWS, CONF, install=False)
    assert win_off.optional


def test_nss_runs_as_the_user_and_creates_the_database_when_missing() -> None:
    nssdb = Path("/home/u/.pki/nssdb")
    actions = trust.plan_nss(nssdb, CONF, install=True, new_db=True)
    assert all(a.as_user for a in actions)
    assert [a.args[:2] for a in actions] == [
        ("/home/u/.pki/nssdb",),
        ("certutil", "-N"),
        ("certutil", "-A"),
    ]
    assert actions[-1].args == (
        "certutil",
        "-A",
        "-d",
        "sql:/home/u/.pki/nssdb",
        "-t",
        "C,,",
        "-n",
        "cursor-byok-mitmproxy",
        "-a",
    )
    assert actions[-1].stdin == PEM  # read as root, fed to certutil running as the user
    assert len(trust.plan_nss(nssdb, CONF, install=True, new_db=False)) == 1
    (remove,) = trust.plan_nss(nssdb, CONF, install=False, new_db=False)
    assert remove.args[:2] == ("certutil", "-D")


def test_ca_is_created_when_missing_and_found_in_a_bundle(tmp_path) -> None:
    pem = trust.ensure_ca(tmp_path / "conf")
    assert pem.exists()
    bundle = tmp_path / "bundle.crt"
    bundle.write_text("junk\n" + pem.read_text())
    assert trust.in_bundle(pem, bundle)
    assert not trust.in_bundle(pem, tmp_path / "missing.crt")


@pytest.mark.skipif(shutil.which("certutil") is None, reason="certutil (libnss3-tools) missing")
def test_nss_install_and_doctor_check_with_a_real_certutil(tmp_path) -> None:
    confdir = tmp_path / "conf"
    pem = trust.ensure_ca(confdir)
    nssdb = tmp_path / "home" / ".pki" / "nssdb"
    assert trust.nss_status(nssdb, pem)[0] is False
    assert check_nss(pem, nssdb).status == WARN
    user = trust.User(tmp_path / "home")
    for action in trust.plan_nss(nssdb, confdir, install=True, new_db=True):
        trust.perform(action, user)
    assert trust.nss_status(nssdb, pem)[0] is True
    assert check_nss(pem, nssdb).status == OK
    other = trust.ensure_ca(tmp_path / "other-conf")  # a different CA is not ours
    assert trust.nss_status(nssdb, other)[0] is False
    for action in trust.plan_nss(nssdb, confdir, install=False, new_db=False):
        trust.perform(action, user)
    assert trust.nss_status(nssdb, pem)[0] is False


def test_doctor_says_when_local_capture_cannot_run() -> None:
    btf = {"/sys/kernel/btf/vmlinux"}.__contains__
    has_sudo = {"sudo": "/usr/bin/sudo"}.get
    fine = check_local_capture("linux", "6.8.0-45-generic", btf, has_sudo)
    assert fine.status == OK
    old = check_local_capture("linux", "5.15.0", btf, has_sudo)
    assert old.status == WARN and "kernel 5.15 < 6.8" in old.detail
    sandbox = check_local_capture("linux", "6.18.44-fc", lambda p: False, lambda t: None)
    assert "no BTF" in sandbox.detail and "sudo, which is not on PATH" in sandbox.detail
    wsl = check_local_capture("linux", "6.6.36.3-microsoft-standard-WSL2", btf, has_sudo)
    assert "WSL" in wsl.detail
    assert check_local_capture("darwin").status == OK


@pytest.mark.skipif(
    shutil.which("certutil") is None or os.geteuid() != 0, reason="needs certutil and root"
)
def test_under_sudo_nss_is_changed_as_the_user_with_the_ca_read_by_root(tmp_path) -> None:
    """`sudo cursor-byok trust install`: root's confdir is unreadable to the user, the user's NSS
    database must stay the user's (files not owned by root)."""
    confdir = tmp_path / "root-only" / "conf"
    pem = trust.ensure_ca(confdir)
    (tmp_path / "root-only").chmod(0o700)
    home = Path(tempfile.mkdtemp(prefix="cursor-byok-nss-"))
    try:
        os.chown(home, 65534, 65534)
        nssdb = home / ".pki" / "nssdb"
        user = trust.User(home, uid=65534, gid=65534)
        for action in trust.plan_nss(nssdb, confdir, install=True, new_db=True):
            trust.perform(action, user)
        assert (nssdb / "cert9.db").stat().st_uid == 65534
        assert trust.nss_status(nssdb, pem)[0] is True
    finally:
        shutil.rmtree(home)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
def test_a_ca_created_under_sudo_in_the_users_home_belongs_to_the_user(tmp_path) -> None:
    home = tmp_path / "home"
    user = trust.User(home, uid=65534, gid=65534)
    trust.ensure_ca(home / ".mitmproxy", user)
    owners = {p.stat().st_uid for p in [home / ".mitmproxy", *(home / ".mitmproxy").iterdir()]}
    assert owners == {65534}
    trust.ensure_ca(tmp_path / "elsewhere", user)  # root's own confdir stays root's
    assert (tmp_path / "elsewhere" / trust.CA_PEM).stat().st_uid == 0
