"""Issue 27 item 7: a provider that echoes the key in another spelling (percent-encoded,
base64, JSON-escaped) has it scrubbed from what Cursor shows and from the proxy's log.
Issue 33 item 9: also double-percent-encoded, `\\uXXXX`-escaped, in hex, as HTML entities, and
with only some characters escaped."""

from __future__ import annotations

import base64
import html
import json
from urllib.parse import quote

import pytest
from fakes.fake_provider import FakeProvider
from hardening import one_turn
from hardening import start_proxy
from hardening import write_config

pytestmark = pytest.mark.timeout(90)
ODD_KEY = "AbC/dEf+GhI=jKl9876:x"


def spellings() -> dict[str, str]:
    return {
        "raw": ODD_KEY,
        "percent": quote(ODD_KEY, safe=""),
        "base64": base64.b64encode(ODD_KEY.encode()).decode(),
        "basic": base64.b64encode(b"me:" + ODD_KEY.encode()).decode(),
        "json": json.dumps(ODD_KEY)[1:-1].replace("/", "\\/"),
        "double-percent": quote(quote(ODD_KEY, safe=""), safe=""),
        "unicode-escapes": "".join(f"\\u{ord(c):04x}" for c in ODD_KEY),
        "hex": ODD_KEY.encode().hex(),
        "HEX": ODD_KEY.encode().hex().upper(),
        "entities": "".join(f"&#{ord(c)};" for c in ODD_KEY),
        "hex-entities": "".join(f"&#x{ord(c):X};" for c in ODD_KEY),
        "html": html.escape(ODD_KEY),
        "mixed": "".join(
            c if i % 2 else (f"%{ord(c):02X}", f"&#{ord(c)};", f"\\u{ord(c):04X}")[i % 3]
            for i, c in enumerate(ODD_KEY)
        ),
    }


@pytest.mark.parametrize("where", ["http-error", "in-band-error"])
async def test_an_echoed_key_is_scrubbed_in_every_spelling(tmp_path, workspace, where) -> None:
    forms = spellings()
    echo = "; ".join(f"{name}={form}" for name, form in forms.items())
    async with FakeProvider(check_on_exit=False) as fp:
        if where == "http-error":
            fp.script.error(401, message=f"invalid key: {echo}")
        else:
            fp.script.stream_error(text="so far", message=f"upstream said: {echo}")
        proxy = start_proxy(tmp_path, write_config(tmp_path, fp.base_url), key=ODD_KEY)
        try:
            result = await one_turn(proxy, workspace)
        finally:
            proxy.stop()
    error = result.end.error
    assert error is not None
    shown = error.message + "".join(d.value.decode("latin-1") for d in error.details)
    leaked = [name for name, form in forms.items() if form in shown or form in proxy.log()]
    assert not leaked, f"the key leaked as {leaked}: {error.message}"
    assert "<redacted>" in error.message
