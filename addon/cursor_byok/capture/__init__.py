"""Capture files: recording turns (`recorder`), their format (`format`), the one redactor
(`redact`), offline replay (`replay`) and decoding raw captured bodies (`view`).

Names are re-exported lazily so that importing `cursor_byok.capture.redact` (the providers do)
does not import the recorder, and `from cursor_byok.capture import Recorder` keeps working.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING
from typing import Any

_EXPORTS = {
    "Recorder": "recorder",
    "config_facts": "recorder",
    "Capture": "format",
    "CaptureError": "format",
    "ClientLine": "format",
    "ModelCall": "format",
    "FORMAT": "format",
    "VERSION": "format",
    "SUFFIX": "format",
    "capture_files": "format",
    "client_kind": "format",
    "server_kind": "format",
    "event_from_json": "format",
    "event_to_json": "format",
    "error_from_json": "format",
    "error_to_json": "format",
    "load_capture": "format",
    "parse_capture": "format",
    "request_from_json": "format",
    "request_to_json": "format",
    "scrub_end_stream": "redact",
    "scrub_proto": "redact",
    "submessages": "redact",
}

if TYPE_CHECKING:
    from cursor_byok.capture.format import FORMAT as FORMAT
    from cursor_byok.capture.format import SUFFIX as SUFFIX
    from cursor_byok.capture.format import VERSION as VERSION
    from cursor_byok.capture.format import Capture as Capture
    from cursor_byok.capture.format import CaptureError as CaptureError
    from cursor_byok.capture.format import ClientLine as ClientLine
    from cursor_byok.capture.format import ModelCall as ModelCall
    from cursor_byok.capture.format import capture_files as capture_files
    from cursor_byok.capture.format import client_kind as client_kind
    from cursor_byok.capture.format import error_from_json as error_from_json
    from cursor_byok.capture.format import error_to_json as error_to_json
    from cursor_byok.capture.format import event_from_json as event_from_json
    from cursor_byok.capture.format import event_to_json as event_to_json
    from cursor_byok.capture.format import load_capture as load_capture
    from cursor_byok.capture.format import parse_capture as parse_capture
    from cursor_byok.capture.format import request_from_json as request_from_json
    from cursor_byok.capture.format import request_to_json as request_to_json
    from cursor_byok.capture.format import server_kind as server_kind
    from cursor_byok.capture.recorder import Recorder as Recorder
    from cursor_byok.capture.recorder import config_facts as config_facts
    from cursor_byok.capture.redact import scrub_end_stream as scrub_end_stream
    from cursor_byok.capture.redact import scrub_proto as scrub_proto
    from cursor_byok.capture.redact import submessages as submessages


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = sorted(_EXPORTS)
