"""The user's configuration: providers, models, defaults — one TOML file, validated precisely.

API keys never live in the file itself: a provider names an environment variable (`api_key_env`)
or a key file (`api_key_file`). Errors say which file, which key and what is wrong, so a typo is a
one-line fix instead of a traceback. The same holds for extra headers that carry a credential
(`Authorization`, `x-api-key`, ...): their value names an env var or a file, never the secret.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from cursor_byok.config.features import Features
from cursor_byok.errors import ByokError
from cursor_byok.errors import Code
from cursor_byok.providers import ProviderSettings
from cursor_byok.store.usage import Prices

DEFAULT_CONTEXT_WINDOW = 128_000
NATIVE_SEARCH_KINDS = ("anthropic", "openai-responses")  # providers that search themselves
ROUTE_OTHER_MODELS = ("cursor", "error")
# "local": nothing of a BYOK conversation goes to Cursor (titles, uploads, analytics about it are
# answered or dropped here); "cursor": those calls go to Cursor as they would without cursor-byok
PRIVACY = ("local", "cursor")


class ConfigError(ByokError, ValueError):
    """A configuration problem, phrased for the user: file, key, what is wrong."""

    code = Code.FAILED_PRECONDITION


def default_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "cursor-byok" / "config.toml"


@dataclass(frozen=True)
class SecretRef:
    """A header value read when a request is made: `prefix` + the env var's or file's content."""

    env: str | None = None
    file: Path | None = None
    prefix: str = ""

    def resolve(self, where: str) -> str:
        if self.env:
            value = os.environ.get(self.env, "")
            if not value:
                raise ConfigError(f"{where}: environment variable {self.env} is not set")
            return self.prefix + value.strip()
        assert self.file is not None
        try:
            return self.prefix + self.file.expanduser().read_text().strip()
        except OSError as exc:
            raise ConfigError(f"{where}: cannot read {self.file}: {exc.strerror}") from None


@dataclass(frozen=True)
class KeyRef:
    """One key of a provider's key pool: an environment variable or a key file, read at use."""

    env: str | None = None
    file: Path | None = None

    @property
    def label(self) -> str:
        """What logs may name: the variable or the file, never the key."""
        return self.env or str(self.file)

    def read(self, provider: str) -> str:
        if self.env:
            return SecretRef(env=self.env).resolve(f"provider {provider!r}: api_key_env")
        return SecretRef(file=self.file).resolve(f"provider {provider!r}: api_key_file")


@dataclass(frozen=True)
class ProviderConfig:
    name: str
    kind: str
    base_url: str
    api_key_env: str | None = None
    api_key_file: Path | None = None
    headers: dict[str, str | SecretRef] = field(default_factory=dict)
    connect_timeout: float = 10.0
    read_timeout: float = 300.0
    max_retries: int = 2
    proxy: str | None = None  # http(s)://host:port of a forward proxy for this provider
    proxy_auth: SecretRef | None = None  # "user:password" for `proxy`, from env or a file
    proxy_from_env: bool = False  # HTTPS_PROXY / NO_PROXY instead (off: they may point at us)
    ca_file: Path | None = None  # a PEM bundle of CAs trusted besides system + certifi
    extra_body: dict[str, Any] = field(default_factory=dict)
    reasoning_passback: str | None = None
    # seconds from a model call until its first event, over all retries (None = no bound)
    first_token_timeout: float | None = 120.0
    # seconds a stream may go without an SSE event (keep-alive comments do not count)
    idle_timeout: float = 600.0
    # api_key_env / api_key_file given as a list: the keys, used in turn (agent/chain.py)
    key_pool: tuple[KeyRef, ...] = ()
    # a team gateway (LiteLLM): each request carries the conversation, mode and kind
    send_metadata: bool = False

    def api_key(self) -> str:
        """Read the key now (so a rotated key file or env var is picked up); never logged."""
        if self.api_key_env:
            value = os.environ.get(self.api_key_env, "")
            if not value:
                raise ConfigError(
                    f"provider {self.name!r}: environment variable {self.api_key_env} is not set"
                )
            return value.strip()
        if self.api_key_file:
            try:
                return self.api_key_file.expanduser().read_text().strip()
            except OSError as exc:
                raise ConfigError(
                    f"provider {self.name!r}: cannot read api_key_file {self.api_key_file}: "
                    f"{exc.strerror}"
                ) from None
        return ""  # local servers (Ollama, vLLM) often need none

    def resolved_headers(self) -> dict[str, str]:
        """Extra headers with credential references read now (never logged)."""
        return {
            name: value.resolve(f"provider {self.name!r}: header {name}")
            if isinstance(value, SecretRef)
            else value
            for name, value in self.headers.items()
        }

    def settings(self, api_key: str | None = None) -> ProviderSettings:
        """The adapter's settings; `api_key` is the key of the pool a call uses."""
        return ProviderSettings(
            kind=self.kind,
            base_url=self.base_url,
            api_key=self.api_key() if api_key is None else api_key,
            extra_headers=self.resolved_headers(),
            connect_timeout=self.connect_timeout,
            read_timeout=self.read_timeout,
            idle_timeout=self.idle_timeout,
            max_retries=self.max_retries,
            name=self.name,
            proxy=self.proxy,
            proxy_auth=(
                self.proxy_auth.resolve(f"provider {self.name!r}: proxy_auth")
                if self.proxy_auth is not None
                else ""
            ),
            proxy_from_env=self.proxy_from_env,
            ca_file=str(self.ca_file.expanduser()) if self.ca_file is not None else None,
            extra_body=dict(self.extra_body),
            chat_reasoning_passback=self.reasoning_passback,
            send_metadata=self.send_metadata,
        )


@dataclass(frozen=True)
class UsageSettings:
    """How long `cursor-byok usage` keeps turn rows (pruned when it runs)."""

    retention_days: int | None = None  # None: keep every row


@dataclass(frozen=True)
class ModelConfig:
    name: str  # what Cursor shows and sends back as the model id
    provider: str
    model: str  # the upstream model id
    context_window: int = DEFAULT_CONTEXT_WINDOW
    max_output_tokens: int | None = None
    supports_images: bool = False
    supports_thinking: bool = False
    thinking: bool = False  # ask the provider for reasoning
    params: dict[str, Any] = field(default_factory=dict)
    prices: Prices | None = None
    web_search: bool = False  # the provider's own web search instead of a [web_search] endpoint
    first_token_timeout: float | None = None  # overrides the provider's budget
    compaction_model: str | None = None  # another configured model that writes summaries
    compact_at: float = 0.8  # share of the context window that triggers compaction
    # other configured models a call goes to, in order, when this one fails before any output
    fallbacks: tuple[str, ...] = ()


@dataclass(frozen=True)
class WebSearchConfig:
    """A search endpoint for the WebSearch tool: GET `url` with `{query}` filled in; the JSON
    answer is read in the common shapes (SearxNG, Brave, Serper, Tavily, Google CSE)."""

    url: str
    api_key_env: str | None = None
    api_key_header: str = "Authorization"  # "Authorization" sends "Bearer <key>"
    headers: dict[str, str] = field(default_factory=dict)
    max_results: int = 8
    timeout: float = 20.0

    def api_key(self) -> str | None:
        if not self.api_key_env:
            return None
        value = os.environ.get(self.api_key_env, "").strip()
        if not value:
            raise ConfigError(f"web_search: environment variable {self.api_key_env} is not set")
        return value


@dataclass(frozen=True)
class ImageGenerationConfig:
    """An OpenAI-compatible image endpoint (`POST {base_url}/images/generations`)."""

    base_url: str
    model: str
    api_key_env: str | None = None
    size: str = "1024x1024"
    timeout: float = 120.0
    headers: dict[str, str] = field(default_factory=dict)

    def api_key(self) -> str | None:
        if not self.api_key_env:
            return None
        value = os.environ.get(self.api_key_env, "").strip()
        if not value:
            raise ConfigError(
                f"image_generation: environment variable {self.api_key_env} is not set"
            )
        return value


# Cursor's modes and our tasks a [routes] table may name (the Cmd-K/Tab feature keys are
# another table's, resolved by the same function: config/routes.py)
ROUTE_KEYS = ("agent", "ask", "plan", "debug", "subagent", "compaction", "title", "vision")


@dataclass(frozen=True)
class Limits:
    """Spending caps in the currency of the `prices` (config/spend.py checks them)."""

    daily_usd: float | None = None
    monthly_usd: float | None = None
    conversation_usd: float | None = None

    def caps(self) -> list[tuple[str, float]]:
        """(name, amount) of each cap set, in the order they are checked."""
        named = [
            ("conversation_usd", self.conversation_usd),
            ("daily_usd", self.daily_usd),
            ("monthly_usd", self.monthly_usd),
        ]
        return [(name, amount) for name, amount in named if amount is not None]


@dataclass(frozen=True)
class Config:
    providers: dict[str, ProviderConfig]
    models: list[ModelConfig]
    default_model: str | None = None
    max_steps: int = 50
    path: Path | None = None
    usage: UsageSettings = field(default_factory=UsageSettings)
    subagent_model: str | None = None  # model for subagent (Task) runs; None: what Cursor asks
    web_search: WebSearchConfig | None = None  # WebSearch is offered only with an endpoint
    image_generation: ImageGenerationConfig | None = None  # GenerateImage likewise
    # "cursor": runs on other models go to Cursor's backend untouched; "error": refuse them
    route_other_models: str = "cursor"
    # describes attached images for models with supports_images = false (agent/images.py)
    vision_model: str | None = None
    privacy: str = "local"  # PRIVACY: what of a BYOK conversation may reach Cursor
    title_model: str | None = None  # names BYOK chats (NameAgent); None: the message's first words
    # which model answers Cmd-K, terminal Cmd-K, commit messages and Tab (config/features.py)
    features: Features = field(default_factory=Features)
    routes: dict[str, str] = field(default_factory=dict)  # ROUTE_KEYS -> model name
    limits: Limits = field(default_factory=Limits)

    def model(self, requested: str | None) -> ModelConfig | None:
        """The configured model for a name Cursor sent (display name or upstream id)."""
        if not requested:
            requested = self.default_model
        for model in self.models:
            if requested in (model.name, model.model):
                return model
        return None

    def prices_of(self, name: str) -> Prices | None:
        """The prices of the model a usage row names (None: unpriced, or not configured)."""
        configured = self.model(name) if name else None
        return configured.prices if configured else None

    def model_names(self) -> list[str]:
        return [m.name for m in self.models]

    def used_providers(self) -> list[str]:
        """Providers some model routes to, in config order."""
        used = {m.provider for m in self.models}
        return [name for name in self.providers if name in used]

    def unused_providers(self) -> list[str]:
        used = set(self.used_providers())
        return [name for name in self.providers if name not in used]
