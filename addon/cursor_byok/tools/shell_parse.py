"""The parse of a shell command that `ShellArgs.parsing_result` carries (tools.md §4.5).

Cursor's backend parses every command it asks the client to run and sends the parse along; the
client's permission checks (allowlist, invariant blocks) read it. The official client up to
1.0.26 refuses a shell exec without one ("Parsing result is required": the streaming executor
even throws, which kills the SDK's bridge); newer clients parse on their own and ignore ours.

This is a word-level parse with the standard library's `shlex`, not a shell grammar: enough for
the fields the client reads (each simple command's name, words and text; redirects; command
substitution). A command shlex cannot tokenize is reported as `parsing_failed`, which makes a
client in allowlist mode ask the user instead of guessing [inf].
"""

from __future__ import annotations

import shlex

from cursor_byok.pb import agent_v1_pb2 as pb

_SEPARATORS = frozenset({"&&", "||", ";", ";;", "|", "|&", "&", "\n"})
_REDIRECT_CHARS = frozenset("<>&")
_DEV_NULL = "/dev/null"
_ARG = pb.ShellCommandParsingResult.ExecutableCommandArg
_NEEDS_QUOTES = frozenset(" \t\n;&|<>'\"")


def _tokens(command: str) -> list[str]:
    """Words and operators; newlines are kept as separators (a script of several lines)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return list(lexer)


def _is_redirect(token: str) -> bool:
    return bool(token) and set(token) <= _REDIRECT_CHARS and ("<" in token or ">" in token)


def _source_like(word: str) -> str:
    """A word as it could be typed: quoted only when the shell would split it."""
    return shlex.quote(word) if _NEEDS_QUOTES & set(word) or not word else word


def _default_fd(operator: str) -> int:
    return 0 if operator.startswith("<") else 1


def _command(words: list[str]) -> pb.ShellCommandParsingResult.ExecutableCommand | None:
    """One simple command from its words (leading VAR=value assignments are not its name)."""
    words = list(words)
    text = " ".join(words)
    if words and text.count("(") > text.count(")"):  # `(cd x && ls)`: the subshell's parens
        words[0] = words[0].lstrip("(")
    if words and text.count(")") > text.count("("):
        words[-1] = words[-1].rstrip(")")
    words = [w for w in words if w]
    start = 0
    while start < len(words) - 1 and "=" in words[start] and not words[start].startswith("="):
        start += 1
    if not words:
        return None
    name, args = words[start], words[start + 1 :]
    return pb.ShellCommandParsingResult.ExecutableCommand(
        name=name,
        args=[_ARG(type="word", value=a) for a in args],
        full_text=" ".join(_source_like(w) for w in words),
    )


def parsing_result(command: str) -> pb.ShellCommandParsingResult:
    """The parse the client's permission checks read (see the module docstring)."""
    result = pb.ShellCommandParsingResult(
        has_command_substitution="$(" in command or "`" in command
    )
    try:
        tokens = _tokens(command)
    except ValueError:  # an unclosed quote: say so rather than guess
        result.parsing_failed = True
        return result
    words: list[str] = []
    pending: pb.ShellCommandParsingResult.Redirect | None = None
    for token in tokens:
        if pending is not None and not _is_redirect(token) and token not in _SEPARATORS:
            pending.target_text = token
            pending.target_node_type = "word"
            pending = None
            continue
        if _is_redirect(token):
            fd = _default_fd(token)
            if len(words) > 1 and words[-1].isdigit():  # `2>&1`: shlex splits off the fd
                fd = int(words.pop())
            pending = result.redirects.add(operator=token, destination_fds=[fd])
            continue
        if token in _SEPARATORS:
            pending = None
            if (parsed := _command(words)) is not None:
                result.executable_commands.append(parsed)
            words = []
            continue
        words.append(token)
    if (parsed := _command(words)) is not None:
        result.executable_commands.append(parsed)
    if result.redirects:
        result.has_redirects = True
        result.all_redirects_are_dev_null = all(
            r.target_text == _DEV_NULL or r.operator in (">&", "<&") for r in result.redirects
        )
    return result
