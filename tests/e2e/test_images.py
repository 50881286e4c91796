"""Images for a model without image input (issue 28 item 10): never dropped without a word.

Through the whole proxy: a Cursor-like client attaches a PNG to a message for a model with
`supports_images = false`. With a `vision_model`, that model is asked to describe the image, the
description reaches the main model instead of the image, and Cursor shows a note saying so;
without one, the main model is told an image was left out and Cursor shows why and what to set.
A model that takes images gets the image itself.
"""

from __future__ import annotations

import base64
import json
import uuid
from pathlib import Path

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from mitm import start_mitmdump
from provider_config import MODEL
from provider_config import write_config

pytestmark = pytest.mark.timeout(120)
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64  # the bytes only have to arrive unchanged
VISION = "Fake Vision"


def _config(tmp_path: Path, fp: FakeProvider, *, images: bool, vision: bool) -> Path:
    path = write_config(tmp_path, fp, "openai-chat")
    text = path.read_text()
    if images:
        text += "supports_images = true\n"
    if vision:
        text = f'vision_model = "{VISION}"\n' + text
        text += f"""
[[models]]
name = "{VISION}"
provider = "fake"
model = "fake-vision-1"
supports_images = true
"""
    path.write_text(text)
    return path


async def _turn(tmp_path: Path, workspace: Path, fp: FakeProvider, config: Path):
    proxy = start_mitmdump(
        tmp_path / "proxy",
        agent="provider",
        config=config,
        env={"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"},
    )
    client = CursorLikeClient.through(proxy, workspace)
    message = client.run_request(
        "what does this screenshot say?",
        conversation_id=str(uuid.uuid4()),
        model=MODEL,
        workspace=workspace,
    )
    user = message.run_request.action.user_message_action.user_message
    user.selected_context.selected_images.add(mime_type="image/png", data=PNG, uuid="img-1")
    try:
        return await client.turn(message)
    finally:
        await client.aclose()
        proxy.stop()


def _image_urls(request) -> list[str]:
    """The data URLs of every image part an OpenAI-Chat request carries."""
    urls = []
    for message in request.json["messages"]:
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if part.get("type") == "image_url":
                urls.append(part["image_url"]["url"])
    return urls


def _user_text(request) -> str:
    return json.dumps([m for m in request.json["messages"] if m["role"] == "user"])


async def test_vision_model_describes_the_image_for_a_model_without_images(
    tmp_path, workspace
) -> None:
    async with FakeProvider() as fp:
        fp.script.text("A terminal showing: ERROR 42 disk full")
        fp.script.text("The screenshot says the disk is full (error 42).")
        config = _config(tmp_path, fp, images=False, vision=True)
        result = await _turn(tmp_path, workspace, fp, config)
        assert len(fp.requests) == 2
        describe, answer = fp.requests
    assert result.end.ok
    assert describe.json["model"] == "fake-vision-1"
    assert len(_image_urls(describe)) == 1 and _image_urls(describe)[0].startswith(
        "data:image/png;base64,"
    )
    assert answer.json["model"] == "fake-upstream-1"
    assert _image_urls(answer) == []  # the model without images never gets one
    assert "ERROR 42 disk full" in _user_text(answer)  # ... it gets the description
    assert f"{VISION} describes it" in result.text  # and Cursor says so
    assert "disk is full" in result.text


async def test_without_a_vision_model_cursor_says_the_image_was_not_sent(
    tmp_path, workspace
) -> None:
    async with FakeProvider() as fp:
        fp.script.text("I cannot see the image.")
        config = _config(tmp_path, fp, images=False, vision=False)
        result = await _turn(tmp_path, workspace, fp, config)
        (request,) = fp.requests
    assert result.end.ok
    assert _image_urls(request) == []
    assert "attached 1 image that you cannot see" in _user_text(request)
    assert "1 image not sent" in result.text and "supports_images = false" in result.text
    assert "vision_model" in result.text


async def test_a_model_with_images_gets_the_image(tmp_path, workspace) -> None:
    async with FakeProvider() as fp:
        fp.script.text("It is a PNG.")
        config = _config(tmp_path, fp, images=True, vision=False)
        result = await _turn(tmp_path, workspace, fp, config)
        (request,) = fp.requests
    assert result.end.ok
    assert _image_urls(request) == [f"data:image/png;base64,{base64.b64encode(PNG).decode()}"]
    assert "not sent" not in result.text
