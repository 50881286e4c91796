"""Cursor with no proxy setting, as a process inside the test namespace (netns tests only).

    python transparent_client.py WORKSPACE MODEL API_HOST [PASSTHROUGH_URL PASSTHROUGH_CERT]

Runs one Agent turn against https://API_HOST, trusting only the system bundle (where
`cursor-byok trust install` put the CA), then fetches PASSTHROUGH_URL trusting only that
server's own certificate. Prints one JSON object with what happened.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx
from cursor_client import CursorLikeClient


async def main() -> dict:
    workspace, model, host = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    out: dict = {}
    bundle = Path(ssl.get_default_verify_paths().cafile)
    client = CursorLikeClient(
        base_url=f"https://{host}", workspace=workspace, proxy=None, ca_file=bundle
    )
    try:
        async with asyncio.timeout(60):
            result = await client.turn(
                client.run_request("hi", conversation_id=str(uuid.uuid4()), model=model)
            )
        out["turn"] = {"ok": result.end.ok, "error": str(result.end.error), "text": result.text}
    except Exception as exc:  # reported, asserted on by the test
        out["turn"] = {"ok": False, "error": repr(exc), "text": ""}
    finally:
        await client.aclose()
    if len(sys.argv) < 6:
        return out
    url, cert = sys.argv[4], sys.argv[5]
    try:
        async with httpx.AsyncClient(
            verify=ssl.create_default_context(cafile=cert), trust_env=False
        ) as http:
            response = await http.get(url, timeout=15)
        out["passthrough"] = {"status": response.status_code, "body": response.text}
    except Exception as exc:
        out["passthrough"] = {"status": 0, "body": repr(exc)}
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main())), flush=True)
