"""Fixtures shared by the proxy tests."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture
def no_automatic_gc() -> Iterator[None]:
    """Only explicit collections while the test runs: what a reference cycle keeps alive stays
    alive until the test collects, so a test can see whether a cycle was made."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
