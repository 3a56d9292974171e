"""Matcher subjects as Claude defines them, for every event (docs/concepts.md's table)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, HookMatcher
from guardrails._event_table import (
    LEGACY_AGENT_SUBJECT,
    NAMES,
    NO_MATCHER,
    SUBJECT_VALUES,
    SUBJECTS,
)
from guardrails.dispatch.explain import check_definition
from guardrails.events import Event
from guardrails.testing import RecordingHook
from tests._paths import FIXTURES_DIR


def payload(name: str, **changes: Any) -> dict[str, Any]:
    wire = "Stop" if name == "AgentStop" else name
    data: dict[str, Any] = json.loads(
        (FIXTURES_DIR / "claude_payloads" / f"{wire}.json").read_text(encoding="utf-8")
    )
    return {**data, **changes}


def fired(matcher: str | None, event: Event, *, name: str = "agent") -> bool:
    hook = RecordingHook()
    guard = Guard(
        AgentDefinition(name=name, hooks={event.event_name: [HookMatcher(matcher, hooks=[hook])]}),
        ledger=False,
    )
    guard.emit_sync(event)
    return len(hook.events) == 1


WITH_SUBJECT = [n for n in NAMES if SUBJECTS[n] is not None]


@pytest.mark.parametrize("name", WITH_SUBJECT)
def test_a_matcher_on_the_subject_value_fires_and_another_does_not(name: str) -> None:
    event = Event.from_claude(payload(name))
    subject = event.subject
    assert subject, f"{name}'s fixture has no subject"
    assert fired(subject, event)
    assert fired(f"!{subject}", event) is False
    assert fired("no-such-value", event) is False
    if name not in LEGACY_AGENT_SUBJECT:  # (those keep a matcher naming the agent: below)
        assert fired("agent", event, name="agent") is False  # not the agent's name


@pytest.mark.parametrize("name", sorted(NO_MATCHER))
def test_an_event_claude_matches_nothing_on_tests_the_agents_name(name: str) -> None:
    event = Event.from_claude(payload(name))
    assert fired("researcher", event, name="researcher")
    assert fired("reviewer", event, name="researcher") is False


@pytest.mark.parametrize(
    ("name", "matcher", "value", "fires"),
    [
        ("SessionStart", "startup", "startup", True),
        ("SessionStart", "startup", "resume", False),
        ("SessionStart", "resume|compact", "compact", True),
        ("SessionEnd", "logout", "logout", True),
        ("SessionEnd", "logout", "clear", False),
        ("PreCompact", "auto", "manual", False),
        ("Notification", "permission_prompt|idle_prompt", "idle_prompt", True),
        ("ConfigChange", "*_settings", "policy_settings", True),
        ("ConfigChange", "*_settings", "skills", False),
        ("StopFailure", "rate_limit", "overloaded", False),
        ("InstructionsLoaded", "session_start", "session_start", True),
        ("UserPromptExpansion", "review", "review", True),
        ("PreModelSwitch", "claude-opus-*", "claude-opus-4-1", True),
        ("Elicitation", "github", "gitlab", False),
    ],
)
def test_subject_matchers_are_globs_over_claudes_values(
    name: str, matcher: str, value: str, fires: bool
) -> None:
    field = SUBJECTS[name]
    assert field is not None
    event = Event.from_claude(payload(name, **{field: value}))
    assert fired(matcher, event) is fires


@pytest.mark.parametrize(
    ("matcher", "path", "fires"),
    [
        (".envrc|.env", "/home/u/p/.envrc", True),
        (".envrc", "/home/u/p/sub/.envrc", True),
        (".env", "/home/u/p/.envrc", False),
        ("*.toml", "C:\\repo\\pyproject.toml", True),
    ],
)
def test_file_changed_matches_the_files_basename(matcher: str, path: str, fires: bool) -> None:
    event = Event.from_claude(payload("FileChanged", file_path=path))
    assert fired(matcher, event) is fires


@pytest.mark.parametrize("name", ["PermissionRequest", "PermissionDenied", "PreSkillShellCommand"])
@pytest.mark.parametrize(
    ("matcher", "command", "fires"),
    [
        ("Bash(git push *)", "git push origin main", True),
        ("Bash(git push *)", "git status", False),
        ("Bash", "git status", True),
        ("Write", "git status", False),
    ],
)
def test_argument_rules_apply_to_every_event_about_a_tool(
    name: str, matcher: str, command: str, fires: bool
) -> None:
    event = Event.from_claude(payload(name, tool_name="Bash", tool_input={"command": command}))
    assert fired(matcher, event) is fires


@pytest.mark.parametrize("name", ["SessionStart", "SessionEnd"])
def test_a_matcher_naming_the_agent_still_fires_on_every_session_event(name: str) -> None:
    """Before hookrails matched them as Claude does, SessionStart and SessionEnd matched the
    agent's name: such a definition keeps working, with a FutureWarning."""
    hook = RecordingHook()
    definition = AgentDefinition(
        name="researcher", hooks={name: [HookMatcher("researcher", hooks=[hook])]}
    )
    with pytest.warns(FutureWarning, match=f"{name} matcher 'researcher' names the agent"):
        guard = Guard(definition, ledger=False)
    field = SUBJECTS[name]
    assert field is not None
    for value in SUBJECT_VALUES[name]:
        guard.emit_sync(Event.from_claude(payload(name, **{field: value})))
    assert len(hook.events) == len(SUBJECT_VALUES[name])


def test_a_matcher_naming_a_source_is_not_taken_for_the_agents_name() -> None:
    definition = AgentDefinition(
        name="resume", hooks={"SessionStart": [HookMatcher("resume", hooks=[RecordingHook()])]}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        guard = Guard(definition, ledger=False)
    assert not guard.emit_sync(Event.from_claude(payload("SessionStart", source="startup"))).runs


def test_check_warns_about_subject_matchers_claude_never_sends(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(
        "name: researcher\n"
        "hooks:\n"
        "  SessionStart:\n"
        "    - matcher: researcher\n"
        "      hooks: [allow]\n"
        "    - matcher: startup\n"
        "      hooks: [allow]\n"
        "  PreCompact:\n"
        "    - matcher: automatic\n"
        "      hooks: [allow]\n"
        "  Stop:\n"
        "    - matcher: researcher\n"
        "      hooks: [allow]\n",
        encoding="utf-8",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = check_definition(str(path))
    text = "\n".join(report.warnings)
    assert f"{path}:4: hooks.SessionStart[0].matcher 'researcher' names the agent" in text
    assert "SessionStart[1]" not in text
    assert f"{path}:9: hooks.PreCompact[0].matcher 'automatic' matches none of the trigger" in text
    assert f"{path}:12: hooks.Stop[0].matcher 'researcher': Claude has no matcher on Stop" in text
