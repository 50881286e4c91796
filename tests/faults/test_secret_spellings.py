"""Issue 27 item 7: a provider that echoes the key in another spelling (percent-encoded,
base64, JSON-escaped) has it scrubbed from what Cursor shows and from the proxy's log."""

from __future__ import annotations

import base64
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
