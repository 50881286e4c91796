"""kill -9 mid-turn then a restart on the same data dir; malformed bodies from a fuzzer while a
bystander conversation runs: the proxy answers each with a Connect error (or, an upload that is no
Agent message, passes it to Cursor as it came) and the bystander's turn is exactly what it would
have been."""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
import uuid

import httpx
import pytest
from cursor_client import BIDI_APPEND
from cursor_client import RUN_SSE
from cursor_client import CursorLikeClient
from cursor_client import ssl_context
from fakes.fake_cursor import FakeCursor
from faultlib import LARGE
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from mitm import start_mitmdump

from cursor_byok.wire import connect
from cursor_byok.wire.bidi import decode_bidi_append
from cursor_byok.wire.bidi import encode_bidi_append

pytestmark = pytest.mark.timeout(240)


async def test_kill_9_mid_turn_then_restart_on_the_same_data_dir(tmp_path, workspace) -> None:
    first = start_mitmdump(tmp_path / "first")
    client = CursorLikeClient.through(first, workspace)
    conversation = str(uuid.uuid4())
    try:
        done = await client.turn(client.run_request("read notes.txt", conversation_id=conversation))
        stuck = CursorLikeClient.through(first, workspace, answer_execs=False)
        turn = asyncio.ensure_future(
            stuck.turn(
                stuck.run_request(
                    "README.md", conversation_id=conversation, state=done.checkpoints[-1]
                )
            )
        )
        while not stuck.exec_log:
            await asyncio.sleep(0.02)
        os.kill(first.process.pid, signal.SIGKILL)  # mid-turn: an exec is pending
        first.process.wait()
        turn.cancel()
        await stuck.aclose()
    finally:
        first.stop()
    blobs = first.data_dir / "blobs"
    for path in blobs.rglob("*"):
        if path.is_file():  # nothing torn: every blob file is named by its content's hash
            assert hashlib.sha256(path.read_bytes()).hexdigest() in path.name
    assert not list(blobs.rglob(".tmp-*"))
    second = start_mitmdump(tmp_path / "second", data_dir=first.data_dir)
    try:
        client.ca_file, client.proxy = second.ca_file, second.proxy_url
        client.__post_init__()
        again = await client.turn(
            client.run_request(
                "README.md", conversation_id=conversation, state=done.checkpoints[-1]
            )
        )
    finally:
        await client.aclose()
        second.stop()
    assert again.end.ok and "Demo project" in again.text
    assert "kv:get_blob_args" not in again.kinds()  # the history came from the data dir


PATHS = [BIDI_APPEND, RUN_SSE]
bodies = st.one_of(
    st.binary(max_size=256),
    st.builds(lambda b: connect.encode_frame(b), st.binary(max_size=128)),
    st.builds(
        lambda rid, seq, raw: encode_bidi_append(rid, seq, raw, binary=True),
        st.text(max_size=40),
        st.integers(min_value=-5, max_value=10),
        st.binary(max_size=64),
    ),
)
headers = st.sampled_from(
    [
        {"content-type": "application/proto"},
        {"content-type": "application/connect+proto"},
        {"content-type": "application/proto", "content-encoding": "gzip"},
        {"content-type": "application/connect+proto", "content-encoding": "zstd"},
        {"content-type": "application/grpc-web+proto"},
    ]
)


@pytest.fixture
async def cursor(tmp_path):
    """A stand-in for Cursor's backend: where what is not ours goes (tests/fakes/fake_cursor.py)."""
    async with FakeCursor(tmp_path / "backend") as backend:
        yield backend


@pytest.fixture
def in_front(cursor, tmp_path):
    """The proxy (scripted agent) in front of the stand-in: its host, 127.0.0.1, is Cursor's."""
    proxy = start_mitmdump(
        tmp_path / "proxy",
        "--set",
        "cursor_byok_heartbeat_ms=300",
        "--set",
        f"ssl_verify_upstream_trusted_ca={cursor.cert}",
        hosts="127.0.0.1",
    )
    yield proxy
    proxy.stop()


async def test_malformed_bodies_never_disturb_a_bystander(cursor, in_front, workspace) -> None:
    """Every fuzzed body gets a Connect error from the proxy, except an upload that is not an
    Agent message for a request id no run holds (voice input shares BidiAppend, protocol.md
    §2.5): that one goes to Cursor as it came. Against a host that resolves nowhere such an
    upload came back as mitmproxy's HTML 502 page (or hung on a slow resolver past httpx's 5 s),
    which is why this test failed now and then, more often with more examples."""
    mitm = in_front
    baseline_client = CursorLikeClient.to_backend(cursor.port, mitm, workspace)
    try:
        baseline = await baseline_client.turn(
            baseline_client.run_request("read notes.txt", conversation_id="calm")
        )
    finally:
        await baseline_client.aclose()
    bystander = CursorLikeClient.to_backend(cursor.port, mitm, workspace, heartbeat_interval=0.2)
    statuses: list[int] = []
    cases: list[tuple[str, bytes, dict[str, str]]] = []

    @settings(
        max_examples=400 if LARGE else 60,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.sampled_from(PATHS), bodies, headers)
    def collect(path, body, header) -> None:
        cases.append((path, body, header))

    collect()
    async with httpx.AsyncClient(
        proxy=mitm.proxy_url, verify=ssl_context(mitm.ca_file, False), trust_env=False
    ) as http:

        async def fuzz() -> None:
            for path, body, header in cases:
                response = await http.post(
                    f"https://127.0.0.1:{cursor.port}{path}", content=body, headers=header
                )
                statuses.append(response.status_code)
                if response.status_code != 200:
                    assert "code" in response.json(), response.text

        try:
            result, _ = await asyncio.gather(
                bystander.turn(bystander.run_request("read notes.txt", conversation_id="busy")),
                fuzz(),
            )
        finally:
            await bystander.aclose()
    assert result.end.ok
    assert result.kinds() == baseline.kinds() and result.text == baseline.text
    assert len(statuses) == len(cases) and any(s == 400 for s in statuses)
    assert mitm.process.poll() is None and "Traceback" not in mitm.log()
    for passed in cursor.requests:  # only what is not Agent traffic reached Cursor
        assert passed.path == BIDI_APPEND, passed
        append = decode_bidi_append(
            passed.body, passed.headers.get("content-type"), passed.headers.get("content-encoding")
        )
        assert not append.agent, passed
