"""The per-event methods: the same nine on Guard, Session and the sync facade, each emitting
its typed event with the fields it was given."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, HookMatcher
from guardrails._event_table import HAND_WRITTEN
from guardrails.events import event_class
from guardrails.testing import RecordingHook

#: method -> (event name, positional arguments, the fields they must land in)
METHODS: dict[str, tuple[str, tuple[Any, ...], dict[str, Any]]] = {
    "pre_tool_use": ("PreToolUse", ("Bash", {"command": "ls"}), {"tool_name": "Bash"}),
    "post_tool_use": (
        "PostToolUse",
        ("Bash", {"command": "ls"}, "out"),
        {"tool_name": "Bash", "tool_response": "out"},
    ),
    "post_tool_use_failure": (
        "PostToolUseFailure",
        ("Bash", {"command": "ls"}, "boom"),
        {"tool_name": "Bash", "error": "boom"},
    ),
    "user_prompt_submit": ("UserPromptSubmit", ("hello",), {"prompt": "hello"}),
    "subagent_start": ("SubagentStart", ("a1", "reviewer"), {"agent_id": "a1"}),
    "subagent_stop": ("SubagentStop", ("a1", "reviewer"), {"agent_type": "reviewer"}),
    "agent_stop": ("AgentStop", ("done",), {"last_assistant_message": "done"}),
    "session_start": ("SessionStart", ("resume",), {"source": "resume"}),
    "session_end": ("SessionEnd", ("logout",), {"reason": "logout"}),
}


def test_every_hand_written_event_has_a_method() -> None:
    """The other events (Notification, PermissionRequest, ...) are emitted as built:
    ``guard.emit(Notification(...))``."""
    assert sorted(event for event, _, _ in METHODS.values()) == sorted(HAND_WRITTEN)


def _recorded(surface: str, method: str) -> Any:
    event_name, args, _ = METHODS[method]
    hook = RecordingHook()
    guard = Guard(AgentDefinition(hooks={event_name: [HookMatcher(hooks=[hook])]}))
    session = guard.session("s1")
    call = {
        "guard": lambda: asyncio.run(getattr(guard, method)(*args)),
        "guard.sync": lambda: getattr(guard.sync, method)(*args),
        "session": lambda: asyncio.run(getattr(session, method)(*args)),
        "session.sync": lambda: getattr(session.sync, method)(*args),
    }[surface]
    decision = call()
    assert decision.event_name == event_class(event_name).event_name
    (event,) = hook.events
    return event


@pytest.mark.parametrize("surface", ["guard", "guard.sync", "session", "session.sync"])
@pytest.mark.parametrize("method", list(METHODS))
def test_each_surface_emits_the_methods_event_with_its_fields(surface: str, method: str) -> None:
    event_name, _, fields = METHODS[method]
    event = _recorded(surface, method)
    assert isinstance(event, event_class(event_name))  # sealed: a read-only subclass
    assert {k: getattr(event, k) for k in fields} == fields
    if surface.startswith("session"):
        assert event.session_id == "s1"
    else:  # the Guard's default session
        assert event.session_id and event.session_id != "s1"
