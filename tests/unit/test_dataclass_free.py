"""Hand-written dataclasses (``guardrails._dataclass_free``) behave as the ``@dataclass`` ones
they replaced (declared in ``tests/unit/_dataclass_reference.py``): fields, signature, repr,
equality, hashing, ``dataclasses.fields/replace/asdict/astuple``, frozenness; and the
NamedTuples and ``Literal`` aliases made without ``typing`` match theirs.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import types
import typing
from typing import Any

import pytest

from guardrails import events, results
from guardrails._dataclass_free import DICT, record
from guardrails.definition.model import AgentDefinition, HookMatcher, ToolSpec
from guardrails.dispatch.toolrun import ToolRun
from guardrails.ledger import migrations, spool
from tests.unit import _dataclass_reference as ref


def _noop(event: Any, ctx: Any) -> None:
    return None


def _decision() -> results.Decision:
    return results.Decision(events.PreToolUse(tool_name="Bash"), "deny", "no")


#: (our class, the dataclass it replaced, arguments for a sample instance)
CASES: list[tuple[type, type, dict[str, Any]]] = [
    (events.Event, ref.Event, {"session_id": "s", "extra": {"x": 1}}),
    (events.PreToolUse, ref.PreToolUse, {"tool_name": "Bash", "tool_input": {"a": 1}}),
    (events.PostToolUse, ref.PostToolUse, {"tool_name": "Bash", "tool_response": "ok"}),
    (events.PostToolUseFailure, ref.PostToolUseFailure, {"tool_name": "Bash", "error": "x"}),
    (events.UserPromptSubmit, ref.UserPromptSubmit, {"prompt": "hi", "_nulls": frozenset("a")}),
    (events.SubagentStart, ref.SubagentStart, {"agent_id": "a1", "agent_type": "t"}),
    (events.SubagentStop, ref.SubagentStop, {"stop_hook_active": True}),
    (events.AgentStop, ref.AgentStop, {"last_assistant_message": "done"}),
    (events.SessionStart, ref.SessionStart, {"source": "startup"}),
    (events.SessionEnd, ref.SessionEnd, {"reason": "exit"}),
    (results.HookResult, ref.HookResult, {"decision": "deny", "reason": "r", "hint": "h"}),
    (results.Decision, ref.Decision, {"event": events.PreToolUse(), "notes": ["n"]}),
    (ToolSpec, ref.ToolSpec, {"primary_arg": "path"}),
    (HookMatcher, ref.HookMatcher, {"matcher": "Bash", "hooks": [_noop], "base_dir": "/x"}),
    (AgentDefinition, ref.AgentDefinition, {"name": "n", "source": "a.yaml"}),
    (ToolRun, ref.ToolRun, {"tool_name": "t", "status": "ok", "pre": _decision()}),
    (migrations.Migration, ref.Migration, {"number": 1, "name": "init", "sql": "SELECT 1"}),
    (spool.RecoverReport, ref.RecoverReport, {"imported": 2, "spools": ["a"]}),
]
IDS = [ours.__name__ for ours, _, _ in CASES]


#: what a ``dataclasses.Field`` says (``_field_type``: field, ClassVar or InitVar)
FIELD_ATTRS = ("name", "type", "default", "default_factory", "init", "repr", "hash", "compare")
FIELD_ATTRS += ("kw_only", "_field_type")


def _shape(cls: Any) -> dict[str, Any]:
    """What ``@dataclass`` decides about a class, in comparable form (ClassVars included:
    ``__dataclass_fields__`` lists them too)."""
    declared = cls.__dataclass_fields__
    attrs = {
        name: value
        for name, value in vars(cls).items()
        if name in declared and not isinstance(value, types.MemberDescriptorType)
    }
    return {
        "fields": [tuple(getattr(f, a) for a in FIELD_ATTRS) for f in declared.values()],
        "class attributes": attrs,
        "params": repr(cls.__dataclass_params__),
        "match_args": cls.__match_args__,
        "slots": vars(cls).get("__slots__"),
        "unhashable": cls.__hash__ is None,
        "signature": str(inspect.signature(cls)),
        "mro": [c.__name__ for c in cls.__mro__],
        "is_dataclass": dataclasses.is_dataclass(cls),
    }


def _pair(ours: type, theirs: type, kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """A sample of ours, and the reference instance holding the same field values."""
    obj = ours(**kwargs)
    values = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    return obj, theirs(**values)


@pytest.mark.parametrize(("ours", "theirs", "kwargs"), CASES, ids=IDS)
def test_class_is_declared_as_the_dataclass_was(
    ours: type, theirs: type, kwargs: dict[str, Any]
) -> None:
    assert _shape(ours) == _shape(theirs)


@pytest.mark.parametrize(("ours", "theirs", "kwargs"), CASES, ids=IDS)
def test_instances_repr_and_convert_as_the_dataclass_did(
    ours: type, theirs: type, kwargs: dict[str, Any]
) -> None:
    obj, twin = _pair(ours, theirs, kwargs)
    assert repr(obj) == repr(twin)
    # compared as text: their deep copies make a new UNSET, equal to nothing
    assert repr(dataclasses.asdict(obj)) == repr(dataclasses.asdict(twin))
    assert repr(dataclasses.astuple(obj)) == repr(dataclasses.astuple(twin))
    assert dataclasses.fields(obj) == dataclasses.fields(ours)


@pytest.mark.parametrize(("ours", "theirs", "kwargs"), CASES, ids=IDS)
def test_equality_and_hash_follow_the_compared_fields(
    ours: type, theirs: type, kwargs: dict[str, Any]
) -> None:
    obj, twin = _pair(ours, theirs, kwargs)
    assert obj == copy.copy(obj)
    assert obj != twin and twin != obj  # another class: NotImplemented both ways
    for f in dataclasses.fields(obj):  # a new value in one field: equal only if not compared
        changed, twin_changed = copy.copy(obj), copy.copy(twin)
        marker = object()
        object.__setattr__(changed, f.name, marker)
        object.__setattr__(twin_changed, f.name, marker)
        assert (obj == changed) == (twin == twin_changed) == (not f.compare), f.name
    if twin.__hash__ is None:
        with pytest.raises(TypeError, match="unhashable"):
            hash(obj)
    else:
        assert hash(obj) == hash(twin)


@pytest.mark.parametrize(("ours", "theirs", "kwargs"), CASES, ids=IDS)
def test_dataclasses_replace_builds_the_same_class(
    ours: type, theirs: type, kwargs: dict[str, Any]
) -> None:
    obj, twin = _pair(ours, theirs, kwargs)
    name = next(iter(kwargs))
    changed = dataclasses.replace(obj, **{name: kwargs[name]})
    assert type(changed) is ours and changed == obj
    assert repr(changed) == repr(dataclasses.replace(twin, **{name: kwargs[name]}))


@pytest.mark.parametrize("attr", ["number", "other"])
def test_a_frozen_record_refuses_assignment_and_deletion_as_a_frozen_dataclass(
    attr: str,
) -> None:
    obj, twin = _pair(migrations.Migration, ref.Migration, CASES[-2][2])
    for target in (obj, twin):
        with pytest.raises(dataclasses.FrozenInstanceError) as assigning:
            setattr(target, attr, 2)
        with pytest.raises(dataclasses.FrozenInstanceError) as deleting:
            delattr(target, attr)
        assert (str(assigning.value), str(deleting.value)) == (
            f"cannot assign to field {attr!r}",
            f"cannot delete field {attr!r}",
        )


def test_event_replace_is_dataclasses_replace() -> None:
    event = events.PostToolUse(tool_name="Bash", tool_input={"a": 1}, _nulls=frozenset({"x"}))
    assert event.replace(tool_response="out") == dataclasses.replace(event, tool_response="out")
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        event.replace(nope=1)


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (events.FieldSpec, ref.FieldSpec),
        (results.ModelContext, ref.ModelContext),
        (results.HookRun, ref.HookRun),
    ],
    ids=["FieldSpec", "ModelContext", "HookRun"],
)
def test_named_tuples_match_typing_named_tuples(ours: Any, theirs: Any) -> None:
    def shape(cls: Any) -> tuple[Any, ...]:
        hints = {k: getattr(v, "__forward_arg__", v) for k, v in cls.__annotations__.items()}
        return cls.__qualname__, cls.__mro__[1:], cls._fields, cls._field_defaults, hints

    assert shape(ours) == shape(theirs)
    assert inspect.cleandoc(ours.__doc__) == inspect.cleandoc(theirs.__doc__)
    values = [f"v{i}" for i in range(len(ours._fields))]
    assert repr(ours(*values)) == repr(theirs(*values))
    assert ours.__module__ in (events.__name__, results.__name__)


def test_literal_aliases_are_made_on_first_use() -> None:
    assert typing.get_args(events.EventName) == events.EVENT_NAMES
    assert results.DecisionKind == ref.DecisionKind
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        events.Nope  # noqa: B018


def test_a_record_whose_init_does_not_list_its_fields_is_refused() -> None:
    with pytest.raises(TypeError, match="are not the fields"):

        @record()
        class Missing:
            a: int
            b: dict[str, Any]

            def __init__(self, a: int = 0) -> None:
                self.a = a

    with pytest.raises(TypeError, match="__slots__"):

        @record(slots=True)
        class Unslotted:
            __slots__ = ("a",)
            a: int
            b: dict[str, Any]

            def __init__(self, a: int = 0, b: dict[str, Any] = DICT) -> None:
                self.a = a
                self.b = {} if b is DICT else b


def test_allowed_is_the_keyword_constructor_field_by_field() -> None:
    """``results.allowed`` (dispatch's quiet path) builds what ``Decision(event)`` does,
    each list its own."""
    event = events.PreToolUse(tool_name="Bash", tool_input={"command": "ls"})
    a, b = results.allowed(event, []), results.allowed(event, [])
    assert a == results.Decision(event) and repr(a) == repr(results.Decision(event))
    a.notes.append("x")
    a.injections.append(results.ModelContext("h", "t"))
    assert a.notes == ["x"] and b.notes == [] and b.injections == []
    assert results.Decision.notes is not a.notes  # the class keeps no shared list
    a.decision, a.reason = "deny", "no"
    assert (b.decision, b.reason) == ("allow", None)
    assert dataclasses.replace(a, reason="r").notes == ["x"]
