"""An addon that bounds mitmproxy's own port (issue 33 item 10), the part our hooks never see.

- `body_size_limit`: mitmproxy buffers a request or response body whole before any hook reads
  it, so a 200 MiB upload was held in full before we refused it. Unless the user set the option
  (`--set body_size_limit=...`), it is set to `BODY_SIZE_LIMIT`, above every body we accept
  (64 MiB uploads and media, compressed or not, plus framing); a body announced larger is
  refused on its headers. Streamed bodies (the HTTP/2 `Run` upload, SSE answers) are not
  buffered and not limited.
- Open files: at the soft limit of 1,024, a thousand idle connections left no descriptor for a
  turn's provider call (and mitmproxy logged every refused accept). The soft limit is raised to
  the hard one at start, where the system allows.

Idle connections and unfinished heads and bodies are bounded by mitmproxy's `tcp_timeout`
(600 s without a byte either way); mitmproxy has no per-phase timeout to set, and our
long-lived streams stay active through their heartbeats.
"""

from __future__ import annotations

import logging

from mitmproxy import ctx

log = logging.getLogger(__name__)

BODY_SIZE_LIMIT = "96m"
_MACOS_OPEN_MAX = 10240  # setrlimit refuses more when the hard limit is unlimited


def raise_open_files() -> tuple[int, int] | None:
    """Soft RLIMIT_NOFILE up to the hard limit; (before, after), or None when nothing changed
    (already there, or no `resource` module: Windows)."""
    try:
        import resource
    except ImportError:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    targets = [hard] if hard != resource.RLIM_INFINITY else [1 << 20, _MACOS_OPEN_MAX]
    for target in targets:
        if soft != resource.RLIM_INFINITY and soft >= target:
            return None
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            continue
        return soft, target
    return None


class PortLimits:
    def load(self, loader) -> None:
        opts = loader.master.options
        if "body_size_limit" in opts and opts.body_size_limit is None:
            opts.update(body_size_limit=BODY_SIZE_LIMIT)

    def running(self) -> None:
        raised = raise_open_files()
        if raised is not None:
            log.info("open files: soft limit %d raised to %d (the hard limit)", *raised)
        if "body_size_limit" in ctx.options:
            log.debug("body_size_limit: %s", ctx.options.body_size_limit)
