"""What ends a turn early, by who decides: the transport cancels it (`TurnCancelled`) or fails it
(`TurnFailed`), or the turn meets a failure Cursor should show (`TurnError`, its end-stream)."""

from __future__ import annotations

from pathlib import Path

from cursor_byok.errors import ByokError
from cursor_byok.errors import Code
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.wire.connect import EndStreamError
from cursor_byok.wire.connect import ErrorDetail


class TurnCancelled(ByokError):
    """Raised inside a turn when it is cancelled (user stop, client gone, superseded)."""

    code = Code.CANCELED

    def __init__(
        self, reason: str, action: pb.CancelAction | None = None, *, final: str | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.action = action
        self.final = final  # "superseded" | "user": the client must not retry the run

    def end_stream(self) -> EndStreamError:
        """`canceled`; when final, with the `ErrorDetails.error` Cursor's client reads as "do
        not retry" (DEBOUNCED for a run a newer one replaced, USER_ABORTED_REQUEST for a stop):
        its retry policy retries any other `canceled` as a transport failure [sdk: @cursor/sdk
        1.1.0 bundle]; `is_expected`, so nothing is shown as an error [inf]."""
        error = _FINAL_ERRORS.get(self.final or "")
        if error is None:
            return EndStreamError("canceled", self.reason)
        detail = aipb.ErrorDetails(error=error, is_expected=True)
        return EndStreamError(
            "canceled",
            self.reason,
            (ErrorDetail("aiserver.v1.ErrorDetails", detail.SerializeToString()),),
        )


_FINAL_ERRORS = {
    "superseded": aipb.ErrorDetails.ERROR_DEBOUNCED,
    "user": aipb.ErrorDetails.ERROR_USER_ABORTED_REQUEST,
}


class TurnFailed(ByokError):
    """Raised inside a turn when the transport fails it (seqno gap, overflow, watchdog)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, code)


class TurnError(ByokError):
    """A failure Cursor should show: becomes the end-stream error (never assistant text)."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        title: str | None = None,
        error: aipb.ErrorDetails.Error | None = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(message, code)
        self.title = title
        self.error = error
        self.retryable = retryable

    def noted(self, note: str) -> TurnError:
        """The same failure with `note` after its message (what a fallback chain tried)."""
        return TurnError(
            self.code,
            f"{self} ({note})",
            title=self.title,
            error=self.error,
            retryable=self.retryable,
        )

    def end_stream(self) -> EndStreamError:
        details: tuple[ErrorDetail, ...] = ()
        if self.error is not None:
            detail = aipb.ErrorDetails(
                error=self.error,
                details=aipb.CustomErrorDetails(
                    title=self.title or "Error",
                    detail=str(self),
                    is_retryable=self.retryable,
                    show_request_id=True,
                ),
                is_expected=False,
            )
            details = (ErrorDetail("aiserver.v1.ErrorDetails", detail.SerializeToString()),)
        return EndStreamError(self.code, str(self), details)


def disk_full_error(data_dir: Path, exc: OSError) -> TurnError:
    """A write to the data dir failed: the turn ends with this, naming the directory."""
    why = exc.strerror or str(exc)
    return TurnError(
        "resource_exhausted",
        f"cursor-byok could not store this conversation in its data directory {data_dir} "
        f"({why}). The answer so far is kept in Cursor's copy of the conversation; free some "
        f"space in {data_dir} and continue",
        title="cursor-byok's data directory is full",
        error=aipb.ErrorDetails.ERROR_CUSTOM_MESSAGE,
    )
