"""One list of what is secret (secrets.py): every header the config, the provider settings and
capture files treat as a credential, and the token shapes redacted wherever they appear."""

from __future__ import annotations

import pytest

from cursor_byok.config import ConfigError
from cursor_byok.config import parse_config
from cursor_byok.providers.base import ProviderSettings
from cursor_byok.secrets import REDACTED
from cursor_byok.secrets import is_secret_header
from cursor_byok.secrets import redact_headers
from cursor_byok.secrets import scrub


@pytest.mark.parametrize(
    "name",
    [
        "Authorization",
        "x-api-key",
        "X-Goog-Api-Key",
        "cookie",
        "x-cursor-checksum",
        "x-session-id",
        "X-My-Token",
        "client-secret",
        "db-password",
        "x-blob-encryption-key",
    ],
)
def test_credential_headers_are_secret_everywhere(name: str) -> None:
    assert is_secret_header(name)
    assert redact_headers({name: "value-1234"}) == {name.lower(): REDACTED}
    settings = ProviderSettings(
        kind="openai-chat", base_url="https://x", extra_headers={name: "v-12345"}
    )
    assert "v-12345" in settings.secrets()
    raw = {
        "providers": {
            "p": {"kind": "openai-chat", "base_url": "https://x", "headers": {name: "v"}}
        },
        "models": [{"name": "m", "provider": "p", "model": "m"}],
    }
    with pytest.raises(ConfigError, match="env"):
        parse_config(raw)


def test_ordinary_headers_are_not() -> None:
    for name in ("X-Title", "HTTP-Referer", "content-type", "anthropic-version"):
        assert not is_secret_header(name)


def test_token_shapes_are_scrubbed_even_when_nobody_said_so() -> None:
    text = "key sk-abcdefghijklmnop and Bearer abc.def.ghi and eyJhbGciOi.payload.sig"
    scrubbed = scrub(text)
    assert "sk-abcdefghijklmnop" not in scrubbed and "abc.def.ghi" not in scrubbed
    assert "eyJhbGciOi" not in scrubbed and scrub(scrubbed) == scrubbed
