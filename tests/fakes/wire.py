"""Rendering scripted steps in the three wire formats, as a real provider would send them."""

from __future__ import annotations

import json
from typing import Any

from .script import Format
from .script import Step


def _sse(obj: Any, event: str | None = None) -> bytes:
    data = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data}\n\n".encode()


def _pieces(text: str, size: int = 4) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or []


class Renderer:
    """Renders steps in one wire format. `n` numbers responses (ids, signatures)."""

    def __init__(self, fmt: Format, n: int, model: str) -> None:
        self.fmt, self.n, self.model = fmt, n, model
        self.signature = f"sig-fake-{n}"
        self.encrypted = f"enc-fake-{n}"

    # -- bodies

    def reply(self, step: Step, *, terminate: bool = True) -> list[bytes]:
        return getattr(self, f"_{self.fmt}")(step, terminate)

    def error_body(self, step: Step) -> bytes:
        etype, code = _error_names(step.status, self.fmt)
        if self.fmt == "anthropic":
            return json.dumps(
                {"type": "error", "error": {"type": step.code or etype, "message": step.message}}
            ).encode()
        return json.dumps(
            {
                "error": {
                    "message": step.message,
                    "type": etype,
                    "param": None,
                    "code": step.code or code,
                }
            }
        ).encode()

    def stream_error(self, step: Step) -> list[bytes]:
        chunks = self.reply(Step("reply", text=step.text), terminate=False)
        if self.fmt == "anthropic":
            err = {
                "type": "error",
                "error": {"type": step.code or "overloaded_error", "message": step.message},
            }
            return [*chunks, _sse(err, "error")]
        if self.fmt == "responses":
            return [
                *chunks,
                _sse(
                    {
                        "type": "error",
                        "code": step.code or "server_error",
                        "message": step.message,
                        "param": None,
                    },
                    "error",
                ),
            ]
        return [
            *chunks,
            _sse({"error": {"message": step.message, "type": "server_error", "code": step.code}}),
        ]

    # -- formats

    def _chat(self, step: Step, terminate: bool) -> list[bytes]:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return _sse(
                {
                    "id": f"chatcmpl-fake{self.n}",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": self.model,
                    "choices": [choice],
                }
            )

        out = [chunk({"role": "assistant", "content": ""})]
        out += [chunk({"reasoning_content": p}) for p in _pieces(step.reasoning or "")]
        out += [chunk({"content": p}) for p in _pieces(step.text)]
        for i, (call_id, name, args) in enumerate(step.tool_calls):
            first = {
                "index": i,
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": ""},
            }
            out.append(chunk({"tool_calls": [first]}))
            for p in _pieces(json.dumps(args), 7):
                out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]}))
        if not terminate:
            return out
        out.append(chunk({}, "tool_calls" if step.tool_calls else "stop"))
        inp, outp, cached = step.usage
        usage = {
            "prompt_tokens": inp,
            "completion_tokens": outp,
            "total_tokens": inp + outp,
            "prompt_tokens_details": {"cached_tokens": cached},
        }
        out.append(
            _sse(
                {
                    "id": f"chatcmpl-fake{self.n}",
                    "object": "chat.completion.chunk",
                    "choices": [],
                    "usage": usage,
                }
            )
        )
        out.append(b"data: [DONE]\n\n")
        return out

    def _anthropic(self, step: Step, terminate: bool) -> list[bytes]:
        def ev(name: str, **fields: Any) -> bytes:
            return _sse({"type": name, **fields}, name)

        inp, outp, cached = step.usage
        message = {
            "id": f"msg_fake{self.n}",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": None,
            "usage": {
                "input_tokens": inp - cached,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": cached,
                "output_tokens": 1,
            },
        }
        out = [ev("message_start", message=message), ev("ping")]
        index = 0
        if step.reasoning:
            out.append(
                ev(
                    "content_block_start",
                    index=index,
                    content_block={"type": "thinking", "thinking": "", "signature": ""},
                )
            )
            out += [
                ev(
                    "content_block_delta",
                    index=index,
                    delta={"type": "thinking_delta", "thinking": p},
                )
                for p in _pieces(step.reasoning)
            ]
            out.append(
                ev(
                    "content_block_delta",
                    index=index,
                    delta={"type": "signature_delta", "signature": self.signature},
                )
            )
            out.append(ev("content_block_stop", index=index))
            index += 1
        if step.text:
            out.append(
                ev("content_block_start", index=index, content_block={"type": "text", "text": ""})
            )
            out += [
                ev("content_block_delta", index=index, delta={"type": "text_delta", "text": p})
                for p in _pieces(step.text)
            ]
            out.append(ev("content_block_stop", index=index))
            index += 1
        for call_id, name, args in step.tool_calls:
            out.append(
                ev(
                    "content_block_start",
                    index=index,
                    content_block={"type": "tool_use", "id": call_id, "name": name, "input": {}},
                )
            )
            out += [
                ev(
                    "content_block_delta",
                    index=index,
                    delta={"type": "input_json_delta", "partial_json": p},
                )
                for p in _pieces(json.dumps(args), 7)
            ]
            out.append(ev("content_block_stop", index=index))
            index += 1
        if not terminate:
            return out
        reason = "tool_use" if step.tool_calls else "end_turn"
        out.append(
            ev(
                "message_delta",
                delta={"stop_reason": reason, "stop_sequence": None},
                usage={"output_tokens": outp},
            )
        )
        out.append(ev("message_stop"))
        return out

    def _responses(self, step: Step, terminate: bool) -> list[bytes]:
        def ev(name: str, **fields: Any) -> bytes:
            return _sse({"type": name, **fields}, name)

        rid = f"resp_fake{self.n}"
        out = [ev("response.created", response={"id": rid, "status": "in_progress", "output": []})]
        items: list[dict[str, Any]] = []
        if step.reasoning:
            idx, item_id = len(items), f"rs_fake{self.n}"
            out.append(
                ev(
                    "response.output_item.added",
                    output_index=idx,
                    item={"type": "reasoning", "id": item_id, "summary": []},
                )
            )
            out.append(
                ev(
                    "response.reasoning_summary_part.added",
                    item_id=item_id,
                    output_index=idx,
                    summary_index=0,
                    part={"type": "summary_text", "text": ""},
                )
            )
            out += [
                ev(
                    "response.reasoning_summary_text.delta",
                    item_id=item_id,
                    output_index=idx,
                    summary_index=0,
                    delta=p,
                )
                for p in _pieces(step.reasoning)
            ]
            item = {
                "type": "reasoning",
                "id": item_id,
                "summary": [{"type": "summary_text", "text": step.reasoning}],
                "encrypted_content": self.encrypted,
            }
            out.append(ev("response.output_item.done", output_index=idx, item=item))
            items.append(item)
        if step.text:
            idx, item_id = len(items), f"msg_fake{self.n}"
            out.append(
                ev(
                    "response.output_item.added",
                    output_index=idx,
                    item={
                        "type": "message",
                        "id": item_id,
                        "role": "assistant",
                        "status": "in_progress",
                        "content": [],
                    },
                )
            )
            out.append(
                ev(
                    "response.content_part.added",
                    item_id=item_id,
                    output_index=idx,
                    content_index=0,
                    part={"type": "output_text", "text": ""},
                )
            )
            out += [
                ev(
                    "response.output_text.delta",
                    item_id=item_id,
                    output_index=idx,
                    content_index=0,
                    delta=p,
                )
                for p in _pieces(step.text)
            ]
            item = {
                "type": "message",
                "id": item_id,
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": step.text, "annotations": []}],
            }
            out.append(ev("response.output_item.done", output_index=idx, item=item))
            items.append(item)
        for i, (call_id, name, args) in enumerate(step.tool_calls):
            idx, item_id, arguments = len(items), f"fc_fake{self.n}_{i}", json.dumps(args)
            out.append(
                ev(
                    "response.output_item.added",
                    output_index=idx,
                    item={
                        "type": "function_call",
                        "id": item_id,
                        "call_id": call_id,
                        "name": name,
                        "arguments": "",
                        "status": "in_progress",
                    },
                )
            )
            out += [
                ev(
                    "response.function_call_arguments.delta",
                    item_id=item_id,
                    output_index=idx,
                    delta=p,
                )
                for p in _pieces(arguments, 7)
            ]
            out.append(
                ev(
                    "response.function_call_arguments.done",
                    item_id=item_id,
                    output_index=idx,
                    arguments=arguments,
                )
            )
            item = {
                "type": "function_call",
                "id": item_id,
                "call_id": call_id,
                "name": name,
                "arguments": arguments,
                "status": "completed",
            }
            out.append(ev("response.output_item.done", output_index=idx, item=item))
            items.append(item)
        if not terminate:
            return out
        inp, outp, cached = step.usage
        usage = {
            "input_tokens": inp,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": outp,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": inp + outp,
        }
        out.append(
            ev(
                "response.completed",
                response={"id": rid, "status": "completed", "output": items, "usage": usage},
            )
        )
        return out


def _error_names(status: int, fmt: Format) -> tuple[str, str | None]:
    """(error type, error code) a real provider would use for this status."""
    if fmt == "anthropic":
        names = {
            400: "invalid_request_error",
            401: "authentication_error",
            403: "permission_error",
            404: "not_found_error",
            413: "request_too_large",
            429: "rate_limit_error",
            529: "overloaded_error",
        }
        return names.get(status, "api_error"), None
    if status == 429:
        return "requests", "rate_limit_exceeded"
    if status == 401:
        return "invalid_request_error", "invalid_api_key"
    if status >= 500:
        return "server_error", None
    return "invalid_request_error", None
