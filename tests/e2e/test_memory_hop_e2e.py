"""Through a real mitmdump: while a `Run` stream is served, mitmproxy's hop to the loopback
server is in memory (proxy/loopback/memory_hop.py): no TCP connection to any of the loopback
listeners exists, and the turn is whole. With `cursor_byok_loopback_hop=tcp` the hop is a
connection to one of them again (which also shows that this test sees such connections)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from cursor_client import CursorLikeClient
from mitm import start_mitmdump

from cursor_byok.pb import agent_v1_pb2 as pb

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="needs /proc/net/tcp"),
]

LISTEN, ESTABLISHED = "0A", "01"


def _sockets() -> list[tuple[int, str, str]]:
    """(local port, state, inode) of every IPv4 TCP socket on this machine."""
    rows = []
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        rows.append((int(fields[1].split(":")[1], 16), fields[3], fields[9]))
    return rows


def _inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            match = re.fullmatch(r"socket:\[(\d+)\]", os.readlink(fd))
        except OSError:
            continue
        if match:
            inodes.add(match.group(1))
    return inodes


def loopback_ports(pid: int, proxy_port: int) -> set[int]:
    """The proxy's listening ports other than its own proxy port: the loopback listeners."""
    ours = _inodes(pid)
    return {port for port, state, inode in _sockets()
            if state == LISTEN and inode in ours and port != proxy_port}  # fmt: skip


def hop_connections(ports: set[int]) -> int:
    """Connections accepted by those listeners (their local port is the listener's)."""
    return sum(1 for port, state, _ in _sockets() if state == ESTABLISHED and port in ports)


async def _hop_connections_during_a_turn(mitm, workspace) -> list[int]:
    """Connections to the loopback listeners seen at each server message of a `Run` turn."""
    ports = loopback_ports(mitm.process.pid, mitm.port)
    assert len(ports) >= 5, ports  # the listeners are there (they stay, for any other client)
    seen: list[int] = []

    def during(run) -> None:
        def on_message(message: pb.AgentServerMessage) -> None:
            seen.append(hop_connections(ports))

        run.on_message = on_message

    client = CursorLikeClient.through(mitm, workspace, transport="run")
    try:
        first = client.run_request("please look at README.md", conversation_id="hop-1")
        result = await client.turn(first, during=during)
    finally:
        await client.aclose()
    assert result.end.ok, result.end.error
    assert "# Demo project" in result.text
    assert seen, "no server message arrived"
    return seen


async def test_a_run_stream_has_no_tcp_hop(mitm, workspace) -> None:
    assert "mitmproxy's hop to it in memory" in mitm.log()
    seen = await _hop_connections_during_a_turn(mitm, workspace)
    assert max(seen) == 0, f"TCP connections to the loopback listeners during the turn: {seen}"


async def test_the_hop_over_tcp_when_asked(tmp_path, workspace) -> None:
    mitm = start_mitmdump(tmp_path, "--set", "cursor_byok_loopback_hop=tcp")
    try:
        assert "mitmproxy's hop to it over TCP" in mitm.log()
        seen = await _hop_connections_during_a_turn(mitm, workspace)
    finally:
        mitm.stop()
    assert max(seen) >= 1, seen
