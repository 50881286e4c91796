"""docs/a-turn.md names only modules and code that exist (issue 32 item 9): a rename that leaves
the walk-through behind fails here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "addon" / "cursor_byok"
PAGE = (ROOT / "docs" / "a-turn.md").read_text()
SPANS = re.findall(r"`([^`]+)`", PAGE)


def test_every_module_path_exists() -> None:
    paths = {m for span in SPANS for m in re.findall(r"\b[\w/]+\.py\b", span)}
    assert len(paths) > 30
    missing = [p for p in sorted(paths) if not (PACKAGE / p).is_file()]
    assert not missing, missing


def test_every_named_identifier_is_in_the_code() -> None:
    source = "\n".join(
        p.read_text() for p in PACKAGE.rglob("*.py") if p.parent.name != "pb"
    )  # the generated protobuf modules would name almost anything
    defined = set(re.findall(r"\b(?:def|class)\s+(\w+)", source))
    names = set()
    for span in SPANS:
        if ".py" in span or " " in span.strip():
            continue
        for part in re.split(r"[.()=,\s\[\]]+", span):
            if re.fullmatch(r"_?[A-Za-z][A-Za-z0-9_]*", part) and (
                "_" in part.strip("_") or (part[0].isupper() and not part.isupper())
            ):
                names.add(part)
    assert len(names) > 40
    missing = [n for n in sorted(names) if n not in defined and not re.search(rf"\b{n}\b", source)]
    assert not missing, missing
    methods = re.findall(r"`([A-Z]\w+)\.(_?[a-z]\w*)", PAGE)
    assert len(methods) > 30
    unknown = [f"{c}.{m}" for c, m in methods if not _has_method(source, c, m)]
    assert not unknown, unknown


def _has_method(source: str, cls: str, method: str) -> bool:
    """`cls` is defined with `method` (or that attribute) somewhere in its body."""
    for body in re.split(r"\n(?=class )", source):
        if re.match(rf"class {cls}\b", body) and re.search(rf"\b(?:def |){method}\b", body):
            return True
    return False
