"""Recording holds no file descriptor per idle request id (issue 13: 400 junk ids under
`ulimit -n 256` used to make the next real turn fail with "Too many open files")."""

from __future__ import annotations

import contextlib
import resource
import stat
import uuid
from collections.abc import Iterator

import pytest
from cursor_client import CursorLikeClient
from cursor_client import CursorTurn
from mitm import start_mitmdump

from cursor_byok.capture.format import load_capture
from cursor_byok.pb import agent_v1_pb2 as pb

pytestmark = pytest.mark.timeout(180)

FD_LIMIT = 256
JUNK_IDS = 400


@contextlib.contextmanager
def descriptor_limit(limit: int) -> Iterator[None]:
    """Children started inside inherit a soft RLIMIT_NOFILE of `limit` (`ulimit -n`)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(limit, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def test_junk_request_ids_do_not_exhaust_descriptors(tmp_path, workspace) -> None:
    record_dir = tmp_path / "rec"
    with descriptor_limit(FD_LIMIT):
        proxy = start_mitmdump(tmp_path, "--set", f"cursor_byok_record_dir={record_dir}")
    client = CursorLikeClient.through(proxy, workspace)
    try:
        heartbeat = pb.AgentClientMessage(client_heartbeat=pb.ClientHeartbeat())
        for _ in range(JUNK_IDS):
            await CursorTurn(client, f"junk-{uuid.uuid4()}").append(heartbeat)
        request = client.run_request("read notes.txt", conversation_id=str(uuid.uuid4()))
        result = await client.turn(request)
    finally:
        await client.aclose()
        proxy.stop()
    assert result.end.ok, (result.end.error, proxy.log()[-2000:])
    assert "alpha" in result.text
    assert "Too many open files" not in proxy.log()
    paths = sorted(record_dir.glob("*.jsonl"))
    assert len(paths) == JUNK_IDS + 1
    assert stat.S_IMODE(record_dir.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in paths)
    [real] = [p for p in paths if not p.name.split("-", 2)[-1].startswith("junk-")]
    assert load_capture(real).end == {}
