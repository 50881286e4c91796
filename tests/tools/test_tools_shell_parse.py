"""The shell command parse sent in `ShellArgs.parsing_result` (what older clients require)."""

from __future__ import annotations

import pytest

from cursor_byok.tools.shell_parse import parsing_result


def _names(command: str) -> list[str]:
    return [c.name for c in parsing_result(command).executable_commands]


@pytest.mark.parametrize(
    ("command", "names"),
    [
        ("ls -la", ["ls"]),
        ("cd src && make test || echo failed", ["cd", "make", "echo"]),
        ("cat a | grep b; wc -l c &", ["cat", "grep", "wc"]),
        ("FOO=1 BAR=2 make build", ["make"]),
        ("npm ci\nnpm test", ["npm", "npm"]),
        ("(cd x && ls)", ["cd", "ls"]),
        ("echo made-by-$((6*7))", ["echo"]),
        ("git commit -m 'a; b && c'", ["git"]),
        ("", []),
    ],
)
def test_each_simple_command_is_named(command: str, names: list[str]) -> None:
    assert _names(command) == names
    assert not parsing_result(command).parsing_failed


def test_a_command_keeps_its_words_and_text() -> None:
    [git] = parsing_result("git commit -m 'a; b'").executable_commands
    assert [a.value for a in git.args] == ["commit", "-m", "a; b"]
    assert {a.type for a in git.args} == {"word"}
    assert git.full_text == "git commit -m 'a; b'"


def test_redirects_are_reported_with_their_targets() -> None:
    result = parsing_result("make > build.log 2>&1")
    assert result.has_redirects
    assert [(r.operator, list(r.destination_fds), r.target_text) for r in result.redirects] == [
        (">", [1], "build.log"),
        (">&", [2], "1"),
    ]
    assert not result.all_redirects_are_dev_null
    [make] = result.executable_commands
    assert make.full_text == "make"  # the redirect and its fd are not words of the command
    assert parsing_result("make >/dev/null 2>&1").all_redirects_are_dev_null
    assert not parsing_result("ls").has_redirects


def test_command_substitution_is_flagged() -> None:
    assert parsing_result("echo $(date)").has_command_substitution
    assert parsing_result("echo `date`").has_command_substitution
    assert not parsing_result("echo date").has_command_substitution


def test_an_unclosed_quote_is_a_failed_parse_not_a_guess() -> None:
    result = parsing_result('echo "unclosed')
    assert result.parsing_failed
    assert not result.executable_commands
