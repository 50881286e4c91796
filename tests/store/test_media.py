"""The media store without a proxy: owners, addresses, bounds (issue 33 item 3)."""

from __future__ import annotations

import os
import shutil
import stat
from collections import namedtuple

import pytest

from cursor_byok.store import files
from cursor_byok.store.media import MediaRefused
from cursor_byok.store.media import MediaStore


def test_an_address_is_its_owners_and_survives_a_restart(tmp_path) -> None:
    store = MediaStore(tmp_path / "media")
    alice, bob = store.owner("Bearer alice"), store.owner("Bearer bob")
    mine, theirs = store.address(alice, "conv/a.png"), store.address(bob, "conv/a.png")
    assert mine != theirs and "alice" not in mine
    store.put(mine, b"alice's", "image/png")
    assert store.get(theirs) is None
    store.put(theirs, b"bob's")
    assert store.get(mine) == (b"alice's", "image/png")
    owner, mac, key = mine.split("/", 2)
    forged = f"{owner}/{'0' * len(mac)}/{key}"
    assert store.get(forged) is None
    with pytest.raises(KeyError):
        store.put(forged, b"x")
    with pytest.raises(KeyError):
        store.put(f"{owner}/{mac}/conv/b.png", b"x")  # the MAC covers the key
    key_file = tmp_path / "media" / ".key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    again = MediaStore(tmp_path / "media")  # the next start reads the same key
    assert again.address(again.owner("Bearer alice"), "conv/a.png") == mine
    assert again.get(mine) == (b"alice's", "image/png")


def test_bounds_per_upload_in_total_and_free_space(tmp_path) -> None:
    store = MediaStore(tmp_path / "media", total=1000, per_file=600)
    owner = store.owner("t")
    addresses = [store.address(owner, f"c/{n}") for n in range(3)]
    with pytest.raises(MediaRefused, match="bound of one file"):
        store.put(addresses[0], bytes(601))
    assert store.put(addresses[0], bytes(400)) == 0
    os.utime(store._file(addresses[0]), (1, 1))  # the oldest, whatever the clock's grain
    assert store.put(addresses[1], bytes(400)) == 0
    assert store.put(addresses[2], bytes(400)) == 1  # the oldest went
    assert store.get(addresses[0]) is None and store.size() == 800
    assert store.put(addresses[2], bytes(600)) == 0  # replacing itself needs no room
    full = MediaStore(tmp_path / "other", min_free=1 << 62)
    with pytest.raises(MediaRefused, match="cursor_byok_min_free_mb"):
        full.put(full.address(full.owner("t"), "c/x"), b"x")


def test_the_one_free_space_check_counts_what_is_about_to_be_written(tmp_path, monkeypatch) -> None:
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(0, 0, 1000))
    assert files.short_of_space(tmp_path, 900, adding=100) is None
    assert files.short_of_space(tmp_path, 900, adding=101) == 1000
    assert files.low_space(tmp_path, 1000 / files.MiB) is None
    assert "only 0.0 MiB free" in (files.low_space(tmp_path, 1001 / files.MiB) or "")
    store = MediaStore(tmp_path / "media", min_free=900)
    address = store.address(store.owner("t"), "c/x")
    store.put(address, bytes(100))
    with pytest.raises(MediaRefused, match=r"only 0\.0 MiB free"):
        store.put(address, bytes(101))
