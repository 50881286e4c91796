"""Images the user attached, for a model that takes them or one that does not.

Users of every BYOK tool complain that an image is dropped without a word when the model has no
image input. Here it never is: a model with `supports_images = true` gets the image; for one
without, a configured `vision_model` describes each image and the description goes to the model
in its place (Cursor shows a note saying so); with no vision model, or when describing fails,
the model is told an image was left out and Cursor shows a note that says why and what to set.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from dataclasses import dataclass

from cursor_byok.agent.completion import complete
from cursor_byok.agent.turn import Turn
from cursor_byok.agent.turn import TurnError
from cursor_byok.config import Config
from cursor_byok.config import ModelConfig
from cursor_byok.config.routes import routed
from cursor_byok.conversation.history_format import ImagePart
from cursor_byok.conversation.history_format import UserPart
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.providers import ModelRequest
from cursor_byok.providers import Provider
from cursor_byok.providers.provider_error import ProviderError

log = logging.getLogger(__name__)

DESCRIBE_SYSTEM = (
    "You describe images for a coding assistant that cannot see them. Describe what the image "
    "shows so the assistant can act on it: transcribe every piece of visible text, code, error "
    "message, label and number exactly; describe layout, UI elements, diagrams and charts with "
    "their values. No preamble, no opinions."
)
DESCRIBE_MAX_TOKENS = 1500


@dataclass(frozen=True, slots=True)
class Attached:
    """One attached image: its bytes (None when they could not be read) and why not."""

    mime_type: str
    data: bytes | None
    problem: str = ""


async def attached_images(turn: Turn, message: pb.UserMessage) -> list[Attached]:
    """The images of the user's message, inline or by blob id (from the run request's
    pre-fetched blobs or the client's store)."""
    out = []
    for image in message.selected_context.selected_images:
        mime = image.mime_type or "image/png"
        data = image.data or image.blob_id_with_data.data
        if data:
            out.append(Attached(mime, data))
            continue
        blob_id = image.blob_id or image.blob_id_with_data.blob_id
        if not blob_id:
            out.append(Attached(mime, None, "it came without data"))
            continue
        try:
            out.append(Attached(mime, await turn.blob(blob_id)))
        except TurnError as exc:
            out.append(Attached(mime, None, f"its data could not be read ({exc})"))
    return out


def image_part(image: Attached) -> ImagePart:
    assert image.data is not None
    return {
        "type": "image",
        "mediaType": image.mime_type,
        "data": base64.b64encode(image.data).decode(),
    }


def _plural(n: int, word: str = "image") -> str:
    return f"{n} {word}" + ("s" if n != 1 else "")


def vision_model_for(config: Config, model: ModelConfig) -> ModelConfig | None:
    """The model that describes images for `model`, when one is configured and can see."""
    vision = routed(config, "vision")  # [routes] vision, else vision_model
    if vision is None or not vision.supports_images or vision.name == model.name:
        return None
    return vision


ProviderFor = Callable[[ModelConfig], Provider]


async def image_parts(
    turn: Turn,
    config: Config,
    model: ModelConfig,
    message: pb.UserMessage,
    provider_for: ProviderFor,
) -> list[UserPart]:
    """What the model gets for the attached images (see the module doc); notes go to Cursor."""
    images = await attached_images(turn, message)
    if not images:
        return []
    readable = [image for image in images if image.data is not None]
    parts: list[UserPart] = []
    for image in images:
        if image.data is None:
            turn.text(f"_(An attached image was not sent to the model: {image.problem}.)_\n\n")
            parts.append(_left_out_part(1, image.problem))
    if not readable:
        return parts
    if model.supports_images:
        return [*parts, *(image_part(image) for image in readable)]
    vision = vision_model_for(config, model)
    if vision is None:
        turn.text(
            f"_({_plural(len(readable))} not sent: {model.name} is configured without image "
            "input (supports_images = false). Set vision_model in the cursor-byok config to a "
            "model that takes images to have it describe them, or pick such a model.)_\n\n"
        )
        reason = f"{model.name} takes no images and no vision_model is configured"
        return [*parts, _left_out_part(len(readable), reason)]
    turn.text(
        f"_({model.name} takes no images: {vision.name} describes "
        f"{'it' if len(readable) == 1 else 'them'} for it.)_\n\n"
    )
    try:
        descriptions = await _describe(turn, config, vision, readable, provider_for)
    except (ProviderError, TurnError, TimeoutError) as exc:
        log.warning("turn %s: vision_model %s failed: %s", turn.request_id, vision.name, exc)
        turn.text(
            f"_(Describing with {vision.name} failed ({exc}); the "
            f"{'image was' if len(readable) == 1 else 'images were'} not sent.)_\n\n"
        )
        return [*parts, _left_out_part(len(readable), f"describing them failed: {exc}")]
    for index, text in enumerate(descriptions, 1):
        parts.append(
            {
                "type": "text",
                "text": f'<image_description index="{index}" described_by="{vision.name}">\n'
                f"{text}\n</image_description>",
            }
        )
    return parts


def _left_out_part(count: int, reason: str) -> UserPart:
    """Tells the model an image was attached and not given to it, so it does not answer as if
    there were none (and can say so)."""
    return {
        "type": "text",
        "text": f"[The user attached {_plural(count)} that you cannot see: {reason}.]",
    }


async def _describe(
    turn: Turn,
    config: Config,
    vision: ModelConfig,
    images: list[Attached],
    provider_for: ProviderFor,
) -> list[str]:
    """One description per image, from the vision model (its usage is added to the turn's).
    `provider_for` owns the provider it gives (the turn releases it with its others)."""
    provider = provider_for(vision)
    settings = config.providers[vision.provider]
    budget = vision.first_token_timeout or settings.first_token_timeout
    out = []
    for image in images:
        request = ModelRequest(
            model=vision.model,
            system=DESCRIBE_SYSTEM,
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Describe this image."},
                        dict(image_part(image)),
                    ],
                }
            ],
            tools=[],
            max_output_tokens=DESCRIBE_MAX_TOKENS,
            params=dict(vision.params),
            reasoning=False,
        )
        text = await complete(
            provider,
            request,
            turn.usage.add,
            max_retries=settings.max_retries,
            first_token_timeout=budget,
            what="the description",
        )
        out.append(text)
    return out
