"""A Tab client of ours, from the reference schema: StreamCpp and Tab's other calls as Cursor's
editor sends them (Connect; a server stream for StreamCpp), through a proxy."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import httpx
from cursor_client import FAKE_TOKEN

from cursor_byok.pb import aiserver_features_pb2 as fpb
from cursor_byok.wire import connect

STREAM_CPP = "/aiserver.v1.AiService/StreamCpp"
MARKER = "TAB-PRIVATE-FILE-MARKER"


@dataclass
class TabAnswer:
    status: int
    frames: list[fpb.StreamCppResponse]
    end: connect.EndStream | None

    @property
    def edit(self) -> str:
        """The text of the edit, as the client puts it in place of `range_to_replace`."""
        return "".join(f.text for f in self.frames)

    @property
    def range(self) -> fpb.LineRange | None:
        ranges = [f.range_to_replace for f in self.frames if f.HasField("range_to_replace")]
        return ranges[0] if ranges else None


def cpp_request(contents: str, line: int, column: int, **file) -> fpb.StreamCppRequest:
    return fpb.StreamCppRequest(
        current_file=fpb.CurrentFileInfo(
            relative_workspace_path=file.pop("path", "src/app.py"),
            contents=contents,
            language_id=file.pop("language", "python"),
            cursor_position=fpb.CursorPosition(line=line, column=column),
            total_number_of_lines=contents.count("\n") + 1,
            **file,
        ),
        diff_history=["--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-x\n+y"],
        model_name="fast",
    )


async def stream_cpp(http: httpx.AsyncClient, base: str, request: fpb.StreamCppRequest):
    response = await http.post(
        base + STREAM_CPP,
        content=connect.encode_frame(request.SerializeToString()),
        headers={
            "content-type": "application/connect+proto",
            "connect-protocol-version": "1",
            "authorization": FAKE_TOKEN,
        },
    )
    frames, end = [], None
    if response.headers.get("content-type", "").startswith("application/connect+proto"):
        for frame in connect.decode_envelopes(response.content):
            if frame.is_end_stream:
                end = connect.parse_end_stream(frame.payload)
            else:
                frames.append(fpb.StreamCppResponse.FromString(frame.payload))
    return TabAnswer(response.status_code, frames, end)


async def unary(http: httpx.AsyncClient, base: str, path: str, message) -> httpx.Response:
    return await http.post(
        base + path,
        content=message.SerializeToString(),
        headers={
            "content-type": "application/proto",
            "connect-protocol-version": "1",
            "authorization": FAKE_TOKEN,
        },
    )


def other_calls(contents: str) -> list[tuple[str, object]]:
    """Tab's other calls, each carrying `contents` where its message has room for the file."""
    current = fpb.CurrentFileInfo(relative_workspace_path="src/app.py", contents=contents)
    ai, fs = "/aiserver.v1.AiService/", "/aiserver.v1.FileSyncService/"
    return [
        (ai + "CppConfig", fpb.CppConfigRequest(model="fast")),
        (ai + "RefreshTabContext", fpb.RefreshTabContextRequest(current_file=current)),
        (ai + "CppAppend", fpb.CppAppendRequest(changes=contents.encode())),
        (
            ai + "CppEditHistoryAppend",
            fpb.EditHistoryAppendChangesRequest(session_id=contents),
        ),
        (ai + "CppEditHistoryStatus", fpb.CppEditHistoryStatusRequest()),
        (ai + "RecordCppFate", fpb.RecordCppFateRequest(request_id="r1", fate=1)),
        ("/aiserver.v1.CppService/AvailableModels", fpb.AvailableCppModelsRequest()),
        (fs + "FSIsEnabledForUser", fpb.FSIsEnabledForUserRequest(uuid="u")),
        (
            fs + "FSUploadFile",
            fpb.FSUploadFileRequest(
                uuid="u", relative_workspace_path="src/app.py", contents=contents
            ),
        ),
        (
            fs + "FSSyncFile",
            fpb.FSSyncFileRequest(uuid="u", relative_workspace_path="src/app.py"),
        ),
    ]


async def h2_stream_cpp(h2, authority: str, request: fpb.StreamCppRequest, abandon: float = 0.0):
    """StreamCpp on an HTTP/2 connection of ours (h2_client.py), as Cursor's editor sends it on
    its one connection; with `abandon` seconds, the stream is reset (RST_STREAM CANCEL) if no
    answer came by then, and None is returned."""
    stream = await h2.request(
        STREAM_CPP,
        {
            ":authority": authority,
            "content-type": "application/connect+proto",
            "connect-protocol-version": "1",
            "authorization": FAKE_TOKEN,
        },
        body=connect.encode_frame(request.SerializeToString()),
        end=True,
    )

    async def read() -> bytes:
        return b"".join([chunk async for chunk in stream.chunks()])

    if abandon:
        try:
            async with asyncio.timeout(abandon):
                body = await read()
        except TimeoutError:
            await stream.cancel()
            return None
    else:
        body = await read()
    frames, end = [], None
    for frame in connect.decode_envelopes(body):
        if frame.is_end_stream:
            end = connect.parse_end_stream(frame.payload)
        else:
            frames.append(fpb.StreamCppResponse.FromString(frame.payload))
    return TabAnswer(stream.status or 0, frames, end)
