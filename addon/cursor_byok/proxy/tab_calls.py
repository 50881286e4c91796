"""Tab's calls besides StreamCpp, when `[features] tab` names a model: answered here so Tab
stays on and nothing of the file reaches Cursor, or passed through for a reason
(docs/protocol.md "Tab").

- `StreamNextCursorPrediction`, `RefreshTabContext`, `CppAppend`, `CppEditHistoryAppend`: they
  carry the file, its edits or its surroundings: answered here (an empty stream, no context,
  `success: true`), never forwarded.
- `CppEditHistoryStatus`: `on: false`, so the editor keeps its edit history to itself and sends
  recent edits inline with each StreamCpp [inf].
- `FSIsEnabledForUser`: `enabled: false`, so the editor never relies on Cursor's copy of the
  file (filesync) and sends contents with each request [inf]; `FSUploadFile` / `FSSyncFile`
  (the file's text or its edits) answered with a hash mismatch: not stored, try contents [inf].
- `RecordCppFate`: accept/reject of a suggestion Cursor never made: answered here (empty).
- `CppService/AvailableModels` passes through: its request is empty, and the `cursor-agent` CLI's
  picker reads it too (config/catalog.py), which a list of one Tab model would break.
- `CppConfig` passes through: its request carries only the model name and flags, and its answer
  (debounce, radius, on/off) is Cursor's to give; every Tab host is under `*.cursor.sh`.
"""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.message import Message

from cursor_byok.pb import aiserver_features_pb2 as fpb

AI = "/aiserver.v1.AiService/"
FS = "/aiserver.v1.FileSyncService/"
STREAM_CPP = AI + "StreamCpp"
NEXT_CURSOR = AI + "StreamNextCursorPrediction"


@dataclass(frozen=True, slots=True)
class TabCall:
    path: str
    request: type[Message]
    answer: Message | None  # None: an empty server stream
    what: str  # what of the user's code it carries (logs, docs)


def _calls() -> dict[str, TabCall]:
    mismatch = fpb.FS_UPLOAD_ERROR_TYPE_HASH_MISMATCH
    calls = (
        TabCall(
            NEXT_CURSOR, fpb.StreamNextCursorPredictionRequest, None, "the file, to guess a jump"
        ),
        TabCall(
            AI + "RefreshTabContext",
            fpb.RefreshTabContextRequest,
            fpb.RefreshTabContextResponse(),
            "the file and open files",
        ),
        TabCall(
            AI + "CppAppend", fpb.CppAppendRequest, fpb.CppAppendResponse(success=True), "edits"
        ),
        TabCall(
            AI + "CppEditHistoryAppend",
            fpb.EditHistoryAppendChangesRequest,
            fpb.EditHistoryAppendChangesResponse(success=True),
            "the edit history",
        ),
        TabCall(
            AI + "CppEditHistoryStatus",
            fpb.CppEditHistoryStatusRequest,
            fpb.CppEditHistoryStatusResponse(on=False),
            "nothing (asks whether to upload edits)",
        ),
        TabCall(
            AI + "RecordCppFate",
            fpb.RecordCppFateRequest,
            fpb.RecordCppFateResponse(),
            "a suggestion's fate",
        ),
        TabCall(
            FS + "FSIsEnabledForUser",
            fpb.FSIsEnabledForUserRequest,
            fpb.FSIsEnabledForUserResponse(enabled=False),
            "nothing (asks whether to sync files)",
        ),
        TabCall(
            FS + "FSUploadFile",
            fpb.FSUploadFileRequest,
            fpb.FSUploadFileResponse(error=mismatch),
            "a whole file",
        ),
        TabCall(
            FS + "FSSyncFile",
            fpb.FSSyncFileRequest,
            fpb.FSSyncFileResponse(error=fpb.FS_SYNC_ERROR_TYPE_HASH_MISMATCH),
            "a file's edits",
        ),
    )
    return {call.path: call for call in calls}


CALLS = _calls()
