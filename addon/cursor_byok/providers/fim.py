"""Fill-in-the-middle completions (Tab's provider kinds), providers.md "FIM".

Two wire formats, one decoder:

- `openai-fim`: `POST {base}/completions` with `prompt` + `suffix` (OpenAI's legacy completions,
  as Ollama, vLLM, llama.cpp's server and DeepSeek's beta endpoint serve it); stream chunks carry
  `choices[0].text`.
- `mistral-fim`: `POST {base}/fim/completions` (Mistral's Codestral); the chunks look like Chat
  Completions' (`choices[0].delta.content`).

The request comes as a `ModelRequest` whose `params` hold `prompt`, `suffix` and `stop`
(`FIM_PARAMS`); `max_output_tokens` becomes `max_tokens` (Tab asks for a few lines, not an essay).
"""

from __future__ import annotations

from typing import Any

from .adapter import SseProvider
from .adapter import as_int
from .adapter import as_object
from .adapter import parse_json_event
from .base import Finish
from .base import ModelRequest
from .base import ProviderEvent
from .base import TextDelta
from .base import Usage
from .provider_error import ProviderError
from .provider_error import error_from_payload
from .sse import SseEvent

FIM_KINDS = ("openai-fim", "mistral-fim")
FIM_PARAMS = ("prompt", "suffix", "stop")
_PATHS = {"openai-fim": "/completions", "mistral-fim": "/fim/completions"}
_FINISH = {"stop": "stop", "eos": "stop", "length": "length", "max_tokens": "length"}


def build_body(request: ModelRequest, extra: dict[str, Any]) -> dict[str, Any]:
    """The JSON body of a FIM call: prompt, suffix, stop, a small max_tokens, streamed."""
    params = dict(request.params)
    prompt = params.pop("prompt", None)
    if prompt is None:  # a chat-shaped request (the doctor's ping): its last user text
        prompt = _last_text(request.messages)
    body: dict[str, Any] = {
        "model": request.model,
        "prompt": prompt,
        "suffix": params.pop("suffix", ""),
        "stream": True,
    }
    stop = params.pop("stop", None)
    if stop:
        body["stop"] = list(stop)
    if request.max_output_tokens:
        body["max_tokens"] = request.max_output_tokens
    body.update(extra)
    body.update(params)
    return body


def _last_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [p.get("text", "") for p in content if isinstance(p, dict)]
            return "".join(t for t in texts if isinstance(t, str))
    return ""


class FimStreamState:
    """Sans-IO decoder of a FIM stream: text from `choices[0].text` (completions) or
    `choices[0].delta.content` (Mistral), usage, the finish reason, `[DONE]`."""

    def __init__(self, *, provider: str) -> None:
        self.provider = provider
        self.done = False
        self.text: list[str] = []
        self.reason: str | None = None

    def on_event(self, event: SseEvent) -> list[ProviderEvent]:
        data = event.data.strip()
        if self.done or not data:
            return []
        if data == "[DONE]":
            return self._finish()
        payload = parse_json_event(event, self.provider)
        if "error" in payload or payload.get("object") == "error":
            raise error_from_payload(payload, provider=self.provider)
        out: list[ProviderEvent] = []
        choices = payload.get("choices")
        choice = as_object(choices[0]) if isinstance(choices, list) and choices else {}
        text = choice.get("text")
        if not isinstance(text, str):
            text = as_object(choice.get("delta")).get("content")
        if isinstance(text, str) and text:
            self.text.append(text)
            out.append(TextDelta(text))
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            self.reason = _FINISH.get(reason, reason)
        usage = as_object(payload.get("usage"))
        if usage:
            out.append(
                Usage(
                    input_tokens=as_int(usage.get("prompt_tokens")),
                    output_tokens=as_int(usage.get("completion_tokens")),
                )
            )
        return out

    def on_eof(self) -> list[ProviderEvent]:
        if self.reason is None:
            raise ProviderError(
                "network",
                "the FIM stream ended before [DONE] or a finish reason",
                provider=self.provider,
            )
        return self._finish()

    def _finish(self) -> list[ProviderEvent]:
        self.done = True
        message = {"role": "assistant", "content": "".join(self.text)}
        return [Finish(self.reason or "stop", message)]


class FimProvider(SseProvider):
    """`openai-fim` or `mistral-fim`: the kind picks the path (module doc)."""

    kind = "openai-fim"

    def __init__(self, settings, *, transport: object | None = None) -> None:
        self.kind = settings.kind if settings.kind in FIM_KINDS else self.kind
        super().__init__(settings, transport=transport)

    def build(self, request: ModelRequest) -> tuple[str, dict[str, str], dict[str, Any]]:
        headers = (
            {"authorization": f"Bearer {self.settings.api_key}"} if self.settings.api_key else {}
        )
        headers.update(self.settings.extra_headers)
        url = self.settings.base_url.rstrip("/") + _PATHS[self.kind]
        return url, headers, build_body(request, self.settings.extra_body)

    def new_state(self, request: ModelRequest) -> FimStreamState:
        return FimStreamState(provider=self.label)
