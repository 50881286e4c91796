"""Provider clients are shared per settings and replaced when settings (or the key) change."""

from __future__ import annotations

import dataclasses

from cursor_byok.providers.base import ProviderSettings
from cursor_byok.providers.pool import ProviderPool
from cursor_byok.providers.pool import fingerprint


class Dummy:
    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings
        self.closed = False

    async def aclose(self) -> None:
        self.closed = True


async def test_same_settings_share_one_client_and_changes_get_a_new_one() -> None:
    pool = ProviderPool(make=Dummy)
    base = ProviderSettings(kind="anthropic", base_url="https://a", api_key="k1", name="a")
    first = pool.get(base)
    assert pool.get(dataclasses.replace(base)) is first
    rotated = pool.get(dataclasses.replace(base, api_key="k2"))
    edited = pool.get(dataclasses.replace(base, read_timeout=5.0))
    assert rotated is not first and edited is not first and len(pool) == 3
    assert "k1" not in fingerprint(base)
    await pool.aclose()
    assert first.closed and rotated.closed and edited.closed and len(pool) == 0


def test_every_setting_counts_nested_values_too() -> None:
    """Each field enters the fingerprint, down into the dicts (a header or body value edited)."""
    base = ProviderSettings(
        kind="openai-chat", base_url="https://a", extra_body={"reasoning": {"effort": "low"}}
    )
    seen = {fingerprint(base)}
    for name, value in [
        ("extra_body", {"reasoning": {"effort": "high"}}),
        ("extra_headers", {"x-a": "1"}),
        ("chat_reasoning_body", {"thinking": {"type": "enabled"}}),
        ("proxy", "http://p:1"),
        ("responses_include_encrypted", False),
    ]:
        seen.add(fingerprint(dataclasses.replace(base, **{name: value})))
    assert len(seen) == 6
    assert fingerprint(base) == fingerprint(dataclasses.replace(base))
