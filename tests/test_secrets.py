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


# Issue 27 item 7: a provider echoing the key in another spelling (percent-encoded in a URL it
# quotes, base64 in a Basic header it shows, JSON-escaped in a request body it repeats).
ODD_KEY = "AbC/dEf+GhI=jKl9876é:x"


def _spellings(secret: str) -> dict[str, str]:
    import base64
    import json
    import re
    from urllib.parse import quote
    from urllib.parse import quote_plus

    raw = secret.encode()
    return {
        "percent": quote(secret, safe=""),
        "percent-lower": re.sub(
            "%[0-9A-F]{2}", lambda m: m.group(0).lower(), quote(secret, safe="")
        ),
        "percent-plus": quote_plus(secret),
        "base64": base64.b64encode(raw).decode(),
        "base64url": base64.urlsafe_b64encode(raw).decode().rstrip("="),
        "basic": base64.b64encode(b"user:" + raw).decode(),
        "json": json.dumps(secret)[1:-1],
        "json-slash": json.dumps(secret)[1:-1].replace("/", "\\/"),
        # issue 33 item 9
        "double-percent": quote(quote(secret, safe=""), safe=""),
        "unicode-escapes": "".join(f"\\u{ord(c):04x}" for c in secret),
        "unicode-escapes-upper": "".join(f"\\u{ord(c):04X}" for c in secret),
        "hex": raw.hex(),
        "hex-upper": raw.hex().upper(),
        "x-escapes": "".join(f"\\x{b:02x}" for b in raw),
        "entities": "".join(f"&#{ord(c)};" for c in secret),
        "hex-entities": "".join(f"&#x{ord(c):x};" for c in secret),
        "some-escaped": "".join(
            f"%{ord(c):02X}" if i % 3 == 0 else f"&#{ord(c)};" if i % 3 == 1 else c
            for i, c in enumerate(secret)
        ),
    }


def test_a_secret_with_html_special_characters_is_scrubbed_as_named_entities() -> None:
    import html

    key = "k3y<&>\"'-abc"
    for form in (html.escape(key), html.escape(key).replace("&#x27;", "&apos;")):
        assert scrub(f"echo {form}.", [key]) == f"echo {REDACTED}."


@pytest.mark.parametrize("spelling", list(_spellings(ODD_KEY)))
def test_a_configured_secret_is_scrubbed_in_every_spelling(spelling: str) -> None:
    form = _spellings(ODD_KEY)[spelling]
    assert form != ODD_KEY
    text = f"invalid key {form} (see docs)"
    scrubbed = scrub(text, [ODD_KEY])
    assert form not in scrubbed, scrubbed
    assert scrubbed.startswith("invalid key ") and scrubbed.endswith(" (see docs)")
    assert scrub(scrubbed, [ODD_KEY]) == scrubbed


def test_base64_of_a_secret_is_found_at_any_offset_inside_a_longer_value() -> None:
    import base64

    for prefix in (b"", b"a", b"ab", b"abc:", b"user:"):
        encoded = base64.b64encode(prefix + ODD_KEY.encode() + b"\ntrailer").decode()
        scrubbed = scrub(f"header {encoded}", [ODD_KEY])
        assert REDACTED in scrubbed, (prefix, scrubbed)
        before, after = scrubbed.split(REDACTED, 1)
        # what stays visible is the prefix's own characters and the trailer's, not the key's
        assert len(before) <= len("header ") + len(prefix) * 4 // 3 + 3
        assert len(after) <= len(b"\ntrailer") * 4 // 3 + 6


def test_ordinary_text_is_left_alone_by_the_spellings() -> None:
    text = "the model said hello world, nothing secret here: 12345 abc/def"
    assert scrub(text, ["abcd1234"]) == text
