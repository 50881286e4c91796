"""`cursor-byok doctor`: check a setup step by step, each check one ✔/✘ line with the fix.

Most support questions are one of: wrong Python or mitmproxy, a config typo, a provider key that
does not work, the CA not trusted, the port taken, or Cursor not sending its Agent calls through
the proxy. Each has a check, by what it looks at: the install and the config
(`doctor_setup.py`), this machine (`doctor_machine.py`), Cursor's traffic (`doctor_traffic.py`:
the activity file the running proxy keeps in its data directory, so it works from a second
terminal; with `--watch N` it waits for an Agent call made after the doctor started). This
module runs them in order and prints them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from cursor_byok.cli.doctor_machine import check_ca
from cursor_byok.cli.doctor_machine import check_data_dir
from cursor_byok.cli.doctor_machine import check_local_capture
from cursor_byok.cli.doctor_machine import check_nss
from cursor_byok.cli.doctor_machine import check_port
from cursor_byok.cli.doctor_setup import FAIL
from cursor_byok.cli.doctor_setup import OK
from cursor_byok.cli.doctor_setup import WARN
from cursor_byok.cli.doctor_setup import Check
from cursor_byok.cli.doctor_setup import check_config
from cursor_byok.cli.doctor_setup import check_mitmproxy
from cursor_byok.cli.doctor_setup import check_providers
from cursor_byok.cli.doctor_setup import check_python
from cursor_byok.cli.doctor_setup import check_safety
from cursor_byok.cli.doctor_setup import check_spend
from cursor_byok.cli.doctor_setup import check_tab
from cursor_byok.cli.doctor_setup import check_unused_providers
from cursor_byok.cli.doctor_traffic import check_activity
from cursor_byok.cli.doctor_traffic import check_census
from cursor_byok.config import Config
from cursor_byok.store.activity import ACTIVITY_FILE
from cursor_byok.store.activity import read_activity

# The checks were all here once: their old import path is kept (tests and `launch` use it).
__all__ = [
    "ACTIVITY_FILE",
    "FAIL",
    "OK",
    "WARN",
    "Check",
    "check_activity",
    "check_ca",
    "check_census",
    "check_local_capture",
    "check_nss",
    "check_port",
    "check_spend",
    "check_tab",
    "run_doctor",
]


def run_doctor(
    *,
    config_path: Path,
    confdir: Path,
    data_dir: Path,
    host: str = "127.0.0.1",
    port: int = 8080,
    providers: bool = True,
    watch: float = 0.0,
    first_run: bool = False,
    out: Callable[[str], None] | None = None,
) -> int:
    """Run every check, print one line each; exit code 1 when any check failed.

    `first_run` (after `init`): the proxy has not run yet, so a missing CA is only a warning and
    there is no traffic to look at.
    """
    report = _Report(out)
    report(check_python(), check_mitmproxy())
    config_check, config = check_config(config_path)
    report(config_check)
    if config is not None:
        _report_config(report, config, data_dir, providers)
    # No activity record: the proxy never ran with this data dir, so no CA yet is "not yet".
    never_ran = read_activity(data_dir)[0] is None
    report(*check_ca(confdir, first_run or never_ran))
    report(check_local_capture())
    report(check_data_dir(data_dir))
    report(check_port(host, port, data_dir))
    if watch > 0:
        report.emit(
            f"… waiting up to {watch:g}s for a new Agent call: send a message in Cursor's Agent"
        )
    if not first_run:
        _report_traffic(report, data_dir, watch)
    return report.summary()


_MARKS = {OK: "[green]✔[/green]", WARN: "[yellow]![/yellow]", FAIL: "[red]✘[/red]"}


class _Report:
    """The checks' lines as they come (one per check, its fix under it when not OK)."""

    def __init__(self, out: Callable[[str], None] | None) -> None:
        from rich.console import Console

        console = Console(highlight=False, soft_wrap=True)  # one line per check, any width
        self.emit = out or console.print
        self.checks: list[Check] = []

    def __call__(self, *new: Check) -> None:
        for check in new:
            self.checks.append(check)
            line = f"{_MARKS[check.status]} {check.title}"
            if check.detail:
                line += f" — {check.detail}"
            if check.fix and check.status != OK:
                line += f"\n    fix: {check.fix}"
            self.emit(line)

    def summary(self) -> int:
        """The last line; the exit code (1 when a check failed)."""
        failed = sum(c.status == FAIL for c in self.checks)
        total = len(self.checks)
        self.emit(f"{total - failed} of {total} checks passed" + (" (see ✘)" if failed else ""))
        return 1 if failed else 0


def _report_config(report: _Report, config: Config, data_dir: Path, providers: bool) -> None:
    """Each model's one-word answer (unless `providers` is off), then what the config risks."""
    if providers and config.used_providers():
        count = len(config.models)
        report.emit(
            f"… asking the provider{'s' if len(config.used_providers()) > 1 else ''} "
            f"({', '.join(config.used_providers())}) for a one-word answer from each of the "
            f"{count} model{'s' if count != 1 else ''} (up to 30s)"
        )
        report(*check_providers(config))
    report(*check_safety(config, pinged=providers))
    report(*check_spend(config, data_dir))
    report(*check_unused_providers(config))
    report(check_tab(config))


def _report_traffic(report: _Report, data_dir: Path, watch: float) -> None:
    """Whether Agent calls arrive (waiting `watch` seconds for a new one), then the census of
    what Cursor sent meanwhile (given the rest of the wait, at most 10 s, to settle)."""
    before = (read_activity(data_dir)[0] or {}).get("census", {}) if watch > 0 else None
    started = time.monotonic()
    report(check_activity(data_dir, watch))
    left = max(watch - (time.monotonic() - started), 0.0)
    census = check_census(data_dir, before, settle=min(left, 10.0) if watch > 0 else 0.0)
    if census is not None:
        report(census)
