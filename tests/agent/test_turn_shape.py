"""The shape of `Turn` (issue 32 item 2): a small object, its options fixed at construction, its
transcript's lists changed only through the transcript's methods."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

import cursor_byok
from cursor_byok.agent.turn import Turn
from cursor_byok.agent.turn import TurnOptions
from cursor_byok.cursor.checkpoint import Transcript
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.store.blobs import BlobStore

MAX_ATTRIBUTES = 15
PACKAGE = Path(cursor_byok.__file__).parent


class _Live:
    request_id = "req-1"
    finished = False

    def __init__(self) -> None:
        self.turn = None

    def emit(self, message: pb.AgentServerMessage) -> None:
        pass


def _turn(tmp_path) -> Turn:
    run = pb.AgentRunRequest(conversation_id="c")
    transcript = Transcript(pb.ConversationStateStructure(), [], "req-1")
    return Turn(_Live(), run, BlobStore(tmp_path / "blobs"), transcript, set())  # type: ignore[arg-type]


def _attributes() -> set[str]:
    """Every instance attribute of `Turn` and every property (a field by another name)."""
    properties = {n for n, v in vars(Turn).items() if isinstance(v, property)}
    return set(Turn.__slots__) | properties


def test_a_turn_has_at_most_fifteen_attributes(tmp_path) -> None:
    names = _attributes()
    assert len(names) <= MAX_ATTRIBUTES, sorted(names)
    turn = _turn(tmp_path)
    assert not hasattr(turn, "__dict__")  # nothing beyond the slots can be added
    assert all(hasattr(turn, name) for name in Turn.__slots__)  # each is set by __init__


def test_nothing_is_assigned_onto_a_turn_from_outside(tmp_path) -> None:
    """Options are given at construction, frozen; no module assigns a turn's attributes."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        TurnOptions().ack_timeout = 1.0  # type: ignore[misc]
    assigned = re.compile(r"\bturn\.(?:[a-z_]+)\s*=[^=]")
    offenders = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "turn.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if assigned.search(line)
    ]
    assert offenders == []


def _writes_into_transcript_lists(tree: ast.AST) -> list[int]:
    """Lines that change a list or dict of `<x>.transcript.<field>` in place."""
    lines = []
    for node in ast.walk(tree):
        target = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in {"append", "extend", "update", "insert", "pop", "clear"}:
                target = node.func.value
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Subscript):
                    target = t.value
        if (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Attribute)
            and target.value.attr == "transcript"
        ):
            lines.append(node.lineno)
    return lines


def test_only_the_transcript_changes_its_lists() -> None:
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        found = _writes_into_transcript_lists(ast.parse(path.read_text()))
        if found:
            offenders[str(path.relative_to(PACKAGE))] = found
    assert offenders == {}
    planted = ast.parse("turn.transcript.read_paths.append('x')\nturn.transcript.todos[:] = []")
    assert sorted(_writes_into_transcript_lists(planted)) == [1, 2]  # the check can fail
