"""The README tells the truth (issue 28 item 8): the quick start's counts match its commands, and
advice the code outgrew is gone."""

from __future__ import annotations

import re
from pathlib import Path

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
NUMBERS = {"three": 3, "four": 4, "five": 5, "six": 6}


def _blocks(section: str) -> list[list[str]]:
    """The commands of each ```sh block of a section (comments and blank lines are not)."""
    out = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.S):
        lines = [line.split("  #", 1)[0].strip() for line in block.splitlines()]
        out.append([line for line in lines if line and not line.startswith("#")])
    return out


def test_quick_start_counts_its_commands() -> None:
    section = README[README.index("## Quick start") : README.index("## Configuration")]
    tool, checkout = _blocks(section)[:2]
    said = re.search(r"(\w+) commands, with your provider's key", section)
    assert said and NUMBERS[said[1].lower()] == len(tool), tool
    assert tool[0].startswith("uv tool install --python 3.12 git+")
    assert tool[1:] == ["cursor-byok init", "cursor-byok run"]  # init asks for the rest
    said = re.search(r"\((\w+) commands\)", section)  # one line typed, one command
    assert said and NUMBERS[said[1].lower()] == len(checkout), checkout


def test_outgrown_advice_is_gone() -> None:
    for stale in (
        "HTTP/2 is still on",
        "a real browser was not used",
        "usage.jsonl",
        "certutil -addstore root ~/",
    ):
        assert stale not in README, stale
    assert "usage.sqlite3" in README
    assert "captures/recorded" in README and "the absolute path is printed" in README
