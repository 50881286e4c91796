"""`cursor-byok trust install | uninstall | status`: mitmproxy's CA in the stores Cursor reads.

Cursor is Electron: its Chromium side verifies with the system store on macOS and Windows and
with the NSS database in ~/.pki/nssdb on Linux; its Node side uses Node's own list plus
NODE_EXTRA_CA_CERTS. Command-line clients (curl, Python) read the system bundle. `plan_*` say what
to do as data (tested without touching the machine); `install`/`uninstall`/`status` do it.
"""

from __future__ import annotations

import os
import pwd
import shutil
import ssl
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cursor_byok.errors import ByokError

NAME = "cursor-byok-mitmproxy"  # file name in the system store, nickname in NSS
CA_PEM = "mitmproxy-ca-cert.pem"
CA_CER = "mitmproxy-ca-cert.cer"
MAC_KEYCHAIN = "/Library/Keychains/System.keychain"


@dataclass(frozen=True)
class Action:
    """One step: copy a file, remove one, create a directory or run a command."""

    kind: str  # copy | remove | mkdir | run
    args: tuple[str, ...]
    as_user: bool = False  # run as the user who called sudo (their NSS database, their files)
    optional: bool = False  # a failure is reported, not fatal (e.g. nothing to delete)
    stdin: str | None = None  # a file fed to the command, read before dropping privileges

    def describe(self) -> str:
        if self.kind == "run":
            return " ".join(self.args) + (f" < {self.stdin}" if self.stdin else "")
        return f"{self.kind} {' '.join(self.args)}"


@dataclass(frozen=True)
class SystemStore:
    """Where a platform keeps its trusted roots and how to refresh them."""

    name: str
    anchor: str | None  # file our CA is copied to (None: added by command)
    refresh: tuple[str, ...]  # command run after adding/removing the anchor
    bundle: str | None  # the file OpenSSL-based clients read, when there is one


DEBIAN = SystemStore(
    "Debian/Ubuntu (update-ca-certificates)",
    f"/usr/local/share/ca-certificates/{NAME}.crt",
    ("update-ca-certificates",),
    "/etc/ssl/certs/ca-certificates.crt",
)
FEDORA = SystemStore(
    "Fedora/RHEL (update-ca-trust)",
    f"/etc/pki/ca-trust/source/anchors/{NAME}.pem",
    ("update-ca-trust", "extract"),
    "/etc/pki/tls/certs/ca-bundle.crt",
)
ARCH = SystemStore(
    "Arch (update-ca-trust)",
    f"/etc/ca-certificates/trust-source/anchors/{NAME}.crt",
    ("update-ca-trust", "extract"),
    "/etc/ssl/certs/ca-certificates.crt",
)
MACOS = SystemStore("macOS System keychain", None, (), None)
WINDOWS = SystemStore("Windows Root store (certutil)", None, (), None)


def system_store(platform: str = sys.platform, exists: Callable[[str], bool] = os.path.exists):
    """The system store of this machine, or None when it is none we know."""
    if platform == "darwin":
        return MACOS
    if platform.startswith("win"):
        return WINDOWS
    if exists("/usr/sbin/update-ca-certificates") or exists("/usr/local/share/ca-certificates"):
        return DEBIAN
    if exists("/etc/pki/ca-trust/source/anchors"):
        return FEDORA
    if exists("/etc/ca-certificates/trust-source/anchors"):
        return ARCH
    return None


def plan_system(store: SystemStore, confdir: Path, install: bool) -> list[Action]:
    pem, cer = str(confdir / CA_PEM), str(confdir / CA_CER)
    if store is MACOS:
        if install:
            add = ("security", "add-trusted-cert", "-d", "-r", "trustRoot", "-k", MAC_KEYCHAIN)
            return [Action("run", (*add, pem))]
        return [Action("run", ("security", "remove-trusted-cert", "-d", pem), optional=True)]
    if store is WINDOWS:
        if install:
            return [Action("run", ("certutil", "-addstore", "-f", "Root", cer))]
        return [Action("run", ("certutil", "-delstore", "Root", "mitmproxy"), optional=True)]
    assert store.anchor is not None
    if install:
        return [
            Action("mkdir", (str(Path(store.anchor).parent),)),
            Action("copy", (pem, store.anchor)),
            Action("run", store.refresh),
        ]
    refresh = store.refresh + (("--fresh",) if store is DEBIAN else ())
    return [Action("remove", (store.anchor,)), Action("run", refresh)]


def plan_nss(nssdb: Path, confdir: Path, install: bool, new_db: bool) -> list[Action]:
    """Chromium/Electron on Linux: the user's shared NSS database (needs certutil)."""
    db = f"sql:{nssdb}"
    if not install:
        return [Action("run", ("certutil", "-D", "-d", db, "-n", NAME), as_user=True)]
    actions = []
    if new_db:
        actions += [
            Action("mkdir", (str(nssdb),), as_user=True),
            Action("run", ("certutil", "-N", "-d", db, "--empty-password"), as_user=True),
        ]
    pem = str(confdir / CA_PEM)
    # On stdin: under sudo the CA may sit in root's home, which the user cannot read.
    add = ("certutil", "-A", "-d", db, "-t", "C,,", "-n", NAME, "-a")
    actions.append(Action("run", add, as_user=True, stdin=pem))
    return actions


# --- the steps, said the same way everywhere ------------------------------------------------------
# `run`'s banner, `trust status`, the doctor and the README give these steps with these file names
# (the README's "Regular proxy" section is checked against them by tests/test_trust.py).


def self_command() -> str:
    """This installation's `cursor-byok`, by absolute path: under sudo, PATH and the home
    directory are root's (a tool install in ~/.local/bin is not on root's PATH)."""
    import shlex

    from cursor_byok.cli.service import cursor_byok_command

    return " ".join(shlex.quote(part) for part in cursor_byok_command())


def trust_command(confdir: Path) -> str:
    """The one command that trusts the CA (system store and NSS); `--confdir` because under sudo
    the default would be root's ~/.mitmproxy, not the user's."""
    return f"sudo {self_command()} trust install --confdir {confdir}"


def manual_steps(confdir: Path, platform: str = sys.platform) -> list[str]:
    """What `trust install` does, by hand, on this platform only (never another platform's
    command with this platform's paths), with the file names `trust install` uses."""
    pem = confdir / CA_PEM
    if platform == "darwin":
        return [
            f"sudo security add-trusted-cert -d -r trustRoot -k {MAC_KEYCHAIN} {pem}",
            f"start Cursor with NODE_EXTRA_CA_CERTS={pem}",
        ]
    if platform.startswith("win"):
        return [
            f"certutil -addstore -f Root {confdir / CA_CER}",
            f"start Cursor with NODE_EXTRA_CA_CERTS={pem}",
        ]
    store = system_store(platform) or DEBIAN
    assert store.anchor is not None
    return [
        f"sudo cp {pem} {store.anchor} && sudo {' '.join(store.refresh)}",
        f"certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n {NAME} -i {pem}"
        "   (Chromium/Electron; certutil is in libnss3-tools)",
        f"start Cursor with NODE_EXTRA_CA_CERTS={store.anchor}",
    ]


def steps_text(confdir: Path, platform: str = sys.platform) -> str:
    """The CA steps as `run` prints them: `trust install` first, the hand steps after."""
    pem = confdir / CA_PEM
    node = node_ca_path(system_store(platform), pem) if platform.startswith("linux") else pem
    lines = [
        f"Trust mitmproxy's CA ({pem}, created on first start):",
        f"  {trust_command(confdir)}",
        f"  then start Cursor with NODE_EXTRA_CA_CERTS={node}",
        f"  check with: {self_command()} trust status --confdir {confdir}",
        "  or by hand:",
        *(f"    {step}" for step in manual_steps(confdir, platform)),
    ]
    return "\n".join(lines)


# --- doing it ----------------------------------------------------------------------------------


class TrustError(ByokError):
    pass


@dataclass(frozen=True)
class User:
    """Whose NSS database: the user who ran sudo, else the current one."""

    home: Path
    uid: int | None = None  # set when commands must drop from root to this user
    gid: int | None = None


def invoking_user() -> User:
    sudo_user = os.environ.get("SUDO_USER")
    if os.geteuid() == 0 and sudo_user and sudo_user != "root":
        try:
            entry = pwd.getpwnam(sudo_user)
        except KeyError:
            return User(Path.home())
        return User(Path(entry.pw_dir), entry.pw_uid, entry.pw_gid)
    return User(Path.home())


def ensure_ca(confdir: Path, user: User | None = None) -> Path:
    """mitmproxy's CA in `confdir`, created the way mitmproxy creates it when missing (and given
    to the user who ran sudo when it is in their home, so their own proxy can read it)."""
    pem = confdir / CA_PEM
    if not pem.exists():
        from mitmproxy.certs import CertStore

        confdir.mkdir(parents=True, exist_ok=True)
        CertStore.from_store(confdir, "mitmproxy", 2048)
        user = user or invoking_user()
        if user.uid is not None and confdir.resolve().is_relative_to(user.home.resolve()):
            for path in [confdir, *confdir.iterdir()]:
                os.chown(path, user.uid, user.gid if user.gid is not None else -1)
    return pem


def perform(action: Action, user: User) -> None:
    demote: dict[str, Any] = {}  # subprocess.run's user/group/extra_groups
    if action.as_user and user.uid is not None:
        demote = {"user": user.uid, "group": user.gid, "extra_groups": []}
    if action.kind == "copy":
        shutil.copyfile(action.args[0], action.args[1])
        os.chmod(action.args[1], 0o644)
    elif action.kind == "remove":
        Path(action.args[0]).unlink(missing_ok=True)
    elif action.kind == "mkdir":
        if demote:
            subprocess.run(["mkdir", "-p", action.args[0]], check=True, **demote)
        else:
            Path(action.args[0]).mkdir(parents=True, exist_ok=True)
    else:
        if shutil.which(action.args[0]) is None:
            raise TrustError(f"{action.args[0]} not found on PATH")
        data = Path(action.stdin).read_text() if action.stdin else None
        result = subprocess.run(
            list(action.args), input=data, capture_output=True, text=True, **demote
        )
        if result.returncode != 0:
            detail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["?"]
            raise TrustError(f"{action.describe()}: {detail[0]}")


def der_certs(pem_text: str) -> set[bytes]:
    """The certificates of a PEM bundle (text between them, as in Fedora's bundle, is skipped)."""
    certs = set()
    begin, end = "-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----"
    for block in pem_text.split(end):
        if begin in block:
            body = block[block.index(begin) :].strip()
            try:
                certs.add(ssl.PEM_cert_to_DER_cert(body + "\n" + end + "\n"))
            except ValueError:
                continue
    return certs


def in_bundle(pem: Path, bundle: Path) -> bool:
    """Whether the CA in `pem` is one of the certificates in `bundle`."""
    try:
        return bool(der_certs(pem.read_text()) & der_certs(bundle.read_text(errors="replace")))
    except OSError:
        return False


def nss_status(nssdb: Path, pem: Path) -> tuple[bool | None, str]:
    """(True/False: our CA is listed or not, None: cannot tell) and a line saying where."""
    if shutil.which("certutil") is None or sys.platform != "linux":
        return None, "certutil not installed (Debian/Ubuntu: apt-get install libnss3-tools)"
    if not (nssdb / "cert9.db").exists():
        return False, f"no NSS database at {nssdb}"
    result = subprocess.run(
        ["certutil", "-L", "-d", f"sql:{nssdb}", "-n", NAME, "-a"], capture_output=True, text=True
    )
    try:
        ours = der_certs(pem.read_text())
    except OSError:
        ours = set()
    listed = result.returncode == 0 and bool(ours & der_certs(result.stdout))
    return listed, f"{nssdb} ({NAME})"


@dataclass(frozen=True)
class Status:
    store: str
    trusted: bool | None  # None: cannot tell here
    detail: str


def status(confdir: Path, user: User | None = None) -> list[Status]:
    user = user or invoking_user()
    pem = confdir / CA_PEM
    out = []
    store = system_store()
    if store is None:
        out.append(Status("system store", None, "unknown platform layout"))
    elif store.bundle:
        out.append(Status(store.name, in_bundle(pem, Path(store.bundle)), store.bundle))
    elif store is MACOS and shutil.which("security"):
        ok = subprocess.run(["security", "verify-cert", "-c", str(pem)], capture_output=True)
        out.append(Status(store.name, ok.returncode == 0, "security verify-cert"))
    elif store is WINDOWS and shutil.which("certutil"):
        ok = subprocess.run(["certutil", "-verifystore", "Root", "mitmproxy"], capture_output=True)
        out.append(Status(store.name, ok.returncode == 0, "certutil -verifystore Root"))
    else:
        out.append(Status(store.name, None, "cannot check here"))
    if sys.platform == "linux":
        trusted, detail = nss_status(user.home / ".pki" / "nssdb", pem)
        out.append(Status("NSS (Chromium/Electron)", trusted, detail))
    # Only what this shell says: Cursor may well be started with another environment, so an
    # unset variable is "cannot tell" (?), and only one that points elsewhere is ✘.
    extra = os.environ.get("NODE_EXTRA_CA_CERTS")
    node_ok = in_bundle(pem, Path(extra).expanduser()) if extra else None
    out.append(
        Status(
            "Node (NODE_EXTRA_CA_CERTS)",
            node_ok,
            f"start Cursor with NODE_EXTRA_CA_CERTS={node_ca_path(store, pem)}",
        )
    )
    return out


def node_ca_path(store: SystemStore | None, pem: Path) -> str:
    """The CA file to give Node: the world-readable system-store copy when there is one (under
    sudo the confdir may be root's home, which the user cannot read)."""
    return store.anchor if store is not None and store.anchor else str(pem)


def change(confdir: Path, install: bool, say: Callable[[str], None], nss: bool = True) -> int:
    """Install or uninstall; 0 when the system store step worked, 1 otherwise."""
    user = invoking_user()
    if install:
        pem = ensure_ca(confdir, user)
        if sys.platform.startswith("win") and not (confdir / CA_CER).exists():
            raise TrustError(f"{confdir / CA_CER} missing: start mitmproxy once")
    else:
        pem = confdir / CA_PEM
    store = system_store()
    code = 0
    if store is None:
        say("system store: unknown layout; add the CA by hand: " + str(pem))
        code = 1
    else:
        try:
            for action in plan_system(store, confdir, install):
                _perform_reported(action, user, say)
            say(f"{'added to' if install else 'removed from'} {store.name}")
        except (TrustError, OSError) as exc:
            say(f"{store.name}: {exc}" + ("" if os.geteuid() == 0 else " (run with sudo)"))
            code = 1
    if nss and sys.platform == "linux":
        nssdb = user.home / ".pki" / "nssdb"
        if shutil.which("certutil") is None:
            say("NSS: certutil not installed, skipped (apt-get install libnss3-tools)")
        elif install or (nssdb / "cert9.db").exists():
            new_db = not (nssdb / "cert9.db").exists()
            try:
                for action in plan_nss(nssdb, confdir, install, new_db):
                    perform(action, user)
                say(f"NSS {nssdb}: {'added' if install else 'removed'} ({NAME})")
            except (TrustError, OSError, subprocess.CalledProcessError) as exc:
                say(f"NSS {nssdb}: {exc}")
    if install:
        say(f"Node side of Cursor: start it with NODE_EXTRA_CA_CERTS={node_ca_path(store, pem)}")
    return code


def _perform_reported(action: Action, user: User, say: Callable[[str], None]) -> None:
    try:
        perform(action, user)
    except TrustError as exc:
        if not action.optional:
            raise
        say(f"({exc})")
