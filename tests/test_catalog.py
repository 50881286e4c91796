"""The pure catalog and the agent stay free of mitmproxy (they run outside the proxy too)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cursor_byok.config import catalog
from cursor_byok.proxy import model_picker as models


@pytest.mark.parametrize("module", ["cursor_byok.agent.loop", "cursor_byok.config.catalog"])
def test_module_does_not_import_mitmproxy(module: str) -> None:
    code = f"import sys, {module}; print('mitmproxy' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "False", out.stderr


def test_models_re_exports_the_catalog() -> None:
    for name in ("find_model", "model_id", "merge_body", "UnsupportedBody", "AVAILABLE_MODELS"):
        assert getattr(models, name) is getattr(catalog, name)
    assert "ModelPicker" in models.__all__
