"""Whose a content call is (proxy/privacy.py): the route of the conversation it names, by id, by
message or by model; a call before its conversation's first run waits for it; unknown after the
wait is private."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

from cursor_byok.config import parse_config
from cursor_byok.cursor.content_calls import CALLS
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.proxy.privacy import Privacy
from cursor_byok.proxy.routing import CURSOR
from cursor_byok.proxy.routing import Routing
from cursor_byok.store.census import Census

NAME = CALLS["/agent.v1.AgentService/NameAgent"]
METADATA = CALLS["/agent.v1.AgentService/UpdateConversationMetadata"]
SUMMARY = CALLS["/aiserver.v1.ChatService/GetConversationSummary"]
MESSAGE = "Please explain what the parser in src/parse.py does"


class Turns:
    def __init__(self, config) -> None:
        self.config = config

    def routing_config(self):
        return self.config


def setup(**top) -> tuple[Privacy, Routing]:
    config = parse_config(
        {
            "providers": {"p": {"kind": "openai-chat", "base_url": "http://127.0.0.1:1/v1"}},
            "models": [{"name": "Mine", "provider": "p", "model": "up-1"}],
            **top,
        },
        Path("c.toml"),
    )
    turns = Turns(config)
    routing = Routing(turns, registry=None)  # type: ignore[arg-type]
    routing.routes.patience = 0.3
    return Privacy(routing, turns, Census()), routing  # type: ignore[arg-type]


def run(conversation: str, model: str, text: str = MESSAGE) -> pb.AgentRunRequest:
    request = pb.AgentRunRequest(conversation_id=conversation)
    request.requested_model.model_id = model
    request.action.user_message_action.user_message.text = text
    return request


async def attribute(privacy: Privacy, call, message):
    return await privacy._attribute(call, message, privacy.turns.routing_config(), wait=True)


async def test_a_call_waits_for_its_conversations_first_run_and_follows_its_route() -> None:
    privacy, routing = setup()
    byok, cursor = str(uuid.uuid4()), str(uuid.uuid4())
    waiting = asyncio.ensure_future(
        attribute(privacy, METADATA, pb.UpdateConversationMetadataRequest(conversation_id=byok))
    )
    named = asyncio.ensure_future(
        attribute(privacy, NAME, pb.NameAgentRequest(user_message=MESSAGE))
    )
    await asyncio.sleep(0)  # both hold (the run request has not come)
    assert not waiting.done() and not named.done()
    routing.decide(str(uuid.uuid4()), run(byok, "Mine"))
    assert await waiting == (byok, True)
    assert await named == (byok, True)
    routing.decide(str(uuid.uuid4()), run(cursor, "composer-1", "something else entirely"))
    message = pb.UpdateConversationMetadataRequest(conversation_id=cursor)
    assert await attribute(privacy, METADATA, message) == (cursor, False)
    assert routing.waiting == 0


async def test_unknown_after_the_wait_is_private_and_a_model_name_decides_at_once() -> None:
    privacy, _routing = setup()
    stranger = str(uuid.uuid4())
    loop = asyncio.get_running_loop()
    started = loop.time()
    message = pb.UpdateConversationMetadataRequest(conversation_id=stranger)
    assert await attribute(privacy, METADATA, message) == (stranger, True)
    assert loop.time() - started >= 0.25  # it waited, bounded
    theirs = aipb.StreamUnifiedChatRequest(conversation_id=stranger)
    theirs.model_details.model_name = "gpt-4o"
    assert await attribute(privacy, SUMMARY, theirs) == (stranger, False)
    ours = aipb.StreamUnifiedChatRequest(conversation_id=stranger)
    ours.model_details.model_name = "up-1"  # our model's upstream id
    assert await attribute(privacy, SUMMARY, ours) == (stranger, True)


async def test_a_title_call_prefers_a_new_byok_run_to_an_older_cursor_one() -> None:
    """The same first message in a Cursor chat a minute ago and in a BYOK chat now: the new
    chat's NameAgent, which comes before its run, waits for it instead of taking the old one."""
    privacy, routing = setup()
    old, new = str(uuid.uuid4()), str(uuid.uuid4())
    routing.messages.note(old, MESSAGE, time.monotonic() - 60)
    routing.note_conversation(old, CURSOR)
    named = asyncio.ensure_future(
        attribute(privacy, NAME, pb.NameAgentRequest(user_message=MESSAGE))
    )
    await asyncio.sleep(0)
    assert not named.done()
    routing.decide(str(uuid.uuid4()), run(new, "Mine"))
    assert await named == (new, True)
    # no new run: the older Cursor chat's, after the wait
    again = await attribute(privacy, NAME, pb.NameAgentRequest(user_message="hello there, Cursor"))
    assert again == ("", True)  # nobody ran that message: private
    routing.messages.note(old, "hello there, Cursor", time.monotonic() - 60)
    again = await attribute(privacy, NAME, pb.NameAgentRequest(user_message="hello there, Cursor"))
    assert again == (old, False)


async def test_when_every_run_is_ours_every_call_is_private_at_once() -> None:
    privacy, _routing = setup(route_other_models="error")
    message = pb.UpdateConversationMetadataRequest(conversation_id=str(uuid.uuid4()))
    assert (await asyncio.wait_for(attribute(privacy, METADATA, message), 0.1))[1] is True
