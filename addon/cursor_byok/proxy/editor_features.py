"""An addon for the editor's AI features beyond the Agent (issue 34): Cmd-K, terminal Cmd-K, the
commit message button and the small calls around them, on the user's own model.

For each call, `[features]` (config/features.py) names the model or "cursor". On a model, the
call is answered here and nothing of it goes to Cursor: the streams (`StreamCmdK`,
`StreamTerminalCmdK`) through the loopback server, delta by delta as the model writes
(`feature_stream.py`); `WriteGitCommitMessage` in one answer within a deadline under the client's
own (~10 s), else a summary line made from the diff; the rerank calls with an empty answer (no
reranking: the client keeps its own order [inf]); terminal autocomplete as a short streamed
continuation of the command typed so far (one line, `text` deltas, then `done_stream`). On
"cursor" the call is not touched: byte for byte.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator
from collections.abc import AsyncIterator
from dataclasses import dataclass

from mitmproxy import ctx
from mitmproxy import http

from cursor_byok.agent import editor_prompts
from cursor_byok.agent.completion import Completion
from cursor_byok.agent.completion import feature_model
from cursor_byok.agent.editor_context import ContextCache
from cursor_byok.agent.editor_context import Continuation
from cursor_byok.agent.editor_context import FenceStripper
from cursor_byok.agent.editor_context import budget_chars
from cursor_byok.agent.editor_context import resolve
from cursor_byok.config import Config
from cursor_byok.config import ConfigError
from cursor_byok.config import ModelConfig
from cursor_byok.config.features import describe as describe_features
from cursor_byok.pb import aiserver_features_pb2 as fpb
from cursor_byok.proxy import options
from cursor_byok.proxy import unary
from cursor_byok.proxy.activity_record import CENSUS_KEY
from cursor_byok.proxy.feature_stream import Answer
from cursor_byok.proxy.feature_stream import end_frame
from cursor_byok.proxy.feature_stream import failure
from cursor_byok.proxy.feature_stream import frame
from cursor_byok.proxy.hosts import cursor_host
from cursor_byok.proxy.loopback.addon import Loopback
from cursor_byok.proxy.spend_gate import SpendGate
from cursor_byok.proxy.turns import Turns
from cursor_byok.store.census import SERVED
from cursor_byok.store.census import Census
from cursor_byok.store.feature_calls import FeatureCalls
from cursor_byok.store.usage import CMD_K
from cursor_byok.store.usage import COMMIT_MESSAGE
from cursor_byok.store.usage import TERMINAL
from cursor_byok.store.usage import TERMINAL_AUTOCOMPLETE as AUTOCOMPLETE_KIND
from cursor_byok.wire import connect

log = logging.getLogger(__name__)

CMD_K_SERVICE = "/aiserver.v1.CmdKService/"
AI_SERVICE = "/aiserver.v1.AiService/"
STREAM_CMD_K = CMD_K_SERVICE + "StreamCmdK"
STREAM_TERMINAL_CMD_K = CMD_K_SERVICE + "StreamTerminalCmdK"
RERANK_CMD_K = CMD_K_SERVICE + "RerankCmdKContext"
RERANK_TERMINAL = CMD_K_SERVICE + "RerankTerminalCmdKContext"
COMMIT = AI_SERVICE + "WriteGitCommitMessage"
TERMINAL_AUTOCOMPLETE = AI_SERVICE + "StreamTerminalAutocomplete"
# path -> the `[features]` key that decides it
FEATURE_OF = {
    STREAM_CMD_K: CMD_K,
    STREAM_TERMINAL_CMD_K: TERMINAL,
    RERANK_CMD_K: CMD_K,
    RERANK_TERMINAL: TERMINAL,
    COMMIT: COMMIT_MESSAGE,
    TERMINAL_AUTOCOMPLETE: TERMINAL,
}
STREAMS = frozenset({STREAM_CMD_K, STREAM_TERMINAL_CMD_K, TERMINAL_AUTOCOMPLETE})
MODEL_CALLS = STREAMS | {COMMIT}  # the calls that spend: refused when a cap is reached
COMMIT_DEADLINE = 7.0  # seconds (cursor_byok_commit_message_ms): the client gives up at ~10
EDIT_ID = 1  # one edit per Cmd-K answer
AUTOCOMPLETE_TOKENS = 64  # one command line's worth: a suggestion, not an essay
FEATURE_KEY = "cursor_byok_feature"  # flow metadata: a feature's call left for Cursor


@dataclass
class Job:
    """One call being answered: its flow, config, model and codec."""

    flow: http.HTTPFlow
    config: Config
    model: ModelConfig
    json: bool

    @property
    def budget(self) -> int:
        return budget_chars(self.model.context_window, self.model.max_output_tokens)


class EditorFeatures:
    def __init__(
        self,
        loopback: Loopback,
        turns: Turns,
        census: Census | None = None,
        calls: FeatureCalls | None = None,
    ) -> None:
        self.loopback = loopback
        self.turns = turns
        self.census = census  # per feature: answered here, or bytes sent to Cursor
        self.calls = calls  # per kind and model: calls, tokens, latency (the live status)
        self.cache = ContextCache()  # Cmd-K's context items by the client's hash
        self.commit_deadline = COMMIT_DEADLINE
        self.spend = SpendGate()  # [limits]: checked before each model call

    def load(self, loader) -> None:
        options.declare(
            loader, "cursor_byok_hosts", "cursor_byok_data_dir", "cursor_byok_commit_message_ms"
        )

    def configure(self, updated: set[str]) -> None:
        if options.changed(ctx.options, updated, "cursor_byok_commit_message_ms"):
            self.commit_deadline = ctx.options.cursor_byok_commit_message_ms / 1000

    def running(self) -> None:
        if not self.turns.serves_config():
            return
        try:
            config = self.turns.config()
        except ConfigError:
            return  # Turns says what is wrong with it
        log.info("editor features: %s", describe_features(config.features))

    async def request(self, flow: http.HTTPFlow) -> None:
        if flow.response or flow.error or not flow.live or not cursor_host(flow):
            return
        path = flow.request.path.split("?", 1)[0]
        feature = FEATURE_OF.get(path)
        if feature is None or not self.turns.serves_config():
            return
        try:
            config = self.turns.config()
        except ConfigError as exc:  # broken config: an error, never Cursor (it may be private)
            flow.metadata[CENSUS_KEY] = SERVED
            self._error(flow, path, failure(exc))
            return
        name = config.features.model_for(feature)
        if name is None:
            flow.metadata[FEATURE_KEY] = feature  # "cursor": as it came (counted as it leaves)
            return
        flow.metadata[CENSUS_KEY] = SERVED
        try:
            if path in MODEL_CALLS and (capped := await self._capped(config)) is not None:
                self._error(flow, path, capped)  # a spending cap is reached: no model call
                return
            job = Job(flow, config, feature_model(config, name), _is_json(flow))
            await self._answer(job, path)
        except Exception as exc:
            if not isinstance(exc, unary.BadRequest | ConfigError):
                log.exception("%s: answered with an error (a bug of cursor-byok)", path)
            if flow.response is None and not flow.metadata.get("cursor_byok_loopback"):
                error = failure(exc)
                if isinstance(exc, unary.BadRequest):
                    error = connect.EndStreamError(str(exc.code), str(exc))
                self._error(flow, path, error)
        finally:  # counted once the provider request is out (the count wakes the record's writer)
            if self.census is not None:
                self.census.feature(feature, answered=1)

    def response(self, flow: http.HTTPFlow) -> None:
        self._left(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        self._left(flow)

    def _left(self, flow: http.HTTPFlow) -> None:
        """A feature's call that went to Cursor: its bytes, counted once."""
        feature = flow.metadata.pop(FEATURE_KEY, None)
        if feature is not None and self.census is not None:
            size = len(flow.request.raw_content or b"")
            self.census.feature(feature, sent_bytes=size, sent_calls=1)

    async def _capped(self, config: Config) -> connect.EndStreamError | None:
        error = await self.spend.check(config, options.data_dir(ctx.options))
        if error is not None:
            log.warning("editor feature refused: %s", error.message)
        return error

    def _error(self, flow: http.HTTPFlow, path: str, error: connect.EndStreamError) -> None:
        if path in STREAMS:
            ctype = flow.request.headers.get("content-type", "application/connect+proto")
            unary.answer_bytes(flow, end_frame(error), ctype.split(";")[0])
        else:
            unary.error(flow, error.code, error.message)

    async def _answer(self, job: Job, path: str) -> None:
        if path == STREAM_CMD_K:
            request = unary.parse(job.flow.request, fpb.StreamCmdKRequest())
            await self._stream(job, self._cmd_k(job, request))
        elif path == STREAM_TERMINAL_CMD_K:
            terminal = unary.parse(job.flow.request, fpb.StreamTerminalCmdKRequest())
            await self._stream(job, self._terminal(job, terminal))
        elif path == COMMIT:
            commit = unary.parse(job.flow.request, fpb.WriteGitCommitMessageRequest())
            await self._commit(job, commit)
        elif path == RERANK_CMD_K:
            unary.answer(job.flow, fpb.RerankCmdKContextResponse(did_call=False))
        elif path == RERANK_TERMINAL:
            unary.answer(job.flow, fpb.RerankTerminalCmdKContextResponse())
        elif path == TERMINAL_AUTOCOMPLETE:
            typed = unary.parse(job.flow.request, fpb.StreamTerminalAutocompleteRequest())
            await self._stream(job, self._autocomplete(job, typed))

    async def _stream(self, job: Job, frames: AsyncGenerator[bytes]) -> None:
        ctype = job.flow.request.headers.get("content-type", "application/connect+proto")
        served = await self.loopback.serve_produced(
            job.flow, lambda: _guarded(frames), ctype.split(";")[0], None
        )
        if not served:
            await frames.aclose()
            self._error(
                job.flow,
                STREAM_CMD_K,
                connect.EndStreamError(
                    "unavailable", "cursor-byok's loopback server is not running"
                ),
            )

    def _answer_for(self, job: Job, kind: str, label: str, prompt) -> Answer:
        call = Completion(job.model, prompt.system, prompt.user)
        settings = job.config.providers[job.model.provider].settings
        return Answer(
            kind,
            label,
            call,
            lambda: self.turns.providers.get(settings()),
            options.data_dir(ctx.options),
            calls=self.calls,
        )

    # --- Cmd-K ------------------------------------------------------------------------------

    async def _cmd_k(self, job: Job, request: fpb.StreamCmdKRequest) -> AsyncGenerator[bytes]:
        resolved = resolve(request.context_items, self.cache, request.session_id)
        if request.cmd_k_options.request_is_for_caching:
            yield end_frame()  # a warm-up of Cursor's cache: nothing to answer
            return
        if resolved.missing:
            missing = fpb.StreamCmdKResponseContextWrapped()
            missing.missing_context_items.missing_context_item_hashes.extend(resolved.missing)
            log.info(
                "Cmd-K: %d context item(s) sent by hash only, asked again", len(resolved.missing)
            )
            yield frame(missing, job.json)
            yield end_frame()
            return
        prompt = editor_prompts.cmd_k(request, resolved.items, job.budget)
        if prompt.cut:
            log.info("Cmd-K: context cut to %s's window (nearest lines kept)", job.model.name)
        images, note = editor_prompts.image_parts(request.images, job.model.supports_images)
        if note:
            prompt.user += "\n\n" + note
        answer = self._answer_for(job, CMD_K, "Cmd-K", prompt)
        answer.call.images = images
        chat = request.cmd_k_options.chat_mode
        messages = _cmd_k_chat if chat else _cmd_k_edit(prompt)
        async for chunk in answer.frames(messages, json=job.json):
            yield chunk

    # --- terminal Cmd-K ---------------------------------------------------------------------

    async def _terminal(
        self, job: Job, request: fpb.StreamTerminalCmdKRequest
    ) -> AsyncGenerator[bytes]:
        resolved = resolve(request.context_items, self.cache, request.session_id)
        if resolved.missing:
            missing = fpb.StreamTerminalCmdKResponseContextWrapped()
            missing.missing_context_items.missing_context_item_hashes.extend(resolved.missing)
            yield frame(missing, job.json)
            yield end_frame()
            return
        prompt = editor_prompts.terminal(request, resolved.items, job.budget)
        answer = self._answer_for(job, TERMINAL, "Terminal Cmd-K", prompt)
        chat = request.cmd_k_options.chat_mode
        async for chunk in answer.frames(
            _terminal_chat if chat else _terminal_command, json=job.json
        ):
            yield chunk

    # --- terminal autocomplete ------------------------------------------------------------

    async def _autocomplete(
        self, job: Job, request: fpb.StreamTerminalAutocompleteRequest
    ) -> AsyncGenerator[bytes]:
        prompt = editor_prompts.terminal_autocomplete(request, job.budget)
        answer = self._answer_for(job, AUTOCOMPLETE_KIND, "Terminal autocomplete", prompt)
        answer.call.max_output_tokens = AUTOCOMPLETE_TOKENS
        async for chunk in answer.frames(_continuation(request.current_command), json=job.json):
            yield chunk

    # --- commit messages --------------------------------------------------------------------

    async def _commit(self, job: Job, request: fpb.WriteGitCommitMessageRequest) -> None:
        prompt = editor_prompts.commit_message(request, job.budget)
        answer = self._answer_for(job, COMMIT_MESSAGE, "Commit message", prompt)
        answer.call.max_output_tokens = 400
        parts: list[str] = []
        started = time.monotonic()
        try:
            async with asyncio.timeout(self.commit_deadline):
                async for text in answer.texts():
                    parts.append(text)
        except TimeoutError:
            subject, complete, _ = "".join(parts).lstrip().partition("\n")
            parts = [subject] if complete and subject.strip() else []  # a whole subject line
            answer.problem = "deadline; " + ("its subject line" if parts else "summary line")
        except Exception as exc:
            error = failure(exc)
            answer.problem = error.code
            answer.record(error)
            unary.error(job.flow, error.code, error.message)
            return
        message = "".join(parts).strip().strip("`").strip()
        if not message:
            message = editor_prompts.summary_line(request.diffs)
            answer.problem = answer.problem or "empty answer; summary line"
        answer.started = answer.started or started
        answer.record()
        unary.answer(job.flow, fpb.WriteGitCommitMessageResponse(commit_message=message))


async def _guarded(frames: AsyncIterator[bytes]) -> AsyncGenerator[bytes]:
    """A stream that ends with an error envelope, whatever fails before the model's answer."""
    try:
        async for chunk in frames:
            yield chunk
    except Exception as exc:
        log.exception("an editor feature's stream failed (a bug of cursor-byok)")
        yield end_frame(failure(exc))


def _is_json(flow: http.HTTPFlow) -> bool:
    return "json" in flow.request.headers.get("content-type", "")


def _cmd_k_response(**kwargs) -> fpb.StreamCmdKResponseContextWrapped:
    return fpb.StreamCmdKResponseContextWrapped(real_response=fpb.StreamCmdKResponse(**kwargs))


async def _cmd_k_chat(
    texts: AsyncIterator[str],
) -> AsyncGenerator[fpb.StreamCmdKResponseContextWrapped]:
    async for text in texts:
        yield _cmd_k_response(chat=fpb.StreamCmdKResponse.Chat(text=text))


def _cmd_k_edit(prompt: editor_prompts.Prompt):
    """The edit's messages: edit_start over the selection, its text, edit_end."""
    R = fpb.StreamCmdKResponse
    path = {"file_path": prompt.path} if prompt.path else {}

    async def messages(
        texts: AsyncIterator[str],
    ) -> AsyncGenerator[fpb.StreamCmdKResponseContextWrapped]:
        yield _cmd_k_response(
            edit_start=R.EditStart(
                start_line_number=prompt.start_line,
                edit_id=EDIT_ID,
                max_end_line_number_exclusive=prompt.end_line,
                **path,
            )
        )
        fences = FenceStripper()
        last = "\n"
        async for text in texts:
            shown = fences.feed(text)
            if shown:
                last = shown
                yield _cmd_k_response(edit_stream=R.EditStream(text=shown, edit_id=EDIT_ID, **path))
        rest = fences.finish()
        if rest or not last.endswith("\n"):  # whole lines replace whole lines [inf]
            rest = rest if rest.endswith("\n") else rest + "\n"
            yield _cmd_k_response(edit_stream=R.EditStream(text=rest, edit_id=EDIT_ID, **path))
        yield _cmd_k_response(
            edit_end=R.EditEnd(end_line_number_exclusive=prompt.end_line, edit_id=EDIT_ID, **path)
        )

    return messages


def _continuation(current: str):
    """Autocomplete's messages: the line after `current` as `text` deltas, then `done_stream`
    as soon as the line ends; the rest of the (short) answer is read, not shown, for its token
    counts (most providers send them last)."""
    R = fpb.StreamTerminalAutocompleteResponse

    async def messages(
        texts: AsyncIterator[str],
    ) -> AsyncGenerator[fpb.StreamTerminalAutocompleteResponse]:
        line = Continuation(current)
        async for text in texts:
            shown = line.feed(text)
            if shown:
                yield R(text=shown)
            if line.done:
                break
        rest = line.finish()
        if rest:
            yield R(text=rest)
        yield R(done_stream=True)
        async for _ in texts:  # bounded by AUTOCOMPLETE_TOKENS
            pass

    return messages


def _terminal_response(**kwargs) -> fpb.StreamTerminalCmdKResponseContextWrapped:
    return fpb.StreamTerminalCmdKResponseContextWrapped(
        real_response=fpb.StreamTerminalCmdKResponse(**kwargs)
    )


async def _terminal_chat(texts: AsyncIterator[str]):
    async for text in texts:
        yield _terminal_response(chat=fpb.StreamTerminalCmdKResponse.Chat(text=text))


async def _terminal_command(texts: AsyncIterator[str]):
    fences = FenceStripper()
    first = True
    async for text in texts:
        shown = fences.feed(text)
        if first and shown:
            shown = shown.lstrip().removeprefix("$ ")
        if shown:
            first = False
            yield _terminal_response(
                terminal_command=fpb.StreamTerminalCmdKResponse.TerminalCommand(
                    partial_command=shown
                )
            )
    rest = fences.finish().rstrip("\n")
    if rest:
        yield _terminal_response(
            terminal_command=fpb.StreamTerminalCmdKResponse.TerminalCommand(partial_command=rest)
        )
