"""`cursor-byok replay --update`: a capture is rewritten only on request, after its diff."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

from rich.console import Console

from cursor_byok.capture.format import load_capture
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.replay import report as replay

SHIPPED = Path(__file__).resolve().parents[2] / "captures" / "provider-read-edit-shell.jsonl"


def expect_other_text(source: Path, target: Path) -> str:
    """A copy of `source` whose first recorded text frame says something else (as if the server
    had changed since); returns the text the server really sends there."""
    lines = source.read_text().splitlines()
    for index, text in enumerate(lines):
        line = json.loads(text)
        if line["type"] == "server" and line["kind"] == "interaction_update.text_delta":
            message = pb.AgentServerMessage.FromString(base64.b64decode(line["raw"]))
            original = message.interaction_update.text_delta.text
            message.interaction_update.text_delta.text = "OLD SERVER"
            line["raw"] = base64.b64encode(message.SerializeToString()).decode()
            lines[index] = json.dumps(line)
            break
    else:
        raise AssertionError("no text frame")
    target.write_text("\n".join(lines) + "\n")
    return original


def run(paths: list[Path], update: bool) -> tuple[int, str]:
    out = io.StringIO()
    code = replay.main(paths, stall=8, console=Console(file=out, width=200), update=update)
    return code, out.getvalue()


def test_update_shows_the_diff_then_rewrites_only_the_server_lines(tmp_path) -> None:
    path = tmp_path / "changed.jsonl"
    original = expect_other_text(SHIPPED, path)
    before = load_capture(path)

    code, out = run([path], update=False)
    assert code == replay.EXIT_MISMATCH and "OLD SERVER" in out
    assert load_capture(path).server == before.server  # no --update: untouched

    code, out = run([path], update=True)
    assert code == replay.EXIT_MATCH
    assert out.index("first divergence") < out.index("updated")  # the diff comes first
    assert "OLD SERVER" in out and original in out
    after = load_capture(path)
    assert b"OLD SERVER" not in b"".join(after.server)
    assert [(c.seqno, c.raw) for c in after.client] == [(c.seqno, c.raw) for c in before.client]
    assert [c.events for c in after.calls] == [c.events for c in before.calls]
    assert after.meta == before.meta and after.end == before.end
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)

    code, out = run([path], update=False)
    assert code == replay.EXIT_MATCH, out
