"""custom_mode: which custom mode a turn runs in and what the system prompt says of it."""

from __future__ import annotations

from cursor_byok.agent import custom_mode
from cursor_byok.pb import agent_v1_pb2 as pb


def _entering(path: str = "/s/reviewer/SKILL.md") -> pb.UserMessage:
    message = pb.UserMessage(text="go", mode=pb.AGENT_MODE_CUSTOM)
    message.custom_mode_intent.enter.id = "reviewer"
    message.custom_mode_intent.enter.label = "Reviewer"
    message.custom_mode_intent.enter.source_path = path
    return message


def _history(message: pb.UserMessage) -> list[dict]:
    note = custom_mode.marker(message)
    assert note is not None
    return [
        {
            "role": "user",
            "content": [{"type": "text", "text": "go"}, {"type": "text", "text": note}],
        }
    ]


def test_the_entering_message_names_the_mode_and_later_turns_find_it() -> None:
    entering = _entering()
    assert custom_mode.current(entering, pb.AGENT_MODE_CUSTOM, []).label == "Reviewer"
    history = _history(entering)
    later = pb.UserMessage(text="next", mode=pb.AGENT_MODE_CUSTOM)
    found = custom_mode.current(later, pb.AGENT_MODE_CUSTOM, history)
    assert found is not None and found.source_path == "/s/reviewer/SKILL.md"
    # outside the custom mode the old marker does not apply
    assert custom_mode.current(later, pb.AGENT_MODE_AGENT, history) is None
    # nor the entering message's intent once the turn switched to another mode (SwitchMode)
    assert custom_mode.current(entering, pb.AGENT_MODE_AGENT, []) is None


def test_leaving_ends_the_mode() -> None:
    leaving = pb.UserMessage(text="bye", mode=pb.AGENT_MODE_CUSTOM)
    leaving.custom_mode_intent.exit.exited_mode.label = "Reviewer"
    assert custom_mode.current(leaving, pb.AGENT_MODE_CUSTOM, _history(_entering())) is None
    history = _history(_entering()) + _history(leaving)
    later = pb.UserMessage(text="x", mode=pb.AGENT_MODE_CUSTOM)
    assert custom_mode.current(later, pb.AGENT_MODE_CUSTOM, history) is None


def test_the_skill_text_is_found_by_path_or_folder_else_the_model_is_told_where() -> None:
    context = pb.RequestContext()
    context.agent_skills.add(full_path="/s/other/SKILL.md", content="other")
    context.agent_skills.add(full_path="/s/reviewer/SKILL.md", content="Review strictly.")
    mode = _entering().custom_mode_intent.enter
    assert "Review strictly." in custom_mode.instructions(mode, context)
    by_folder = pb.SubmittedCustomMode(id="reviewer", label="Reviewer")
    assert "Review strictly." in custom_mode.instructions(by_folder, context)
    missing = pb.SubmittedCustomMode(id="x", label="X", source_path="/s/x/SKILL.md")
    text = custom_mode.instructions(missing, context)
    assert "read that file first" in text and "/s/x/SKILL.md" in text
