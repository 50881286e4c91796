"""Start a real `mitmdump` with our addon on 127.0.0.1, port 0, for end-to-end tests."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import zygote
from zygote import ZygoteProcess

REPO = Path(__file__).resolve().parents[2]
TEST_HOST = "api2.cursor.test"  # reserved TLD: resolves nowhere, proves no upstream is used
_LISTENING = re.compile(r"listening at (?:\*|[\d.]+|\[[^\]]+\]):(\d+)")


@dataclass
class Mitm:
    process: subprocess.Popen | ZygoteProcess
    port: int
    confdir: Path
    data_dir: Path
    log_lines: list[str]
    logged: threading.Condition | None = None  # notified for every line appended

    def wait_for_log(self, found, timeout: float = 10) -> None:
        """Until `found(lines)` is true of the log so far (AssertionError after `timeout`)."""
        assert self.logged is not None
        with self.logged:
            if not self.logged.wait_for(lambda: found(self.log_lines), timeout):
                raise AssertionError(f"not in mitmdump's log within {timeout:.0f} s")

    @property
    def proxy_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ca_file(self) -> Path:
        return self.confdir / "mitmproxy-ca-cert.pem"

    def log(self) -> str:
        return "".join(self.log_lines)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def mitmdump_path() -> str:
    candidate = Path(sys.executable).parent / "mitmdump"
    return str(candidate) if candidate.exists() else "mitmdump"


def start_mitmdump(
    tmp: Path,
    *extra: str,
    mode: str | None = None,
    data_dir: Path | None = None,
    agent: str = "scripted",
    config: Path | None = None,
    env: dict[str, str] | None = None,
    command: list[str] | None = None,
    timeout: float = 120,
    wait_ready: bool = True,
    hosts: str = TEST_HOST,
    wrap: list[str] | None = None,
    port: int = 0,
    script: Path | None = None,
) -> Mitm:
    """Start mitmdump (under `wrap`, a command prefix, if given). Pass each option once: a
    repeated `--set` of an addon option stops the proxy at start (`OptionCheck`). `timeout` is
    a deadline, not a wait: on a busy machine (2 cores, load 12) loading the script alone took
    13 s. `port`: where to listen (a proxy restarted where the first one was), else any.
    `script`: the addon to load, else this checkout's (a benchmark runs another tree's)."""
    confdir = tmp / "mitmconf"
    data_dir = data_dir or tmp / "data"
    confdir.mkdir(parents=True, exist_ok=True)
    args = [
        mitmdump_path(),
        "--listen-host",
        "127.0.0.1",
        "-p",
        str(port),
        "--set",
        f"confdir={confdir}",
        "--set",
        "connection_strategy=lazy",
        "--set",
        f"cursor_byok_data_dir={data_dir}",
        "--set",
        f"cursor_byok_hosts={hosts}",
        "--set",
        f"cursor_byok_agent={agent}",
        "--set",
        f"cursor_byok_config={config or tmp / 'no-config.toml'}",
        "-s",
        str(script or REPO / "addon" / "main.py"),
        *extra,
    ]
    if mode:
        args += ["--mode", mode]
    if command is not None:  # a launcher of our own (cursor-byok run) instead of mitmdump
        args = command
    if wrap is not None:  # a command that runs mitmdump (e.g. in a mount namespace of its own)
        args = [*wrap, *args]
    env = dict(os.environ, PYTHONUNBUFFERED="1", **(env or {}))
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        env.pop(name, None)
    process: subprocess.Popen | ZygoteProcess | None = None
    # forked by this worker's zygote (no import cost), unless another tree's addon is to load:
    # the zygote has this checkout's imported
    if command is None and wrap is None and script is None:
        process = zygote.spawn(args, env, tmp)
    if process is None:
        process = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp
        )
    lines: list[str] = []
    port_box: list[int] = []
    ready = threading.Event()
    listening = threading.Event()
    ended = threading.Event()  # its output closed: the process is gone (perhaps not yet reaped)
    logged = threading.Condition()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            with logged:
                lines.append(line)
                logged.notify_all()
            match = _LISTENING.search(line)
            if match and not port_box:
                port_box.append(int(match.group(1)))
                listening.set()
            if "cursor-byok ready" in line:
                ready.set()
        ended.set()
        ready.set()  # the process ended: nothing more will come
        listening.set()

    threading.Thread(target=pump, daemon=True).start()
    (ready if wait_ready else listening).wait(timeout)
    if not port_box or (wait_ready and not ready.is_set()) or ended.is_set():
        process.kill()
        raise RuntimeError("mitmdump did not start:\n" + "".join(lines))
    return Mitm(process, port_box[0], confdir, data_dir, lines, logged)


def start_plain_proxy(tmp: Path, script: str, env: dict[str, str], *extra: str) -> Mitm:
    """A plain mitmdump on 127.0.0.1 without our addon, that only tunnels (`--ignore-hosts .*`)
    and runs `script` (a few lines that write down what it was asked for): a stand-in for a
    corporate or upstream proxy."""
    (tmp / "proxy_script.py").write_text(script)
    command = [
        mitmdump_path(),
        "--listen-host",
        "127.0.0.1",
        "-p",
        "0",
        "--set",
        f"confdir={tmp / 'conf'}",
        "--ignore-hosts",
        ".*",
        *extra,
        "-s",
        str(tmp / "proxy_script.py"),
    ]
    return start_mitmdump(tmp, command=command, wait_ready=False, env=env)


def start_in_front_of(backend, tmp: Path, config: Path, *extra: str) -> Mitm:
    """The provider agent in front of a stand-in Cursor backend (fakes/fake_cursor.py): its host
    (127.0.0.1) is Cursor's, its certificate trusted, the fake provider's key in the env."""
    from provider_config import KEY_ENV

    return start_mitmdump(
        tmp,
        "--set",
        f"ssl_verify_upstream_trusted_ca={backend.cert}",
        *extra,
        agent="provider",
        config=config,
        env={KEY_ENV: "sk-test"},
        hosts="127.0.0.1",
    )
