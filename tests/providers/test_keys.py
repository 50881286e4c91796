"""Key pools on a clock that is an input: round robin, a rate-limited key rests for its
retry-after and comes back, a refused key stays out until the config changes."""

from __future__ import annotations

from cursor_byok.providers.keys import QUOTA_REST
from cursor_byok.providers.keys import RATE_LIMIT_REST
from cursor_byok.providers.keys import KeyPools
from cursor_byok.providers.keys import KeyRing
from cursor_byok.providers.keys import key_id
from cursor_byok.providers.keys import rest_for


def test_keys_take_turns() -> None:
    ring = KeyRing(("a", "b", "c"))
    assert [ring.order(0)[0] for _ in range(4)] == ["a", "b", "c", "a"]
    assert ring.order(0) == ["b", "c", "a"]  # the others follow, as the fallbacks of the call


def test_a_rate_limited_key_rests_for_its_retry_after_then_comes_back() -> None:
    ring = KeyRing(("a", "b"))
    assert ring.order(100.0) == ["a", "b"]
    ring.rest("a", 100.0, 30.0)
    assert ring.order(100.0) == ["b"]
    assert ring.order(129.9) == ["b"]
    assert abs((ring.next_free(129.9) or 0) - 0.1) < 1e-9
    assert ring.order(130.0) == ["b", "a"]  # back, in its turn
    assert ring.order(130.0) == ["a", "b"]


def test_a_refused_key_is_out_until_the_config_changes() -> None:
    pools = KeyPools()
    config = object()
    ring = pools.ring(config, "p", ["a", "b"])
    ring.revoke("a")
    assert pools.ring(config, "p", ["a", "b"]).order(0) == ["b"]
    assert pools.ring(config, "p", ["a", "b"]).order(10**9) == ["b"]
    assert pools.ring(object(), "p", ["a", "b"]).order(0) == ["a", "b"]  # a new config


def test_how_long_a_key_rests() -> None:
    assert rest_for("rate_limit", 7.0) == 7.0
    assert rest_for("rate_limit", None) == RATE_LIMIT_REST
    assert rest_for("quota", None) == QUOTA_REST
    assert rest_for("server", 5.0) is None  # not the key's fault


def test_a_key_id_says_nothing_about_the_key() -> None:
    assert "sk-secret" not in key_id("sk-secret")
    assert key_id("sk-secret") == key_id("sk-secret") != key_id("sk-other")
