"""An addon that records every Agent turn as a capture file while `cursor_byok_record_dir` is set
(client messages as they arrive, every server frame, each model call; secrets redacted).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from collections.abc import Mapping
from pathlib import Path

from mitmproxy import ctx
from mitmproxy import exceptions

from cursor_byok.capture.recorder import Recorder
from cursor_byok.proxy import options

log = logging.getLogger(__name__)
_OPTIONS = (
    "cursor_byok_record_dir",
    "cursor_byok_agent",
    "cursor_byok_config",
    "cursor_byok_data_dir",
)


FrameObserver = Callable[[str, bytes, bool], None]


class Recording:
    """Off by default, and then nothing of it runs per call or per frame: its frame observer is
    in the run core's observer list only while a recorder is open (`attach`), and a client
    message's headers are copied only when they are recorded."""

    def __init__(self) -> None:
        self.recorder: Recorder | None = None  # while recording
        self._observers: list[FrameObserver] | None = None

    def attach(self, observers: list[FrameObserver]) -> None:
        """The run core's frame observers (`RunRegistry.observers`): `frame` joins them
        while recording and leaves them when it stops."""
        self._observers = observers
        self._observe(self.recorder is not None)

    def _observe(self, on: bool) -> None:
        observers = self._observers
        if observers is None:
            return
        if on and self.frame not in observers:
            observers.append(self.frame)
        elif not on and self.frame in observers:
            observers.remove(self.frame)

    def load(self, loader) -> None:
        options.declare(loader, *_OPTIONS)

    def configure(self, updated: set[str]) -> None:
        opts = ctx.options
        mine = options.changed(opts, updated, *_OPTIONS)
        if "cursor_byok_record_dir" in mine:
            self._switch(opts.cursor_byok_record_dir)
        if mine and self.recorder is not None:  # what the run meta line says of this proxy
            self.recorder.agent = opts.cursor_byok_agent
            self.recorder.config_path = options.config_path(opts)
            self.recorder.data_dir = options.data_dir(opts)

    def done(self) -> None:
        self.close()

    def close(self) -> None:
        self._observe(False)
        if self.recorder is not None:
            self.recorder.close()
            self.recorder = None

    def _switch(self, directory: str) -> None:
        self.close()
        if directory:
            try:
                self.recorder = Recorder(Path(directory).expanduser())
            except OSError as exc:
                raise exceptions.OptionsError(f"cursor_byok_record_dir: {exc}") from None
            self._observe(True)
            log.info("recording Agent turns into %s", directory)

    def client(self, request_id: str, seqno: int, raw: bytes, headers: Mapping[str, str]) -> None:
        """One client message, before the turn it may start emits anything (`headers` as the
        flow has them: copied only when recorded)."""
        if self.recorder is not None:
            self.recorder.client(request_id, seqno, raw, dict(headers))

    def frame(self, run_id: str, payload: bytes, end: bool) -> None:
        """One server frame a run queued (the run core's frame observer)."""
        if self.recorder is not None:
            self.recorder.server(run_id, payload, end)
