"""The `[features]` table: which model answers each of the editor's AI features beyond the Agent.

Cursor's UI sends `model_name: "default"` for Cmd-K, terminal Cmd-K, commit messages and Tab, so
the picker cannot choose for them: this table does. Each key names a configured `[[models]]` entry,
or `"cursor"` to leave the feature to Cursor's own backend, byte for byte.

Defaults follow `privacy`: with `"local"` (the default) Cmd-K, the terminal and commit messages run
on `default_model`, so nothing of the user's code goes to Cursor for them; with `"cursor"` they stay
Cursor's. Tab stays Cursor's until the user names a model (a Tab model wants to be small and fast,
which `default_model` rarely is); `doctor` and the start banner say so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

CURSOR = "cursor"  # leave the feature to Cursor's backend
FEATURE_KEYS = ("cmd_k", "terminal", "commit_message", "tab")
# Follow default_model under privacy = "local"; Tab only when named.
_FOLLOW_PRIVACY = frozenset({"cmd_k", "terminal", "commit_message"})


@dataclass(frozen=True)
class Features:
    """A configured model name, or CURSOR, per feature."""

    cmd_k: str = CURSOR
    terminal: str = CURSOR
    commit_message: str = CURSOR
    tab: str = CURSOR

    def model_for(self, feature: str) -> str | None:
        """The configured model that serves `feature`, or None when Cursor does."""
        name = getattr(self, feature)
        return None if name == CURSOR else name

    def served_here(self) -> list[str]:
        return [key for key in FEATURE_KEYS if self.model_for(key) is not None]


def parse_features(
    table: Any,
    *,
    model_names: list[str],
    default_model: str,
    privacy: str,
    fail: Callable[[str, str], Exception],  # load.py's: a ConfigError naming the key
) -> Features:
    """Validate `[features]` and fill the defaults (see the module docstring)."""
    if table is None:
        table = {}
    if not isinstance(table, dict):
        raise fail("features", 'must be a table, e.g. [features] cmd_k = "My model"')
    unknown = sorted(set(table) - set(FEATURE_KEYS))
    if unknown:
        raise fail(
            f"features.{unknown[0]}",
            f"unknown key; the features are {', '.join(FEATURE_KEYS)}",
        )
    chosen: dict[str, str] = {}
    for key in FEATURE_KEYS:
        value = table.get(key)
        if value is None:
            value = default_model if privacy == "local" and key in _FOLLOW_PRIVACY else CURSOR
        elif not isinstance(value, str) or (value != CURSOR and value not in model_names):
            raise fail(
                f"features.{key}",
                f'{value!r} is not one of the models ({", ".join(model_names)}) nor "cursor"',
            )
        chosen[key] = value
    return Features(**chosen)


def describe(features: Features) -> str:
    """One line: which model answers each feature (doctor, the start log)."""
    return ", ".join(
        f"{key} on {features.model_for(key)}" if features.model_for(key) else f"{key} Cursor's"
        for key in FEATURE_KEYS
    )
