"""One provider client per provider settings, shared by turns, so HTTP connections are reused.

A provider's HTTP client keeps its connections (and TLS sessions) alive between requests; making
a new one per turn would add a TCP and TLS handshake to every turn. Settings are matched by a
fingerprint that includes the API key, so a rotated key or an edited provider gets a new client.
Clients of superseded settings stay open until `aclose` (a running turn may still use them);
config edits are rare, so the few extra clients are cheap.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable

from . import make_provider
from .base import Provider
from .base import ProviderSettings

_FIELDS = tuple(field.name for field in dataclasses.fields(ProviderSettings))


def fingerprint(settings: ProviderSettings) -> str:
    """A stable digest of every setting (the key only enters hashed). Taken once per turn: the
    values are read as they are (`dataclasses.asdict` deep-copied each one first, 3x slower)."""
    values = [(name, getattr(settings, name)) for name in _FIELDS]
    return hashlib.sha256(repr(values).encode()).hexdigest()


class ProviderPool:
    def __init__(self, make: Callable[[ProviderSettings], Provider] = make_provider) -> None:
        self._make = make
        self._providers: dict[str, Provider] = {}

    def get(self, settings: ProviderSettings) -> Provider:
        key = fingerprint(settings)
        provider = self._providers.get(key)
        if provider is None:
            provider = self._providers[key] = self._make(settings)
        return provider

    def __len__(self) -> int:
        return len(self._providers)

    async def aclose(self) -> None:
        providers, self._providers = list(self._providers.values()), {}
        for provider in providers:
            await provider.aclose()
