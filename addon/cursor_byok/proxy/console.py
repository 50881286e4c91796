"""An addon for what the proxy says at start and how much: our log level follows the console's,
mitmproxy's lines about the hop to our loopback server stay out, and two settings that make
Agent serving unsafe or slow are warned about.
"""

from __future__ import annotations

import ipaddress
import logging

from mitmproxy import ctx
from mitmproxy import exceptions

from cursor_byok.proxy import options
from cursor_byok.proxy.loopback.log_filter import LoopbackLogFilter
from cursor_byok.proxy.mitmproxy_compat import CONNECTION_LOGGER

log = logging.getLogger(__name__)


def follow_console_verbosity(verbosity: str) -> None:
    """Create our DEBUG records only when the console shows them.

    mitmproxy sets the root logger to DEBUG and passes every record to all of its addons (the
    legacy `add_log` event), whatever the console shows, so a DEBUG line nobody reads still
    costs proxy CPU on every turn. `--set termlog_verbosity=debug` brings them back."""
    level = logging.DEBUG if verbosity == "debug" else logging.INFO
    logging.getLogger("cursor_byok").setLevel(level)


class Console:
    def __init__(self, loopback_log: LoopbackLogFilter) -> None:
        self.loopback_log = loopback_log

    def load(self, loader) -> None:
        logging.getLogger(CONNECTION_LOGGER).addFilter(self.loopback_log)

    def done(self) -> None:
        logging.getLogger(CONNECTION_LOGGER).removeFilter(self.loopback_log)

    def configure(self, updated: set[str]) -> None:
        opts = ctx.options
        if "connection_strategy" in updated and opts.connection_strategy != "lazy":
            log.warning(
                "connection_strategy is %r: set it to 'lazy' (--set connection_strategy=lazy) so "
                "Agent requests never need a connection to Cursor's servers",
                opts.connection_strategy,
            )
        if "termlog_verbosity" in updated:
            follow_console_verbosity(opts.termlog_verbosity)
            self.loopback_log.quiet = opts.termlog_verbosity != "debug"

    def running(self) -> None:
        warn_if_exposed()


class OptionCheck:
    """The last addon: every option of ours is declared when its `load` runs, so a `--set` of
    one of them that cannot be read (given twice, not a number) or that its row in the options
    table does not take (out of range, not one of its choices) is found here, said in one line,
    and the proxy stops. Without it mitmproxy raises inside its own script loader, drops the
    whole addon, and serves on as a plain proxy: no "ready" line, Agent calls to Cursor (or,
    for a value an addon's `configure` refuses, prints a traceback and exits).
    """

    def load(self, loader) -> None:
        try:
            loader.master.options.process_deferred()  # what mitmproxy does next, unguarded
            options.check_all(loader.master.options)  # before any addon's configure sees them
        except exceptions.OptionsError as exc:
            log.error("cursor-byok cannot start: %s", exc)
            raise SystemExit(2) from None  # not Exception: mitmproxy's safecall lets it out


def warn_if_exposed() -> None:
    """Agent RPCs need no Cursor token: a proxy others can reach spends the user's key."""
    if "listen_host" not in ctx.options:
        return
    host = ctx.options.listen_host
    proxyauth = ctx.options.proxyauth if "proxyauth" in ctx.options else None
    try:
        loopback = host != "" and ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback and not proxyauth:
        log.warning(
            "cursor-byok: the proxy listens on %s, reachable from other machines, without "
            "proxyauth: anyone who can reach it can run Agent turns on your provider keys. "
            "Use --listen-host 127.0.0.1 (or set proxyauth).",
            host or "all interfaces",
        )
