"""Typed event payloads whose field names are the Claude hook wire names.

A Claude payload maps 1:1 (``Event.from_claude``); fields this version does not
know are kept in ``extra`` and written back by ``to_claude`` so nothing a newer
host sends is lost. The base class, the wire checks and the name registry are in
``guardrails._event_base``; this module holds the event classes and registers them.

The classes are dataclasses (``slots=True, kw_only=True``) written out by hand
(``_records``): a hook process imports this module on every event, and
``@dataclass`` plus ``typing`` would cost it about 20 ms. Their ``__init__`` is
written out too rather than generated: compiling generated source at import
would cost each hook process about 0.1 ms per class.
"""

from __future__ import annotations

from ._dataclass_free import DICT, record
from ._event_base import (
    Event,
    FieldSpec,
    canonical_event_name,
    event_class,
    known_event_name,
    register,
    wire_fields,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar, Literal, TypeAlias

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

__all__ = [
    "EVENT_NAMES",
    "STOP_EVENTS",
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
    "known_event_name",
    "wire_fields",
]

#: the arguments of ``EventName`` (built from this tuple on first access)
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
#: the events that end an agent's turn; a hook may block them to keep it working
STOP_EVENTS = frozenset({"AgentStop", "SubagentStop"})


def __getattr__(name: str) -> Any:
    """``EventName`` (``Literal[...]``) is made on first use: ``typing`` costs a hook ~3 ms."""
    if name == "EventName":
        import typing

        value = typing.Literal[EVENT_NAMES]  # type: ignore[valid-type]
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@record(kw_only=True, slots=True)
class PreToolUse(Event):
    """A tool is about to run; hooks may allow, deny, ask or rewrite its input."""

    __slots__ = ("tool_name", "tool_input", "tool_use_id")  # noqa: RUF023

    event_name: ClassVar[str] = "PreToolUse"
    wire_name: ClassVar[str] = "PreToolUse"
    subject_field: ClassVar[str | None] = "tool_name"
    required: ClassVar[tuple[str, ...]] = ("tool_name", "tool_input")
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str | None

    def __init__(
        self,
        *,
        session_id: str = "",
        transcript_path: str | None = None,
        cwd: str = "",
        hook_event_name: str = "",
        permission_mode: str | None = None,
        prompt_id: str | None = None,
        effort: dict[str, Any] | None = None,
        agent_id: str | None = None,
        agent_type: str | None = None,
        extra: dict[str, Any] = DICT,
        _nulls: frozenset[str] = frozenset(),
        tool_name: str = "",
        tool_input: dict[str, Any] = DICT,
        tool_use_id: str | None = None,
    ) -> None:
        self.tool_name = tool_name
        self.tool_input = {} if tool_input is DICT else tool_input
        self.tool_use_id = tool_use_id
        Event.__init__(
            self,
            session_id=session_id,
            transcript_path=transcript_path,
            cwd=cwd,
            hook_event_name=hook_event_name,
            permission_mode=permission_mode,
            prompt_id=prompt_id,
            effort=effort,
            agent_id=agent_id,
            agent_type=agent_type,
            extra=extra,
            _nulls=_nulls,
        )


@record(kw_only=True, slots=True)
class PostToolUse(Event):
    """A tool ran; hooks may rewrite its output or add context."""

    __slots__ = ("tool_name", "tool_input", "tool_response", "tool_use_id", "duration_ms")  # noqa: RUF023

    event_name: ClassVar[str] = "PostToolUse"
    wire_name: ClassVar[str] = "PostToolUse"
    subject_field: ClassVar[str | None] = "tool_name"
    required: ClassVar[tuple[str, ...]] = ("tool_name", "tool_input", "tool_response")
    tool_name: str
    tool_input: dict[str, Any]
    tool_response: Any
    tool_use_id: str | None
    duration_ms: float | None

    def __init__(
        self,
        *,
        session_id: str = "",
        transcript_path: str | None = None,
        cwd: str = "",
        hook_event_name: str = "",
        permission_mode: str | None = None,
        prompt_id: str | None = None,
        effort: dict[str, Any] | None = None,
        agent_id: str | None = None,
        agent_type: str | None = None,
        extra: dict[str, Any] = DICT,
        _nulls: frozenset[str] = frozenset(),
        tool_name: str = "",
        tool_input: dict[str, Any] = DICT,
        tool_response: Any = None,
        tool_use_id: str | None = None,
        duration_ms: float | None = None,
    ) -> None:
        self.tool_name = tool_name
        self.tool_input = {} if tool_input is DICT else tool_input
        self.tool_response = tool_response
        self.tool_use_id = tool_use_id
        self.duration_ms = duration_ms
        Event.__init__(
            self,
            session_id=session_id,
            transcript_path=transcript_path,
            cwd=cwd,
            hook_event_name=hook_event_name,
            permission_mode=permission_mode,
            prompt_id=prompt_id,
            effort=effort,
            agent_id=agent_id,
            agent_type=agent_type,
            extra=extra,
            _nulls=_nulls,
        )


@record(kw_only=True, slots=True)
class PostToolUseFailure(Event):
    """A tool raised or was interrupted; hooks may add context."""

    __slots__ = (  # noqa: RUF023
        "tool_name",
        "tool_input",
        "tool_use_id",
        "error",
        "is_interrupt",
        "duration_ms",
    )

    event_name: ClassVar[str] = "PostToolUseFailure"
    wire_name: ClassVar[str] = "PostToolUseFailure"
    subject_field: ClassVar[str | None] = "tool_name"
    required: ClassVar[tuple[str, ...]] = ("tool_name", "tool_input", "error")
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str | None
    error: str
    is_interrupt: bool | None
    duration_ms: float | None

    def __init__(
        self,
        *,
        session_id: str = "",
        transcript_path: str | None = None,
        cwd: str = "",
        hook_event_name: str = "",
        permission_mode: str | None = None,
        prompt_id: str | None = None,
        effort: dict[str, Any] | None = None,
        agent_id: str | None = None,
        agent_type: str | None = None,
        extra: dict[str, Any] = DICT,
        _nulls: frozenset[str] = frozenset(),
        tool_name: str = "",
        tool_input: dict[str, Any] = DICT,
        tool_use_id: str | None = None,
        error: str = "",
        is_interrupt: bool | None = None,
        duration_ms: float | None = None,
    ) -> None:
        self.tool_name = tool_name
        self.tool_input = {} if tool_input is DICT else tool_input
        self.tool_use_id = tool_use_id
        self.error = error
        self.is_interrupt = is_interrupt
        self.duration_ms = duration_ms
        Event.__init__(
            self,
            session_id=session_id,
            transcript_path=transcript_path,
            cwd=cwd,
            hook_event_name=hook_event_name,
            permission_mode=permission_mode,
            prompt_id=prompt_id,
            effort=effort,
            agent_id=agent_id,
            agent_type=agent_type,
            extra=extra,
            _nulls=_nulls,
        )


@record(kw_only=True, slots=True)
class UserPromptSubmit(Event):
    """The user sent a prompt; hooks may block (erase) it or add context."""

    __slots__ = ("prompt",)

    event_name: ClassVar[str] = "UserPromptSubmit"
    wire_name: ClassVar[str] = "UserPromptSubmit"
    required: ClassVar[tuple[str, ...]] = ("prompt",)
    prompt: str

    def __init__(
        self,
        *,
        session_id: str = "",
        transcript_path: str | None = None,
        cwd: str = "",
        hook_event_name: str = "",
        permission_mode: str | None = None,
        prompt_id: str | None = None,
        effort: dict[str, Any] | None = None,
        agent_id: str | None = None,
        agent_type: str | None = None,
        extra: dict[str, Any] = DICT,
        _nulls: frozenset[str] = frozenset(),
        prompt: str = "",
    ) -> None:
        self.prompt = prompt
        Event.__init__(
            self,
            session_id=session_id,
            transcript_path=transcript_path,
            cwd=cwd,
            hook_event_name=hook_event_name,
            permission_mode=permission_mode,
            prompt_id=prompt_id,
            effort=effort,
            agent_id=agent_id,
            agent_type=agent_type,
            extra=extra,
            _nulls=_nulls,
        )


@record(kw_only=True, slots=True)
class SubagentStart(Event):
    """A subagent starts; hooks may add context for it."""

    __slots__ = ()

    event_name: ClassVar[str] = "SubagentStart"
    wire_name: ClassVar[str] = "SubagentStart"
    subject_field: ClassVar[str | None] = "agent_type"
    required: ClassVar[tuple[str, ...]] = ("agent_id", "agent_type")

    def __init__(
        self,
        *,
        session_id: str = "",
        transcript_path: str | None = None,
        cwd: str = "",
        hook_event_name: str = "",
        permission_mode: str | None = None,
        prompt_id: str | None = None,
        effort: dict[str, Any] | None = None,
        agent_id: str | None = None,
        agent_type: str | None = None,
        extra: dict[str, Any] = DICT,
        _nulls: frozenset[str] = frozenset(),
    ) -> None:
        Event.__init__(
            self,
            session_id=session_id,
            transcript_path=transcript_path,
            cwd=cwd,
            hook_event_name=hook_event_name,
            permission_mode=permission_mode,
            prompt_id=prompt_id,
            effort=effort,
            agent_id=agent_id,
            agent_type=agent_type,
            extra=extra,
            _nulls=_nulls,
        )


@record(kw_only=True, slots=True)
class SubagentStop(Event):
    """A subagent is about to finish; hooks may block to keep it working."""

    __slots__ = (  # noqa: RUF023
        "stop_hook_active",
        "agent_transcript_path",
        "last_assistant_message",
        "background_tasks",
        "session_crons",
    )

    event_name: ClassVar[str] = "SubagentStop"
    wire_name: ClassVar[str] = "SubagentStop"
    subject_field: ClassVar[str | None] = "agent_type"
    required: ClassVar[tuple[str, ...]] = ("agent_id", "agent_type", "stop_hook_active")
    stop_hook_active: bool
    agent_transcript_path: str | None
    last_assistant_message: str | None
    background_tasks: list[Any] | None
    session_crons: list[Any] | None

    def __init__(
        self,
        *,
        session_id: str = "",
        transcript_path: str | None = None,
        cwd: str = "",
        hook_event_name: str = "",
        permission_mode: str | None = None,
        prompt_id: str | None = None,
        effort: dict[str, Any] | None = None,
        agent_id: str | None = None,
        agent_type: str | None = None,
        extra: dict[str, Any] = DICT,
        _nulls: frozenset[str] = frozenset(),
        stop_hook_active: bool = False,
        agent_transcript_path: str | None = None,
        last_assistant_message: str | None = None,
        background_tasks: list[Any] | None = None,
        session_crons: list[Any] | None = None,
    ) -> None:
        self.stop_hook_active = stop_hook_active
        self.agent_transcript_path = agent_transcript_path
        self.last_assistant_message = last_assistant_message
        self.background_tasks = background_tasks
        self.session_crons = session_crons
        Event.__init__(
            self,
            session_id=session_id,
            transcript_path=transcript_path,
            cwd=cwd,
            hook_event_name=hook_event_name,
            permission_mode=permission_mode,
            prompt_id=prompt_id,
            effort=effort,
            agent_id=agent_id,
            agent_type=agent_type,
            extra=extra,
            _nulls=_nulls,
        )


@record(kw_only=True, slots=True)
class AgentStop(Event):
    """The main agent is about to end its turn (Claude's ``Stop``)."""

    __slots__ = (  # noqa: RUF023
        "stop_hook_active",
        "last_assistant_message",
        "background_tasks",
        "session_crons",
    )

    event_name: ClassVar[str] = "AgentStop"
    wire_name: ClassVar[str] = "Stop"
    required: ClassVar[tuple[str, ...]] = ("stop_hook_active",)
    stop_hook_active: bool
    last_assistant_message: str | None
    background_tasks: list[Any] | None
    session_crons: list[Any] | None

    def __init__(
        self,
        *,
        session_id: str = "",
        transcript_path: str | None = None,
        cwd: str = "",
        hook_event_name: str = "",
        permission_mode: str | None = None,
        prompt_id: str | None = None,
        effort: dict[str, Any] | None = None,
        agent_id: str | None = None,
        agent_type: str | None = None,
        extra: dict[str, Any] = DICT,
        _nulls: frozenset[str] = frozenset(),
        stop_hook_active: bool = False,
        last_assistant_message: str | None = None,
        background_tasks: list[Any] | None = None,
        session_crons: list[Any] | None = None,
    ) -> None:
        self.stop_hook_active = stop_hook_active
        self.last_assistant_message = last_assistant_message
        self.background_tasks = background_tasks
        self.session_crons = session_crons
        Event.__init__(
            self,
            session_id=session_id,
            transcript_path=transcript_path,
            cwd=cwd,
            hook_event_name=hook_event_name,
            permission_mode=permission_mode,
            prompt_id=prompt_id,
            effort=effort,
            agent_id=agent_id,
            agent_type=agent_type,
            extra=extra,
            _nulls=_nulls,
        )


@record(kw_only=True, slots=True)
class SessionStart(Event):
    """A session starts or resumes; hooks may add context."""

    __slots__ = ("source", "model")  # noqa: RUF023

    event_name: ClassVar[str] = "SessionStart"
    wire_name: ClassVar[str] = "SessionStart"
    source: str | None
    model: str | None

    def __init__(
        self,
        *,
        session_id: str = "",
        transcript_path: str | None = None,
        cwd: str = "",
        hook_event_name: str = "",
        permission_mode: str | None = None,
        prompt_id: str | None = None,
        effort: dict[str, Any] | None = None,
        agent_id: str | None = None,
        agent_type: str | None = None,
        extra: dict[str, Any] = DICT,
        _nulls: frozenset[str] = frozenset(),
        source: str | None = None,
        model: str | None = None,
    ) -> None:
        self.source = source
        self.model = model
        Event.__init__(
            self,
            session_id=session_id,
            transcript_path=transcript_path,
            cwd=cwd,
            hook_event_name=hook_event_name,
            permission_mode=permission_mode,
            prompt_id=prompt_id,
            effort=effort,
            agent_id=agent_id,
            agent_type=agent_type,
            extra=extra,
            _nulls=_nulls,
        )


@record(kw_only=True, slots=True)
class SessionEnd(Event):
    """A session ends; hooks run for their side effects."""

    __slots__ = ("reason",)

    event_name: ClassVar[str] = "SessionEnd"
    wire_name: ClassVar[str] = "SessionEnd"
    reason: str | None

    def __init__(
        self,
        *,
        session_id: str = "",
        transcript_path: str | None = None,
        cwd: str = "",
        hook_event_name: str = "",
        permission_mode: str | None = None,
        prompt_id: str | None = None,
        effort: dict[str, Any] | None = None,
        agent_id: str | None = None,
        agent_type: str | None = None,
        extra: dict[str, Any] = DICT,
        _nulls: frozenset[str] = frozenset(),
        reason: str | None = None,
    ) -> None:
        self.reason = reason
        Event.__init__(
            self,
            session_id=session_id,
            transcript_path=transcript_path,
            cwd=cwd,
            hook_event_name=hook_event_name,
            permission_mode=permission_mode,
            prompt_id=prompt_id,
            effort=effort,
            agent_id=agent_id,
            agent_type=agent_type,
            extra=extra,
            _nulls=_nulls,
        )


register(
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
