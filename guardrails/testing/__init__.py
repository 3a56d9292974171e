"""Helpers for testing your own hooks and definitions with pytest.

from guardrails.testing import RecordingHook, SpyTool, guard_for

def test_force_push_is_denied():
    guard = guard_for("Bash(git push --force*)", my_hook)
    tool = SpyTool()
    run = guard.sync.run_tool("Bash", {"command": "git push --force"}, tool)
    assert run.denied and tool.calls == []
"""

from __future__ import annotations

from typing import Any

from ..definition.model import AgentDefinition, HookMatcher
from ..dispatch.guard import Guard
from ..events import Event, event_class
from ..results import Decision
from .fake_messages import (
    APIError,
    FakeMessagesAPI,
    MessagesRequest,
    claude_cli_env,
    text_block,
    tool_use,
)

__all__ = [
    "APIError",
    "FakeClock",
    "FakeMessagesAPI",
    "MessagesRequest",
    "RecordingHook",
    "SpyTool",
    "assert_allowed",
    "assert_denied",
    "claude_cli_env",
    "guard_for",
    "make_event",
    "text_block",
    "tool_use",
]


def make_event(name: str, **fields: Any) -> Event:
    """A typed event with test defaults (``session_id="test"``, ``cwd="/project"``)."""
    fields.setdefault("session_id", "test")
    fields.setdefault("cwd", "/project")
    return event_class(name)(**fields)


class RecordingHook:
    """A hook that records every event it sees and answers ``result`` (a value or a callable)."""

    def __init__(self, result: Any = None, name: str | None = None) -> None:
        self.result = result
        self.events: list[Event] = []
        self.hook_name = name or "recording"

    def __call__(self, event: Event, ctx: Any) -> Any:
        self.events.append(event)
        return self.result(event, ctx) if callable(self.result) else self.result

    @property
    def called(self) -> bool:
        return bool(self.events)


class SpyTool:
    """A tool function that records its calls: proof that a denied call never ran."""

    def __init__(self, result: Any = "ok", error: BaseException | None = None) -> None:
        self.result = result
        self.error = error
        self.calls: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        if self.error is not None:
            raise self.error
        return self.result


class FakeClock:
    """A controllable ``clock`` for ``Guard(clock=...)``."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def guard_for(
    matcher: str | None, *hooks: Any, event: str = "PreToolUse", **guard_kwargs: Any
) -> Guard:
    """A Guard with one matcher binding ``hooks`` to ``event``."""
    definition = AgentDefinition(hooks={event: [HookMatcher(matcher=matcher, hooks=list(hooks))]})
    guard_kwargs.setdefault("ledger", False)  # tests never write to $HOOKRAILS_LEDGER
    return Guard(definition, **guard_kwargs)


def assert_denied(decision: Decision, contains: str | None = None) -> None:
    assert decision.decision == "deny", f"expected deny, got {decision.decision}: {decision.runs}"
    if contains is not None:
        assert contains in (decision.reason or ""), f"{contains!r} not in {decision.reason!r}"


def assert_allowed(decision: Decision) -> None:
    assert decision.decision == "allow" and not decision.halted, (
        f"expected allow, got {decision.decision} ({decision.reason}): {decision.runs}"
    )
