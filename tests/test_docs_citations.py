"""Every `<doc>.md §N` / `§N.M` citation names a section that exists (issue 32 item 9).

A citation such as "docs/protocol.md §10.4" in README.md, docs/*.md, the package's docstrings or the
tests must point at a `## N.` or `### N.M` heading of that document; renumbering a section without
fixing its citations fails here. Bare `§N` inside a document cites that same document.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("protocol", "architecture", "providers", "tools", "mitmproxy")
HEADING = re.compile(r"^#{2,4} (\d+(?:\.\d+)*)\.?\s", re.M)
# "protocol.md §10.4", "`docs/protocol.md` §2.8", "protocol.md (§4.5": the document, then its §.
CITED = re.compile(r"\b(" + "|".join(DOCS) + r")\.md`?\)?[\s(]{0,8}§(\d+(?:\.\d+)*)")
# Further sections listed after the first one: "tools.md §4.1, §4.4, §4.9", "§5/§6".
MORE = re.compile(r"^(?:\s*(?:,|/|and|or)\s*§(\d+(?:\.\d+)*))")
BARE = re.compile(r"(?<![\w.`)(] )(?<![\w.`)(])§(\d+(?:\.\d+)*)")


def _sections(doc: str) -> set[str]:
    return set(HEADING.findall((ROOT / "docs" / f"{doc}.md").read_text()))


def _files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    files += sorted((ROOT / "addon" / "cursor_byok").rglob("*.py"))
    files += sorted((ROOT / "tests").rglob("*.py"))
    return [f for f in files if "/pb/" not in str(f)]


def _citations(text: str) -> list[tuple[str, str, int]]:
    """(document, section, line) of each `<doc>.md §N` citation and of the §s listed after it."""
    out = []
    for match in CITED.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        out.append((match[1], match[2], line))
        rest = text[match.end() :]
        while more := MORE.match(rest):
            out.append((match[1], more[1], line))
            rest = rest[more.end() :]
    return out


def test_the_docs_have_numbered_sections() -> None:
    assert {"2.8", "10.4", "16", "19"} <= _sections("protocol")
    assert {"11.5", "4.20", "3.3"} <= _sections("providers") | _sections("tools") | _sections(
        "mitmproxy"
    )


def test_every_cited_section_exists() -> None:
    sections = {doc: _sections(doc) for doc in DOCS}
    broken = []
    for path in _files():
        for doc, section, line in _citations(path.read_text()):
            if section not in sections[doc]:
                broken.append(f"{path.relative_to(ROOT)}:{line}: {doc}.md §{section}")
    assert not broken, "citations of sections that do not exist:\n" + "\n".join(broken)


def test_a_documents_own_citations_exist() -> None:
    """A bare `§N` in docs/<doc>.md (no other document named just before it) cites <doc>.md."""
    broken = []
    for doc in DOCS:
        text = (ROOT / "docs" / f"{doc}.md").read_text()
        explicit = {m.start(2) - 1 for m in CITED.finditer(text)}
        for match in BARE.finditer(text):
            before = text[max(0, match.start() - 40) : match.start()]
            if match.start() in explicit or re.search(
                r"\.md`?\)?[\s(]{0,8}(?:§[\d.]+[ ,/and]*)*$", before
            ):
                continue
            if match[1] not in _sections(doc):
                line = text.count("\n", 0, match.start()) + 1
                broken.append(f"docs/{doc}.md:{line}: §{match[1]}")
    assert not broken, "own-document citations of sections that do not exist:\n" + "\n".join(broken)
