"""An addon: the timings of runs and attempts (heartbeats, grace, linger, watchdogs, coalescing),
validated and handed to the run core.
"""

from __future__ import annotations

from mitmproxy import ctx

from cursor_byok.core.runs import RunConfig
from cursor_byok.proxy import options
from cursor_byok.proxy.run_registry import RunRegistry
from cursor_byok.store import backlog_spill

_TIMINGS = (
    "cursor_byok_heartbeat_ms",
    "cursor_byok_grace_ms",
    "cursor_byok_run_request_timeout_ms",
    "cursor_byok_linger_ms",
    "cursor_byok_exec_timeout_ms",
    "cursor_byok_gap_timeout_ms",
    "cursor_byok_turn_timeout_ms",
    "cursor_byok_max_turn_output_mb",
    "cursor_byok_max_requests",
    "cursor_byok_max_turns_per_client",
    "cursor_byok_backlog_memory_kb",
)
_ALSO = ("cursor_byok_coalesce_ms", "cursor_byok_record_dir")  # the coalescing window
_DATA = "cursor_byok_data_dir"  # where runs spill the older frames of their backlogs


class RunSettings:
    def __init__(self, registry: RunRegistry) -> None:
        self.registry = registry

    def load(self, loader) -> None:
        options.declare(loader, *_TIMINGS, *_ALSO, _DATA)

    def running(self) -> None:
        """Spill files a killed proxy left go, before any run of this one spills (a few
        `unlink`s at most, in the run journals' folder)."""
        backlog_spill.prune(options.data_dir(ctx.options))

    def configure(self, updated: set[str]) -> None:
        opts = ctx.options
        changed = options.changed(opts, updated, *_TIMINGS, *_ALSO, _DATA)
        if _DATA in changed:
            self.registry.spill_dir = backlog_spill.spill_folder(options.data_dir(opts))
        if not changed - {_DATA}:
            return
        self.registry.config = RunConfig(
            heartbeat_interval=opts.cursor_byok_heartbeat_ms / 1000,
            grace_period=opts.cursor_byok_grace_ms / 1000,
            run_request_timeout=opts.cursor_byok_run_request_timeout_ms / 1000,
            linger=opts.cursor_byok_linger_ms / 1000,
            gap_timeout=opts.cursor_byok_gap_timeout_ms / 1000,
            exec_timeout=opts.cursor_byok_exec_timeout_ms / 1000,
            turn_timeout=opts.cursor_byok_turn_timeout_ms / 1000,
            max_backlog_bytes=opts.cursor_byok_max_turn_output_mb * 1024 * 1024,
            backlog_memory=opts.cursor_byok_backlog_memory_kb * 1024,
            max_attempts=opts.cursor_byok_max_requests,
            max_owner_attempts=min(256, opts.cursor_byok_max_requests),
            max_owner_turns=opts.cursor_byok_max_turns_per_client,
            # Recordings must replay frame for frame, and coalescing depends on timing.
            coalesce_window=0
            if opts.cursor_byok_record_dir
            else opts.cursor_byok_coalesce_ms / 1000,
        )
