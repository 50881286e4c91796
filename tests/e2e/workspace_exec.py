"""How the Cursor-like test client executes exec requests in its temporary workspace.

Mirrors what Cursor's client does for each `ExecServerMessage` kind closely enough for tests:
same result messages and variants, real files, real subprocesses.
"""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

from cursor_byok.pb import agent_v1_pb2 as pb


def _resolve(workspace: Path, path: str) -> Path:
    candidate = Path(path)
    return candidate if candidate.is_absolute() else workspace / candidate


def execute(workspace: Path, request: pb.ExecServerMessage) -> list[pb.ExecClientMessage]:
    """Run one exec request locally, as Cursor's client would (the subset tests use)."""
    kind = request.WhichOneof("message")
    args = getattr(request, kind)
    out = pb.ExecClientMessage()
    if kind == "read_args":
        target = _resolve(workspace, args.path)
        if not target.exists():
            out.read_result.file_not_found.path = args.path
        else:
            text = target.read_text()
            out.read_result.success.path = args.path
            out.read_result.success.content = text
            out.read_result.success.total_lines = len(text.splitlines())
            out.read_result.success.file_size = len(text.encode())
        return [out]
    if kind == "write_args":
        target = _resolve(workspace, args.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        content = args.file_text
        target.write_text(content)
        out.write_result.success.path = args.path
        out.write_result.success.lines_created = len(content.splitlines())
        out.write_result.success.file_size = len(content.encode())
        return [out]
    if kind == "delete_args":
        target = _resolve(workspace, args.path)
        if target.exists():
            target.unlink()
            out.delete_result.success.path = args.path
        else:
            out.delete_result.file_not_found.path = args.path
        return [out]
    if kind == "ls_args":
        target = _resolve(workspace, args.path or ".")
        root = out.ls_result.success.directory_tree_root
        root.abs_path = str(target)
        for child in sorted(target.iterdir()):
            if child.is_dir():
                root.children_dirs.add(abs_path=str(child))
            else:
                root.children_files.add(name=child.name)
        return [out]
    if kind == "shell_stream_args":
        events = []
        start = pb.ExecClientMessage()
        start.shell_stream.start.SetInParent()
        events.append(start)
        proc = subprocess.run(
            args.command, shell=True, cwd=workspace, capture_output=True, text=True, timeout=30
        )
        if proc.stdout:
            ev = pb.ExecClientMessage()
            ev.shell_stream.stdout.data = proc.stdout
            events.append(ev)
        if proc.stderr:
            ev = pb.ExecClientMessage()
            ev.shell_stream.stderr.data = proc.stderr
            events.append(ev)
        ev = pb.ExecClientMessage()
        ev.shell_stream.exit.code = proc.returncode
        events.append(ev)
        return events
    if kind == "diagnostics_args":
        out.diagnostics_result.success.SetInParent()
        return [out]
    with contextlib.suppress(AttributeError):
        out.read_result.error.error = f"unsupported exec {kind}"
    return [out]
