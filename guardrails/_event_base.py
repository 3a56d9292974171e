"""The machinery under :mod:`guardrails.events`: the ``Event`` base class, wire checks,
and the registry of event classes by name.

``Event.from_claude`` reads a Claude hook payload into the class registered for
its ``hook_event_name``, checking each known field against its annotation (read
as text: evaluating it would need ``typing``); fields it does not know are kept
in ``extra`` and written back by ``to_claude``. The concrete event classes live
in :mod:`guardrails.events`, which registers them here.
"""

from __future__ import annotations

import _thread

from ._dataclass_free import DICT, LIST, field_annotations, field_names, named_tuple, record
from ._event_table import BUILT, HAND_WRITTEN, NAMES
from .errors import EventError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from dataclasses import Field
    from typing import Any, ClassVar, NamedTuple

__all__ = [
    "Event",
    "FieldSpec",
    "canonical_event_name",
    "event_class",
    "known_event_name",
    "register",
    "wire_fields",
]

#: canonical event name -> its class, built or registered (``register``, ``_build``)
_CLASSES: dict[str, type[Event]] = {}
#: the names Claude sends for an event whose canonical name differs (``Stop``: AgentStop)
_ALIASES: dict[str, str] = {"Stop": "AgentStop"}
#: every canonical event name, whether its class exists yet or not
_KNOWN: frozenset[str] = frozenset(NAMES)


def register(*classes: type[Event]) -> None:
    """Make ``classes`` known by their ``event_name`` (and by ``wire_name`` where it differs)."""
    for cls in classes:
        _CLASSES[cls.event_name] = cls
        if cls.wire_name != cls.event_name:
            _ALIASES[cls.wire_name] = cls.event_name


def known_event_name(name: str | None) -> str | None:
    """The canonical name of an event name or alias (``Stop``); ``None`` if Claude has none."""
    if name is None:
        return None
    name = _ALIASES.get(name, name)
    return name if name in _KNOWN else None


def canonical_event_name(name: str) -> str:
    """Map an event name or alias (``Stop``) to its canonical name, or raise."""
    name = _ALIASES.get(name, name)
    if name not in _KNOWN:
        raise EventError(
            f"unknown event {name!r}; expected one of {', '.join(NAMES)} "
            f"(or {', '.join(_ALIASES)})",
            field="hook_event_name",
        )
    return name


def event_class(name: str) -> type[Event]:
    """The event class for a canonical name or alias (built on first use, see ``_build``)."""
    canonical = canonical_event_name(name)
    cls = _CLASSES.get(canonical)
    return cls if cls is not None else _build(canonical)


def wire_fields(name: str) -> dict[str, FieldSpec]:
    """The wire fields of an event (canonical name or alias) and how each is checked."""
    return dict(_fields(event_class(name)))


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
    __module__ = "guardrails.events"  # its public home, as before the move
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
        return event_class(raw_name)._from_payload(payload)

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
        """What matchers test (the event's ``subject_field``: a tool name, an agent type, a
        source, ...), or ``None`` on an event whose matcher Claude ignores: the agent's name."""
        if self.subject_field is None:
            return None
        value = getattr(self, self.subject_field)
        return value if isinstance(value, str) else ""

    def replace(self, **changes: Any) -> Event:
        """A copy with ``changes`` (``dataclasses.replace``, without importing it)."""
        cls: type[Event] = type(self).__dict__.get("_unsealed", type(self))  # a sealed
        for name in field_names(cls):  # event's copy starts unsealed
            if name not in changes:
                changes[name] = getattr(self, name)
        return cls(**changes)


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
        module="guardrails.events",  # its public home
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


# --- the classes built from the table ------------------------------------------------


def _build(name: str) -> type[Event]:
    """The class of a :data:`~guardrails._event_table.BUILT` event, made from its row the
    first time it is asked for: a hook process pays for the one event it decides, not for
    34. Its ``__init__`` is written as source and compiled once (a hand-written one, as
    :func:`~guardrails._dataclass_free.record` requires), about 0.1 ms."""
    if name in HAND_WRITTEN:  # registered when guardrails.events is imported (by name: a
        __import__("guardrails.events")  # static import would be a cycle for type checkers)
        return _CLASSES[name]
    with _BUILDING:  # two threads asking at once get the same class
        found = _CLASSES.get(name)
        return found if found is not None else _make(name)


def _make(name: str) -> type[Event]:
    subject, required, specs, doc = BUILT[name]
    own = [spec.split(": ", 1) for spec in specs]
    base: Any = Event.__init__
    defaults: dict[str, Any] = dict(base.__kwdefaults__)
    annotations: dict[str, str] = dict(base.__annotations__)
    # annotations stay text: compile() inherits this module's `from __future__ import annotations`
    params = [f"{n}: {annotations[n]} = _defaults[{n!r}]" for n in field_names(Event)]
    body = []
    for field, annotation in own:
        factory = "" if "None" in annotation else _FACTORIES.get(annotation.split("[", 1)[0], "")
        if factory:  # a required object or array: a fresh one per event
            fresh = f"{factory}.factory() if {field} is {factory} else {field}"
            body.append(f"    self.{field} = {fresh}")
            default = factory
        else:
            body.append(f"    self.{field} = {field}")
            default = '""' if annotation == "str" else "None"
        params.append(f"{field}: {annotation} = {default}")
    passed = ", ".join(f"{n}={n}" for n in field_names(Event))
    source = (
        f"def __init__(self, *, {', '.join(params)}) -> None:\n"
        + "\n".join(body)
        + f"\n    _base_init(self, {passed})\n"
    )
    scope: dict[str, Any] = {"_defaults": defaults, "_base_init": base, "DICT": DICT, "LIST": LIST}
    exec(compile(source, f"<hookrails event {name}>", "exec"), scope)
    init = scope["__init__"]
    init.__qualname__ = f"{name}.__init__"
    init.__module__ = "guardrails.events"
    namespace: dict[str, Any] = {
        "__slots__": tuple(field for field, _ in own),
        "__module__": "guardrails.events",
        "__qualname__": name,
        "__doc__": doc,
        "__annotations__": dict(own),
        "__init__": init,
        "event_name": name,
        "wire_name": name,
        "subject_field": subject,
        "required": required,
    }
    if subject == "file_name":  # FileChanged: Claude matches the file's basename
        namespace["file_name"] = property(_file_name, doc="The basename of ``file_path``.")
    cls = record(kw_only=True, slots=True)(type(name, (Event,), namespace))
    register(cls)
    return cls


#: the ``__init__`` default of a required field of this type: a fresh value per event
_FACTORIES = {"dict": "DICT", "list": "LIST"}
_BUILDING = _thread.allocate_lock()


def _file_name(event: Any) -> str:
    path = event.file_path
    if not isinstance(path, str):
        return ""
    return path.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
