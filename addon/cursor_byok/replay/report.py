"""`cursor-byok replay`: replay captures, report match or the first divergence, and with
`--update` rewrite mismatching captures (apart from the engine, so the engine and the updater
do not import each other).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from cursor_byok.capture.format import CaptureError

if TYPE_CHECKING:
    pass
from cursor_byok.replay.engine import ReplayError
from cursor_byok.replay.engine import Result
from cursor_byok.replay.engine import replay_files

EXIT_MATCH = 0


EXIT_MISMATCH = 1


EXIT_UNUSABLE = 2


def report(results: list[Result], console: Console) -> int:
    """Print one verdict per capture (and the first divergence); return the exit code."""
    for result in results:
        capture = result.capture
        calls = f", {len(capture.calls)} model call(s)" if capture.calls else ""
        console.print(
            Text.assemble(
                (
                    "match   " if result.ok else "MISMATCH",
                    "bold green" if result.ok else "bold red",
                ),
                f" {capture.name}  ",
                (
                    f"({capture.agent} agent, {len(capture.client)} client messages, "
                    f"{len(capture.server)} frame(s){calls})",
                    "dim",
                ),
            )
        )
        note = result.request_note()
        if note:
            console.print(Text(f"  {note}", style="dim"))
        if result.ok:
            continue
        div = result.divergence
        assert div is not None
        where = "the end of stream" if div.index >= len(capture.server) else f"frame {div.index}"
        console.print(
            f"  first divergence at {where} ({div.what}); {div.index} frame(s) before it match"
        )
        if result.stalled:
            unsent = len(capture.client) - result.sent
            console.print(
                f"  the replayed stream stalled; {unsent} recorded client message(s) not sent"
            )
        table = Table(show_lines=False, expand=True)
        table.add_column("recorded", overflow="fold")
        table.add_column("replayed", overflow="fold")
        table.add_row(Text(div.recorded), Text(div.replayed))
        console.print(table)
        diff = div.diff() if div.what in ("differs", "end differs") else []
        if diff:
            console.print(Text("\n".join("  " + line for line in diff)))
        for line in result.warnings[:10]:
            console.print(Text(f"  proxy {line}", style="yellow"))
    matched = sum(1 for r in results if r.ok)
    style = "green" if matched == len(results) else "red"
    console.print(Text(f"{matched} of {len(results)} capture(s) match", style=f"bold {style}"))
    return EXIT_MATCH if matched == len(results) else EXIT_MISMATCH


def main(paths: list[Path], *, stall: float, console: Console, update: bool = False) -> int:
    """The `cursor-byok replay` command: 0 match, 1 mismatch, 2 unusable input.

    With `update`, each mismatching capture is rewritten to expect the replayed frames (after
    its divergence has been printed); 0 when every mismatch could be rewritten.
    """
    from cursor_byok.outbound import ClientError

    try:
        results = asyncio.run(replay_files(paths, stall=stall))
    except (CaptureError, ReplayError, ClientError, OSError) as exc:
        console.print(Text(f"cursor-byok replay: {exc}", style="red"))
        return EXIT_UNUSABLE
    code = report(results, console)
    if not update or code == EXIT_MATCH:
        return code
    from cursor_byok.replay.update import update_capture

    kept = 0
    for result in results:
        if result.ok:
            continue
        if result.stalled or result.end is None:
            kept += 1
            console.print(
                Text(f"not updated: {result.capture.name} (the replay did not end)", style="red")
            )
            continue
        path = update_capture(result)
        console.print(Text(f"updated {path}: it now expects the replayed frames", style="yellow"))
    return EXIT_MISMATCH if kept else EXIT_MATCH
