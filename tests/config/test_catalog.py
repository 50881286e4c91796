"""The pure catalog and the agent stay free of mitmproxy (they run outside the proxy too)."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("module", ["cursor_byok.agent.loop", "cursor_byok.config.catalog"])
def test_module_does_not_import_mitmproxy(module: str) -> None:
    code = f"import sys, {module}; print('mitmproxy' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "False", out.stderr


def test_rest_model_list_adds_the_configured_models_to_cursors() -> None:
    import json

    from cursor_byok.config.catalog import is_rest_models
    from cursor_byok.config.catalog import rest_models_body
    from cursor_byok.config.load import parse_config

    config = parse_config(
        {
            "providers": {"p": {"kind": "openai-chat", "base_url": "http://127.0.0.1:9/v1"}},
            "models": [
                {"name": "Mine A", "provider": "p", "model": "a"},
                {"name": "Mine B", "provider": "p", "model": "b"},
            ],
        }
    )
    names = config.model_names()
    ours = json.loads(rest_models_body(config))["items"]
    assert [i["id"] for i in ours] == names
    upstream = json.dumps({"items": [{"id": "composer-1"}, {"id": names[0]}]}).encode()
    merged = [i["id"] for i in json.loads(rest_models_body(config, upstream))["items"]]
    assert merged == ["composer-1", *names]  # Cursor's first, ours once
    assert [i["id"] for i in json.loads(rest_models_body(config, b"<html>"))["items"]] == names
    assert is_rest_models("GET", "/v1/models?limit=5") and not is_rest_models("POST", "/v1/models")
