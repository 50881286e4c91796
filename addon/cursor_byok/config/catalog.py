"""The model catalog: Cursor's picker entries for the configured models (protocol.md §12).

Cursor only offers, and only sends Agent runs for, models it finds in its catalogs. This module
builds catalog entries for the configured models and either merges them into Cursor's own answers
(the default: the user stays logged in and keeps Cursor's models) or answers the catalog calls
locally. Everything here is sans-IO and free of mitmproxy (the agent imports it);
`cursor_byok.proxy.model_picker.ModelPicker` is the mitmproxy addon that uses it.

Intercepted, by method name on any service prefix and any Cursor host:
`AvailableModels` (the IDE picker), `GetUsableModels` (aiserver and agent services) and
`GetDefaultModelForCli`. `CppService/AvailableModels` (Tab models, also used by the `cursor-agent`
CLI picker) is not in our schema, so it passes through untouched.
"""

from __future__ import annotations

import hashlib
import json
import logging
import struct
from collections.abc import Callable

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from google.protobuf.message import Message

from cursor_byok.config import Config
from cursor_byok.config import ModelConfig
from cursor_byok.errors import ByokError
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.wire import connect

log = logging.getLogger(__name__)

AVAILABLE_MODELS = "AvailableModels"
USABLE_MODELS = "GetUsableModels"
DEFAULT_MODEL_FOR_CLI = "GetDefaultModelForCli"
PICKER_METHODS = (AVAILABLE_MODELS, USABLE_MODELS, DEFAULT_MODEL_FOR_CLI)
# Cursor's REST model list (`GET /v1/models`, JSON `{"items": [{"id": ...}]}`): the SDK checks a
# model name against it before every agent is made (protocol.md §13.1).
REST_MODELS_PATH = "/v1/models"
MODES = ("merge", "replace", "off")
METADATA_KEY = "cursor_byok_models"
ID_PREFIX = "byok-"
INT32_MAX = 2**31 - 1
# After a failed connection to a Cursor host, answer picker calls locally for this long before
# trying upstream again (any successful connection to that host ends it sooner).
OFFLINE_RETRY_SECONDS = 30.0
# Last good upstream bodies kept for offline answers (keyed by path and request body).
CACHE_ENTRIES = 32


# --- ids and lookup -----------------------------------------------------------------------------


def model_id(model: ModelConfig) -> str:
    """The opaque id Cursor stores and sends back; stable while provider, model and name are."""
    key = f"{model.provider}\0{model.model}\0{model.name}".encode()
    return ID_PREFIX + hashlib.sha256(key).hexdigest()[:12]


def find_model(config: Config, requested: str) -> ModelConfig | None:
    """The configured model for what Cursor sent: stable id, display name or upstream id.

    An empty string means the default model (as `Config.model`). A variant string
    `"<stable id>:<suffix>"` resolves to that id; the suffix (e.g. an effort) is the caller's.
    Exact matches win, so upstream ids containing ':' (e.g. Ollama's `llama3:8b`) still work.
    """
    if not requested:
        return config.model(None)
    for model in config.models:
        if model_id(model) == requested:
            return model
    for model in config.models:
        if requested in (model.name, model.model):
            return model
    base, sep, _ = requested.partition(":")
    if sep:
        for model in config.models:
            if model_id(model) == base:
                return model
    return None


def classify(path: str) -> str | None:
    """Which picker call a request path is, by method name on any service prefix."""
    path = path.split("?", 1)[0].rstrip("/")
    service, sep, method = path.rpartition("/")
    if not sep or method not in PICKER_METHODS:
        return None
    # CppService/AvailableModels lists Tab models in a message our schema does not have; merging
    # AvailableModelsResponse entries into it would corrupt it, so it passes through untouched.
    if service.endswith("CppService"):
        return None
    return method


def is_rest_models(method: str, path: str) -> bool:
    """Whether a request is the REST model list the SDK validates model names with."""
    return method == "GET" and path.split("?", 1)[0].rstrip("/") == REST_MODELS_PATH


def rest_model_items(config: Config) -> list[dict[str, object]]:
    """The configured models as REST list entries: the id is the name Cursor shows, which is
    what an SDK user passes as `model` and what the run request then carries."""
    return [
        {
            "id": model.name,
            "displayName": model.name,
            "description": f"cursor-byok: {model.provider} {model.model}",
        }
        for model in config.models
    ]


def rest_models_body(config: Config, upstream: bytes | None = None) -> bytes:
    """`GET /v1/models` answered: Cursor's list (`upstream`, when it is one) with the configured
    models added, or the configured models alone."""
    items: list[object] = []
    if upstream is not None:
        try:
            data = json.loads(upstream)
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("items"), list):
            items = list(data["items"])
    known = {i.get("id") for i in items if isinstance(i, dict)}
    items += [i for i in rest_model_items(config) if i["id"] not in known]
    return json.dumps({"items": items}, separators=(",", ":")).encode()


# --- builders -----------------------------------------------------------------------------------


def _context_label(tokens: int) -> str:
    return f"{round(tokens / 1000)}k" if tokens >= 1000 else str(tokens)


def available_model(
    model: ModelConfig, provider_kind: str
) -> aipb.AvailableModelsResponse.AvailableModel:
    """One picker entry (protocol.md §12.1, item 3); `supports_agent` puts it in the Agent picker.

    It carries the flags Cursor's own entries carry: a picker in Max mode lists only entries with
    `supports_max_mode`, one in normal mode only those with `supports_non_max_mode`, so an entry
    without them disappears when the user flips the switch. Both hold for us (the context window
    is the configured one either way); Cmd-K is not served here, so `supports_cmd_k` is false.
    """
    ident = model_id(model)
    context = min(model.context_window, INT32_MAX)
    tooltip = aipb.AvailableModelsResponse.TooltipData(
        primary_text=f"{model.model} via {model.provider} ({provider_kind}), cursor-byok",
        secondary_text=f"{_context_label(model.context_window)} context window",
    )
    return aipb.AvailableModelsResponse.AvailableModel(
        name=ident,
        server_model_name=ident,
        client_display_name=model.name,
        inputbox_short_model_name=model.name,
        default_on=True,
        supports_agent=True,
        is_user_added=True,
        supports_thinking=model.supports_thinking,
        supports_images=model.supports_images,
        supports_plan_mode=True,
        supports_max_mode=True,
        supports_non_max_mode=True,
        supports_cmd_k=False,
        is_hidden=False,
        context_token_limit=context,
        context_token_limit_for_max_mode=context,
        tooltip_data=tooltip,
        tooltip_data_for_max_mode=tooltip,
    )


def model_details(model: ModelConfig) -> pb.ModelDetails:
    """agent.v1 ModelDetails (protocol.md §12.1, item 4). The credentials oneof is never set."""
    ident = model_id(model)
    details = pb.ModelDetails(
        model_id=ident,
        display_model_id=ident,
        display_name=model.name,
        display_name_short=model.name,
    )
    if model.supports_thinking:
        details.thinking_details.SetInParent()
    return details


def _provider_kind(config: Config, model: ModelConfig) -> str:
    provider = config.providers.get(model.provider)
    return provider.kind if provider else "unknown"


def available_models_response(config: Config) -> aipb.AvailableModelsResponse:
    """Our whole AvailableModels answer (replace mode)."""
    return aipb.AvailableModelsResponse(
        model_names=[model_id(m) for m in config.models],
        models=[available_model(m, _provider_kind(config, m)) for m in config.models],
    )


def usable_models_response(config: Config) -> pb.GetUsableModelsResponse:
    """Our GetUsableModels answer; aiserver's response has the same wire layout."""
    return pb.GetUsableModelsResponse(models=[model_details(m) for m in config.models])


def default_model_for_cli_response(config: Config) -> pb.GetDefaultModelForCliResponse:
    default = config.model(None) or config.models[0]
    return pb.GetDefaultModelForCliResponse(model=model_details(default))


def local_answer(method: str, config: Config) -> Message:
    """The complete response message for a picker call answered without upstream."""
    if method == AVAILABLE_MODELS:
        return available_models_response(config)
    if method == USABLE_MODELS:
        return usable_models_response(config)
    if method == DEFAULT_MODEL_FOR_CLI:
        return default_model_for_cli_response(config)
    raise ValueError(f"not a model-picker method: {method!r}")


# --- merging into upstream bodies ---------------------------------------------------------------


def merge_available_models(body: bytes, config: Config) -> bytes:
    """Append our entries to an upstream AvailableModelsResponse, byte-preserving the rest.

    Concatenating serialised repeated-field entries is a protobuf merge, so unknown upstream
    fields survive untouched. Entries whose name upstream already lists are skipped.
    """
    upstream = aipb.AvailableModelsResponse.FromString(body)  # validates; raises DecodeError
    names = set(upstream.model_names)
    listed = {m.name for m in upstream.models}
    extra = aipb.AvailableModelsResponse()
    for model in config.models:
        ident = model_id(model)
        if ident not in names:
            extra.model_names.append(ident)
        if ident not in listed:
            extra.models.append(available_model(model, _provider_kind(config, model)))
    return body + extra.SerializeToString()


def merge_usable_models(body: bytes, config: Config) -> bytes:
    """Append our ModelDetails to an upstream GetUsableModelsResponse (either service)."""
    upstream = pb.GetUsableModelsResponse.FromString(body)
    present = {m.model_id for m in upstream.models}
    extra = pb.GetUsableModelsResponse(
        models=[model_details(m) for m in config.models if model_id(m) not in present]
    )
    return body + extra.SerializeToString()


def merge_default_model_for_cli(body: bytes, config: Config) -> bytes:
    """Replace upstream's default model by ours (protocol.md §12.1, item 5); other fields,
    known or not, stay.

    `model` is a singular message, so appending would merge field by field into upstream's
    model instead of replacing it; we re-serialise instead (unknown fields are kept).
    """
    upstream = pb.GetDefaultModelForCliResponse.FromString(body)
    upstream.model.CopyFrom(default_model_for_cli_response(config).model)
    return upstream.SerializeToString()


_MERGERS: dict[str, Callable[[bytes, Config], bytes]] = {
    AVAILABLE_MODELS: merge_available_models,
    USABLE_MODELS: merge_usable_models,
    DEFAULT_MODEL_FOR_CLI: merge_default_model_for_cli,
}


def merge(method: str, body: bytes, config: Config) -> bytes:
    """Our models merged into a plain protobuf response body of `method`."""
    return _MERGERS[method](body, config)


class UnsupportedBody(ByokError):
    """A response body we do not rewrite (JSON, unknown content type, bad framing)."""


def wire_format(content_type: str | None) -> str:
    """`proto`, `connect+proto`, `json` or `other`, from a Connect content type."""
    ctype = (content_type or "").split(";", 1)[0].strip().lower()
    if ctype in ("application/proto", "application/x-protobuf", "application/protobuf"):
        return "proto"
    if ctype == "application/connect+proto":
        return "connect+proto"
    if ctype in ("application/json", "application/connect+json"):
        return "json"
    return "other"


def merge_body(
    method: str,
    body: bytes,
    config: Config,
    *,
    content_type: str | None,
    envelope_encoding: str | None = None,
) -> bytes:
    """Merge into a response body as sent on the wire; raise `UnsupportedBody` to pass through.

    `application/proto` is a bare message; `application/connect+proto` is one data envelope
    plus the end-stream envelope, each possibly compressed with `envelope_encoding`.
    """
    fmt = wire_format(content_type)
    try:
        if fmt == "proto":
            return merge(method, body, config)
        if fmt == "connect+proto":
            return _merge_enveloped(method, body, config, envelope_encoding)
    except (DecodeError, connect.ConnectError) as exc:
        raise UnsupportedBody(f"cannot decode {content_type} body: {exc}") from None
    raise UnsupportedBody(f"content type {content_type or '(none)'} is not rewritten")


def _merge_enveloped(method: str, body: bytes, config: Config, encoding: str | None) -> bytes:
    frames = connect.decode_envelopes(body, encoding=encoding)
    if len(frames) != 2 or frames[0].is_end_stream or not frames[1].is_end_stream:
        raise connect.ProtocolViolation("expected one data envelope and an end-stream envelope")
    (length,) = struct.unpack_from(">I", body, 1)
    end_stream_raw = body[connect.HEADER_SIZE + length :]  # kept byte for byte
    data = frames[0]
    merged = merge(method, data.payload, config)
    return connect.encode_frame(merged, encoding=encoding if data.was_compressed else None) + (
        end_stream_raw
    )


def encode_answer(message: Message, fmt: str) -> tuple[bytes, str]:
    """Body and content type of a local answer in the format the client asked in."""
    if fmt == "connect+proto":
        body = connect.encode_frame(message.SerializeToString()) + connect.encode_end_stream()
        return body, "application/connect+proto"
    if fmt == "json":
        data = json_format.MessageToDict(message)
        return json.dumps(data, separators=(",", ":")).encode(), "application/json"
    return message.SerializeToString(), "application/proto"
