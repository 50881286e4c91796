"""Setup that says what is missing (issue 28 items 4, 5, 7): each problem at `run` start is one
line naming our flag (no traceback), warnings say where a key must go, `trust status` fails
while anything is ✘, the doctor before the first run warns instead of failing, and the CA
steps are the same wherever they are printed."""

from __future__ import annotations

import json
import os
import re
import socket
from pathlib import Path

import pytest

from cursor_byok.cli import preflight
from cursor_byok.cli import trust
from cursor_byok.cli.doctor import check_activity
from cursor_byok.cli.doctor import check_port
from cursor_byok.cli.doctor import run_doctor
from cursor_byok.cli.launch import RunOptions
from cursor_byok.cli.launch import mitmdump_args
from cursor_byok.cli.launch import setup_text
from cursor_byok.cli.main import main

REPO = Path(__file__).resolve().parents[2]
CONFIG = """
[providers.p]
kind = "anthropic"
base_url = "http://127.0.0.1:9"
api_key_env = "SETUP_TEST_KEY"

[[models]]
name = "M"
provider = "p"
model = "m-1"
"""


def _one_error_line(err: str, flag: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("cursor-byok: error: ") and flag in lines[0]
    assert "Traceback" not in err


def test_port_in_use_is_one_line_naming_port(tmp_path, capsys) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["run", "--port", str(port), "--data-dir", str(tmp_path / "d")])
    assert code == 2
    _one_error_line(capsys.readouterr().err, "--port")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_unwritable_data_dir_names_data_dir(tmp_path, capsys) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    code = main(["run", "--port", "0", "--data-dir", str(locked / "data")])
    assert code == 2
    _one_error_line(capsys.readouterr().err, "--data-dir")


def test_data_dir_that_cannot_exist_names_data_dir(tmp_path, capsys) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file, not a directory")
    code = main(["run", "--port", "0", "--data-dir", str(blocker / "data")])
    assert code == 2
    _one_error_line(capsys.readouterr().err, "--data-dir")
    code = main(["run", "--port", "0", "--confdir", str(blocker / "conf")])
    assert code == 2
    _one_error_line(capsys.readouterr().err, "--confdir")


def test_local_without_root_is_one_line_naming_local() -> None:
    problem = preflight.local_problem("linux", euid=1000)
    assert problem is not None and "--local needs root" in problem and "sudo" in problem
    assert preflight.local_problem("linux", euid=0) is None
    assert preflight.local_problem("darwin", euid=1000) is None


def test_missing_config_and_missing_key_are_said_at_start(tmp_path, monkeypatch) -> None:
    (warning,) = preflight.config_warnings(tmp_path / "none.toml")
    assert "cursor-byok init --provider" in warning and "--config PATH" in warning
    assert preflight.config_warnings(tmp_path / "none.toml", agent="scripted") == []
    config = tmp_path / "config.toml"
    config.write_text(CONFIG)
    monkeypatch.delenv("SETUP_TEST_KEY", raising=False)
    (warning,) = preflight.config_warnings(config)
    assert "SETUP_TEST_KEY is not set" in warning and "export SETUP_TEST_KEY=" in warning
    monkeypatch.setenv("SETUP_TEST_KEY", "sk-test")
    assert preflight.config_warnings(config) == []


def test_service_install_says_where_the_key_must_go(tmp_path, monkeypatch) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG)
    monkeypatch.setenv("SETUP_TEST_KEY", "exported in this shell: not seen by a service")
    (warning,) = preflight.service_warnings("linux", tmp_path, config)
    env = preflight.env_file(tmp_path)
    assert str(env) in warning and "SETUP_TEST_KEY=..." in warning
    env.parent.mkdir(parents=True, exist_ok=True)
    env.write_text("SETUP_TEST_KEY=sk-from-the-env-file\n")
    assert preflight.service_warnings("linux", tmp_path, config) == []
    (mac,) = preflight.service_warnings("macos", tmp_path, config)
    assert "api_key_file" in mac
    (missing,) = preflight.service_warnings("linux", tmp_path, tmp_path / "none.toml")
    assert "cursor-byok init" in missing


def test_web_port_never_collides_with_the_proxy_port() -> None:
    assert preflight.pick_web_port(8081, None) != 8081
    assert preflight.pick_web_port(8081, 9999) == 9999
    args = mitmdump_args(RunOptions(port=8081, web=True, web_port=12345))
    assert "web_port=12345" in args and "web_host=127.0.0.1" in args
    assert "-p" in args and args[args.index("-p") + 1] == "8081"
    theirs = mitmdump_args(RunOptions(web=True, web_port=1, extra=("--set", "web_port=7")))
    assert "web_port=1" not in theirs  # a web_port given to mitmweb directly wins


def test_web_port_equal_to_the_proxy_port_is_refused(tmp_path, capsys) -> None:
    code = main(["run", "--web", "--port", "0", "--web-port", "0", "--data-dir", str(tmp_path)])
    assert code == 2
    _one_error_line(capsys.readouterr().err, "--web-port")


def _trust_items(monkeypatch, trusted: list[bool | None]) -> None:
    items = [trust.Status(f"store {i}", t, "detail") for i, t in enumerate(trusted)]
    monkeypatch.setattr(trust, "status", lambda confdir: items)


def test_trust_status_fails_while_anything_is_not_trusted(tmp_path, monkeypatch, capsys):
    _trust_items(monkeypatch, [True, False, None])
    assert main(["trust", "status", "--confdir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "✘ store 1" in out and f"fix: {trust.trust_command(tmp_path)}" in out
    _trust_items(monkeypatch, [True, None])
    assert main(["trust", "status", "--confdir", str(tmp_path)]) == 0


def test_doctor_before_the_first_run_warns(tmp_path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG)
    lines: list[str] = []
    code = run_doctor(
        config_path=config,
        confdir=tmp_path / "mitm",
        data_dir=tmp_path / "data",
        port=0,
        providers=False,
        out=lines.append,
    )
    text = "\n".join(lines)
    assert code == 0, text
    assert "the proxy has not run yet" in text and "does not exist yet" in text
    assert "✘" not in text


def test_doctor_says_it_is_asking_the_provider(tmp_path, monkeypatch) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG)
    monkeypatch.setenv("SETUP_TEST_KEY", "sk-test")
    lines: list[str] = []
    run_doctor(config_path=config, confdir=tmp_path, data_dir=tmp_path, port=0, out=lines.append)
    asking = next(i for i, line in enumerate(lines) if "asking the provider" in line)
    answered = next(i for i, line in enumerate(lines) if "provider p (m-1)" in line)
    assert asking < answered  # said before the wait, not after


def test_doctor_counts_turns_not_appends(tmp_path) -> None:
    record = {"agent_calls": 41, "agent_turns": 3, "last_agent_call": "now"}
    (tmp_path / "activity.json").write_text(json.dumps(record))
    check = check_activity(tmp_path, watch=0)
    assert check.status == "ok" and "3 Agent turns (41 calls)" in check.detail


def test_doctor_knows_when_the_port_is_ours(tmp_path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        stranger = check_port("127.0.0.1", port, tmp_path)
        record = {"agent_calls": 0, "pid": os.getpid(), "listen_port": port}
        (tmp_path / "activity.json").write_text(json.dumps(record))
        ours = check_port("127.0.0.1", port, tmp_path)
    assert stranger.status == "warn" and "not by a cursor-byok proxy" in stranger.detail
    assert ours.status == "ok" and "the cursor-byok proxy runs there" in ours.title


# --- one CA story -------------------------------------------------------------------------------


def test_banner_points_at_trust_install_first_with_this_platforms_steps(tmp_path) -> None:
    text = setup_text(RunOptions(confdir=tmp_path))
    trust_at = text.index(trust.trust_command(tmp_path))
    assert trust_at < text.index("or by hand")
    for step in trust.manual_steps(tmp_path):
        assert step in text
    if os.name != "nt":
        assert "certutil -addstore" not in text  # no Windows command with this machine's paths
        assert "security add-trusted-cert" not in text or os.uname().sysname == "Darwin"
    for platform in ("darwin", "win32", "linux"):
        steps = "\n".join(trust.manual_steps(tmp_path, platform))
        assert ("certutil -addstore" in steps) == (platform == "win32")
        assert ("security add-trusted-cert" in steps) == (platform == "darwin")


def test_banner_doctor_and_trust_status_name_the_same_files(tmp_path, monkeypatch) -> None:
    banner = setup_text(RunOptions(confdir=tmp_path))
    node = trust.node_ca_path(trust.system_store(), tmp_path / trust.CA_PEM)
    assert f"NODE_EXTRA_CA_CERTS={node}" in banner
    (tmp_path / trust.CA_PEM).write_text("not a certificate")  # the doctor's fix lines
    from cursor_byok.cli.doctor import check_ca

    monkeypatch.delenv("NODE_EXTRA_CA_CERTS", raising=False)
    fixes = "\n".join(c.fix for c in check_ca(tmp_path))
    assert trust.trust_command(tmp_path) in fixes and f"NODE_EXTRA_CA_CERTS={node}" in fixes
    status = "\n".join(s.detail for s in trust.status(tmp_path))
    assert f"NODE_EXTRA_CA_CERTS={node}" in status


def test_readme_gives_the_same_ca_steps() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("### Regular proxy") : readme.index("### Reverse mode")]
    assert re.search(r"cursor-byok\S* trust install --confdir ~/\.mitmproxy", section)
    assert section.index("trust install") < section.lower().index("by hand")
    for name in (trust.NAME + ".crt", "NODE_EXTRA_CA_CERTS", "-n " + trust.NAME):
        assert name in section, name
    assert not re.search(r"certutil -addstore \S*/", section)  # no Windows line with a / path
