"""Which model serves a mode or a task: `[routes]`, the older single keys, and Cursor's picker.

The rule (README, "Routes per mode and task"): a model the user picked in Cursor's picker serves
the run (a BYOK model here, one of Cursor's at Cursor as before); a run with no particular model
picked (Cursor's Auto, or no model at all) goes to the `[routes]` entry of its mode (`agent`,
`ask`, `plan`, `debug`), else the default model. Tasks (`subagent`, `compaction`, `title`,
`vision`) go to their route, else the older single key (`subagent_model`, a model's
`compaction_model`, `title_model`, `vision_model`).

`routed(config, key, table)` is the one lookup: another table of the same shape (the `[features]`
of Cmd-K, terminal, commit messages and Tab) resolves its keys with it too.
"""

from __future__ import annotations

from collections.abc import Mapping

from cursor_byok.config.catalog import find_model
from cursor_byok.config.settings import Config
from cursor_byok.config.settings import ModelConfig

# What Cursor's picker sends when the user picked no particular model [inf: Auto is "default"]
AUTO_PICKS = frozenset({"", "default", "auto"})
MODE_KEYS = {1: "agent", 2: "ask", 3: "plan", 4: "debug"}  # agent.v1.AgentMode
# a task's route, else the older top-level key naming its model
_OLDER_KEYS = {"subagent": "subagent_model", "title": "title_model", "vision": "vision_model"}


def routed(config: Config, key: str, table: Mapping[str, str] | None = None) -> ModelConfig | None:
    """The configured model `table[key]` names (default table: `[routes]`, then the older
    single key of a task), or None."""
    if table is None:
        name = config.routes.get(key) or getattr(config, _OLDER_KEYS.get(key, ""), None)
    else:
        name = table.get(key)
    return find_model(config, name) if name else None


def model_for_run(
    config: Config, requested: str, mode: int, *, subagent: bool = False
) -> ModelConfig | None:
    """The model that serves a run (see the module doc); None: not one of ours."""
    if subagent:
        model = routed(config, "subagent")
        if model is not None:
            return model
    if requested.strip().lower() not in AUTO_PICKS:
        return find_model(config, requested)  # a model of ours, or one of Cursor's (None)
    key = MODE_KEYS.get(mode)
    model = routed(config, key) if key else None
    return model if model is not None else find_model(config, requested)


def compaction_model(config: Config, model: ModelConfig) -> ModelConfig | None:
    """The model that writes `model`'s summaries: its own `compaction_model`, else
    `[routes] compaction`, else None (the model itself)."""
    if model.compaction_model:
        return find_model(config, model.compaction_model)
    return routed(config, "compaction")
