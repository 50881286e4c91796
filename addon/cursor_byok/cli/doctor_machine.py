"""The doctor's checks of this machine: the mitmproxy CA and where it is trusted (the fixes are
`trust.py`'s), whether local capture can run here, the data dir's size and disk, the port.
"""

from __future__ import annotations

import os
import socket
import ssl
import sys
from collections.abc import Callable
from pathlib import Path

from cursor_byok.cli.doctor_setup import FAIL
from cursor_byok.cli.doctor_setup import OK
from cursor_byok.cli.doctor_setup import WARN
from cursor_byok.cli.doctor_setup import Check
from cursor_byok.cli.doctor_traffic import proxy_on


def _der_certs(pem_text: str) -> set[bytes]:
    from cursor_byok.cli.trust import der_certs

    return der_certs(pem_text)


def check_ca(confdir: Path, first_run: bool = False) -> list[Check]:
    """The CA file, and where it is trusted; the fixes are `trust.py`'s, as `run` prints them.

    Before the first `run` there is no CA yet: that is a warning (the next step), not a
    failure."""
    from cursor_byok.cli import trust

    ca = confdir / "mitmproxy-ca-cert.pem"
    if not ca.exists():
        return [
            Check(
                WARN if first_run else FAIL,
                "mitmproxy CA",
                f"{ca} does not exist yet",
                fix="start the proxy once (cursor-byok run); it creates the CA, then "
                + trust.trust_command(confdir),
            )
        ]
    ours = _der_certs(ca.read_text())
    checks = [Check(OK, "mitmproxy CA", str(ca))]
    cafile = ssl.get_default_verify_paths().cafile
    trusted = False
    if sys.platform == "darwin" or sys.platform.startswith("win"):
        system = trust.status(confdir)[0]  # keychain / Root store, asked with their own tools
        trusted, cafile = bool(system.trusted), system.detail
    elif cafile and Path(cafile).exists():
        trusted = bool(ours & _der_certs(Path(cafile).read_text(errors="replace")))
    checks.append(
        Check(OK, "CA in the system trust store")
        if trusted
        else Check(
            WARN,
            "CA not found in the system trust store",
            f"looked in {cafile}" if cafile else "no default CA file",
            fix=f"{trust.trust_command(confdir)} (not needed in reverse mode)",
        )
    )
    if sys.platform == "linux":
        checks.append(check_nss(ca, fix=trust.trust_command(confdir)))
    extra = os.environ.get("NODE_EXTRA_CA_CERTS")
    if (
        extra
        and Path(extra).expanduser().exists()
        and ours & _der_certs(Path(extra).expanduser().read_text(errors="replace"))
    ):
        checks.append(Check(OK, "NODE_EXTRA_CA_CERTS points at the CA"))
    else:
        checks.append(
            Check(
                WARN,
                "NODE_EXTRA_CA_CERTS is not the mitmproxy CA",
                fix="start Cursor with NODE_EXTRA_CA_CERTS="
                + trust.node_ca_path(trust.system_store(), ca),
            )
        )
    return checks


def check_nss(ca: Path, nssdb: Path | None = None, fix: str = "") -> Check:
    """Linux: Chromium/Electron (Cursor's window) read the user's NSS database, not the bundle."""
    from cursor_byok.cli import trust

    nssdb = nssdb or trust.invoking_user().home / ".pki" / "nssdb"
    listed, detail = trust.nss_status(nssdb, ca)
    if listed:
        return Check(OK, "CA in the NSS database (Chromium/Electron)", detail)
    return Check(
        WARN,
        "CA not in the NSS database (Chromium/Electron)",
        detail,
        fix=(fix or "cursor-byok trust install")
        + " (needs certutil: apt-get install libnss3-tools)",
    )


def check_local_capture(
    platform: str = sys.platform,
    release: str | None = None,
    exists: Callable[[str], bool] = os.path.exists,
    which: Callable[[str], str | None] | None = None,
) -> Check:
    """Whether `run --local` can work here (mitmproxy's Linux redirector: sudo, eBPF with BTF)."""
    import shutil

    title = "local capture (run --local)"
    if platform != "linux":
        return Check(OK, title, "macOS: network extension; Windows: WinDivert (needs admin)")
    release = release or os.uname().release
    reasons = []
    if "microsoft" in release.lower():
        reasons.append("WSL is not supported")
    try:
        major, minor = (int(x) for x in release.split("-")[0].split(".")[:2])
        if (major, minor) < (6, 8):
            reasons.append(f"kernel {major}.{minor} < 6.8")
    except ValueError:
        pass
    if not exists("/sys/kernel/btf/vmlinux"):
        reasons.append("no BTF (/sys/kernel/btf/vmlinux): the eBPF redirector cannot load")
    if (which or shutil.which)("sudo") is None:
        reasons.append("mitmproxy's redirector is started with sudo, which is not on PATH")
    if reasons:
        return Check(
            WARN,
            f"{title} cannot run here",
            "; ".join(reasons),
            fix="use the regular proxy or cursor-byok run --transparent",
        )
    return Check(
        OK, title, "kernel, BTF and sudo present (a sandbox may still refuse the eBPF load)"
    )


def check_data_dir(data_dir: Path, min_free_mb: int = 64) -> Check:
    """The store's size (the proxy keeps blobs and media under their caps), and its disk."""
    from cursor_byok.store.files import low_space
    from cursor_byok.store.sizes import sizes_line

    title = f"data dir {data_dir}"
    if not data_dir.is_dir():
        return Check(OK, title, "not created yet (the proxy makes it at start)")
    detail = sizes_line(data_dir)
    full = low_space(data_dir, min_free_mb)
    if full is not None:
        return Check(WARN, title, f"{detail}; {full}", fix=f"free some space on {data_dir}'s disk")
    return Check(OK, title, detail)


def check_port(host: str, port: int, data_dir: Path | None = None) -> Check:
    """Whether the port is free, or taken by the cursor-byok proxy of this data dir (its
    activity record names its pid and port), or by something else."""
    with socket.socket() as sock:
        try:
            sock.bind((host, port))
        except OSError as exc:
            ours = proxy_on(port, data_dir) if data_dir is not None else None
            if ours is not None:
                return Check(OK, f"port {host}:{port}: the cursor-byok proxy runs there", ours)
            return Check(
                WARN,
                f"port {host}:{port} is in use",
                (exc.strerror or "") + ", not by a cursor-byok proxy with this data dir",
                fix="stop what runs there, or start cursor-byok with --port N (and give the "
                "doctor the same --port)",
            )
    return Check(OK, f"port {host}:{port} is free")
