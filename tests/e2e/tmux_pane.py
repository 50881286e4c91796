"""A real terminal for the proxy: one tmux server of our own, one window of a fixed size, the
screen read with `tmux capture-pane` (the live status tests)."""

from __future__ import annotations

import asyncio
import shlex
import shutil
import socket
import subprocess
import time
from pathlib import Path

TMUX = shutil.which("tmux")


class Pane:
    """One tmux server of our own (its own socket), one window of a fixed size."""

    def __init__(self, socket_dir: Path, width: int, height: int = 40) -> None:
        assert TMUX is not None
        self.base = [TMUX, "-S", str(socket_dir / "tmux.sock")]
        self.width = width
        self.height = height

    def start(self, command: list[str], env: dict[str, str]) -> None:
        line = shlex.join(["env", *(f"{k}={v}" for k, v in env.items()), *command])
        # remain-on-exit: a proxy that dies leaves its last words on the screen for the report
        subprocess.run(
            [*self.base, "new-session", "-d", "-s", "t", "-x", str(self.width),
             "-y", str(self.height), line],
            check=True,
        )  # fmt: skip
        subprocess.run([*self.base, "set-option", "-t", "t", "remain-on-exit", "on"], check=True)

    def pid(self) -> int:
        """The pane's process (`cursor-byok run` execs mitmdump: the proxy itself)."""
        result = subprocess.run(
            [*self.base, "display-message", "-p", "-t", "t", "#{pane_pid}"],
            capture_output=True,
            text=True,
            check=True,
        )
        return int(result.stdout.strip())

    def screen(self) -> str:
        result = subprocess.run(
            # -J: a log line the terminal wrapped comes back as one line
            [*self.base, "capture-pane", "-p", "-J", "-t", "t"],
            capture_output=True,
            text=True,
        )
        return result.stdout

    def send(self, *keys: str) -> None:
        """Type into the pane (tmux key names: "Enter", "C-c"; anything else is text)."""
        subprocess.run([*self.base, "send-keys", "-t", "t", *keys], check=True)

    def stop(self) -> None:
        subprocess.run([*self.base, "send-keys", "-t", "t", "C-c"], capture_output=True)
        subprocess.run([*self.base, "kill-server"], capture_output=True)

    async def wait_for(self, condition, what: str, timeout: float = 30.0) -> str:
        """The first screen `condition` holds for, polled until a deadline."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if condition(screen):
                return screen
            await asyncio.sleep(0.1)
        raise AssertionError(f"never saw {what}; the screen:\n{screen}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
