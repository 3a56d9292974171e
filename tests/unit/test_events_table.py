"""All 34 Claude Code events: the classes built from ``guardrails._event_table``, their
matcher subjects, and the stub type checkers read (docs/design.md §3)."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
from typing import Any

import pytest

from guardrails import events
from guardrails._event_base import _CLASSES, event_class
from guardrails._event_table import BUILT, HAND_WRITTEN, NAMES, NO_MATCHER, SUBJECTS
from guardrails.errors import EventError
from guardrails.events import EVENT_NAMES, Event
from tests._paths import FIXTURES_DIR
from tools import eventstubs

FIXTURES = FIXTURES_DIR / "claude_payloads"

#: table 1.2 of the Claude hook reference (CLI 2.1.332): what each event's matcher is
#: tested against; ``None``: Claude ignores the matcher (hookrails: the agent's name)
CLAUDE_SUBJECTS: dict[str, str | None] = {
    "PreToolUse": "tool_name",
    "PostToolUse": "tool_name",
    "PostToolUseFailure": "tool_name",
    "PermissionRequest": "tool_name",
    "PermissionDenied": "tool_name",
    "PreSkillShellCommand": "tool_name",
    "UserPromptExpansion": "command_name",
    "SessionStart": "source",
    "Setup": "trigger",
    "PreCompact": "trigger",
    "PostCompact": "trigger",
    "PreModelSwitch": "to_model",
    "PostModelSwitch": "to_model",
    "Notification": "notification_type",
    "SessionEnd": "reason",
    "StopFailure": "error",
    "SubagentStart": "agent_type",
    "SubagentStop": "agent_type",
    "Elicitation": "mcp_server_name",
    "ElicitationResult": "mcp_server_name",
    "ConfigChange": "source",
    "DirectoryAdded": "source",
    "InstructionsLoaded": "load_reason",
    "FileChanged": "file_name",
    "UserPromptSubmit": None,
    "AgentStop": None,
    "TeammateIdle": None,
    "TaskCreated": None,
    "TaskCompleted": None,
    "PostToolBatch": None,
    "CwdChanged": None,
    "WorktreeCreate": None,
    "WorktreeRemove": None,
    "MessageDisplay": None,
}


def fixture(name: str) -> dict[str, Any]:
    wire = "Stop" if name == "AgentStop" else name
    data: dict[str, Any] = json.loads((FIXTURES / f"{wire}.json").read_text(encoding="utf-8"))
    return data


def test_there_are_34_events_each_once() -> None:
    assert len(EVENT_NAMES) == len(set(EVENT_NAMES)) == 34
    assert EVENT_NAMES == NAMES == (*HAND_WRITTEN, *BUILT)


def test_every_event_has_the_subject_claude_matches_on() -> None:
    assert SUBJECTS == CLAUDE_SUBJECTS
    assert {n: event_class(n).subject_field for n in NAMES} == CLAUDE_SUBJECTS
    assert {n for n, s in CLAUDE_SUBJECTS.items() if s is None} == NO_MATCHER


@pytest.mark.parametrize("name", NAMES)
def test_every_event_reads_and_writes_its_payload_exactly(name: str) -> None:
    payload = fixture(name)
    event = Event.from_claude(copy.deepcopy(payload))
    assert type(event) is event_class(name) and event.event_name == name
    assert event.to_claude() == payload
    assert event.extra == {}, f"{name}: fields the class does not type: {sorted(event.extra)}"


@pytest.mark.parametrize("name", NAMES)
def test_the_subject_is_the_subject_fields_value(name: str) -> None:
    event = Event.from_claude(fixture(name))
    field = CLAUDE_SUBJECTS[name]
    if field is None:
        assert event.subject is None
    elif field == "file_name":
        assert event.subject == ".envrc"
    else:
        assert event.subject == fixture(name)[field]


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/home/u/p/.envrc", ".envrc"),
        ("C:\\Users\\u\\p\\.env.local", ".env.local"),
        ("relative", "relative"),
        ("/dir/", ""),
    ],
)
def test_file_changed_matches_on_the_basename(path: str, name: str) -> None:
    event = events.FileChanged(file_path=path)
    assert event.file_name == event.subject == name


@pytest.mark.parametrize("name", BUILT)
def test_importing_the_name_gives_the_class_payloads_get(name: str) -> None:
    cls = getattr(events, name)
    assert cls is event_class(name) is _CLASSES[name]
    assert cls.__module__ == "guardrails.events" and cls.__qualname__ == name
    assert cls.__doc__ == BUILT[name][3]
    assert issubclass(cls, Event) and cls.wire_name == cls.event_name == name


def test_an_unknown_attribute_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Notificaton'"):
        events.Notificaton  # noqa: B018


def _reference(name: str) -> type:
    """The dataclass the built class stands for: the same fields, defaults and flags."""
    fields: list[tuple[str, Any, Any]] = []
    for spec in BUILT[name][2]:
        field, annotation = spec.split(": ", 1)
        if "None" in annotation:
            default: Any = dataclasses.field(default=None)
        elif annotation.startswith("dict"):
            default = dataclasses.field(default_factory=dict)
        elif annotation.startswith("list"):
            default = dataclasses.field(default_factory=list)
        else:
            default = dataclasses.field(default="")
        fields.append((field, annotation, default))
    base = dataclasses.make_dataclass(
        "Base",
        [(f.name, f.type, f) for f in dataclasses.fields(Event)],
        kw_only=True,
    )
    return dataclasses.make_dataclass(name, fields, bases=(base,), kw_only=True, slots=True)


@pytest.mark.parametrize("name", BUILT)
def test_a_built_class_is_declared_as_a_dataclass_would_be(name: str) -> None:
    cls, ref = event_class(name), _reference(name)
    assert [(f.name, f.default, f.default_factory, f.repr, f.compare, f.kw_only)
            for f in dataclasses.fields(cls)] == [
        (f.name, f.default, f.default_factory, f.repr, f.compare, f.kw_only)
        for f in dataclasses.fields(ref)
    ]  # fmt: skip
    assert cls.__slots__ == tuple(s.split(": ", 1)[0] for s in BUILT[name][2])
    event = Event.from_claude(fixture(name))
    assert dataclasses.replace(event) == event and dataclasses.asdict(event)["extra"] == {}
    assert pickle.loads(pickle.dumps(event)) == event
    assert event.replace() == event and event.replace(cwd="/x").cwd == "/x"


@pytest.mark.parametrize("name", BUILT)
def test_each_required_field_is_required_and_the_rest_may_be_absent(name: str) -> None:
    payload = fixture(name)
    required = BUILT[name][1]
    for field in required:
        broken = {k: v for k, v in payload.items() if k != field}
        with pytest.raises(EventError) as info:
            Event.from_claude(broken)
        assert info.value.field == field
    bare = {"hook_event_name": name, **{f: payload[f] for f in required}}
    assert Event.from_claude(bare).to_claude() == {"session_id": "", "cwd": "", **bare}


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"hook_event_name": "Notification", "message": 3}, "message"),
        ({"hook_event_name": "PreCompact", "trigger": None}, "trigger"),
        ({"hook_event_name": "PermissionDenied", "tool_name": "B", "tool_input": 1}, "tool_input"),
        ({"hook_event_name": "MessageDisplay", "delta": "x", "index": "0"}, "index"),
        ({"hook_event_name": "MessageDisplay", "delta": "x", "final": 1}, "final"),
        ({"hook_event_name": "PostToolBatch", "tool_calls": {}}, "tool_calls"),
    ],
)  # fmt: skip
def test_a_built_event_checks_its_field_types(payload: dict[str, Any], field: str) -> None:
    with pytest.raises(EventError) as info:
        Event.from_claude(payload)
    assert info.value.field == field


def test_the_checked_in_stub_is_the_generated_one() -> None:
    assert eventstubs.STUB.read_text(encoding="utf-8") == eventstubs.stub(), (
        "guardrails/_event_classes.pyi is stale: run `make schemas`"
    )
