"""AgentRpc._owner: a credential's keyed hash, made once per credential and not once per
BidiAppend and RunPoll (issue 38), still one owner per credential and none without one."""

from __future__ import annotations

import pytest
from mitmproxy.test import tflow

from cursor_byok.core.runs import Refused
from cursor_byok.proxy import agent_rpc
from cursor_byok.proxy.agent_rpc import AgentRpc


def _flow(token: str | None):
    flow = tflow.tflow()
    if token is not None:
        flow.request.headers["authorization"] = token
    return flow


def test_a_credential_is_hashed_once_and_owners_stay_apart(monkeypatch) -> None:
    rpc = AgentRpc(None, None, None, None, None)  # type: ignore[arg-type]
    made = []
    new = agent_rpc.hmac.new

    def counted(*args, **kwargs):
        made.append(args[1])
        return new(*args, **kwargs)

    monkeypatch.setattr(agent_rpc.hmac, "new", counted)
    first = [rpc._owner(_flow("Bearer one")) for _ in range(20)]
    second = rpc._owner(_flow("Bearer two"))
    assert len(set(first)) == 1 and second != first[0]
    assert made == [b"credential:Bearer one", b"credential:Bearer two"]
    other = AgentRpc(None, None, None, None, None)  # type: ignore[arg-type]
    assert other._owner(_flow("Bearer one")) != first[0]  # keyed per proxy, never stored
    with pytest.raises(Refused):
        rpc._owner(_flow(None))


def test_the_kept_hashes_are_bounded(monkeypatch) -> None:
    monkeypatch.setattr(agent_rpc, "MAX_OWNERS_KEPT", 4)
    rpc = AgentRpc(None, None, None, None, None)  # type: ignore[arg-type]
    owners = {rpc._owner(_flow(f"Bearer {i}")) for i in range(10)}
    assert len(owners) == 10 and len(rpc._owners) <= 4
    assert rpc._owner(_flow("Bearer 3")) in owners
