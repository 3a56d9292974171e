"""Typed event payloads whose field names are the Claude hook wire names: all 34 events
of Claude Code 2.1.332.

A Claude payload maps 1:1 (``Event.from_claude``); fields this version does not
know are kept in ``extra`` and written back by ``to_claude`` so nothing a newer
host sends is lost. The base class, the wire checks and the name registry are in
``guardrails._event_base``; the table of every event in ``guardrails._event_table``.

The nine hot classes are dataclasses (``slots=True, kw_only=True``) written out by
hand (``_records``): a hook process imports this module on every event, and
``@dataclass`` plus ``typing`` would cost it about 20 ms. The other 25 (Notification,
PermissionRequest, ...) are built from their table row the first time they are named
(``from guardrails.events import Notification``, or a payload of that event): one
compile of about 0.1 ms, paid only by a process that sees the event. Type checkers
read them from the stub ``_event_classes.pyi`` (``make schemas`` writes it).
docs/design.md §3 explains the shape.
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
from ._event_table import BUILT, NAMES
from ._event_table import TOOL_NAME_EVENTS as TOOL_NAME_EVENTS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar

    from ._event_classes import (
        ConfigChange,
        CwdChanged,
        DirectoryAdded,
        Elicitation,
        ElicitationResult,
        EventName,
        FileChanged,
        InstructionsLoaded,
        MessageDisplay,
        Notification,
        PermissionDenied,
        PermissionRequest,
        PostCompact,
        PostModelSwitch,
        PostToolBatch,
        PreCompact,
        PreModelSwitch,
        PreSkillShellCommand,
        Setup,
        StopFailure,
        TaskCompleted,
        TaskCreated,
        TeammateIdle,
        UserPromptExpansion,
        WorktreeCreate,
        WorktreeRemove,
    )

__all__ = [
    "EVENT_NAMES",
    "STOP_EVENTS",
    "TOOL_EVENTS",
    "TOOL_NAME_EVENTS",
    "AgentStop",
    "ConfigChange",
    "CwdChanged",
    "DirectoryAdded",
    "Elicitation",
    "ElicitationResult",
    "Event",
    "EventName",
    "FieldSpec",
    "FileChanged",
    "InstructionsLoaded",
    "MessageDisplay",
    "Notification",
    "PermissionDenied",
    "PermissionRequest",
    "PostCompact",
    "PostModelSwitch",
    "PostToolBatch",
    "PostToolUse",
    "PostToolUseFailure",
    "PreCompact",
    "PreModelSwitch",
    "PreSkillShellCommand",
    "PreToolUse",
    "SessionEnd",
    "SessionStart",
    "Setup",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "TaskCompleted",
    "TaskCreated",
    "TeammateIdle",
    "UserPromptExpansion",
    "UserPromptSubmit",
    "WorktreeCreate",
    "WorktreeRemove",
    "canonical_event_name",
    "event_class",
    "known_event_name",
    "wire_fields",
]

#: the arguments of ``EventName`` (built from this tuple on first access): the nine with
#: hand-written classes, then the others in Claude's order
EVENT_NAMES: tuple[str, ...] = NAMES
#: the events whose calls the ledger keeps in ``tool_calls`` (one row per call)
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure"})
#: the events that end an agent's turn; a hook may block them to keep it working
STOP_EVENTS = frozenset({"AgentStop", "SubagentStop"})


def __getattr__(name: str) -> Any:
    """The event classes of the table (``Notification``, ...) are built when first named,
    and ``EventName`` (``Literal[...]``) too: ``typing`` costs a hook ~3 ms."""
    if name in BUILT:
        value: Any = event_class(name)
    elif name == "EventName":
        import typing

        value = typing.Literal[EVENT_NAMES]
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


@record(kw_only=True, slots=True)
class PreToolUse(Event):
    """A tool is about to run; hooks may allow, deny, ask or rewrite its input."""

    __slots__ = (  # noqa: RUF023
        "tool_name",
        "tool_input",
        "tool_use_id",
        "mcp_server",
    )

    event_name: ClassVar[str] = "PreToolUse"
    wire_name: ClassVar[str] = "PreToolUse"
    subject_field: ClassVar[str | None] = "tool_name"
    required: ClassVar[tuple[str, ...]] = ("tool_name", "tool_input")
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str | None
    mcp_server: dict[str, Any] | None

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
        mcp_server: dict[str, Any] | None = None,
    ) -> None:
        self.tool_name = tool_name
        self.tool_input = {} if tool_input is DICT else tool_input
        self.tool_use_id = tool_use_id
        self.mcp_server = mcp_server
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

    __slots__ = (  # noqa: RUF023
        "tool_name",
        "tool_input",
        "tool_response",
        "tool_use_id",
        "duration_ms",
        "mcp_server",
    )

    event_name: ClassVar[str] = "PostToolUse"
    wire_name: ClassVar[str] = "PostToolUse"
    subject_field: ClassVar[str | None] = "tool_name"
    required: ClassVar[tuple[str, ...]] = ("tool_name", "tool_input", "tool_response")
    tool_name: str
    tool_input: dict[str, Any]
    tool_response: Any
    tool_use_id: str | None
    duration_ms: float | None
    mcp_server: dict[str, Any] | None

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
        mcp_server: dict[str, Any] | None = None,
    ) -> None:
        self.tool_name = tool_name
        self.tool_input = {} if tool_input is DICT else tool_input
        self.tool_response = tool_response
        self.tool_use_id = tool_use_id
        self.duration_ms = duration_ms
        self.mcp_server = mcp_server
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
        "mcp_server",
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
    mcp_server: dict[str, Any] | None

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
        mcp_server: dict[str, Any] | None = None,
    ) -> None:
        self.tool_name = tool_name
        self.tool_input = {} if tool_input is DICT else tool_input
        self.tool_use_id = tool_use_id
        self.error = error
        self.is_interrupt = is_interrupt
        self.duration_ms = duration_ms
        self.mcp_server = mcp_server
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

    __slots__ = ("prompt", "source", "session_title")  # noqa: RUF023

    event_name: ClassVar[str] = "UserPromptSubmit"
    wire_name: ClassVar[str] = "UserPromptSubmit"
    required: ClassVar[tuple[str, ...]] = ("prompt",)
    prompt: str
    source: str | None
    session_title: str | None

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
        source: str | None = None,
        session_title: str | None = None,
    ) -> None:
        self.prompt = prompt
        self.source = source
        self.session_title = session_title
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
    #: CLIs before 2.0.4x sent neither ``agent_id`` nor ``agent_type`` (tests/fixtures)
    required: ClassVar[tuple[str, ...]] = ("stop_hook_active",)
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
    """A session starts (startup, resume, clear, compact, fork); hooks may add context."""

    __slots__ = (  # noqa: RUF023
        "source",
        "model",
        "session_title",
        "seconds_since_last_response",
        "context_tokens",
        "prompt_cache_likely_expired",
        "estimated_cache_write_usd",
    )

    event_name: ClassVar[str] = "SessionStart"
    wire_name: ClassVar[str] = "SessionStart"
    subject_field: ClassVar[str | None] = "source"
    source: str | None
    model: str | None
    session_title: str | None
    seconds_since_last_response: float | None
    context_tokens: float | None
    prompt_cache_likely_expired: bool | None
    estimated_cache_write_usd: float | None

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
        session_title: str | None = None,
        seconds_since_last_response: float | None = None,
        context_tokens: float | None = None,
        prompt_cache_likely_expired: bool | None = None,
        estimated_cache_write_usd: float | None = None,
    ) -> None:
        self.source = source
        self.model = model
        self.session_title = session_title
        self.seconds_since_last_response = seconds_since_last_response
        self.context_tokens = context_tokens
        self.prompt_cache_likely_expired = prompt_cache_likely_expired
        self.estimated_cache_write_usd = estimated_cache_write_usd
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
    subject_field: ClassVar[str | None] = "reason"
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
