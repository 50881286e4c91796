"""The config file the e2e tests give the proxy: one fake provider, one model."""

from __future__ import annotations

from pathlib import Path

MODEL = "Fake Model"
KEY_ENV = "FAKE_PROVIDER_KEY"


def write_config(tmp: Path, fp, kind: str) -> Path:
    """A config routing MODEL to the fake provider `fp` speaking wire format `kind`."""
    path = tmp / "config.toml"
    path.write_text(
        f"""
default_model = "{MODEL}"
max_steps = 8

[providers.fake]
kind = "{kind}"
base_url = "{fp.base_url}"
api_key_env = "{KEY_ENV}"
max_retries = 2

[[models]]
name = "{MODEL}"
provider = "fake"
model = "fake-upstream-1"
context_window = 64000
"""
    )
    return path
