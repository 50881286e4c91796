"""GenerateImage through an image endpoint the user configured (tools.md §4.20).

Cursor's client only approves (`generate_image_request_query`); nothing on the client draws.
With an `[image_generation]` endpoint (OpenAI-compatible `POST /images/generations`) the image
is generated here after approval and saved into the workspace with a `write_args` exec
(`file_bytes`), so it lands where the user's files are. Without an endpoint the tool is not
offered.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from typing import Any
from typing import ClassVar

from cursor_byok import outbound
from cursor_byok.config import ImageGenerationConfig
from cursor_byok.errors import ByokError
from cursor_byok.pb import agent_v1_pb2 as pb

from .base import Tool
from .base import ToolContext
from .base import ToolError
from .base import ToolOutcome
from .base import arg_opt_str
from .base import arg_str
from .base import loose_str
from .base import no_result_text
from .base import resolve_path
from .base import result_of

log = logging.getLogger(__name__)

MAX_CARD_IMAGE_BYTES = 2_000_000  # larger images are not inlined on the card
MAX_IMAGE_BYTES = 64 * 1024 * 1024  # a generated image, fetched from its URL
MAX_ANSWER_BYTES = 4 * MAX_IMAGE_BYTES // 3 + 64 * 1024  # the JSON answer: base64 of one image
_SIZES = {"1:1": "1024x1024", "16:9": "1536x1024", "3:2": "1536x1024", "9:16": "1024x1536",
          "2:3": "1024x1536"}  # fmt: skip


def default_path(description: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", description.lower()).strip("-")[:40] or "image"
    return f"generated-images/{slug}.png"


class GenerateImageTool(Tool):
    name = "GenerateImage"
    identifier = "GENERATE_IMAGE"
    read_only = False
    description = (
        "Generate an image from a text description and save it as a PNG in the workspace "
        "(`file_path`, default generated-images/<name>.png). Use it for assets the user asks "
        "for (icons, illustrations, mock-ups), not for diagrams you can write as code."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": "What the image shows, in detail."},
            "file_path": {"type": "string", "description": "Where to save the PNG."},
            "aspect_ratio": {"type": "string", "description": "1:1 (default), 16:9, 9:16, …"},
        },
        "required": ["description"],
    }

    def __init__(self, config: ImageGenerationConfig) -> None:
        self.config = config

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        ui = pb.GenerateImageArgs(description=loose_str(args, "description"))
        for key in ("file_path", "aspect_ratio"):
            value = loose_str(args, key)
            if value:
                setattr(ui, key, value)
        return pb.ToolCall(generate_image_tool_call=pb.GenerateImageToolCall(args=ui))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.generate_image_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        description = arg_str(args, "description", required=True)
        path = resolve_path(ctx, arg_opt_str(args, "file_path") or default_path(description))
        if not path.lower().endswith(".png"):
            path += ".png"
        request = pb.GenerateImageArgs(description=description, file_path=path)
        ratio = arg_opt_str(args, "aspect_ratio")
        if ratio:
            request.aspect_ratio = ratio
        answer = await ctx.interact(
            pb.InteractionQuery(
                generate_image_request_query=pb.GenerateImageRequestQuery(
                    args=request, tool_call_id=ctx.call_id
                )
            )
        )
        call = pb.ToolCall(generate_image_tool_call=pb.GenerateImageToolCall(args=request))
        response = answer.generate_image_request_response
        kind = (
            response.WhichOneof("result")
            if answer.HasField("generate_image_request_response")
            else None
        )
        if kind == "rejected":
            reason = response.rejected.reason or "no reason given"
            call.generate_image_tool_call.result.error.error = f"rejected: {reason}"
            return ToolOutcome(f"The user declined the image generation: {reason}", True, call)
        if kind != "approved":
            raise ToolError("The client did not approve the image generation.")
        prompt = response.approved.description or description  # the user may have edited it
        try:
            data = await self._generate(prompt, ratio)
        except (outbound.ClientError, OSError, TimeoutError, ByokError) as exc:
            message = f"Image generation failed: {outbound.describe(exc)}"
            log.info("image generation failed: %s", message)
            call.generate_image_tool_call.result.error.error = message
            return ToolOutcome(message, True, call)
        except (ValueError, KeyError, IndexError, TypeError) as exc:  # not the JSON we read
            message = f"Image generation failed: {exc}"
            log.info("image generation failed: %s", exc)
            call.generate_image_tool_call.result.error.error = message
            return ToolOutcome(message, True, call)
        write = pb.WriteArgs(path=path, file_bytes=data, tool_call_id=ctx.call_id)
        reply = await ctx.exec(pb.ExecServerMessage(write_args=write))
        result = result_of(reply, "write_result")
        if result is None or result.WhichOneof("result") != "success":
            detail = (
                no_result_text(reply, f"write {path}")
                if result is None
                else (result.WhichOneof("result") or "no result")
            )
            message = f"The image was generated but could not be saved to {path}: {detail}"
            call.generate_image_tool_call.result.error.error = message
            return ToolOutcome(message, True, call)
        success = call.generate_image_tool_call.result.success
        success.file_path = path
        if len(data) <= MAX_CARD_IMAGE_BYTES:
            success.image_data = base64.b64encode(data).decode()
        return ToolOutcome(f"Generated the image and saved it to {path}.", False, call)

    async def _generate(self, prompt: str, ratio: str | None) -> bytes:
        config = self.config
        headers = {"content-type": "application/json", **config.headers}
        key = config.api_key()
        if key:
            headers["authorization"] = f"Bearer {key}"
        body = {
            "model": config.model,
            "prompt": prompt,
            "n": 1,
            "size": _SIZES.get((ratio or "").strip(), config.size),
        }
        # A session per image: rare calls, nothing to keep open between them.
        async with outbound.new_session(
            connect_timeout=config.timeout,
            read_timeout=config.timeout,  # as before: per read, not for the whole call
        ) as session:
            async with session.post(
                config.base_url + "/images/generations",
                data=json.dumps(body).encode(),
                headers=headers,
                allow_redirects=False,
            ) as response:
                if response.status >= 300:  # a redirect too: not followed
                    raise ValueError(f"the image endpoint answered HTTP {response.status}")
                answer = json.loads(await outbound.read_body(response, MAX_ANSWER_BYTES))
            item = answer["data"][0]
            if item.get("b64_json"):
                return base64.b64decode(item["b64_json"])
            if item.get("url"):
                async with session.get(item["url"], allow_redirects=False) as image:
                    if image.status >= 300:
                        raise ValueError(f"fetching the image answered HTTP {image.status}")
                    return await outbound.read_body(image, MAX_IMAGE_BYTES)
        raise ValueError("the image endpoint returned no image")
