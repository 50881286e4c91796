"""What a secret looks like, decided once, and how it is kept out of everything we write or show.

Used for capture files, provider error messages shown in Cursor or logged, the config's rule
that credential headers come from an env var or a file, and the secrets a provider's settings
hold. Two things are redacted: values the caller knows are secrets (the configured key), in every
spelling a server may echo them in (percent-encoded, base64, JSON-escaped: `spellings`), and any
substring shaped like a credential, even one we were never told about.
"""

from __future__ import annotations

import base64
import functools
import html
import json
import re
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote
from urllib.parse import quote_plus

REDACTED = "<redacted>"

# Headers whose whole value is a credential (providers' and Cursor's own auth headers).
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "x-auth-token",
        "x-access-token",
        "x-cursor-checksum",
        "x-client-key",
        "x-session-id",
    }
)
# …and any header whose name says it carries one.
_SECRET_NAME_WORDS = ("auth", "token", "secret", "key", "cookie", "session", "password", "checksum")

# Token shapes, redacted wherever they appear. Prefixes are the vendors' documented key formats:
# OpenAI/Anthropic/OpenRouter `sk-…` (also glued to a preceding `_` or `=`, as in
# `api_key_sk-…`), Google `AIza…`, GitHub `ghp_…`/`gho_…`/…, Slack `xox?-…`, AWS `AKIA…`; JWTs
# (Cursor's access tokens among them) start with `eyJ` (base64url of `{"`). A value after an
# auth scheme is hidden: any value after `Bearer`; after `Basic`/`token` (words prose uses too:
# "basic usage", "token limit") only a value that looks encoded: 8+ characters with a digit,
# `=` or an uppercase letter after the first, or 20+ characters.
_VALUE = r"[A-Za-z0-9._~+/=\-]"
_SCHEME = re.compile(
    rf"\b((?i:bearer))(\s+){_VALUE}{{6,}}"
    rf"|\b((?i:basic|token))(\s+)(?:(?=.{_VALUE}*[0-9=A-Z]){_VALUE}{{8,}}|{_VALUE}{{20,}})"
)
_TOKENS = re.compile(
    r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_\-]{8,}"
    r"|\beyJ[A-Za-z0-9_\-]*\.[A-Za-z0-9_.\-]+"
    r"|(?<![A-Za-z0-9])AIza[0-9A-Za-z_\-]{20,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{16,}"
    r"|\bxox[abprs]-[A-Za-z0-9\-]{10,}"
    r"|\bAKIA[0-9A-Z]{16}\b"
)
_MIN_SECRET = 4  # shorter "secrets" would redact ordinary words
_MIN_BASE64 = 8  # a base64 run shorter than this (6 bytes of a key) is not searched for
_PERCENT = re.compile(r"%[0-9A-F]{2}")
# Characters a base64 run's first 1-3 characters mix with what precedes the secret, by where the
# secret starts in its 3-byte group (offset 0, 1 or 2): those are left out of the searched run.
_BASE64_SKIP = (0, 2, 3)


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """Replace the given secrets (in every spelling of `spellings`) and every token-shaped
    substring with `REDACTED`.

    Idempotent: scrubbed text scrubs to itself.
    """
    for secret in secrets:
        if secret and len(secret) >= _MIN_SECRET:
            for form in spellings(secret):
                if form in text:
                    text = text.replace(form, REDACTED)
            text = _escaped(secret).sub(REDACTED, text)
    text = _SCHEME.sub(_keep_scheme, text)
    return _TOKENS.sub(REDACTED, text)


@functools.lru_cache(maxsize=64)
def spellings(secret: str) -> tuple[str, ...]:
    """The secret as a server may echo it, longest first: as it is; percent-encoded (upper and
    lower hex, `+` for spaces); JSON-escaped (`\\uXXXX`, `\\/`); and base64 (standard and URL
    alphabets), as the run of characters that encodes it wherever it starts in a longer encoded
    value (a Basic header's `user:key`), minus the 1-3 characters it shares with its neighbours.

    Why all of them: a provider that rejects a key often quotes the request back (a URL with the
    key in its query, the Authorization header, the JSON body), and a key with `/`, `+`, `=` or a
    non-ASCII character then shows up in Cursor and in the log in a form `str.replace` of the
    key itself never finds."""
    forms = {secret}
    for encoded in (quote(secret, safe=""), quote(secret), quote_plus(secret)):
        forms.add(encoded)
        forms.add(_PERCENT.sub(lambda m: m.group(0).lower(), encoded))
    for escaped in (json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]):
        forms.add(escaped)
        forms.add(escaped.replace("/", "\\/"))
    raw = secret.encode("utf-8", "surrogatepass")
    forms.update((raw.hex(), raw.hex().upper()))
    for offset, skip in enumerate(_BASE64_SKIP):
        padded = bytes(offset) + raw
        whole = padded[: len(padded) // 3 * 3]  # the groups the secret's bytes fill alone
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            run = encode(whole).decode("ascii")[skip:]
            if len(run) >= _MIN_BASE64:
                forms.add(run)
    return tuple(sorted(forms, key=len, reverse=True))


@functools.lru_cache(maxsize=64)
def _escaped(secret: str) -> re.Pattern[str]:
    """The secret with any of its characters escaped, each in its own way: percent-encoded once
    or twice (`%41`, `%2541`), `\\uXXXX`, `\\xXX`, an HTML entity (`&#65;`, `&#x41;`, `&amp;`)
    or JSON's `\\/`, hex digits in either case. A server (or a page quoting a request) may
    escape every character, or only some: no list of whole spellings covers that."""
    return re.compile("".join(_char_forms(ch) for ch in secret))


def _char_forms(ch: str) -> str:
    code = ord(ch)
    utf8 = ch.encode("utf-8", "surrogatepass")
    utf16 = ch.encode("utf-16-be", "surrogatepass")  # one code unit, or a surrogate pair
    units = [int.from_bytes(utf16[i : i + 2], "big") for i in range(0, len(utf16), 2)]
    escapes = [
        "".join(f"%(?:25)?{b:02x}" for b in utf8),
        "".join(f"\\\\u{u:04x}" for u in units),
        f"&#0*{code};",
        f"&#x0*{code:x};",
        "".join(f"\\\\x{b:02x}" for b in utf8),
    ]
    forms = [re.escape(ch), f"(?i:{'|'.join(escapes)})"]
    named = html.escape(ch)
    if named != ch:
        forms.append(re.escape(named))
    if ch == "/":
        forms.append(re.escape("\\/"))
    if ch == "'":
        forms.append("&apos;")
    return f"(?:{'|'.join(forms)})"


def _keep_scheme(match: re.Match[str]) -> str:
    scheme, space = (match.group(1), match.group(2)) if match.group(1) else match.group(3, 4)
    return f"{scheme}{space}{REDACTED}"


def scrub_json(value: Any) -> Any:
    """`scrub` applied to every string (keys included) of a JSON value."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [scrub_json(v) for v in value]
    if isinstance(value, dict):
        return {scrub(str(k)): scrub_json(v) for k, v in value.items()}
    return value


def is_secret_header(name: str) -> bool:
    """Whether a header name carries a credential, or says it might (case-insensitive)."""
    name = name.strip().lower()
    return name in SECRET_HEADERS or any(word in name for word in _SECRET_NAME_WORDS)


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers safe to write: credentials replaced, token-shaped values scrubbed."""
    return {
        name.lower(): REDACTED if is_secret_header(name) else scrub(str(value))
        for name, value in headers.items()
    }
