"""Cursor's context meter: the categories a checkpoint's `token_details.breakdown` is drawn in
(protocol.md §10.5), the split of a token count into them, and the same numbers as the tree the
context ring asks for (`GetPromptContextUsage`).
"""

from __future__ import annotations

from cursor_byok.pb import agent_v1_pb2 as pb

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


def usage_tree(used: int, sizes: dict[str, int], max_tokens: int) -> pb.PromptContextUsageTree:
    """The context ring's tree (`GetPromptContextUsage`, `PromptContextUsageTree`): a root node
    for the whole prompt and one child per category of `breakdown`, the same numbers the
    checkpoint's meter shows [inf: node kinds and ids are ours; only the field numbers are
    Cursor's, protocol.md §10.5]."""
    tree = pb.PromptContextUsageTree(schema_version=1)
    root = tree.nodes.add(id="root", kind="prompt", label="Context", category_id="")
    root.estimated_tokens = min(used, 2**32 - 1)
    root.character_count = min(sum(sizes.values()), 2**32 - 1)
    root.content_available = False
    for ident, label, tokens, chars in breakdown(used, sizes, max_tokens):
        if not tokens and not chars:
            continue
        node = tree.nodes.add(id=ident, parent_id="root", kind="category", label=label)
        node.category_id = ident
        node.estimated_tokens = min(tokens, 2**32 - 1)
        node.character_count = min(chars, 2**32 - 1)
    return tree
