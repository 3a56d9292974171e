"""Typed event payloads whose field names are the Claude hook wire names.

A Claude payload maps 1:1 (``Event.from_claude``); fields this version does not
know are kept in ``extra`` and written back by ``to_claude`` so nothing a newer
host sends is lost.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias

from .errors import EventError

__all__ = [
    "EVENT_NAMES",
    "TOOL_EVENTS",
    "AgentStop",
    "Event",
    "EventName",
    "PostToolUse",
    "PostToolUseFailure",
    "PreToolUse",
    "SessionEnd",
    "SessionStart",
    "SubagentStart",
    "SubagentStop",
    "UserPromptSubmit",
    "canonical_event_name",
]

EventName: TypeAlias = Literal[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "SubagentStart",
    "SubagentStop",
    "AgentStop",
    "SessionStart",
    "SessionEnd",
]

EVENT_NAMES: tuple[str, ...] = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "SubagentStart",
    "SubagentStop",
    "AgentStop",
    "SessionStart",
    "SessionEnd",
)
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure"})
_ALIASES = {"Stop": "AgentStop"}


def canonical_event_name(name: str) -> str:
    """Map an event name or alias (``Stop``) to its canonical name, or raise."""
    name = _ALIASES.get(name, name)
    if name not in _CLASSES:
        raise EventError(
            f"unknown event {name!r}; expected one of {', '.join(EVENT_NAMES)} (or Stop)",
            field="hook_event_name",
        )
    return name


@dataclass(slots=True, kw_only=True)
class Event:
    """Fields every hook event carries (Claude ``BaseHookInput``)."""

    event_name: ClassVar[str] = ""
    #: wire field holding the matcher subject (``None``: the agent's name)
    subject_field: ClassVar[str | None] = None

    session_id: str = ""
    transcript_path: str | None = None
    cwd: str = ""
    hook_event_name: str = ""
    permission_mode: str | None = None
    prompt_id: str | None = None
    effort: dict[str, Any] | None = None
    agent_id: str | None = None
    agent_type: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.hook_event_name:
            self.hook_event_name = self.event_name

    @staticmethod
    def from_claude(payload: dict[str, Any]) -> Event:
        """Build the typed event for a Claude hook payload (stdin JSON or SDK ``input_data``)."""
        if not isinstance(payload, dict):
            raise EventError(f"expected a JSON object, got {type(payload).__name__}")
        raw_name = payload.get("hook_event_name")
        if not isinstance(raw_name, str):
            raise EventError("missing or not a string", field="hook_event_name")
        cls = _CLASSES[canonical_event_name(raw_name)]
        return cls._from_payload(payload)

    @classmethod
    def _from_payload(cls, payload: dict[str, Any]) -> Event:
        known = _FIELDS[cls]
        kwargs: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in payload.items():
            if key in known:
                expected = known[key]
                if value is not None and expected and not isinstance(value, expected):
                    names = " or ".join(t.__name__ for t in expected)
                    raise EventError(f"expected {names}, got {type(value).__name__}", field=key)
                kwargs[key] = value
            else:
                extra[key] = value
        return cls(**kwargs, extra=extra)

    def to_claude(self) -> dict[str, Any]:
        """The wire payload: known fields that are set, then the kept extras."""
        out: dict[str, Any] = {}
        for name in _FIELDS[type(self)]:
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        out.update(self.extra)
        return out

    @property
    def subject(self) -> str | None:
        """What matchers test: tool name, agent type, or ``None`` for the agent's name."""
        if self.subject_field is None:
            return None
        value = getattr(self, self.subject_field)
        return value if isinstance(value, str) else ""

    def replace(self, **changes: Any) -> Event:
        return dataclasses.replace(self, **changes)


@dataclass(slots=True, kw_only=True)
class PreToolUse(Event):
    event_name: ClassVar[str] = "PreToolUse"
    subject_field: ClassVar[str | None] = "tool_name"
    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)
    tool_use_id: str | None = None


@dataclass(slots=True, kw_only=True)
class PostToolUse(Event):
    event_name: ClassVar[str] = "PostToolUse"
    subject_field: ClassVar[str | None] = "tool_name"
    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)
    tool_response: Any = None
    tool_use_id: str | None = None
    duration_ms: float | None = None


@dataclass(slots=True, kw_only=True)
class PostToolUseFailure(Event):
    event_name: ClassVar[str] = "PostToolUseFailure"
    subject_field: ClassVar[str | None] = "tool_name"
    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)
    tool_use_id: str | None = None
    error: str = ""
    is_interrupt: bool | None = None
    duration_ms: float | None = None


@dataclass(slots=True, kw_only=True)
class UserPromptSubmit(Event):
    event_name: ClassVar[str] = "UserPromptSubmit"
    prompt: str = ""


@dataclass(slots=True, kw_only=True)
class SubagentStart(Event):
    event_name: ClassVar[str] = "SubagentStart"
    subject_field: ClassVar[str | None] = "agent_type"


@dataclass(slots=True, kw_only=True)
class SubagentStop(Event):
    event_name: ClassVar[str] = "SubagentStop"
    subject_field: ClassVar[str | None] = "agent_type"
    stop_hook_active: bool = False
    agent_transcript_path: str | None = None
    last_assistant_message: str | None = None
    background_tasks: list[Any] | None = None
    session_crons: list[Any] | None = None


@dataclass(slots=True, kw_only=True)
class AgentStop(Event):
    """The main agent is about to end its turn (Claude's ``Stop``)."""

    event_name: ClassVar[str] = "AgentStop"
    stop_hook_active: bool = False
    last_assistant_message: str | None = None
    background_tasks: list[Any] | None = None
    session_crons: list[Any] | None = None

    def __post_init__(self) -> None:
        if not self.hook_event_name:
            self.hook_event_name = "Stop"  # the wire name Claude sends and expects


@dataclass(slots=True, kw_only=True)
class SessionStart(Event):
    event_name: ClassVar[str] = "SessionStart"
    source: str | None = None
    model: str | None = None


@dataclass(slots=True, kw_only=True)
class SessionEnd(Event):
    event_name: ClassVar[str] = "SessionEnd"
    reason: str | None = None


_CLASSES: dict[str, type[Event]] = {
    cls.event_name: cls
    for cls in (
        PreToolUse,
        PostToolUse,
        PostToolUseFailure,
        UserPromptSubmit,
        SubagentStart,
        SubagentStop,
        AgentStop,
        SessionStart,
        SessionEnd,
    )
}

_PY_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "bool": (bool,),
    "float": (int, float),
    "dict": (dict,),
    "list": (list,),
}


def _wire_fields(cls: type[Event]) -> dict[str, tuple[type, ...]]:
    """Wire field name -> accepted runtime types (empty tuple: anything)."""
    out: dict[str, tuple[type, ...]] = {}
    for f in dataclasses.fields(cls):
        if f.name == "extra":
            continue
        base = str(f.type).split("[")[0].split(" ")[0]
        out[f.name] = _PY_TYPES.get(base, ())
    return out


_FIELDS: dict[type[Event], dict[str, tuple[type, ...]]] = {
    cls: _wire_fields(cls) for cls in _CLASSES.values()
}


def event_class(name: str) -> type[Event]:
    """The event class for a canonical name or alias."""
    return _CLASSES[canonical_event_name(name)]
