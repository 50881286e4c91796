"""Where one model call may go: the model, then its `fallbacks`, each with the keys of its pool.

A call goes to the first option; when it fails before any of its output reached Cursor (the
kinds in `FALLBACK_KINDS`), the same request goes to the next: another key of the pool (a 429
rests the key for its retry-after, a 401 takes it out), then the next model in `fallbacks`, on
its own provider and wire format (the history is neutral: an Anthropic fallback for an OpenAI
model works). The model that served stays first for the rest of the turn, so a failing primary
costs one failure per turn, not one per step.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass

from cursor_byok.config import Config
from cursor_byok.config import ConfigError
from cursor_byok.config import ModelConfig
from cursor_byok.config import ProviderConfig
from cursor_byok.config.catalog import find_model
from cursor_byok.config.settings import NATIVE_SEARCH_KINDS
from cursor_byok.providers import ModelRequest
from cursor_byok.providers import Provider
from cursor_byok.providers.keys import KeyPools
from cursor_byok.providers.keys import KeyRing
from cursor_byok.providers.keys import key_id
from cursor_byok.providers.keys import rest_for
from cursor_byok.providers.provider_error import ProviderError

log = logging.getLogger(__name__)

# provider_kind()s a call falls back on: the next option may well succeed where this one failed
FALLBACK_KINDS = frozenset(
    {"rate_limit", "quota", "auth", "forbidden", "not_found", "server", "network", "timeout"}
)
Make = Callable[[ModelConfig, str | None], Provider]  # (model, the pool key or None) -> client


@dataclass(frozen=True, slots=True)
class Option:
    """One place a call may go: a model, its provider client (with one key of its pool)."""

    model: ModelConfig
    provider: Provider
    max_retries: int
    first_token_timeout: float | None
    key: str = ""  # the pool key's id ("" without a pool)
    key_label: str = ""  # the env var or file it came from (never the key)
    pooled: bool = False  # other keys of the pool are usable: a 429 moves on, not waits
    ring: KeyRing | None = None  # the pool the key belongs to


class Chain:
    """The options of a turn's calls, in order (see the module doc)."""

    def __init__(
        self,
        config: Config,
        primary: ModelConfig,
        make: Make,
        pools: KeyPools | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.primary = primary
        self._make = make
        self._pools = pools
        self._clock = clock
        self._first = primary  # the model that served last (sticky for the turn)
        self.problems: list[str] = []  # why options were skipped (a missing key, all resting)

    def models(self) -> list[ModelConfig]:
        names = [self.primary.name, *self.primary.fallbacks]
        found = [m for m in (find_model(self.config, n) for n in names) if m is not None]
        if self._first in found:
            found.remove(self._first)
            found.insert(0, self._first)
        return found

    def has_fallbacks(self) -> bool:
        return bool(self.primary.fallbacks) or bool(
            self.config.providers[self.primary.provider].key_pool[1:]
        )

    def options(self) -> Iterator[Option]:
        """Each usable option in order, its client built only when it is reached."""
        self.problems.clear()
        for model in self.models():
            provider = self.config.providers[model.provider]
            retries = provider.max_retries
            budget = model.first_token_timeout or provider.first_token_timeout
            if not (provider.key_pool and self._pools is not None):
                try:
                    client = self._make(model, None)
                except ConfigError as exc:
                    self._skip(model.name, str(exc))
                    continue
                yield Option(model, client, retries, budget)
                continue
            ids = self._keys(provider)
            if not ids:
                self._skip(model.name, f"no key of provider {provider.name!r} can be read")
                continue
            ring = self._pools.ring(self.config, provider.name, list(ids))
            order = ring.order(self._clock())
            if not order:
                wait = ring.next_free(self._clock())
                self.problems.append(
                    f"every key of provider {provider.name!r} is resting"
                    + (f" (the next is free in {wait:.0f} s)" if wait is not None else "")
                    + (f"; {ring.revoked()} refused by the provider" if ring.revoked() else "")
                )
            for n, kid in enumerate(order):
                label, key = ids[kid]
                client = self._make(model, key)
                pooled = n + 1 < len(order)
                yield Option(model, client, retries, budget, kid, label, pooled, ring)

    def _keys(self, provider: ProviderConfig) -> dict[str, tuple[str, str]]:
        """key id -> (label, key) of the pool's keys that can be read now (a missing one is
        skipped, said in the turn's error if nothing serves)."""
        ids = {}
        for ref in provider.key_pool:
            try:
                key = ref.read(provider.name)
            except ConfigError as exc:
                self.problems.append(str(exc))
                continue
            ids[key_id(key)] = (ref.label, key)
        return ids

    def _skip(self, model: str, why: str) -> None:
        self.problems.append(why)
        log.warning("model %s skipped: %s", model, why)

    def failed(self, option: Option, error: ProviderError, kind: str) -> None:
        """A failed option: its key rests or is taken out, when the key is to blame."""
        ring = option.ring
        if ring is None:
            return
        provider = self.config.providers[option.model.provider]
        if kind in ("auth", "forbidden"):
            ring.revoke(option.key)
            log.warning(
                "provider %s: the key from %s was refused (%s); it is out until the config changes",
                provider.name,
                option.key_label,
                error.status,
            )
            return
        seconds = rest_for(kind, error.retry_after)
        if seconds is not None:
            ring.rest(option.key, self._clock(), seconds)
            log.warning(
                "provider %s: the key from %s rests %.0f s (%s)",
                provider.name,
                option.key_label,
                seconds,
                kind,
            )

    def served(self, option: Option) -> None:
        self._first = option.model


def request_for(request: ModelRequest, model: ModelConfig, config: Config) -> ModelRequest:
    """`request` as `model` takes it: its upstream id, params, output limit and reasoning."""
    if request.model == model.model:
        return request
    native = config.providers[model.provider].kind in NATIVE_SEARCH_KINDS and model.web_search
    return dataclasses.replace(
        request,
        model=model.model,
        params=dict(model.params),
        max_output_tokens=model.max_output_tokens,
        reasoning=model.thinking,
        web_search=request.web_search and native,
    )
