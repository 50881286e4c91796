"""Cursor's context meter: the categories a checkpoint's `token_details.breakdown` is drawn in
(protocol.md §10.5), and the split of a token count into them.
"""

from __future__ import annotations

# Cursor's categories, in its order: (id, label)
CATEGORIES: tuple[tuple[str, str], ...] = (
    ("system_prompt", "System prompt"),
    ("tools", "Tool definitions"),
    ("rules", "Rules"),
    ("skills", "Skills"),
    ("mcp", "MCP & dynamic tools"),
    ("subagents", "Subagent definitions"),
    ("summarized_conversation", "Summarized conversation"),
    ("conversation", "Conversation"),
)


def breakdown(used: int, sizes: dict[str, int], max_tokens: int) -> list[tuple[str, str, int, int]]:
    """(id, label, estimated tokens, characters) per category, scaled so that the
    categories add up to `used` (Cursor draws them as shares of the meter)."""
    total = sum(sizes.values())
    rows: list[tuple[str, str, int, int]] = []
    assigned = 0
    for ident, label in CATEGORIES:
        size = sizes.get(ident, 0)
        tokens = round(used * size / total) if total else 0
        rows.append((ident, label, tokens, size))
        assigned += tokens
    if total and rows:  # rounding remainder onto the largest category
        i = max(range(len(rows)), key=lambda k: rows[k][3])
        ident, label, tokens, size = rows[i]
        rows[i] = (ident, label, max(0, tokens + used - assigned), size)
    return rows
