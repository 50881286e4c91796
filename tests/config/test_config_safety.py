"""Issue 27 item 6: a config other users may write is never loaded or reloaded, and what makes a
config unsafe or sure to fail is said at `run` start and by the doctor (config/safety.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cursor_byok.cli.doctor import run_doctor
from cursor_byok.config import ConfigError
from cursor_byok.config import ConfigSource
from cursor_byok.config import load_config
from cursor_byok.config.safety import warnings

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")


def write(tmp_path: Path, base_url: str = "https://api.example.com/v1", key: str = "") -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f"""
[providers.p]
kind = "openai-chat"
base_url = "{base_url}"
{key or 'api_key_env = "SAFETY_TEST_KEY"'}

[[models]]
name = "m"
provider = "p"
model = "m-1"
"""
    )
    path.chmod(0o600)
    return path


@pytest.mark.parametrize("mode", [0o666, 0o620, 0o602])
def test_a_config_others_may_write_is_refused_with_the_fix(tmp_path, mode) -> None:
    path = write(tmp_path)
    path.chmod(mode)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert f"chmod 600 {path}" in message and f"mode 0{mode:o}" in message
    assert "\n" not in message


def test_a_reload_of_a_file_made_writable_by_others_is_refused(tmp_path) -> None:
    path = write(tmp_path)
    source = ConfigSource(path)
    assert source.get().model_names() == ["m"]
    path.chmod(0o666)  # no content change, no mtime change: the mode alone must count
    with pytest.raises(ConfigError, match="chmod 600"):
        source.get()
    path.chmod(0o600)
    assert source.get().model_names() == ["m"]


def test_private_and_read_only_configs_load(tmp_path) -> None:
    path = write(tmp_path)
    for mode in (0o600, 0o644, 0o400):
        path.chmod(mode)
        assert load_config(path).model_names() == ["m"]


def test_warnings_name_each_problem_and_its_fix(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("SAFETY_TEST_KEY", raising=False)
    found = warnings(load_config(write(tmp_path, "http://llm.lan:8000/v1")))
    kinds = {f.kind: f.text for f in found}
    assert set(kinds) == {"env", "plaintext"}
    assert "SAFETY_TEST_KEY is not set" in kinds["env"]
    assert "unencrypted to llm.lan" in kinds["plaintext"] and "https://" in kinds["plaintext"]
    key = tmp_path / "key"
    key.write_text("sk-file")
    key.chmod(0o644)
    found = warnings(load_config(write(tmp_path, key=f'api_key_file = "{key}"')))
    assert [f.kind for f in found] == ["file"]
    assert f"chmod 600 {key}" in found[0].text and "0644" in found[0].text


def test_no_warnings_for_a_safe_config(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SAFETY_TEST_KEY", "sk-set")
    assert warnings(load_config(write(tmp_path))) == []
    assert warnings(load_config(write(tmp_path, "http://127.0.0.1:11434/v1"))) == []
    assert warnings(load_config(write(tmp_path, "http://localhost:8000/v1"))) == []


def test_doctor_without_the_provider_check_still_warns_of_an_unset_key(tmp_path, monkeypatch):
    monkeypatch.delenv("SAFETY_TEST_KEY", raising=False)
    lines: list[str] = []
    code = run_doctor(
        config_path=write(tmp_path, "http://llm.lan/v1"),
        confdir=tmp_path,
        data_dir=tmp_path,
        port=0,
        providers=False,
        out=lines.append,
    )
    text = "\n".join(lines)
    assert code == 0  # a warning with its fix, as everything before a first run
    warned = "[yellow]![/yellow] provider 'p': environment variable SAFETY_TEST_KEY is not set"
    assert warned in text
    assert "unencrypted to llm.lan" in text


# Issue 33 item 9: a config another user owns (or a symlink to one) is refused like a
# world-writable one; a host that only starts like a loopback address is not loopback.

OTHER_UID = 65534  # nobody


def _owned_by_another_user(path: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("chown to another user needs root")
    os.chown(path, OTHER_UID, -1)


def test_a_config_another_user_owns_is_refused(tmp_path) -> None:
    path = write(tmp_path)
    _owned_by_another_user(path)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert "owned by another user" in message and f"uid {OTHER_UID}" in message
    assert "\n" not in message


def test_a_symlink_to_a_config_another_user_owns_is_refused(tmp_path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    target = write(theirs)
    _owned_by_another_user(target)
    link = tmp_path / "mine.toml"
    link.symlink_to(target)
    with pytest.raises(ConfigError, match="owned by another user"):
        load_config(link)
    source = ConfigSource(link)
    with pytest.raises(ConfigError, match="owned by another user"):
        source.get()


def test_the_owner_rule_without_root(tmp_path) -> None:
    """The same rule, for any user the tests run as: the file's owner is not `uid`."""
    from cursor_byok.config.safety import refuse_shared

    path = write(tmp_path)
    status = path.stat()
    refuse_shared(path, status, uid=status.st_uid)  # mine: fine
    stranger = status.st_uid + 1
    if status.st_uid == 0:
        refuse_shared(path, status, uid=stranger)  # root's file: trusted, as ssh does
    else:
        with pytest.raises(ConfigError, match="owned by another user"):
            refuse_shared(path, status, uid=stranger)


@pytest.mark.parametrize(
    ("host", "warned"),
    [
        ("127.0.0.1.evil.example", True),
        ("127.evil.example", True),
        ("localhost.evil.example", True),
        ("127.0.0.1", False),
        ("127.8.9.10", False),
        ("[::1]", False),
        ("localhost", False),
        ("localhost.", False),
    ],
)
def test_only_a_real_loopback_host_skips_the_plaintext_warning(tmp_path, host, warned) -> None:
    found = warnings(
        load_config(write(tmp_path, f"http://{host}:8000/v1")), {"SAFETY_TEST_KEY": "k"}
    )
    assert [f.kind for f in found] == (["plaintext"] if warned else [])
