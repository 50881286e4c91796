"""Issue 27 item 3 in the core: one owner's live request ids are bounded on their own, and a
bound makes room (spent, then abandoned, then arriving attempts) before it refuses."""

from __future__ import annotations

import pytest

from cursor_byok.core.attempts import Registry
from cursor_byok.core.eviction import UNREAD_GRACE
from cursor_byok.core.runs import CancelTurn
from cursor_byok.core.runs import Note
from cursor_byok.core.runs import Refused
from cursor_byok.core.runs import RunConfig
from cursor_byok.core.runs import StartTurn

ATTACKER, BYSTANDER = b"attacker", b"bystander"


def run_request(request_id: str):
    from cursor_byok.pb import agent_v1_pb2 as pb

    message = pb.AgentClientMessage()
    message.run_request.run_id = request_id
    message.run_request.conversation_id = request_id
    return message


def abandoned(core: Registry, request_id: str, owner: bytes, now: float):
    """A `Run` stream that got its run request going, was read, then reset by its client."""
    sub, _ = core.subscribe(request_id, owner=owner, now=now, transport="run")
    [start] = core.receive(
        request_id, None, run_request(request_id), owner=owner, now=now, transport="run"
    )
    assert isinstance(start, StartTurn)
    core.unsubscribe(sub, now=now)
    return start.run


def test_one_owners_storm_never_refuses_another_owner() -> None:
    core = Registry(RunConfig(max_attempts=64, max_owner_attempts=8))
    cancelled = []
    for i in range(200):  # the reset storm: far more than either bound
        _, commands = core.open_attempt(f"a{i}", owner=ATTACKER, now=i)
        cancelled += [c.run.run_id for c in commands if isinstance(c, CancelTurn)]
        abandoned(core, f"a{i}", ATTACKER, now=i)
    assert core.owners[ATTACKER] == 8  # its own bound, its newest runs
    assert sorted(core.attempts) == sorted(f"a{i}" for i in range(192, 200))
    assert len(cancelled) == 192 and cancelled[0] == "a0"  # oldest abandoned first
    _, notes = core.subscribe("b", owner=BYSTANDER, now=300)
    assert notes == [] and core.owners[BYSTANDER] == 1


def test_the_global_bound_drops_the_heaviest_owners_oldest_abandoned_run() -> None:
    core = Registry(RunConfig(max_attempts=4, max_owner_attempts=4))
    abandoned(core, "b1", BYSTANDER, now=0)
    for i, now in enumerate((1, 2, 3)):
        abandoned(core, f"a{i}", ATTACKER, now=now)
    _, commands = core.open_attempt("new", owner=BYSTANDER, now=10)
    assert "a0" not in core.attempts and "b1" in core.attempts
    assert any(isinstance(c, CancelTurn) and c.run.run_id == "a0" for c in commands)
    assert any(isinstance(c, Note) and "a0: dropped" in str(c) for c in commands)


def test_spent_attempts_go_first_and_streaming_ones_never() -> None:
    core = Registry(RunConfig(max_attempts=100, max_owner_attempts=3))
    reading, _ = core.subscribe("live", owner=ATTACKER, now=0)
    abandoned(core, "left", ATTACKER, now=1)
    core.open_attempt("junk", owner=ATTACKER, now=2)  # no run request, no stream yet
    core.open_attempt("n1", owner=ATTACKER, now=3)
    assert "left" not in core.attempts  # an abandoned run before an arriving request
    assert "junk" in core.attempts and "live" in core.attempts
    core.open_attempt("n2", owner=ATTACKER, now=4)
    assert "junk" not in core.attempts  # then the one waiting longest for its run request
    core.subscribe("n1", owner=ATTACKER, now=5)
    core.subscribe("n2", owner=ATTACKER, now=5)
    with pytest.raises(Refused) as refused:  # only streaming ones left: refused, not dropped
        core.open_attempt("n3", owner=ATTACKER, now=6)
    assert refused.value.code == "resource_exhausted"
    assert "this client has 3 Agent requests streaming" in str(refused.value)
    assert reading.attempt.request_id in core.attempts


def test_a_run_on_its_way_to_its_stream_is_not_taken_for_abandoned() -> None:
    core = Registry(RunConfig(max_attempts=100, max_owner_attempts=1))
    core.receive("r", None, run_request("r"), owner=ATTACKER, now=0, transport="run")
    with pytest.raises(Refused):  # its stream comes within milliseconds: wait for it
        core.open_attempt("other", owner=ATTACKER, now=1)
    _, commands = core.open_attempt("other", owner=ATTACKER, now=UNREAD_GRACE + 1)
    assert any(isinstance(c, CancelTurn) for c in commands)  # none came: it was left


# Issue 33 item 5: the global bound is shared fairly, by credential and by connection.


def test_a_full_bound_of_streams_gives_way_to_a_smaller_client_and_refuses_the_biggest() -> None:
    """Every live request is being read (no idle one to drop): a bystander still gets in, by
    ending the oldest request of the biggest holder; the biggest holder itself is refused."""
    from cursor_byok.core.runs import EndStreams

    core = Registry(RunConfig(max_attempts=20, max_owner_attempts=20))
    for i in range(20):  # made-up credentials, all on one connection
        core.subscribe(f"a{i}", owner=b"fake-%d" % i, now=i, client="conn-1")
    _, commands = core.open_attempt("b", owner=BYSTANDER, now=50, client="conn-2")
    assert core.attempts["a0"].ended and core.attempts["a0"].end.code == "resource_exhausted"
    assert "the most of any client" in core.attempts["a0"].end.message
    assert EndStreams("a0") in commands
    with pytest.raises(Refused) as refused:  # the attacker's connection holds the most
        core.open_attempt("a-more", owner=b"fake-new", now=51, client="conn-1")
    assert refused.value.code == "resource_exhausted" and "of them, the most" in str(refused.value)
    # many connections with one credential: counted by credential
    core = Registry(RunConfig(max_attempts=20, max_owner_attempts=20))
    for i in range(20):
        core.subscribe(f"a{i}", owner=ATTACKER, now=i, client=f"conn-{i}")
    core.open_attempt("b", owner=BYSTANDER, now=50, client="conn-b")
    assert core.attempts["a0"].ended and "b" in core.attempts
    with pytest.raises(Refused):
        core.open_attempt("a-more", owner=ATTACKER, now=51, client="conn-new")


def test_the_bystander_is_served_again_and_again_while_the_storm_goes_on() -> None:
    """Attackers keep opening streams with made-up credentials on new connections; an ended
    stream goes once its end is written. The bystander's turn (a stream that ends) is served
    every round, and the registry stays within the bound plus the ends being written."""
    core = Registry(RunConfig(max_attempts=32, max_owner_attempts=32))
    subs: dict[str, object] = {}
    n = 0
    for round_ in range(10):
        for _ in range(40):
            n += 1
            try:
                sub, _ = core.subscribe(f"a{n}", owner=b"fake-%d" % n, now=n, client=f"c{n // 10}")
                subs[f"a{n}"] = sub
            except Refused:
                pass
            for request_id, sub in list(subs.items()):  # ended streams write their end, go
                attempt = core.attempts.get(request_id)
                if attempt is not None and attempt.ended:
                    core.unsubscribe(sub, now=n)  # type: ignore[arg-type]
                    del subs[request_id]
            assert len(core.attempts) <= 33
        mine, _ = core.subscribe(f"b{round_}", owner=BYSTANDER, now=n, client="bystander")
        assert len(core.attempts) <= 33
        core.close_attempt(f"b{round_}", None, now=n)
        core.unsubscribe(mine, now=n)


# Issue 33 item 6: a client's running turns are bounded.


def test_a_clients_running_turns_are_bounded_and_nobody_elses() -> None:
    core = Registry(RunConfig(max_owner_turns=3))
    for i in range(3):
        [start] = core.receive(f"a{i}", 0, run_request(f"a{i}"), owner=ATTACKER, now=i)
        assert isinstance(start, StartTurn)
    commands = core.receive("a3", 0, run_request("a3"), owner=ATTACKER, now=4)
    assert not any(isinstance(c, StartTurn) for c in commands)
    end = core.attempts["a3"].end
    assert end is not None and end.code == "resource_exhausted"
    assert "3 turns running" in end.message and "max_turns_per_client" in end.message
    [start] = core.receive("b", 0, run_request("b"), owner=BYSTANDER, now=5)
    assert isinstance(start, StartTurn)  # another client: its own bound
    follow_up = run_request("a0-next")
    follow_up.run_request.conversation_id = "a0"  # a new message in a running conversation
    commands = core.receive("a0-next", 0, follow_up, owner=ATTACKER, now=6)
    assert any(isinstance(c, StartTurn) for c in commands)  # it supersedes: not refused


def test_a_new_runs_checks_read_only_the_runs_still_running(monkeypatch) -> None:
    """The bound and the supersede check ask each running run, not every finished one the
    registry keeps for reconnects (up to `max_attempts`, ten minutes' worth): those reads
    grew with every turn and took 9 % of the proxy at a thousand lingering runs."""
    from cursor_byok.core.runs import Run

    core = Registry(RunConfig(max_owner_turns=3))
    for i in range(200):
        [start] = core.receive(f"done{i}", 0, run_request(f"done{i}"), owner=ATTACKER, now=i)
        start.run.finish(now=i)
    [start] = core.receive("live", 0, run_request("live"), owner=ATTACKER, now=300)
    asked: list[str] = []
    running = Run.running

    def counted(run: Run) -> bool:
        asked.append(run.run_id)
        return running.fget(run)  # type: ignore[attr-defined]

    monkeypatch.setattr(Run, "running", property(counted))
    commands = core.receive("next", 0, run_request("next"), owner=ATTACKER, now=301)
    assert any(isinstance(c, StartTurn) for c in commands)
    assert len(asked) < 10, f"{len(asked)} runs asked whether they run"
    # the bound still counts what runs: two more make three, the fourth is refused
    core.receive("third", 0, run_request("third"), owner=ATTACKER, now=302)
    commands = core.receive("fourth", 0, run_request("fourth"), owner=ATTACKER, now=303)
    assert not any(isinstance(c, StartTurn) for c in commands)
    assert [r.run_id for r in core.running_runs()] == ["live", "next", "third"]
