"""A fork server ("zygote") for the test suite's mitmdumps.

Why: each e2e/fault test starts a real mitmdump with our addon, and a fresh one spends ~2 s of
CPU importing mitmproxy and cursor_byok before it is ready: most of the suite's CPU. One helper
process per pytest worker imports those modules once (only modules: no threads, no event loop,
no addon instance) and forks a child per request that becomes the mitmdump, as `.venv/bin/mitmdump`
would run it, with the requested argv, env, cwd and output pipe. A fork shares nothing with its
siblings, so module state an import creates is as fresh as in a new process.

The test side gets a `ZygoteProcess`, which behaves like `subprocess.Popen` for what the tests use
(pid, stdout, poll, wait, returncode, send_signal, terminate, kill). The zygote reaps its children
and reports each exit status over a per-child socket. `CURSOR_BYOK_TEST_ZYGOTE=0` turns it off;
if it cannot start, `spawn` returns None and the caller uses Popen. When the worker ends (or dies:
the control socket closes) the zygote kills its remaining children and exits.

Run as a script: `python zygote.py FD`, FD being its end of a SOCK_SEQPACKET control socket.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ENV_SWITCH = "CURSOR_BYOK_TEST_ZYGOTE"
_ADDON_DIR = Path(__file__).resolve().parents[2] / "addon"
# Read by the interpreter at its start: a child with other values would not be what it asked for.
_STARTUP_ENV = ("PYTHON", "LANG", "LC_")
_MAX_MESSAGE = 1 << 20


# ---- the zygote process -------------------------------------------------------------------


def _preload() -> None:
    """Import what mitmdump and our addon import, leaving sys.path as mitmdump's own."""
    sys.path[0] = str(Path(sys.executable).parent)  # not tests/e2e: a script's dir is first
    sys.path.insert(0, str(_ADDON_DIR))
    import mitmproxy.tools.dump
    import mitmproxy.tools.main  # noqa: F401

    import cursor_byok.proxy.script  # noqa: F401

    sys.path.remove(str(_ADDON_DIR))  # addon/main.py puts it back, as in a fresh mitmdump


def _become_child(request: dict[str, Any], out_fd: int, keep_closed: list[Any]) -> None:
    """In the fork: drop the zygote's descriptors and signal set-up, take the request's."""
    try:
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        os.close(out_fd)
        for item in keep_closed:
            if isinstance(item, int):
                os.close(item)
            else:
                item.close()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if request.get("new_session"):
            os.setsid()
        os.environ.clear()
        os.environ.update(request["env"])
        time.tzset()
        os.chdir(request["cwd"])
        sys.argv = list(request["argv"])
    except BaseException as exc:
        os.write(2, f"zygote: child set-up failed: {exc!r}\n".encode())
        os._exit(127)


def _reap(children: dict[int, socket.socket]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        channel = children.pop(pid, None)
        if channel is not None:
            with contextlib.suppress(OSError):  # the test side is gone
                channel.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
            channel.close()


def _fork(control, wake, children, message: bytes, fds: list[int]) -> bool:
    """Fork one child for a request; True in the child."""
    request = json.loads(message)
    channel = socket.socket(fileno=fds[0])
    assert threading.active_count() == 1, "fork with threads is unsafe"
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _become_child(request, fds[1], [control, *wake, channel, *children.values()])
        return True
    os.close(fds[1])
    children[pid] = channel
    with contextlib.suppress(OSError):
        channel.sendall(f"pid {pid}\n".encode())
    return False


def _serve(control_fd: int) -> bool:
    """The zygote's loop; returns True in a forked child (which then runs mitmdump), False when
    the test side has gone and every child is killed and reaped."""
    _preload()
    control = socket.socket(fileno=control_fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's ^C is for the tests and children
    wake = os.pipe()
    os.set_blocking(wake[0], False)
    os.set_blocking(wake[1], False)
    signal.set_wakeup_fd(wake[1])
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, socket.socket] = {}
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ)
    selector.register(wake[0], selectors.EVENT_READ)
    control.sendall(b"ready")
    while True:
        for key, _ in selector.select():
            if key.fileobj == wake[0]:
                while True:
                    try:
                        if not os.read(wake[0], 512):
                            break
                    except BlockingIOError:
                        break
                _reap(children)
                continue
            message, fds, _, _ = socket.recv_fds(control, _MAX_MESSAGE, 2)
            if not message:
                selector.close()
                for pid in children:
                    os.kill(pid, signal.SIGKILL)
                while children:
                    _reap(children)
                    time.sleep(0.01)
                return False
            if _fork(control, [selector, *wake], children, message, fds):
                return True


# ---- the test side ------------------------------------------------------------------------


class ZygoteProcess:
    """A mitmdump forked by the zygote, with the part of Popen's interface the tests use."""

    stdin = None
    stderr = None

    def __init__(self, args: list[str], channel: socket.socket, stdout: Any) -> None:
        self.args = args
        self.stdout = stdout
        self.returncode: int | None = None
        self._channel = channel
        self._buffer = b""
        self._lock = threading.Lock()
        self.pid = int(self._line(60.0).removeprefix("pid "))

    def _line(self, timeout: float | None) -> str:
        """The next line from the zygote; TimeoutError if none within `timeout`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            self._channel.settimeout(left)
            try:
                data = self._channel.recv(256)
            except (TimeoutError, BlockingIOError) as exc:
                raise TimeoutError from exc
            if not data:
                raise ConnectionError("the zygote closed the channel")
            self._buffer += data
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()

    def _collect(self, timeout: float | None) -> bool:
        """Whether it has ended, reading its exit status within `timeout` (None: no limit).
        Like Popen.poll, a poll while another thread waits does not block."""
        if not self._lock.acquire(timeout=-1 if timeout is None else timeout):
            return self.returncode is not None
        try:
            if self.returncode is None:
                try:
                    line = self._line(timeout)
                except TimeoutError:
                    return False
                except ConnectionError:
                    line = "exit -9"  # the zygote died: it killed its children
                self.returncode = int(line.removeprefix("exit "))
                self._channel.close()
            return True
        finally:
            self._lock.release()

    def poll(self) -> int | None:
        self._collect(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._collect(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        """As `Popen.send_signal`: nothing for a process that has ended. The zygote reaps its
        children and only then reports the exit, so between the two the pid is gone while
        `poll()` still says running: that is an ended process too."""
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class _Zygote:
    def __init__(self) -> None:
        self.env = dict(os.environ, PYTHONUNBUFFERED="1")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.process = subprocess.Popen(
            [sys.executable, __file__, str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            env=self.env,
        )
        theirs.close()
        self.control = ours
        self.lock = threading.Lock()
        try:
            ours.settimeout(120)  # imports on a loaded 2-core machine
            if ours.recv(16) != b"ready":
                raise ConnectionError("the zygote did not start")
            ours.settimeout(None)
        except OSError:
            self.close()
            raise

    def fits(self, env: dict[str, str]) -> bool:
        startup = [k for k in {*env, *self.env} if k.startswith(_STARTUP_ENV)]
        return all(env.get(k) == self.env.get(k) for k in startup)

    def spawn(self, argv: list[str], env: dict[str, str], cwd: Path) -> ZygoteProcess:
        read_fd, write_fd = os.pipe()
        mine, theirs = socket.socketpair()
        request = {"argv": argv, "env": env, "cwd": str(cwd)}
        try:
            with self.lock:
                socket.send_fds(
                    self.control, [json.dumps(request).encode()], [theirs.fileno(), write_fd]
                )
        except OSError:
            os.close(read_fd)
            mine.close()
            raise
        finally:
            theirs.close()
            os.close(write_fd)
        stdout = open(read_fd, encoding=None)  # noqa: SIM115 - text, as Popen(text=True) gives
        try:
            return ZygoteProcess(argv, mine, stdout)
        except OSError:
            stdout.close()
            mine.close()
            raise

    def close(self) -> None:
        self.control.close()  # the zygote kills its children and exits
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


_zygote: _Zygote | None = None
_broken = False
_start_lock = threading.Lock()


def _get() -> _Zygote | None:
    global _zygote, _broken
    with _start_lock:
        if _zygote is None and not _broken:
            try:
                _zygote = _Zygote()
                atexit.register(_zygote.close)
            except OSError:
                _broken = True
        return _zygote


def spawn(argv: list[str], env: dict[str, str], cwd: Path) -> ZygoteProcess | None:
    """A mitmdump run as `argv` forked by this worker's zygote, or None (use Popen) when it is
    turned off, cannot start, or `env` changes what an interpreter reads at its start."""
    global _broken
    if os.environ.get(ENV_SWITCH) == "0":
        return None
    zygote = _get()
    if zygote is None or not zygote.fits(env):
        return None
    try:
        return zygote.spawn(argv, env, cwd)
    except OSError:
        _broken = True
        return None


if __name__ == "__main__":
    if _serve(int(sys.argv[1])):  # in a forked child: be `mitmdump`, as .venv/bin/mitmdump is
        from mitmproxy.tools.main import mitmdump

        sys.exit(mitmdump())
