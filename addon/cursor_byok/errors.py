"""One error root for cursor-byok, with typed Connect codes.

Every failure the proxy can answer or show is a `ByokError` whose `code` is one of Connect's codes
(`Code`); the edges map it to an HTTP status, an end-stream error or a gRPC-Web trailer in one
place (`connect.py`). Callers catch `ByokError` (or a subclass) instead of a dozen unrelated roots.
"""

from __future__ import annotations

import enum


class Code(enum.StrEnum):
    """Connect error codes (the strings are the wire values)."""

    CANCELED = "canceled"
    UNKNOWN = "unknown"
    INVALID_ARGUMENT = "invalid_argument"
    DEADLINE_EXCEEDED = "deadline_exceeded"
    NOT_FOUND = "not_found"
    ALREADY_EXISTS = "already_exists"
    PERMISSION_DENIED = "permission_denied"
    RESOURCE_EXHAUSTED = "resource_exhausted"
    FAILED_PRECONDITION = "failed_precondition"
    ABORTED = "aborted"
    OUT_OF_RANGE = "out_of_range"
    UNIMPLEMENTED = "unimplemented"
    INTERNAL = "internal"
    UNAVAILABLE = "unavailable"
    DATA_LOSS = "data_loss"
    UNAUTHENTICATED = "unauthenticated"


class ByokError(Exception):
    """The root: a message for people and the Connect code it is answered with."""

    code: str = Code.INTERNAL

    def __init__(self, message: str = "", code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = Code(code)
