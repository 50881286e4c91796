"""Recording costs nothing per call or frame while it is off (issue 38 item 1), and still sees
every frame and client message while it is on."""

from __future__ import annotations

import json
from collections.abc import Mapping

from mitmproxy.test import taddons

from cursor_byok.proxy.compose import compose


def test_the_frame_observer_is_in_the_run_core_only_while_recording(tmp_path) -> None:
    proxy = compose()
    recording = proxy.recording
    with taddons.context(*proxy.addons) as tctx:
        assert recording.frame not in proxy.registry.observers  # off: no call per frame
        tctx.configure(recording, cursor_byok_record_dir=str(tmp_path / "rec"))
        assert proxy.registry.observers.count(recording.frame) == 1
        tctx.configure(recording, cursor_byok_record_dir=str(tmp_path / "rec2"))
        assert proxy.registry.observers.count(recording.frame) == 1  # switched, not doubled
        tctx.configure(recording, cursor_byok_record_dir="")
        assert recording.frame not in proxy.registry.observers


class _Headers(Mapping[str, str]):
    """Headers that count how often they are walked (a copy walks them)."""

    def __init__(self, items: dict[str, str]) -> None:
        self.items_ = items
        self.copies = 0

    def __getitem__(self, key: str) -> str:
        return self.items_[key]

    def __len__(self) -> int:
        return len(self.items_)

    def __iter__(self):
        self.copies += 1
        return iter(self.items_)


def test_a_client_message_is_recorded_with_its_headers_only_while_recording(tmp_path) -> None:
    proxy = compose()
    recording = proxy.recording
    headers = _Headers({"content-type": "application/proto", "x-request-id": "r1"})
    with taddons.context(*proxy.addons) as tctx:
        recording.client("r1", 0, b"", headers)
        assert headers.copies == 0  # off: the headers are not even copied
        tctx.configure(recording, cursor_byok_record_dir=str(tmp_path / "rec"))
        recording.client("r1", 0, b"", headers)
        recording.frame("r1", b"\x0a\x00", False)
        assert headers.copies == 1
        recording.close()
    text = "".join(p.read_text() for p in (tmp_path / "rec").rglob("*") if p.is_file())
    records = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    assert any(r.get("type") == "server" for r in records), records
    assert any("x-request-id" in json.dumps(r) for r in records), records
