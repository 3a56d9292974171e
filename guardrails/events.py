"""Typed event payloads whose field names are the Claude hook wire names.

A Claude payload maps 1:1 (``Event.from_claude``); fields this version does not
know are kept in ``extra`` and written back by ``to_claude`` so nothing a newer
host sends is lost.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, NamedTuple, TypeAlias

from .errors import EventError

__all__ = [
    "EVENT_NAMES",
    "TOOL_EVENTS",
    "AgentStop",
    "Event",
    "EventName",
    "FieldSpec",
    "PostToolUse",
    "PostToolUseFailure",
    "PreToolUse",
    "SessionEnd",
    "SessionStart",
    "SubagentStart",
    "SubagentStop",
    "UserPromptSubmit",
    "canonical_event_name",
    "event_class",
    "wire_fields",
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

EVENT_NAMES: tuple[str, ...] = typing.get_args(EventName)
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
    """Fields every hook event carries (Claude ``BaseHookInput``).

    ``from_claude`` insists on the fields in ``required`` (present and not
    null); ``session_id`` and ``cwd`` may be absent (a Guard session fills
    them). A field whose type is not optional may not be null.
    """

    event_name: ClassVar[str] = ""
    #: the ``hook_event_name`` Claude sends and expects (``Stop`` for AgentStop)
    wire_name: ClassVar[str] = ""
    #: wire field holding the matcher subject (``None``: the agent's name)
    subject_field: ClassVar[str | None] = None
    #: event-specific fields every Claude payload of this event carries
    required: ClassVar[tuple[str, ...]] = ()

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
    #: optional fields the payload sent as an explicit ``null``, so ``to_claude`` writes them back
    _nulls: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    def __post_init__(self) -> None:
        name = self.hook_event_name
        if name == self.wire_name or not self.event_name:
            return
        if not name or name == self.event_name:
            self.hook_event_name = self.wire_name  # AgentStop is "Stop" on the wire
            return
        raise EventError(
            f"{name!r} does not name a {self.event_name} event", field="hook_event_name"
        )

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
        known = _fields(cls)
        kwargs: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        nulls: list[str] = []
        for key, value in payload.items():
            spec = known.get(key)
            if spec is None:
                extra[key] = value
            elif value is None:
                if not spec.nullable:
                    raise EventError(f"must be {spec.expected}, got null", field=key)
                nulls.append(key)
            elif spec.types and (
                not isinstance(value, spec.types)
                or (isinstance(value, bool) and bool not in spec.types)
            ):
                raise EventError(f"must be {spec.expected}, got {_json_type(value)}", field=key)
            else:
                kwargs[key] = value
        for key in cls.required:
            if key not in kwargs and key not in nulls:
                raise EventError(f"missing from the {cls.wire_name} payload", field=key)
        return cls(**kwargs, extra=extra, _nulls=frozenset(nulls))

    def to_claude(self) -> dict[str, Any]:
        """The wire payload: known fields that are set, then the kept extras.

        ``Event.from_claude(p).to_claude() == p`` for every payload carrying the
        required fields, ``session_id`` and ``cwd`` (Claude's always do).
        """
        out: dict[str, Any] = {}
        for name in _fields(type(self)):
            value = getattr(self, name)
            if value is not None or name in self._nulls or name in self.required:
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
    wire_name: ClassVar[str] = "PreToolUse"
    subject_field: ClassVar[str | None] = "tool_name"
    required: ClassVar[tuple[str, ...]] = ("tool_name", "tool_input")
    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)
    tool_use_id: str | None = None


@dataclass(slots=True, kw_only=True)
class PostToolUse(Event):
    event_name: ClassVar[str] = "PostToolUse"
    wire_name: ClassVar[str] = "PostToolUse"
    subject_field: ClassVar[str | None] = "tool_name"
    required: ClassVar[tuple[str, ...]] = ("tool_name", "tool_input", "tool_response")
    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)
    tool_response: Any = None
    tool_use_id: str | None = None
    duration_ms: float | None = None


@dataclass(slots=True, kw_only=True)
class PostToolUseFailure(Event):
    event_name: ClassVar[str] = "PostToolUseFailure"
    wire_name: ClassVar[str] = "PostToolUseFailure"
    subject_field: ClassVar[str | None] = "tool_name"
    required: ClassVar[tuple[str, ...]] = ("tool_name", "tool_input", "error")
    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)
    tool_use_id: str | None = None
    error: str = ""
    is_interrupt: bool | None = None
    duration_ms: float | None = None


@dataclass(slots=True, kw_only=True)
class UserPromptSubmit(Event):
    event_name: ClassVar[str] = "UserPromptSubmit"
    wire_name: ClassVar[str] = "UserPromptSubmit"
    required: ClassVar[tuple[str, ...]] = ("prompt",)
    prompt: str = ""


@dataclass(slots=True, kw_only=True)
class SubagentStart(Event):
    event_name: ClassVar[str] = "SubagentStart"
    wire_name: ClassVar[str] = "SubagentStart"
    subject_field: ClassVar[str | None] = "agent_type"
    required: ClassVar[tuple[str, ...]] = ("agent_id", "agent_type")


@dataclass(slots=True, kw_only=True)
class SubagentStop(Event):
    event_name: ClassVar[str] = "SubagentStop"
    wire_name: ClassVar[str] = "SubagentStop"
    subject_field: ClassVar[str | None] = "agent_type"
    required: ClassVar[tuple[str, ...]] = ("agent_id", "agent_type", "stop_hook_active")
    stop_hook_active: bool = False
    agent_transcript_path: str | None = None
    last_assistant_message: str | None = None
    background_tasks: list[Any] | None = None
    session_crons: list[Any] | None = None


@dataclass(slots=True, kw_only=True)
class AgentStop(Event):
    """The main agent is about to end its turn (Claude's ``Stop``)."""

    event_name: ClassVar[str] = "AgentStop"
    wire_name: ClassVar[str] = "Stop"
    required: ClassVar[tuple[str, ...]] = ("stop_hook_active",)
    stop_hook_active: bool = False
    last_assistant_message: str | None = None
    background_tasks: list[Any] | None = None
    session_crons: list[Any] | None = None


@dataclass(slots=True, kw_only=True)
class SessionStart(Event):
    event_name: ClassVar[str] = "SessionStart"
    wire_name: ClassVar[str] = "SessionStart"
    source: str | None = None
    model: str | None = None


@dataclass(slots=True, kw_only=True)
class SessionEnd(Event):
    event_name: ClassVar[str] = "SessionEnd"
    wire_name: ClassVar[str] = "SessionEnd"
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


class FieldSpec(NamedTuple):
    """How ``from_claude`` checks one wire field."""

    types: tuple[type, ...]  # accepted runtime types; empty: anything
    nullable: bool  # may the payload send ``null``?
    expected: str  # for messages: "a string", "a boolean or null", ...


_JSON_NAMES: dict[type, str] = {
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    dict: "an object",
    list: "an array",
}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    for tp in (bool, str, int, float, dict, list):
        if isinstance(value, tp):
            return _JSON_NAMES[tp].split(" ", 1)[1]
    return type(value).__name__


def _field_spec(tp: Any, *, required: bool = False) -> FieldSpec:
    """The check for a field annotated ``tp`` (``str | None``, ``dict[str, Any]``, ``Any``...).

    A required field may not be null even when its annotation is optional.
    """
    if tp is Any:
        return FieldSpec((), True, "any JSON value")
    nullable = False
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        nullable = len(args) < len(typing.get_args(tp))
        if len(args) != 1:
            raise TypeError(f"unsupported event field type {tp!r}")
        tp = args[0]
    base = typing.get_origin(tp) or tp
    accepted: tuple[type, ...] = (int, float) if base is float else (base,)
    if base not in _JSON_NAMES:
        raise TypeError(f"unsupported event field type {tp!r}")
    nullable = nullable and not required
    expected = _JSON_NAMES[base] + (" or null" if nullable else "")
    return FieldSpec(accepted, nullable, expected)


def _wire_fields(cls: type[Event]) -> dict[str, FieldSpec]:
    """Wire field name -> its check, in declaration order (``extra`` is not a wire field)."""
    hints = typing.get_type_hints(cls)
    return {
        f.name: _field_spec(hints[f.name], required=f.name in cls.required)
        for f in dataclasses.fields(cls)
        if f.name not in ("extra", "_nulls")
    }


_FIELDS: dict[type[Event], dict[str, FieldSpec]] = {}


def _fields(cls: type[Event]) -> dict[str, FieldSpec]:
    """Computed on first use: ``get_type_hints`` costs a hook process milliseconds."""
    found = _FIELDS.get(cls)
    if found is None:
        found = _FIELDS[cls] = _wire_fields(cls)
    return found


def wire_fields(name: str) -> dict[str, FieldSpec]:
    """The wire fields of an event (canonical name or alias) and how each is checked."""
    return dict(_fields(event_class(name)))


def event_class(name: str) -> type[Event]:
    """The event class for a canonical name or alias."""
    return _CLASSES[canonical_event_name(name)]
