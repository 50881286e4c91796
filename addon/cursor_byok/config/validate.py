"""The small checks every config reader shares (`load`, `load_provider`, `load_routing`): unknown
keys, numbers that are not booleans, names of configured models, choices. Each failure is a
`ConfigError` made by the reader's `fail(key, problem)`, which names the file.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Iterable
from typing import Any

from cursor_byok.config.settings import ConfigError

Fail = Callable[[str, str], ConfigError]
"""`fail(key, problem)`: the error to raise, naming the file, the key and what is wrong."""


def unknown(table: dict, allowed: Collection[str], prefix: str, fail: Fail) -> None:
    """Refuse the first key of `table` not in `allowed` (a typo is a one-line fix)."""
    for key in table:
        if key not in allowed:
            raise fail(f"{prefix}{key}", f"unknown key (allowed: {', '.join(sorted(allowed))})")


def is_int(value: Any) -> bool:
    """An integer, and not a boolean (TOML's `true` is no count)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """An integer or a float, and not a boolean."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_positive(value: Any) -> bool:
    """A number (not a boolean) not at or below 0: a timeout, an amount (`nan` passes, as it
    always has: the checks were written as "refuse what is <= 0")."""
    return is_number(value) and not value <= 0


def model_name(value: Any, key: str, names: list[str], fail: Fail) -> Any:
    """`value` when it is None or one of the configured models' `names`."""
    if value is not None and value not in names:
        raise fail(key, f"{value!r} is not one of the models: {', '.join(names)}")
    return value


def one_of(value: Any, key: str, choices: Iterable[str], fail: Fail) -> Any:
    """`value` when it is one of `choices`."""
    if value not in choices:
        raise fail(key, f"{value!r}: must be one of {', '.join(map(repr, choices))}")
    return value
