"""`cursor-byok service`: keep the proxy running across logins, with the user's service manager.

One unit per platform, all per-user (no root): a systemd user unit on Linux, a LaunchAgent on
macOS, a logon task on Windows. Each runs `cursor-byok run --quiet` plus the user's options,
restarts it when it fails, and keeps its logs bounded (journald on Linux; elsewhere `run
--log-file`, which rotates). The files are private to the user. Installing twice rewrites the same
file; uninstalling removes only the service, never the config, the data or the CA.

File generation is pure (`unit_files`), so every platform's files can be produced and checked on
any machine (`--print`); only install/uninstall/status/logs talk to the service manager.
"""

from __future__ import annotations

import os
import plistlib
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

NAME = "cursor-byok"
LABEL = "dev.cursor-byok.proxy"  # launchd label
PLATFORMS = ("linux", "macos", "windows")

Runner = Callable[[Sequence[str]], int]


def current_platform() -> str:
    if sys.platform == "darwin":
        return "macos"
    if sys.platform.startswith("win"):
        return "windows"
    return "linux"


def cursor_byok_command() -> list[str]:
    """How to start this installation's `cursor-byok` (a tool install, a venv or a checkout)."""
    scripts = Path(sys.executable).parent
    for name in ("cursor-byok", "cursor-byok.exe"):
        if (scripts / name).exists():
            return [str(scripts / name)]
    found = shutil.which("cursor-byok")
    if found:
        return [str(Path(found).resolve())]
    return [sys.executable, "-m", "cursor_byok.cli.main"]


@dataclass(frozen=True)
class ServiceFile:
    path: Path
    content: bytes
    mode: int = 0o600


def log_dir(platform: str, home: Path) -> Path:
    if platform == "macos":
        return home / "Library" / "Logs" / NAME
    if platform == "windows":
        local = os.environ.get("LOCALAPPDATA") or str(home / "AppData" / "Local")
        return Path(local) / NAME / "logs"
    return home / ".local" / "state" / NAME


def run_command(platform: str, home: Path, run_args: Sequence[str]) -> list[str]:
    command = [*cursor_byok_command(), "run", "--quiet", *run_args]
    if platform != "linux":  # journald keeps (and rotates) the logs on Linux
        command += ["--log-file", str(log_dir(platform, home) / f"{NAME}.log")]
    return command


def _systemd_quote(arg: str) -> str:
    if arg and all(c.isalnum() or c in "-_./=:,+@%" for c in arg):
        return arg.replace("%", "%%")
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%") + '"'


def systemd_unit(command: Sequence[str]) -> str:
    return (
        "[Unit]\n"
        "Description=cursor-byok: Cursor's Agent on your own LLM provider\n"
        "After=network-online.target\n"
        "\n"
        "[Service]\n"
        "Type=simple\n"
        f"ExecStart={' '.join(_systemd_quote(a) for a in command)}\n"
        "# API keys named by api_key_env: put NAME=value lines in this file (chmod 600).\n"
        f"EnvironmentFile=-%h/.config/{NAME}/env\n"
        "Restart=on-failure\n"
        "RestartSec=5\n"
        "UMask=0077\n"
        "# Logs go to the journal, which rotates them: cursor-byok service logs\n"
        "StandardOutput=journal\n"
        "StandardError=journal\n"
        "\n"
        "[Install]\n"
        "WantedBy=default.target\n"
    )


def launchd_plist(command: Sequence[str], home: Path) -> bytes:
    logs = log_dir("macos", home)
    plist = {
        "Label": LABEL,
        "ProgramArguments": list(command),
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},  # restart when it fails, not after a clean stop
        "ThrottleInterval": 5,
        "ProcessType": "Background",
        "Umask": 0o077,
        # `run --log-file` rotates its own log; these catch what happens before that starts.
        "StandardOutPath": str(logs / "launchd.out.log"),
        "StandardErrorPath": str(logs / "launchd.err.log"),
    }
    return plistlib.dumps(plist)


def windows_user() -> str:
    """DOMAIN\\user of the current user (what Task Scheduler's UserId wants)."""
    import getpass

    user = os.environ.get("USERNAME") or getpass.getuser()
    domain = os.environ.get("USERDOMAIN")
    return f"{domain}\\{user}" if domain else user


def windows_task(command: Sequence[str], user: str | None = None) -> bytes:
    program, args = command[0], subprocess.list2cmdline(list(command[1:]))
    user_id = escape(user or windows_user())
    xml = f"""<?xml version="1.0" encoding="UTF-16"?>
<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
  <RegistrationInfo>
    <Description>cursor-byok: Cursor's Agent on your own LLM provider</Description>
  </RegistrationInfo>
  <Triggers>
    <LogonTrigger><Enabled>true</Enabled><UserId>{user_id}</UserId></LogonTrigger>
  </Triggers>
  <Principals>
    <Principal id="Author">
      <UserId>{user_id}</UserId>
      <LogonType>InteractiveToken</LogonType>
      <RunLevel>LeastPrivilege</RunLevel>
    </Principal>
  </Principals>
  <Settings>
    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>
    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>
    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>
    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>
    <RestartOnFailure><Interval>PT1M</Interval><Count>999</Count></RestartOnFailure>
    <Hidden>true</Hidden>
  </Settings>
  <Actions Context="Author">
    <Exec>
      <Command>{escape(program)}</Command>
      <Arguments>{escape(args)}</Arguments>
    </Exec>
  </Actions>
</Task>
"""
    return xml.encode("utf-16")


def unit_path(platform: str, home: Path) -> Path:
    if platform == "linux":
        config = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
        return Path(config) / "systemd" / "user" / f"{NAME}.service"
    if platform == "macos":
        return home / "Library" / "LaunchAgents" / f"{LABEL}.plist"
    local = os.environ.get("LOCALAPPDATA") or str(home / "AppData" / "Local")
    return Path(local) / NAME / f"{NAME}-task.xml"


def unit_files(platform: str, home: Path, run_args: Sequence[str] = ()) -> list[ServiceFile]:
    """The files `install` writes on `platform` (pure: nothing is written)."""
    if platform not in PLATFORMS:
        raise ValueError(f"unknown platform {platform!r}")
    command = run_command(platform, home, run_args)
    path = unit_path(platform, home)
    if platform == "linux":
        return [ServiceFile(path, systemd_unit(command).encode())]
    if platform == "macos":
        return [ServiceFile(path, launchd_plist(command, home))]
    return [ServiceFile(path, windows_task(command))]


def manager_commands(platform: str, action: str, home: Path) -> list[list[str]]:
    """What install/uninstall/status/logs run in the platform's service manager."""
    path = unit_path(platform, home)
    if platform == "linux":
        ctl = ["systemctl", "--user"]
        return {
            "install": [
                [*ctl, "daemon-reload"],
                [*ctl, "enable", f"{NAME}.service"],
                [*ctl, "restart", f"{NAME}.service"],
            ],
            "uninstall": [[*ctl, "disable", "--now", f"{NAME}.service"]],
            "uninstall-after": [[*ctl, "daemon-reload"]],
            "status": [[*ctl, "status", "--no-pager", f"{NAME}.service"]],
            "logs": [["journalctl", "--user", "-u", f"{NAME}.service", "-n", "200", "--no-pager"]],
        }[action]
    if platform == "macos":
        domain = f"gui/{os.getuid() if hasattr(os, 'getuid') else 0}"
        return {
            "install": [
                ["launchctl", "bootout", f"{domain}/{LABEL}"],  # fails when not loaded: fine
                ["launchctl", "bootstrap", domain, str(path)],
            ],
            "uninstall": [["launchctl", "bootout", f"{domain}/{LABEL}"]],
            "uninstall-after": [],
            "status": [["launchctl", "print", f"{domain}/{LABEL}"]],
            "logs": [["tail", "-n", "200", str(log_dir("macos", home) / f"{NAME}.log")]],
        }[action]
    return {
        "install": [
            ["schtasks", "/Create", "/TN", NAME, "/XML", str(path), "/F"],
            ["schtasks", "/Run", "/TN", NAME],
        ],
        "uninstall": [
            ["schtasks", "/End", "/TN", NAME],
            ["schtasks", "/Delete", "/TN", NAME, "/F"],
        ],
        "uninstall-after": [],
        "status": [["schtasks", "/Query", "/TN", NAME, "/V", "/FO", "LIST"]],
        "logs": [
            [
                "powershell",
                "-NoProfile",
                "-Command",
                f"Get-Content -Tail 200 '{log_dir('windows', home) / f'{NAME}.log'}'",
            ]
        ],
    }[action]


def _tolerated(command: Sequence[str], action: str) -> bool:
    """Failures expected on a clean system: unloading what is not loaded."""
    if action == "uninstall":
        return True  # already gone is fine
    return action == "install" and tuple(command[:2]) == ("launchctl", "bootout")


def run_manager(command: Sequence[str]) -> int:
    try:
        return subprocess.run(list(command), check=False).returncode
    except FileNotFoundError:
        print(f"cursor-byok: {command[0]} not found", file=sys.stderr)
        return 127


def write_files(files: Sequence[ServiceFile]) -> list[Path]:
    from cursor_byok.store.files import write_private

    written = []
    for file in files:
        file.path.parent.mkdir(parents=True, exist_ok=True)
        write_private(file.path, file.content)
        os.chmod(file.path, file.mode)
        written.append(file.path)
    return written


def install(
    platform: str, home: Path, run_args: Sequence[str], runner: Runner = run_manager
) -> tuple[list[Path], int]:
    """Write the unit (same content each time) and (re)start it; returns paths and status."""
    files = unit_files(platform, home, run_args)
    written = write_files(files)
    logs = log_dir(platform, home)
    logs.mkdir(parents=True, exist_ok=True, mode=0o700)
    status = 0
    for command in manager_commands(platform, "install", home):
        code = runner(command)
        if code != 0 and not _tolerated(command, "install"):
            status = code
            break
    return written, status


def uninstall(platform: str, home: Path, runner: Runner = run_manager) -> tuple[list[Path], int]:
    """Stop and remove the service; config, data, logs and the CA stay."""
    for command in manager_commands(platform, "uninstall", home):
        runner(command)
    removed = []
    for file in unit_files(platform, home):
        if file.path.exists():
            file.path.unlink()
            removed.append(file.path)
    status = 0
    for command in manager_commands(platform, "uninstall-after", home):
        status = runner(command) or status
    return removed, status


def describe(platform: str, home: Path) -> str:
    path = unit_path(platform, home)
    state = "installed" if path.exists() else "not installed"
    return f"{NAME} service ({platform}): {state} — {path}"


def shell_line(command: Sequence[str]) -> str:
    return " ".join(shlex.quote(c) for c in command)
