"""Typed event payloads whose field names are the Claude hook wire names.

A Claude payload maps 1:1 (``Event.from_claude``); fields this version does not
know are kept in ``extra`` and written back by ``to_claude`` so nothing a newer
host sends is lost.

The classes are dataclasses (``slots=True, kw_only=True``) written out by hand
(``_records``): a hook process imports this module on every event, and
``@dataclass`` plus ``typing`` would cost it about 20 ms.
"""

from __future__ import annotations

from ._dataclass_free import DICT, field_annotations, field_names, named_tuple, record
from .errors import EventError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from dataclasses import Field
    from typing import Any, ClassVar, Literal, NamedTuple, TypeAlias

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
_ALIASES = {"Stop": "AgentStop"}


def __getattr__(name: str) -> Any:
    """``EventName`` (``Literal[...]``) is made on first use: ``typing`` costs a hook ~3 ms."""
    if name == "EventName":
        import typing

        value = typing.Literal[EVENT_NAMES]  # type: ignore[valid-type]
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def known_event_name(name: str | None) -> str | None:
    """The canonical name of an event name or alias (``Stop``); ``None`` if hookrails has none."""
    if name is None:
        return None
    name = _ALIASES.get(name, name)
    return name if name in _CLASSES else None


def canonical_event_name(name: str) -> str:
    """Map an event name or alias (``Stop``) to its canonical name, or raise."""
    name = _ALIASES.get(name, name)
    if name not in _CLASSES:
        raise EventError(
            f"unknown event {name!r}; expected one of {', '.join(EVENT_NAMES)} (or Stop)",
            field="hook_event_name",
        )
    return name


@record(kw_only=True, slots=True, no_repr=("_nulls",), no_compare=("_nulls",))
class Event:
    """Fields every hook event carries (Claude ``BaseHookInput``).

    ``from_claude`` insists on the fields in ``required`` (present and not
    null); ``session_id`` and ``cwd`` may be absent (a Guard session fills
    them). A field whose type is not optional may not be null.
    """

    __slots__ = (  # noqa: RUF023  # field order, as @dataclass(slots=True) writes it
        "session_id",
        "transcript_path",
        "cwd",
        "hook_event_name",
        "permission_mode",
        "prompt_id",
        "effort",
        "agent_id",
        "agent_type",
        "extra",
        "_nulls",
    )
    if TYPE_CHECKING:
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    event_name: ClassVar[str] = ""
    #: the ``hook_event_name`` Claude sends and expects (``Stop`` for AgentStop)
    wire_name: ClassVar[str] = ""
    #: wire field holding the matcher subject (``None``: the agent's name)
    subject_field: ClassVar[str | None] = None
    #: event-specific fields every Claude payload of this event carries
    required: ClassVar[tuple[str, ...]] = ()

    session_id: str
    transcript_path: str | None
    cwd: str
    hook_event_name: str
    permission_mode: str | None
    prompt_id: str | None
    effort: dict[str, Any] | None
    agent_id: str | None
    agent_type: str | None
    extra: dict[str, Any]
    #: optional fields the payload sent as an explicit ``null``, so ``to_claude`` writes them back
    _nulls: frozenset[str]

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
        self.session_id = session_id
        self.transcript_path = transcript_path
        self.cwd = cwd
        self.hook_event_name = hook_event_name
        self.permission_mode = permission_mode
        self.prompt_id = prompt_id
        self.effort = effort
        self.agent_id = agent_id
        self.agent_type = agent_type
        self.extra = {} if extra is DICT else extra
        self._nulls = _nulls
        self.__post_init__()

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
        """A copy with ``changes`` (``dataclasses.replace``, without importing it)."""
        for name in field_names(type(self)):
            if name not in changes:
                changes[name] = getattr(self, name)
        return type(self)(**changes)


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


if TYPE_CHECKING:

    class FieldSpec(NamedTuple):
        """How ``from_claude`` checks one wire field."""

        types: tuple[type, ...]  # accepted runtime types; empty: anything
        nullable: bool  # may the payload send ``null``?
        expected: str  # for messages: "a string", "a boolean or null", ...

else:  # the same NamedTuple, made without importing typing
    FieldSpec = named_tuple(
        "FieldSpec",
        {"types": "tuple[type, ...]", "nullable": "bool", "expected": "str"},
        module=__name__,
        doc="How ``from_claude`` checks one wire field.",
    )


_JSON_NAMES: dict[type, str] = {
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    dict: "an object",
    list: "an array",
}
_BY_NAME: dict[str, type] = {tp.__name__: tp for tp in _JSON_NAMES}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    for tp in (bool, str, int, float, dict, list):
        if isinstance(value, tp):
            return _JSON_NAMES[tp].split(" ", 1)[1]
    return type(value).__name__


def _field_spec(annotation: str, *, required: bool = False) -> FieldSpec:
    """The check for a field annotated ``annotation`` (``str | None``, ``dict[str, Any]``,
    ``Any``...), read from the annotation's text: evaluating it would need ``typing``.

    A required field may not be null even when its annotation is optional.
    """
    parts = [p.strip() for p in annotation.split("|")]
    if parts == ["Any"]:
        return FieldSpec((), True, "any JSON value")
    args = [p for p in parts if p != "None"]
    if len(args) != 1:
        raise TypeError(f"unsupported event field type {annotation!r}")
    base = _BY_NAME.get(args[0].split("[", 1)[0])
    if base is None:
        raise TypeError(f"unsupported event field type {annotation!r}")
    accepted: tuple[type, ...] = (int, float) if base is float else (base,)
    nullable = len(args) < len(parts) and not required
    expected = _JSON_NAMES[base] + (" or null" if nullable else "")
    return FieldSpec(accepted, nullable, expected)


def _wire_fields(cls: type[Event]) -> dict[str, FieldSpec]:
    """Wire field name -> its check, in declaration order (``extra`` is not a wire field)."""
    annotations = field_annotations(cls)
    return {
        name: _field_spec(annotations[name], required=name in cls.required)
        for name in field_names(cls)
        if name not in ("extra", "_nulls")
    }


_FIELDS: dict[type[Event], dict[str, FieldSpec]] = {}


def _fields(cls: type[Event]) -> dict[str, FieldSpec]:
    """Computed on first use, once per class."""
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
