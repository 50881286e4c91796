"""How the Cursor-like test client executes exec requests in its temporary workspace.

Mirrors what Cursor's client does for each `ExecServerMessage` kind closely enough for tests:
same result messages and variants, real files, real subprocesses. What the real client gets
from elsewhere (MCP servers, the web, the editor's linters) is canned here:

- MCP: server "demo" (identifier "user-demo") with tools `echo` (returns its arguments as
  JSON text), `fail` (an MCP-level error) and `image`; server "sleepy" needs auth.
- fetch: no network; every URL gets a small HTML page, `…/404` a 404 and `…/plain` text.
- diagnostics: Python syntax errors, plus one diagnostic per line containing
  `LINT: <severity> <message>` (severity error|warning|info|hint). Lines are 0-based.
- shell: `timeout` (ms) is honoured; with TIMEOUT_BEHAVIOR_BACKGROUND (or is_background) the
  command keeps running and writes `<terminals_folder(workspace)>/<shell_id>.txt` with a
  header, the output and an `exit_code:` footer, as Cursor's terminal files do.
"""

from __future__ import annotations

import contextlib
import fnmatch
import itertools
import json
import os
import queue
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

from google.protobuf import json_format

from cursor_byok.pb import agent_v1_pb2 as pb

DEFAULT_SHELL_TIMEOUT_S = 30
_SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv"})
_TYPES = {
    "py": (".py", ".pyi"),
    "python": (".py", ".pyi"),
    "js": (".js", ".mjs", ".cjs", ".jsx"),
    "ts": (".ts", ".tsx"),
    "md": (".md", ".markdown"),
    "txt": (".txt",),
    "rust": (".rs",),
    "go": (".go",),
    "json": (".json",),
}
_shell_ids = itertools.count(1)
_output_files = itertools.count(1)

MCP_SERVERS = {
    "user-demo": {
        "name": "demo",
        "status": "ready",
        "tools": {
            "echo": "Echo the arguments back as JSON.",
            "fail": "Always fails.",
            "image": "Return a tiny PNG.",
        },
    },
    "user-sleepy": {"name": "sleepy", "status": "needsAuth", "tools": {}},
}
TINY_PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def terminals_folder(workspace: Path) -> Path:
    """Where background shells of this workspace write their output files."""
    return workspace.parent / f"{workspace.name}.terminals"


def _resolve(workspace: Path, path: str) -> Path:
    candidate = Path(path)
    return candidate if candidate.is_absolute() else workspace / candidate


def _rel(workspace: Path, target: Path) -> str:
    try:
        return target.relative_to(workspace).as_posix()
    except ValueError:
        return str(target)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob with `**`, `*`, `?` and `{a,b}` as a regex over POSIX relative paths."""
    out, i = "", 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            continue
        if c == "*":
            out += "[^/]*"
        elif c == "?":
            out += "[^/]"
        elif c == "{":
            end = pattern.find("}", i)
            if end != -1:
                out += "(?:" + "|".join(re.escape(x) for x in pattern[i + 1 : end].split(",")) + ")"
                i = end + 1
                continue
            out += re.escape(c)
        else:
            out += re.escape(c)
        i += 1
    return re.compile(out + r"\Z")


def _glob_matches(pattern: str, rel: str) -> bool:
    regex = glob_regex(pattern)
    if "/" in pattern:
        return bool(regex.match(rel))
    return bool(regex.match(rel.rsplit("/", 1)[-1]))  # like ripgrep: basename globs


def _walk_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        found += [Path(dirpath) / f for f in sorted(filenames)]
    return found


def _text_of(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\x00" in data[:8000]:
        return None
    try:
        return data.decode()
    except UnicodeDecodeError:
        return None


# --------------------------------------------------------------------------- read / write


def _read(workspace: Path, args: pb.ReadArgs, out: pb.ExecClientMessage) -> None:
    target = _resolve(workspace, args.path)
    if not target.exists():
        out.read_result.file_not_found.path = args.path
        return
    if target.is_dir():
        out.read_result.invalid_file.path = args.path
        out.read_result.invalid_file.reason = "is a directory"
        return
    ok = out.read_result.success
    ok.path = args.path
    data = target.read_bytes()
    ok.file_size = len(data)
    text = _text_of(target)
    if text is None:
        ok.data = data
        return
    lines = text.splitlines(keepends=True)
    ok.total_lines = len(lines)
    if args.HasField("offset") or args.HasField("limit"):
        offset = args.offset if args.HasField("offset") else 1
        start = offset - 1 if offset > 0 else max(0, len(lines) + offset)
        end = start + args.limit if args.HasField("limit") else len(lines)
        text = "".join(lines[start:end])
        ok.range_applied = True
    ok.content = text


def _write(workspace: Path, args: pb.WriteArgs, out: pb.ExecClientMessage) -> None:
    target = _resolve(workspace, args.path)
    content = args.file_text
    data = args.file_bytes or content.encode()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    except PermissionError as exc:
        denied = out.write_result.permission_denied
        denied.path = args.path
        denied.error = str(exc)
        denied.is_readonly = True
        return
    except OSError as exc:
        out.write_result.error.path = args.path
        out.write_result.error.error = str(exc)
        return
    ok = out.write_result.success
    ok.path = args.path
    ok.lines_created = len(content.splitlines())
    ok.file_size = len(data)
    if args.return_file_content_after_write and not args.file_bytes:
        ok.file_content_after_write = target.read_text()


def _delete(workspace: Path, args: pb.DeleteArgs, out: pb.ExecClientMessage) -> None:
    target = _resolve(workspace, args.path)
    if not target.exists():
        out.delete_result.file_not_found.path = args.path
    elif target.is_dir():
        out.delete_result.not_file.path = args.path
        out.delete_result.not_file.actual_type = "directory"
    else:
        ok = out.delete_result.success
        ok.path = args.path
        ok.deleted_file = str(target)
        ok.file_size = target.stat().st_size
        ok.prev_content = _text_of(target) or ""
        target.unlink()


# --------------------------------------------------------------------------- ls


def _ls_node(
    path: Path, ignore: list[str], depth: int, budget: list[int]
) -> pb.LsDirectoryTreeNode:
    node = pb.LsDirectoryTreeNode(abs_path=str(path))
    entries = sorted(path.iterdir())
    files = [e for e in entries if e.is_file()]
    node.num_files = len(files)
    for f in files:
        ext = f.suffix or f.name
        node.full_subtree_extension_counts[ext] = node.full_subtree_extension_counts[ext] + 1
    if depth <= 0 or budget[0] <= 0:
        return node
    node.children_were_processed = True
    for entry in entries:
        if any(fnmatch.fnmatch(entry.name, pat) for pat in ignore):
            continue
        budget[0] -= 1
        if entry.is_dir():
            if entry.name in _SKIP_DIRS:
                node.children_dirs.append(pb.LsDirectoryTreeNode(abs_path=str(entry)))
            else:
                node.children_dirs.append(_ls_node(entry, ignore, depth - 1, budget))
        else:
            node.children_files.add(name=entry.name)
    return node


def _ls(workspace: Path, args: pb.LsArgs, out: pb.ExecClientMessage) -> None:
    target = _resolve(workspace, args.path or ".")
    if not target.is_dir():
        out.ls_result.error.path = args.path
        out.ls_result.error.error = "not a directory" if target.exists() else "no such directory"
        return
    root = _ls_node(target, list(args.ignore), depth=3, budget=[500])
    out.ls_result.success.directory_tree_root.CopyFrom(root)


# --------------------------------------------------------------------------- grep


def _grep(workspace: Path, args: pb.GrepArgs, out: pb.ExecClientMessage) -> None:
    root = _resolve(workspace, args.path) if args.HasField("path") else workspace
    if not root.exists():
        out.grep_result.error.error = f"path not found: {args.path}"
        return
    flags = re.IGNORECASE if args.case_insensitive else 0
    if args.multiline:
        flags |= re.MULTILINE | re.DOTALL
    try:
        regex = re.compile(args.pattern, flags)
    except re.error as exc:
        out.grep_result.error.error = f"regex parse error: {exc}"
        return
    mode = args.output_mode or "content"
    exts = _TYPES.get(args.type, (f".{args.type}",)) if args.HasField("type") else None
    before = args.context_before if args.HasField("context_before") else args.context
    after = args.context_after if args.HasField("context_after") else args.context
    hits: list[tuple[str, list[tuple[int, str, bool]], int]] = []
    for path in _walk_files(root):
        rel = _rel(workspace, path)
        if args.HasField("glob") and args.glob and not _glob_matches(args.glob, rel):
            continue
        if exts and path.suffix not in exts:
            continue
        text = _text_of(path)
        if text is None:
            continue
        lines = text.splitlines()
        if args.pattern == "":
            matched = set(range(len(lines))) or {0}
        elif args.multiline:
            matched = {text.count("\n", 0, m.start()) for m in regex.finditer(text)}
        else:
            matched = {i for i, line in enumerate(lines) if regex.search(line)}
        if not matched:
            continue
        shown: dict[int, bool] = {}
        for i in sorted(matched):
            for j in range(max(0, i - before), min(len(lines), i + after + 1)):
                shown.setdefault(j, j not in matched)
        rows = [
            (j + 1, lines[j] if j < len(lines) else "", ctx) for j, ctx in sorted(shown.items())
        ]
        hits.append((rel, rows, len(matched)))
    offset = args.offset if args.HasField("offset") else 0
    limit = args.head_limit if args.HasField("head_limit") else None
    ok = out.grep_result.success
    ok.pattern = args.pattern
    ok.path = str(root)
    ok.output_mode = mode
    union = ok.workspace_results[str(workspace)]
    if mode == "files_with_matches":
        files = [rel for rel, _, _ in hits]
        page = files[offset : offset + limit if limit else None]
        union.files.files.extend(page)
        union.files.total_files = len(files)
        if limit is not None and len(files) > offset + limit:
            union.files.head_limit_applied = limit
    elif mode == "count":
        counts = [(rel, n) for rel, _, n in hits]
        page = counts[offset : offset + limit if limit else None]
        for rel, n in page:
            union.count.counts.add(file=rel, count=n)
        union.count.total_files = len(counts)
        union.count.total_matches = sum(n for _, n in counts)
        if limit is not None and len(counts) > offset + limit:
            union.count.head_limit_applied = limit
    else:
        flat = [(rel, row) for rel, rows, _ in hits for row in rows]
        page = flat[offset : offset + limit if limit else None]
        content = union.content
        for rel, (number, line, is_context) in page:
            if not content.matches or content.matches[-1].file != rel:
                content.matches.add(file=rel)
            content.matches[-1].matches.add(
                line_number=number, content=line, is_context_line=is_context
            )
        content.total_lines = len(flat)
        content.total_matched_lines = sum(n for _, _, n in hits)
        if limit is not None and len(flat) > offset + limit:
            content.head_limit_applied = limit


# --------------------------------------------------------------------------- diagnostics

_LINT = re.compile(r"LINT:\s*(error|warning|info|hint)\s+(.*)")
_SEVERITY = {
    "error": pb.DIAGNOSTIC_SEVERITY_ERROR,
    "warning": pb.DIAGNOSTIC_SEVERITY_WARNING,
    "info": pb.DIAGNOSTIC_SEVERITY_INFORMATION,
    "hint": pb.DIAGNOSTIC_SEVERITY_HINT,
}


def _diagnostics(workspace: Path, args: pb.DiagnosticsArgs, out: pb.ExecClientMessage) -> None:
    target = _resolve(workspace, args.path)
    if not target.exists():
        out.diagnostics_result.file_not_found.path = args.path
        return
    ok = out.diagnostics_result.success
    ok.path = args.path
    if target.is_dir():
        return
    text = _text_of(target) or ""
    if target.suffix == ".py":
        try:
            compile(text, str(target), "exec")
        except SyntaxError as exc:
            d = ok.diagnostics.add(
                severity=pb.DIAGNOSTIC_SEVERITY_ERROR, message=exc.msg, source="python"
            )
            d.range.start.line = max(0, (exc.lineno or 1) - 1)
            d.range.start.column = max(0, (exc.offset or 1) - 1)
            d.range.end.CopyFrom(d.range.start)
    for number, line in enumerate(text.splitlines()):
        found = _LINT.search(line)
        if found:
            d = ok.diagnostics.add(
                severity=_SEVERITY[found.group(1)], message=found.group(2).strip(), source="lint"
            )
            d.range.start.line = number
            d.range.end.line = number
    ok.total_diagnostics = len(ok.diagnostics)


# --------------------------------------------------------------------------- MCP / fetch


def _mcp_server(args: pb.McpArgs) -> tuple[str, dict] | None:
    for ident, server in MCP_SERVERS.items():
        keys = {ident, server["name"]}
        if args.provider_identifier in keys or args.server_identifier in keys:
            return ident, server
    return None


def _mcp(args: pb.McpArgs, out: pb.ExecClientMessage) -> None:
    found = _mcp_server(args)
    if found is None:
        out.mcp_result.server_not_found.name = args.provider_identifier
        out.mcp_result.server_not_found.available_servers.extend(
            s["name"] for s in MCP_SERVERS.values()
        )
        return
    _, server = found
    tool = args.tool_name or args.name
    if tool not in server["tools"]:
        out.mcp_result.tool_not_found.name = tool
        out.mcp_result.tool_not_found.available_tools.extend(server["tools"])
        return
    ok = out.mcp_result.success
    if tool == "echo":
        arguments = {k: json_format.MessageToDict(v) for k, v in args.args.items()}
        ok.content.add().text.text = json.dumps(arguments, sort_keys=True)
    elif tool == "fail":
        ok.content.add().text.text = "demo failure"
        ok.is_error = True
    else:
        image = ok.content.add().image
        image.data = TINY_PNG
        image.mime_type = "image/png"


def _mcp_state(out: pb.ExecClientMessage) -> None:
    ok = out.mcp_state_exec_result.success
    for ident, server in MCP_SERVERS.items():
        s = ok.servers.add(server_name=server["name"], server_identifier=ident)
        s.status = server["status"]
        for name, description in server["tools"].items():
            t = s.tools.add(name=name, tool_name=name, description=description)
            t.provider_identifier = ident
            t.input_schema.struct_value.update(
                {"type": "object", "properties": {"text": {"type": "string"}}}
            )


def _mcp_resource(
    workspace: Path, args: pb.ReadMcpResourceExecArgs, out: pb.ExecClientMessage
) -> None:
    if args.server not in {s["name"] for s in MCP_SERVERS.values()} | set(MCP_SERVERS):
        out.read_mcp_resource_exec_result.error.uri = args.uri
        out.read_mcp_resource_exec_result.error.error = f"unknown server {args.server}"
        return
    if "missing" in args.uri:
        out.read_mcp_resource_exec_result.not_found.uri = args.uri
        return
    ok = out.read_mcp_resource_exec_result.success
    ok.uri = args.uri
    ok.mime_type = "text/plain"
    text = f"resource {args.uri}"
    if args.HasField("download_path") and args.download_path:
        target = _resolve(workspace, args.download_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        ok.download_path = str(target)
    else:
        ok.text = text


def _fetch(args: pb.FetchArgs, out: pb.ExecClientMessage) -> None:
    ok = out.fetch_result.success
    ok.url = args.url
    if args.url.endswith("/plain"):
        ok.status_code, ok.content_type, ok.content = 200, "text/plain", "plain text body"
        return
    ok.status_code = 404 if args.url.endswith("/404") else 200
    ok.content_type = "text/html; charset=utf-8"
    ok.content = (
        "<html><head><title>Canned page</title><script>var x = 1;</script></head><body>"
        f"<h1>Hello</h1><p>You fetched <a href='/next'>{args.url}</a>.</p>"
        "<ul><li>one</li><li>two</li></ul></body></html>"
    )


# --------------------------------------------------------------------------- shell


def _stream_event(**kwargs) -> pb.ExecClientMessage:
    return pb.ExecClientMessage(shell_stream=pb.ShellStream(**kwargs))


def _pump(proc: subprocess.Popen, sink: queue.Queue) -> list[threading.Thread]:
    def read(stream, kind: str) -> None:
        for chunk in iter(stream.readline, b""):
            sink.put((kind, chunk.decode(errors="replace")))
        sink.put((kind, None))

    threads = [
        threading.Thread(target=read, args=(proc.stdout, "stdout"), daemon=True),
        threading.Thread(target=read, args=(proc.stderr, "stderr"), daemon=True),
    ]
    for t in threads:
        t.start()
    return threads


def _drain(sink: queue.Queue, events: list, chunks: list[str]) -> int:
    """Move queued output into events; returns how many streams ended."""
    ended = 0
    while True:
        try:
            kind, data = sink.get_nowait()
        except queue.Empty:
            return ended
        if data is None:
            ended += 1
            continue
        chunks.append(data)
        if kind == "stdout":
            events.append(_stream_event(stdout=pb.ShellStreamStdout(data=data)))
        else:
            events.append(_stream_event(stderr=pb.ShellStreamStderr(data=data)))


def _background(
    workspace: Path,
    proc: subprocess.Popen,
    sink: queue.Queue,
    chunks: list[str],
    args: pb.ShellArgs,
    cwd: Path,
    started: float,
    reason: int,
    ended: int = 0,
) -> pb.ExecClientMessage:
    """Keep the process running; its output goes to the terminal file, Cursor-style."""
    shell_id = next(_shell_ids)
    folder = terminals_folder(workspace)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{shell_id}.txt"
    header = (
        f"---\npid: {proc.pid}\ncwd: {cwd}\ncommand: {args.command}\n"
        f"running_for_ms: {int((time.monotonic() - started) * 1000)}\n---\n"
    )
    path.write_text(header + "".join(chunks))

    def follow(ended: int = ended) -> None:
        with path.open("a") as f:
            while ended < 2:
                _kind, data = sink.get()
                if data is None:
                    ended += 1
                    continue
                f.write(data)
                f.flush()
            code = proc.wait()
            elapsed = int((time.monotonic() - started) * 1000)
            f.write(f"\n---\nexit_code: {code}\nelapsed_ms: {elapsed}\n---\n")

    threading.Thread(target=follow, daemon=True).start()
    bg = pb.ShellStreamBackgrounded(
        shell_id=shell_id, command=args.command, working_directory=str(cwd), pid=proc.pid
    )
    bg.reason = reason
    return _stream_event(backgrounded=bg)


def _shell(workspace: Path, args: pb.ShellArgs) -> list[pb.ExecClientMessage]:
    cwd = _resolve(workspace, args.working_directory) if args.working_directory else workspace
    if not cwd.is_dir():
        denied = pb.ShellPermissionDenied(
            command=args.command,
            working_directory=str(cwd),
            error=f"working directory does not exist: {cwd}",
        )
        return [_stream_event(permission_denied=denied)]
    events: list[pb.ExecClientMessage] = [_stream_event(start=pb.ShellStreamStart())]
    started = time.monotonic()
    proc = subprocess.Popen(
        args.command,
        shell=True,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    sink: queue.Queue = queue.Queue()
    threads = _pump(proc, sink)
    chunks: list[str] = []
    if args.is_background:
        events.append(
            _background(
                workspace,
                proc,
                sink,
                chunks,
                args,
                cwd,
                started,
                pb.SHELL_BACKGROUND_REASON_USER_REQUEST,
            )
        )
        return events
    limit_s = args.timeout / 1000 if args.timeout > 0 else DEFAULT_SHELL_TIMEOUT_S
    try:
        proc.wait(timeout=limit_s)
    except subprocess.TimeoutExpired:
        _drain(sink, events, chunks)
        if args.timeout_behavior == pb.TIMEOUT_BEHAVIOR_BACKGROUND:
            events.append(
                _background(
                    workspace,
                    proc,
                    sink,
                    chunks,
                    args,
                    cwd,
                    started,
                    pb.SHELL_BACKGROUND_REASON_TIMEOUT,
                )
            )
            return events
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        for t in threads:
            t.join(timeout=5)
        _drain(sink, events, chunks)
        exit_ = pb.ShellStreamExit(code=137, cwd=str(cwd), aborted=True)
        exit_.abort_reason = pb.SHELL_ABORT_REASON_TIMEOUT
        events.append(_stream_event(exit=exit_))
        return events
    for t in threads:
        t.join(timeout=5)
    _drain(sink, events, chunks)
    exit_ = pb.ShellStreamExit(code=proc.returncode & 0xFF, cwd=str(cwd))
    exit_.local_execution_time_ms = int((time.monotonic() - started) * 1000)
    output = "".join(chunks)
    threshold = (
        args.file_output_threshold_bytes if args.HasField("file_output_threshold_bytes") else 0
    )
    if threshold and len(output.encode()) > threshold:
        folder = terminals_folder(workspace)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"output-{next(_output_files)}.txt"
        path.write_text(output)
        loc = exit_.output_location
        loc.file_path = str(path)
        loc.size_bytes = len(output.encode())
        loc.line_count = output.count("\n")
    events.append(_stream_event(exit=exit_))
    return events


# --------------------------------------------------------------------------- entry point


def execute(workspace: Path, request: pb.ExecServerMessage) -> list[pb.ExecClientMessage]:
    """Run one exec request locally, as Cursor's client would (the subset tests use).

    Returns every client message for the exec in order; for shell_stream_args that is the
    event stream, ending with its terminal event.
    """
    kind = request.WhichOneof("message")
    args = getattr(request, kind) if kind else None
    out = pb.ExecClientMessage()
    if kind == "read_args":
        _read(workspace, args, out)
    elif kind == "write_args":
        _write(workspace, args, out)
    elif kind == "delete_args":
        _delete(workspace, args, out)
    elif kind == "ls_args":
        _ls(workspace, args, out)
    elif kind == "grep_args":
        _grep(workspace, args, out)
    elif kind == "diagnostics_args":
        _diagnostics(workspace, args, out)
    elif kind == "mcp_args":
        _mcp(args, out)
    elif kind == "mcp_state_exec_args":
        _mcp_state(out)
    elif kind == "read_mcp_resource_exec_args":
        _mcp_resource(workspace, args, out)
    elif kind == "fetch_args":
        _fetch(args, out)
    elif kind == "shell_stream_args":
        return _shell(workspace, args)
    elif kind == "subagent_args":
        return []  # no immediate answer: the test starts the child run and answers later
    else:
        out.read_result.error.error = f"unsupported exec {kind}"
    return [out]
