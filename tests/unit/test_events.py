"""Typed events: Claude payloads in and out, malformed payloads, and the published input schemas."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from guardrails._package_data import data_path
from guardrails.errors import EventError
from guardrails.events import (
    EVENT_NAMES,
    AgentStop,
    Event,
    PostToolUse,
    PostToolUseFailure,
    PreToolUse,
    SessionEnd,
    SessionStart,
    SubagentStart,
    SubagentStop,
    UserPromptSubmit,
    canonical_event_name,
    event_class,
)
from tests._paths import FIXTURES_DIR
from tools import schemagen as _schemagen

FIXTURES = FIXTURES_DIR / "claude_payloads"
PAYLOAD_FILES = sorted(FIXTURES.glob("*.json"))
SCHEMAS = data_path("schemas")
#: fields Claude always sends but ``from_claude`` lets be absent (a Guard session fills them)
FILLED_BY_GUARD = {"session_id", "cwd"}


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return data


def input_schema(event_name: str) -> dict[str, Any]:
    path = SCHEMAS / "hooks" / f"{event_class(event_name).event_name}.input.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def schema_errors(payload: dict[str, Any]) -> list[str]:
    validator = Draft202012Validator(input_schema(payload["hook_event_name"]))
    return [e.message for e in validator.iter_errors(payload)]


def wire_field_names(cls: type[Event]) -> set[str]:
    return {f.name for f in dataclasses.fields(cls) if f.name != "extra" and f.name[0] != "_"}


# --- typed payloads -------------------------------------------------------------


def test_fixtures_cover_every_event() -> None:
    kinds = {Event.from_claude(load(p.stem)).event_name for p in PAYLOAD_FILES}
    assert kinds == set(EVENT_NAMES)


@pytest.mark.parametrize(
    ("fixture", "cls", "fields"),
    [
        (
            "PreToolUse",
            PreToolUse,
            {"tool_name": "Bash", "tool_use_id": "toolu_01A2b3C4d5E6f7G8h9I0j1K2"},
        ),
        ("PostToolUse", PostToolUse, {"tool_name": "Write", "duration_ms": 12}),
        ("PostToolUseFailure", PostToolUseFailure, {"is_interrupt": False, "duration_ms": 381.5}),
        ("UserPromptSubmit", UserPromptSubmit, {"permission_mode": "plan"}),
        ("SubagentStart", SubagentStart, {"agent_type": "researcher"}),
        ("SubagentStop", SubagentStop, {"stop_hook_active": False}),
        ("Stop", AgentStop, {"stop_hook_active": True, "hook_event_name": "Stop"}),
        ("SessionStart", SessionStart, {"source": "resume", "model": "claude-sonnet-4-5"}),
        ("SessionEnd", SessionEnd, {"reason": "prompt_input_exit"}),
    ],
)
def test_from_claude_builds_the_typed_event(
    fixture: str, cls: type[Event], fields: dict[str, Any]
) -> None:
    event = Event.from_claude(load(fixture))
    assert type(event) is cls
    assert {k: getattr(event, k) for k in fields} == fields


def test_base_fields_use_the_claude_wire_names() -> None:
    event = Event.from_claude(load("PreToolUse"))
    assert (event.session_id, event.cwd, event.prompt_id, event.effort) == (
        "c9703a6f-2b1e-4d6a-9f0e-5a1d3c7b8e21",
        "/home/user/project",
        "632fc932-8d4b-4a51-b0c2-7e9f1a2d3c4b",
        {"level": "high"},
    )


@pytest.mark.parametrize("path", PAYLOAD_FILES, ids=lambda p: p.stem)
def test_round_trip_is_exact(path: Path) -> None:
    payload = json.loads(path.read_text(encoding="utf-8"))
    assert Event.from_claude(copy.deepcopy(payload)).to_claude() == payload


@pytest.mark.parametrize("path", PAYLOAD_FILES, ids=lambda p: p.stem)
def test_from_claude_does_not_change_the_payload(path: Path) -> None:
    payload = json.loads(path.read_text(encoding="utf-8"))
    before = copy.deepcopy(payload)
    Event.from_claude(payload)
    assert payload == before


@pytest.mark.parametrize(
    ("fixture", "unknown"),
    [
        ("PreToolUse", {"future_field": "x"}),
        ("PreToolUse", {"background_tasks": [{"id": "bash_1", "status": "running"}]}),
        ("PostToolUse", {"nested": {"a": [1, {"b": None}], "c": {"d": True}}}),
        ("Stop", {"future_field": None}),
        ("SessionStart", {"future_field": "renamed", "extra": {"looks": "like ours"}}),
        ("SubagentStop", {"teammate": {"name": "qa", "tasks": []}, "n": 3}),
    ],
)
def test_unknown_fields_are_kept(fixture: str, unknown: dict[str, Any]) -> None:
    payload = {**load(fixture), **unknown}
    event = Event.from_claude(payload)
    assert {k: event.extra[k] for k in unknown} == unknown
    assert event.to_claude() == payload


def test_known_nested_fields_are_typed_not_extra() -> None:
    event = Event.from_claude(load("Stop"))
    assert isinstance(event, AgentStop)
    assert event.background_tasks is not None and event.background_tasks[0]["id"] == "bash_7"
    assert "background_tasks" not in event.extra


def test_explicit_null_optional_field_round_trips() -> None:
    payload = {**load("Stop"), "last_assistant_message": None, "transcript_path": None}
    event = Event.from_claude(payload)
    assert event.last_assistant_message is None  # type: ignore[attr-defined]
    assert event.to_claude() == payload


def test_absent_optional_fields_stay_absent() -> None:
    payload = {"hook_event_name": "SessionEnd", "session_id": "s", "cwd": "/p"}
    assert Event.from_claude(payload).to_claude() == payload


def test_session_id_and_cwd_may_be_absent() -> None:
    event = Event.from_claude({"hook_event_name": "UserPromptSubmit", "prompt": "hi"})
    assert (event.session_id, event.cwd) == ("", "")


def test_replace_keeps_extras_and_changes_the_field() -> None:
    event = Event.from_claude({**load("PreToolUse"), "future_field": 1})
    changed = event.replace(tool_input={"command": "ls"})
    assert changed.to_claude()["tool_input"] == {"command": "ls"}
    assert changed.extra == {"future_field": 1}


@pytest.mark.parametrize(
    ("event", "subject"),
    [
        (PreToolUse(tool_name="Bash"), "Bash"),
        (PostToolUse(tool_name="Write", agent_type="researcher"), "Write"),
        (PostToolUseFailure(tool_name="mcp__github__create_issue"), "mcp__github__create_issue"),
        (SubagentStart(agent_id="a1", agent_type="researcher"), "researcher"),
        (SubagentStop(agent_id="a1", agent_type="reviewer"), "reviewer"),
        (UserPromptSubmit(prompt="hi", agent_type="researcher"), None),
        (AgentStop(), None),
        (SessionStart(source="startup"), "startup"),
        (SessionEnd(reason="other"), "other"),
    ],
)
def test_subject_is_the_tool_name_the_agent_type_or_none(event: Event, subject: str | None) -> None:
    assert event.subject == subject


# --- the Stop alias -------------------------------------------------------------


def test_stop_payload_gives_agent_stop_and_writes_back_stop() -> None:
    event = Event.from_claude(load("Stop"))
    assert type(event) is AgentStop and event.event_name == "AgentStop"
    assert event.to_claude()["hook_event_name"] == "Stop"


@pytest.mark.parametrize(
    "event",
    [
        AgentStop(),
        AgentStop(hook_event_name="AgentStop"),
        Event.from_claude({"hook_event_name": "AgentStop", "stop_hook_active": False}),
    ],
    ids=["constructed", "canonical-name-given", "canonical-name-payload"],
)
def test_agent_stop_is_stop_on_the_wire(event: Event) -> None:
    assert event.to_claude()["hook_event_name"] == "Stop"


@pytest.mark.parametrize(("name", "cls"), [("Stop", AgentStop), ("AgentStop", AgentStop)])
def test_event_class_accepts_the_alias(name: str, cls: type[Event]) -> None:
    assert event_class(name) is cls and canonical_event_name(name) == "AgentStop"


@pytest.mark.parametrize(
    ("cls", "name"),
    [(PreToolUse, "Stop"), (AgentStop, "SubagentStop"), (SessionEnd, "PreToolUse")],
)
def test_constructed_event_rejects_another_events_name(cls: type[Event], name: str) -> None:
    with pytest.raises(EventError) as info:
        cls(hook_event_name=name)
    assert info.value.field == "hook_event_name"


# --- malformed payloads -----------------------------------------------------------

PRE = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}
POST = {**PRE, "hook_event_name": "PostToolUse", "tool_response": "ok"}
FAIL = {**PRE, "hook_event_name": "PostToolUseFailure", "error": "boom"}
STOP = {"hook_event_name": "Stop", "stop_hook_active": False}
SUB = {"hook_event_name": "SubagentStop", "agent_id": "a1", "agent_type": "r"}


def without(payload: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if k != key}


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "hook_event_name"),
        ({"hook_event_name": None}, "hook_event_name"),
        ({"hook_event_name": 3}, "hook_event_name"),
        ({"hook_event_name": "PreCompacted"}, "hook_event_name"),
        ({"hook_event_name": "stop"}, "hook_event_name"),
        ({**PRE, "tool_input": ["ls"]}, "tool_input"),
        ({**PRE, "tool_input": "ls"}, "tool_input"),
        ({**PRE, "tool_input": None}, "tool_input"),
        ({**PRE, "tool_name": None}, "tool_name"),
        ({**PRE, "tool_name": 7}, "tool_name"),
        (without(PRE, "tool_name"), "tool_name"),
        (without(PRE, "tool_input"), "tool_input"),
        ({**PRE, "session_id": 5}, "session_id"),
        ({**PRE, "cwd": None}, "cwd"),
        ({**PRE, "effort": "high"}, "effort"),
        ({**PRE, "tool_use_id": 1}, "tool_use_id"),
        ({**PRE, "agent_type": ["researcher"]}, "agent_type"),
        (without(POST, "tool_response"), "tool_response"),
        ({**POST, "duration_ms": "12"}, "duration_ms"),
        ({**POST, "duration_ms": True}, "duration_ms"),
        ({**FAIL, "error": {"message": "boom"}}, "error"),
        (without(FAIL, "error"), "error"),
        ({**FAIL, "is_interrupt": 0}, "is_interrupt"),
        ({"hook_event_name": "UserPromptSubmit", "prompt": ["hi"]}, "prompt"),
        ({"hook_event_name": "UserPromptSubmit"}, "prompt"),
        ({**STOP, "stop_hook_active": "true"}, "stop_hook_active"),
        ({**STOP, "stop_hook_active": 1}, "stop_hook_active"),
        ({**STOP, "stop_hook_active": None}, "stop_hook_active"),
        (without(STOP, "stop_hook_active"), "stop_hook_active"),
        ({**STOP, "background_tasks": {"id": "b"}}, "background_tasks"),
        ({**STOP, "last_assistant_message": 5}, "last_assistant_message"),
        ({**SUB, "stop_hook_active": 0}, "stop_hook_active"),
        ({**SUB, "stop_hook_active": False, "agent_id": 5}, "agent_id"),
        ({"hook_event_name": "SubagentStart", "agent_id": "a1"}, "agent_type"),
        ({"hook_event_name": "SessionStart", "source": 1}, "source"),
        ({"hook_event_name": "SessionEnd", "reason": False}, "reason"),
    ],
)
def test_malformed_payload_raises_event_error_naming_the_field(
    payload: dict[str, Any], field: str
) -> None:
    with pytest.raises(EventError) as info:
        Event.from_claude(payload)
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: ")


@pytest.mark.parametrize("payload", [None, [], "PreToolUse", 3, json.dumps(PRE).encode()])
def test_non_object_payload_raises_event_error(payload: Any) -> None:
    with pytest.raises(EventError, match="expected a JSON object"):
        Event.from_claude(payload)


@pytest.mark.parametrize(
    ("payload", "words"),
    [
        ({**STOP, "stop_hook_active": 1}, "must be a boolean, got number"),
        ({**PRE, "tool_input": None}, "must be an object, got null"),
        ({**POST, "duration_ms": True}, "must be a number or null, got boolean"),
        (without(PRE, "tool_name"), "missing from the PreToolUse payload"),
        ({"hook_event_name": "PreCompacted"}, "unknown event 'PreCompacted'"),
    ],
)
def test_event_error_says_what_was_expected(payload: dict[str, Any], words: str) -> None:
    with pytest.raises(EventError, match=words):
        Event.from_claude(payload)


@pytest.mark.parametrize(
    ("payload", "field", "value"),
    [
        ({**POST, "duration_ms": 12}, "duration_ms", 12),
        ({**POST, "duration_ms": 0.5}, "duration_ms", 0.5),
        ({**POST, "tool_response": None}, "tool_response", None),
        ({**POST, "tool_response": ["a", 1]}, "tool_response", ["a", 1]),
        ({**FAIL, "is_interrupt": True}, "is_interrupt", True),
    ],
)
def test_well_typed_values_are_accepted(payload: dict[str, Any], field: str, value: Any) -> None:
    event = Event.from_claude(payload)
    assert getattr(event, field) == value
    assert event.to_claude() == {"session_id": "", "cwd": "", **payload}


# --- the published input schemas ----------------------------------------------------


@pytest.mark.parametrize("rel", sorted(_schemagen.generated()))
def test_checked_in_schema_equals_generated(rel: str) -> None:
    path = SCHEMAS / rel
    expected = _schemagen.dump(_schemagen.generated()[rel])
    actual = path.read_text(encoding="utf-8") if path.is_file() else None
    assert actual == expected, f"schemas/{rel} is stale: run `make schemas`"


def test_no_stale_event_schema_is_checked_in() -> None:
    published = {f"hooks/{p.name}" for p in (SCHEMAS / "hooks").glob("*.input.json")}
    generated = {rel for rel in _schemagen.generated() if rel.startswith("hooks/")}
    assert published == generated, "run `make schemas` and delete schemas no event produces"


@pytest.mark.parametrize("name", EVENT_NAMES)
def test_schema_properties_are_the_dataclass_fields(name: str) -> None:
    assert set(input_schema(name)["properties"]) == wire_field_names(event_class(name))


@pytest.mark.parametrize("name", EVENT_NAMES)
def test_schema_requires_what_from_claude_requires_plus_the_base(name: str) -> None:
    cls = event_class(name)
    required = set(input_schema(name)["required"])
    assert required == {"hook_event_name", *FILLED_BY_GUARD, *cls.required}
    assert required <= wire_field_names(cls)


@pytest.mark.parametrize("name", EVENT_NAMES)
def test_required_schema_fields_are_not_nullable(name: str) -> None:
    schema = input_schema(name)
    props = schema["properties"]
    nullable = {k for k in schema["required"] if Draft202012Validator(props[k]).is_valid(None)}
    assert nullable <= {"tool_response"}  # typed Any: null is a legitimate tool output


@pytest.mark.parametrize("name", EVENT_NAMES)
def test_schema_names_the_wire_event(name: str) -> None:
    cls = event_class(name)
    prop = input_schema(name)["properties"]["hook_event_name"]
    accepted = prop.get("enum", [prop.get("const")])
    assert cls.wire_name in accepted and cls.event_name in accepted


@pytest.mark.parametrize(
    "rel",
    [*sorted(_schemagen.generated()), "hooks/hook-output.json"],
)
def test_published_schema_is_valid_draft_2020_12(rel: str) -> None:
    Draft202012Validator.check_schema(json.loads((SCHEMAS / rel).read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", PAYLOAD_FILES, ids=lambda p: p.stem)
def test_fixture_validates_against_its_event_schema(path: Path) -> None:
    assert schema_errors(json.loads(path.read_text(encoding="utf-8"))) == []


def _mutations() -> list[tuple[str, str, str, dict[str, Any]]]:
    """(fixture, field, how, payload) for every field: deleted, null, and of another type."""
    out = []
    for path in PAYLOAD_FILES:
        payload = json.loads(path.read_text(encoding="utf-8"))
        schema = input_schema(payload["hook_event_name"])
        for key, prop in schema["properties"].items():
            if key == "hook_event_name":
                continue
            types = prop.get("type", [])
            wrong = 5 if "string" in types else "5"
            out.append((path.stem, key, "deleted", without(payload, key)))
            out.append((path.stem, key, "null", {**payload, key: None}))
            if prop:
                out.append((path.stem, key, "wrong-type", {**payload, key: wrong}))
    return out


@pytest.mark.parametrize(
    ("fixture", "field", "how", "payload"),
    _mutations(),
    ids=[f"{m[0]}.{m[1]}-{m[2]}" for m in _mutations()],
)
def test_from_claude_accepts_exactly_what_the_schema_accepts(
    fixture: str, field: str, how: str, payload: dict[str, Any]
) -> None:
    schema_ok = not schema_errors(payload)
    try:
        Event.from_claude(payload)
        parsed = True
    except EventError as exc:
        assert exc.field == field
        parsed = False
    if how == "deleted" and field in FILLED_BY_GUARD:
        assert (schema_ok, parsed) == (False, True)
    else:
        assert parsed == schema_ok


@pytest.mark.parametrize(
    "event",
    [
        PreToolUse(tool_name="Bash", tool_input={"command": "ls"}),
        PostToolUse(tool_name="Read", tool_input={}, tool_response=None),
        PostToolUseFailure(tool_name="Bash", tool_input={}, error="exit 1", duration_ms=3.5),
        UserPromptSubmit(prompt="hi"),
        SubagentStart(agent_id="a1", agent_type="researcher"),
        SubagentStop(agent_id="a1", agent_type="researcher", last_assistant_message="done"),
        AgentStop(last_assistant_message="DONE"),
        SessionStart(source="startup"),
        SessionEnd(reason="other"),
    ],
    ids=lambda e: e.event_name,
)
def test_constructed_event_serialises_to_a_valid_payload(event: Event) -> None:
    payload = event.to_claude()
    assert schema_errors(payload) == []
    assert Event.from_claude(payload) == event
