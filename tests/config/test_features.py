"""The [features] table: which model answers Cmd-K, the terminal, commit messages and Tab."""

from __future__ import annotations

from pathlib import Path

import pytest

from cursor_byok.config import ConfigError
from cursor_byok.config import parse_config
from cursor_byok.config.features import CURSOR

PROVIDERS = {"p": {"kind": "openai-chat", "base_url": "http://127.0.0.1:1/v1"}}
MODELS = [
    {"name": "Big", "provider": "p", "model": "big"},
    {"name": "Small", "provider": "p", "model": "small"},
]


def config(**top):
    return parse_config({"providers": PROVIDERS, "models": MODELS, **top}, Path("/x/c.toml"))


def test_private_default_runs_the_editor_features_on_the_default_model_but_not_tab() -> None:
    features = config(default_model="Small").features
    assert (features.cmd_k, features.terminal, features.commit_message) == ("Small",) * 3
    assert features.tab == CURSOR
    assert features.model_for("tab") is None
    assert features.served_here() == ["cmd_k", "terminal", "commit_message"]


def test_privacy_cursor_leaves_every_feature_to_cursor() -> None:
    features = config(privacy="cursor").features
    assert features.served_here() == []


def test_each_key_names_a_model_or_cursor() -> None:
    features = config(features={"cmd_k": "Big", "terminal": "cursor", "tab": "Small"}).features
    assert features.model_for("cmd_k") == "Big"
    assert features.model_for("terminal") is None
    assert features.model_for("commit_message") == "Big"  # the default model: the first one
    assert features.model_for("tab") == "Small"


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ({"cmd_k": "Nope"}, "features.cmd_k: 'Nope' is not one of the models (Big, Small)"),
        ({"tab": 3}, "features.tab: 3 is not one of the models"),
        ({"chat": "Big"}, "features.chat: unknown key; the features are cmd_k, terminal"),
        ("Big", "features: must be a table"),
    ],
)
def test_a_bad_table_is_one_line_naming_the_key(table, expected) -> None:
    with pytest.raises(ConfigError) as info:
        config(features=table)
    assert str(info.value).startswith("/x/c.toml: ")
    assert expected in str(info.value)
    assert "\n" not in str(info.value)


def test_describe_names_the_model_of_each_feature() -> None:
    from cursor_byok.config.features import Features
    from cursor_byok.config.features import describe

    line = describe(Features(cmd_k="A", terminal="cursor", commit_message="B"))
    assert line == "cmd_k on A, terminal Cursor's, commit_message on B, tab Cursor's"
