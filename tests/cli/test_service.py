"""`cursor-byok service`: the unit files of each platform, generated into a temp HOME and checked
(systemd-analyze, plistlib, the Task Scheduler XML), install/uninstall with a recording service
manager, and the rotating log of `run --log-file`."""

from __future__ import annotations

import dataclasses
import plistlib
import shutil
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cursor_byok.cli import launch
from cursor_byok.cli import service
from cursor_byok.cli.main import main

RUN_ARGS = ["--port", "8081", "--config", "/home/u/my config.toml"]
TASK_NS = {"t": "http://schemas.microsoft.com/windows/2004/02/mit/task"}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("LOCALAPPDATA", raising=False)
    return home


def test_systemd_unit(home, tmp_path) -> None:
    [unit] = service.unit_files("linux", home, RUN_ARGS)
    assert unit.path == home / ".config/systemd/user/cursor-byok.service"
    text = unit.content.decode()
    exec_start = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    assert exec_start.split()[1:5] == ["run", "--quiet", "--port", "8081"]
    assert '"/home/u/my config.toml"' in exec_start  # quoted for systemd
    assert "Restart=on-failure" in text and "UMask=0077" in text
    assert "WantedBy=default.target" in text and "--log-file" not in text  # journald rotates
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    path = tmp_path / "cursor-byok.service"
    path.write_bytes(unit.content)
    result = subprocess.run(
        ["systemd-analyze", "verify", str(path)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    broken = tmp_path / "broken.service"
    broken.write_text(text.replace("Restart=on-failure", "Restart=sometimes"))
    check = subprocess.run(["systemd-analyze", "verify", str(broken)], capture_output=True)
    assert check.returncode != 0 or b"sometimes" in check.stderr  # the check can fail


def test_launchd_plist(home) -> None:
    [agent] = service.unit_files("macos", home, RUN_ARGS)
    assert agent.path == home / "Library/LaunchAgents/dev.cursor-byok.proxy.plist"
    plist = plistlib.loads(agent.content)
    assert plist["Label"] == service.LABEL and plist["RunAtLoad"] is True
    assert plist["KeepAlive"] == {"SuccessfulExit": False}  # restart on failure only
    args = plist["ProgramArguments"]
    assert args[1:7] == ["run", "--quiet", *RUN_ARGS]
    log = Path(args[args.index("--log-file") + 1])
    assert log.parent == home / "Library/Logs/cursor-byok"
    assert plist["Umask"] == 0o077


def test_windows_logon_task(home, monkeypatch) -> None:
    monkeypatch.setenv("USERNAME", "ada")
    monkeypatch.setenv("USERDOMAIN", "LAB")
    [task] = service.unit_files("windows", home, RUN_ARGS)
    assert task.content[:2] == b"\xff\xfe"  # UTF-16, as schtasks /XML wants
    root = ET.fromstring(task.content.decode("utf-16").split("\n", 1)[1])
    assert root.find("t:Triggers/t:LogonTrigger/t:UserId", TASK_NS).text == "LAB\\ada"
    assert root.find("t:Principals/t:Principal/t:UserId", TASK_NS).text == "LAB\\ada"
    assert root.find("t:Settings/t:RestartOnFailure/t:Count", TASK_NS).text == "999"
    assert root.find("t:Principals/t:Principal/t:RunLevel", TASK_NS).text == "LeastPrivilege"
    arguments = root.find("t:Actions/t:Exec/t:Arguments", TASK_NS).text
    assert arguments.startswith('run --quiet --port 8081 --config "/home/u/my config.toml"')
    assert "--log-file" in arguments


def test_install_is_idempotent_and_uninstall_keeps_config_data_and_ca(home) -> None:
    kept = [
        home / ".config/cursor-byok/config.toml",
        home / ".local/share/cursor-byok/usage.sqlite3",
        home / ".mitmproxy/mitmproxy-ca-cert.pem",
    ]
    for path in kept:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    calls: list[list[str]] = []

    def runner(command) -> int:
        calls.append(list(command))
        return 0

    first, code = service.install("linux", home, RUN_ARGS, runner)
    content = first[0].read_bytes()
    second, code2 = service.install("linux", home, RUN_ARGS, runner)
    assert first == second and code == code2 == 0
    assert first[0].read_bytes() == content
    assert stat.S_IMODE(first[0].stat().st_mode) == 0o600
    assert calls[:3] == [
        ["systemctl", "--user", "daemon-reload"],
        ["systemctl", "--user", "enable", "cursor-byok.service"],
        ["systemctl", "--user", "restart", "cursor-byok.service"],
    ]
    assert calls[3:] == calls[:3]
    calls.clear()
    removed, code = service.uninstall("linux", home, runner)
    assert removed == first and code == 0 and not first[0].exists()
    assert calls[0] == ["systemctl", "--user", "disable", "--now", "cursor-byok.service"]
    assert all(path.read_text() == "x" for path in kept)
    assert service.uninstall("linux", home, runner) == ([], 0)  # twice is fine


def test_a_failing_service_manager_is_reported(home) -> None:
    _paths, code = service.install("linux", home, [], lambda command: 1)
    assert code == 1
    # launchd: unloading a job that is not loaded fails harmlessly on a first install.
    _paths, code = service.install(
        "macos", home, [], lambda command: 1 if "bootout" in command else 0
    )
    assert code == 0


def test_print_for_another_platform_writes_nothing(home, capsys) -> None:
    other = "windows" if service.current_platform() != "windows" else "linux"
    assert main(["service", "install", "--platform", other, "--", "--port", "9000"]) == 0
    out = capsys.readouterr().out
    assert "--port 9000" in out
    assert not any(home.rglob("*.xml")) and not any(home.rglob("*.service"))
    assert main(["service", "install", "--print", "--platform", "macos"]) == 0
    assert "<key>ProgramArguments</key>" in capsys.readouterr().out


def test_run_log_file_rotates_and_passes_the_exit_status(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(launch, "LOG_BYTES", 2000)
    monkeypatch.setattr(launch, "LOG_BACKUPS", 2)
    log = tmp_path / "logs" / "cursor-byok.log"
    opts = dataclasses.replace(launch.RunOptions(), log_file=log)
    script = "import sys\nfor i in range(400): print('line', i)\nsys.exit(3)"
    assert launch.run_logged([sys.executable, "-c", script], opts) == 3
    files = sorted(log.parent.iterdir())
    assert [f.name for f in files] == ["cursor-byok.log", "cursor-byok.log.1", "cursor-byok.log.2"]
    assert all(f.stat().st_size <= 2200 for f in files)
    assert "exited with status 3" in log.read_text()
    assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
