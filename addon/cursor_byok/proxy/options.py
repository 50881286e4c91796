"""Every mitmproxy option of cursor-byok, declared once: name, type, default, help.

Each addon declares the options it reads (`declare(loader, ...)`), so none depends on another
being loaded first: mitmproxy accepts a second declaration with the same signature, and this
table makes every declaration the same. The values an option takes (`choices`, `minimum`) are
in its row too, checked by `changed`, which every addon's `configure` goes through.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mitmproxy import exceptions

from cursor_byok.config import default_config_path
from cursor_byok.proxy.hosts import DEFAULT_HOSTS
from cursor_byok.store.files import default_data_dir
from cursor_byok.wire.bidi import POLL_DATA_ENCODINGS

AGENTS = ("provider", "scripted")
MODELS_MODES = ("merge", "replace", "off")


@dataclass(frozen=True, slots=True)
class Option:
    """One option: mitmproxy's declaration and the values it takes (checked by `changed`)."""

    typespec: Any
    default: Any
    help: str
    choices: tuple[str, ...] | None = None  # the only values allowed (mitmproxy shows them)
    minimum: int | None = None  # the smallest value allowed: 1 is positive, 0 not negative

    def check(self, name: str, value: Any) -> None:
        """OptionsError, in one line naming the option, for a value this option does not take."""
        if self.choices is not None and value not in self.choices:
            known = ", ".join(self.choices)
            raise exceptions.OptionsError(f"{name}: unknown value {value!r} (known: {known})")
        if self.minimum is not None and value < self.minimum:
            rule = {0: "not be negative", 1: "be positive"}.get(self.minimum, f">= {self.minimum}")
            raise exceptions.OptionsError(f"{name} must {rule} (not {value})")


OPTIONS: dict[str, Option] = {
    "cursor_byok_hosts": Option(
        Sequence[str],
        list(DEFAULT_HOSTS),
        "Host patterns (fnmatch) of Cursor's API; in reverse mode every host is served.",
    ),
    "cursor_byok_data_dir": Option(
        str,
        str(default_data_dir()),
        "Where cursor-byok keeps conversation blobs (content-addressed files).",
    ),
    "cursor_byok_heartbeat_ms": Option(
        int, 5000, "Server heartbeat after this much silence.", minimum=1
    ),
    "cursor_byok_grace_ms": Option(
        int,
        180_000,
        "Cancel a running turn when its RunSSE stream has been gone this long.",
        minimum=1,
    ),
    "cursor_byok_detached_call_ms": Option(
        int,
        750,
        "Abort a model call when no stream has read its run this long (the client cancelled "
        "by closing it, or lost its connection); the run stays resumable and the call is made "
        "again when the client reconnects.",
        minimum=1,
    ),
    "cursor_byok_run_request_timeout_ms": Option(
        int,
        60_000,
        "End a RunSSE stream with not_found when no run request arrives in this time.",
        minimum=1,
    ),
    "cursor_byok_route_wait_ms": Option(
        int,
        10_000,
        "How long a request of a run whose model is not known yet (its run request has not "
        "arrived) waits for it; after the wait it goes to Cursor as it came. A call about a "
        "conversation whose first run has not come (a title, an upload) waits as long; after "
        'the wait it is treated as private (answered here) unless privacy = "cursor".',
        minimum=1,
    ),
    "cursor_byok_title_timeout_ms": Option(
        int,
        8000,
        "How long a BYOK chat's title (NameAgent, answered here) waits for the config's "
        "title_model; then the chat is named from its message's first words.",
        minimum=1,
    ),
    "cursor_byok_tab_timeout_ms": Option(
        int,
        10000,
        "Deadline of one Tab call on the user's model ([features] tab); past it, no suggestion.",
        minimum=1,
    ),
    "cursor_byok_commit_message_ms": Option(
        int,
        7000,
        "How long a commit message (WriteGitCommitMessage, answered here) waits for the model; "
        "then it is a summary line made from the diff (Cursor's client gives up after ~10 s).",
        minimum=1,
    ),
    "cursor_byok_max_turns_per_client": Option(
        int,
        8,
        "Turns one client (one Authorization) may run at once; a run request past it ends "
        "with resource_exhausted, so one client cannot starve the others.",
        minimum=1,
    ),
    "cursor_byok_max_requests": Option(
        int,
        1024,
        "Live Agent request ids kept at once, all clients together. When every one is being "
        "read, the client holding the most (by credential or by connection) gives one up to a "
        "smaller client, and is itself refused.",
        minimum=1,
    ),
    "cursor_byok_linger_ms": Option(
        int,
        600_000,
        "Keep a finished run this long, so a reconnect or retry of it is answered from "
        "what was sent instead of running it again.",
        minimum=1,
    ),
    "cursor_byok_exec_timeout_ms": Option(
        int,
        600_000,
        "Fail a run when the client leaves a tool request (other than a shell command) "
        "unanswered this long.",
        minimum=1,
    ),
    "cursor_byok_turn_timeout_ms": Option(
        int,
        4 * 3600 * 1000,
        "End a turn still running this long after it started (model calls, tools and waits "
        "together) with deadline_exceeded.",
        minimum=1,
    ),
    "cursor_byok_max_turn_output_mb": Option(
        int,
        128,
        "End a turn whose frames (its answer, tool requests, the blobs it stores in Cursor) "
        "pass this many MiB with resource_exhausted: a run keeps them all for reconnects.",
        minimum=1,
    ),
    "cursor_byok_backlog_memory_kb": Option(
        int,
        256,
        "Of a run's frames kept for reconnects, hold about this many KiB in memory; older "
        "ones go to a file of the run in the data dir until the run is dropped (0: all in "
        "memory).",
        minimum=0,
    ),
    "cursor_byok_min_free_mb": Option(
        int,
        64,
        "Refuse to start a turn (resource_exhausted, naming the data dir) while the data "
        "dir has less than this many MiB free: its blobs and usage would not fit.",
        minimum=0,
    ),
    "cursor_byok_blobs_max_mb": Option(
        int,
        4096,
        "MiB of conversation blobs kept in the data dir; beyond it the least recently used "
        "are deleted (never one a running turn's checkpoint or message names; the client "
        "gives back the ones it holds when a turn asks).",
        minimum=1,
    ),
    "cursor_byok_media_max_mb": Option(
        int,
        1024,
        "MiB of attached media (of BYOK conversations) kept in the data dir in all; the "
        "oldest uploads are dropped to make room. One upload is at most 64 MiB.",
        minimum=1,
    ),
    "cursor_byok_ack_timeout_ms": Option(
        int,
        300_000,
        "Longest wait for the client to acknowledge stored blobs at the end of a turn, as "
        "long as it keeps sending heartbeats.",
        minimum=1,
    ),
    "cursor_byok_gap_timeout_ms": Option(
        int,
        30_000,
        "Fail a run when an append_seqno gap stays open this long (a lost upload).",
        minimum=1,
    ),
    "cursor_byok_loopback_hop": Option(
        str,
        "memory",
        "How mitmproxy reaches the addon's loopback server, which serves every Agent stream: "
        "'memory' (in this process, no socket) or 'tcp' (a connection to 127.0.0.1; always "
        "so on an event loop that will not take the memory hop).",
        choices=("memory", "tcp"),
    ),
    "cursor_byok_coalesce_ms": Option(
        int,
        15,
        "Text/thinking/token deltas that come within this long of the last ones sent are "
        "held until it has passed and go out as one frame; the first delta after a quiet "
        "spell goes at once (0: no holding, lowest latency, one frame per delta).",
        minimum=0,
    ),
    "cursor_byok_config": Option(
        str,
        str(default_config_path()),
        "The cursor-byok TOML config (providers and models); reloaded when it changes.",
    ),
    "cursor_byok_record_dir": Option(
        str,
        "",
        "Record every Agent turn (client messages, server frames, provider events; secrets "
        "redacted) as capture files in this directory. Empty: off.",
    ),
    "cursor_byok_agent": Option(
        str,
        "provider",
        "Which agent runs turns: 'provider' (your configured models) or 'scripted' "
        "(no model: reads a file and answers; for checking a setup).",
        choices=AGENTS,
    ),
    "cursor_byok_models_mode": Option(
        str,
        "merge",
        "How the configured models reach Cursor's model pickers: 'merge' (add them to "
        "Cursor's answers; answer locally only while Cursor is unreachable), 'replace' "
        "(answer locally, never ask Cursor) or 'off'.",
        choices=MODELS_MODES,
    ),
    "cursor_byok_poll_data": Option(
        str,
        "hex",
        "How RunPoll answers (Cursor's HTTP/1.0 compatibility mode) carry each server message in "
        "BidiPollResponse.data: 'hex' (as BidiAppend carries client messages) or 'base64'.",
        choices=POLL_DATA_ENCODINGS,
    ),
    "cursor_byok_status": Option(
        bool,
        True,
        "Show a live status table of running turns (only on a terminal).",
    ),
}


def declare(loader: Any, *names: str) -> None:
    """Declare `names` (from `OPTIONS`) on mitmproxy's loader, always with the same signature."""
    for name in names:
        option = OPTIONS[name]
        loader.add_option(name, option.typespec, option.default, option.help, option.choices)


def changed(opts: Any, updated: set[str], *names: str) -> set[str]:
    """Those of `names` (options an addon reads) that `updated` names, each checked against its
    row of `OPTIONS` first: a value it does not take raises OptionsError, which mitmproxy
    answers by rolling the update back (at start `console.OptionCheck` stops the proxy with it,
    in one line). An addon's `configure` acts on what this returns, and only on that."""
    mine = updated.intersection(names)
    for name in sorted(mine):
        OPTIONS[name].check(name, getattr(opts, name))
    return mine


def check_all(opts: Any) -> None:
    """Check every option of ours that is declared against its row (OptionsError on the first
    value it does not take)."""
    for name, option in OPTIONS.items():
        if name in opts:
            option.check(name, getattr(opts, name))


def data_dir(options: Any) -> Path:
    return Path(options.cursor_byok_data_dir).expanduser()


def config_path(options: Any) -> Path:
    return Path(options.cursor_byok_config).expanduser()
