"""The failure policy every Claude host shares (``claude_code.failure_policy``): who fails
closed, how long deciding may take, what Claude is told when it cannot be decided, strict JSON."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from typing import Any

import pytest

from guardrails import AgentDefinition, HookMatcher, PreToolUse
from guardrails._event_table import NAMES, ON_FAILURE_EVENTS, REFUSALS
from guardrails.claude_code.failure_policy import (
    deadline,
    encode,
    fails_closed,
    fails_closed_with,
    failure_decision,
    failure_exit,
    on_failure_counts,
    salvage_event,
    settings_timeout,
    undecided_output,
    verdict,
)
from guardrails.errors import GuardrailsError, OutputError
from guardrails.events import EVENT_NAMES, AgentStop


def noop(event: Any, ctx: Any) -> None:
    return None


def matchers(*on_failure: Any) -> list[HookMatcher]:
    return [HookMatcher(hooks=[noop], on_failure=value) for value in on_failure]


#: (the definition's hooks, event asked about, fails closed?)
CLOSED: list[tuple[dict[str, list[HookMatcher]], str, bool]] = [
    ({"PreToolUse": matchers("continue")}, "PreToolUse", True),  # always
    ({}, "PreToolUse", True),
    ({}, "UserPromptSubmit", True),  # the default of docs/design.md §5
    ({"UserPromptSubmit": matchers("continue")}, "UserPromptSubmit", False),
    ({"UserPromptSubmit": matchers(None)}, "UserPromptSubmit", True),
    ({"AgentStop": matchers(None)}, "Stop", False),
    ({"AgentStop": matchers("block")}, "Stop", True),  # the wire name is an alias
    ({"AgentStop": matchers("block")}, "AgentStop", True),
    ({"SubagentStop": matchers("continue", "block")}, "SubagentStop", True),  # any blocks
    ({"SubagentStop": matchers("continue", None)}, "SubagentStop", False),
    ({"PostToolUse": matchers("block")}, "SessionEnd", False),  # not bound: the default
    ({}, "PostToolUse", False),
]


@pytest.mark.parametrize(("hooks", "event", "closed"), CLOSED)
def test_fails_closed_follows_pretooluse_then_the_matchers_then_the_default(
    hooks: dict[str, list[HookMatcher]], event: str, closed: bool
) -> None:
    assert fails_closed(AgentDefinition(hooks=hooks), event) is closed


@pytest.mark.parametrize(
    ("event", "closed"), [("PreToolUse", True), ("UserPromptSubmit", True), ("Stop", False)]
)
def test_without_a_definition_the_default_decides(event: str, closed: bool) -> None:
    assert fails_closed(None, event) is closed
    assert fails_closed_with(event, []) is closed


@pytest.mark.parametrize("event", [None, "Bogus", "preToolUse"])
def test_an_unknown_event_fails_as_the_caller_says(event: str | None) -> None:
    definition = AgentDefinition(hooks={"PreToolUse": matchers("block")})
    assert fails_closed(definition, event) is False
    assert fails_closed(definition, event, unknown=True) is True


def test_fails_closed_with_reads_declared_values() -> None:
    assert fails_closed_with("Stop", [None, "block"]) is True
    assert fails_closed_with("UserPromptSubmit", ["continue"]) is False
    assert fails_closed_with("PreToolUse", ["continue"]) is True


TIMED = AgentDefinition.from_dict(
    {
        "event_budget": 10,
        "hooks": {
            "PreToolUse": [{"timeout": 2, "hooks": ["allow", {"use": "allow", "timeout": 7}]}],
            "PostToolUse": [{"hooks": ["allow"]}],
            "Stop": [{"timeout": 3, "hooks": ["allow"]}],
        },
    }
)


@pytest.mark.parametrize(
    ("event", "seconds"),
    [
        ("PreToolUse", 10 + 7 + 1),  # the hook's own timeout beats its matcher's
        ("PostToolUse", 10 + 5 + 1),  # DEFAULT_TIMEOUT
        ("Stop", 10 + 3 + 1),  # the matcher's
        ("AgentStop", 10 + 3 + 1),
        ("SessionEnd", 10 + 0 + 1),  # nothing bound: the budget and the grace
    ],
)
def test_the_deadline_is_the_budget_plus_the_longest_hook_timeout_plus_a_second(
    event: str, seconds: float
) -> None:
    assert deadline(TIMED, event) == seconds


@pytest.mark.parametrize(
    "definition",
    [
        TIMED,
        AgentDefinition(),
        AgentDefinition(event_budget=0.25),
        AgentDefinition(event_budget=599.5),
    ],
    ids=["timed", "default", "tiny budget", "odd budget"],
)
def test_the_settings_timeout_outlasts_every_deadline(definition: AgentDefinition) -> None:
    timeout = settings_timeout(definition)
    assert isinstance(timeout, int)
    assert all(timeout > deadline(definition, name) for name in EVENT_NAMES)
    assert timeout == math.ceil(max(deadline(definition, n) for n in EVENT_NAMES) + 5)


DENY = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "why",
    }
}


@pytest.mark.parametrize(
    ("event", "closed", "output"),
    [
        ("PreToolUse", True, DENY),
        ("PreToolUse", False, {"systemMessage": "why"}),
        ("UserPromptSubmit", True, {"decision": "block", "reason": "why"}),
        ("Stop", True, {"decision": "block", "reason": "why"}),
        ("SubagentStop", False, {"systemMessage": "why"}),
        (None, True, {"decision": "block", "reason": "why"}),  # Claude denies a PreToolUse too
        ("Notification", False, {"systemMessage": "why"}),
    ],
)
def test_undecided_output(event: str | None, closed: bool, output: dict[str, Any]) -> None:
    assert undecided_output(event, "why", closed) == output


@pytest.mark.parametrize(
    ("event", "closed", "words"),
    [
        ("PreToolUse", True, "the tool call is denied (fails closed)"),
        (
            "AgentStop",
            True,
            "the Stop event is blocked (on_failure: block): the agent keeps working",
        ),
        (None, True, "blocked (the event is unknown, so it fails closed)"),
        ("PostToolUse", False, "continuing (fails open)"),
    ],
)
def test_verdict_words(event: str | None, closed: bool, words: str) -> None:
    assert verdict(event, closed) == words


def _cycle() -> dict[str, Any]:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    return loop


@pytest.mark.parametrize(
    "value",
    [
        {"updatedInput": {"retries": float("nan")}},
        {"n": float("inf")},
        [float("-inf")],
        {"when": object()},
        {(1, 2): "tuple key"},
        _cycle(),
    ],
    ids=["nan", "inf", "-inf", "object", "tuple key", "cycle"],
)
def test_encode_refuses_what_strict_json_cannot_hold(value: Any) -> None:
    with pytest.raises(OutputError, match="not strict JSON") as err:
        encode(value)
    assert isinstance(err.value, GuardrailsError) and isinstance(err.value, ValueError)


def test_encode_writes_ascii_that_parses_back() -> None:
    value = {"reason": "café \ud800 ok", "n": [1, 2.5, None, True]}
    text = encode(value)
    assert text.isascii() and json.loads(text) == value
    assert text == json.dumps(value, separators=(",", ":"))


@pytest.mark.parametrize(
    ("event", "closed", "decision", "blocked", "outcome"),
    [
        (PreToolUse(tool_name="Bash", tool_input={}), True, "deny", False, "deny"),
        (AgentStop(), True, "allow", True, "block"),
        (AgentStop(), False, "allow", False, "error"),
    ],
)
def test_the_failure_decision_is_what_claude_was_told(
    event: Any, closed: bool, decision: str, blocked: bool, outcome: str
) -> None:
    d = failure_decision(event, "hookrails: why", closed)
    assert (d.decision, d.blocked, d.reason, d.explicit) == (
        decision,
        blocked,
        "hookrails: why",
        closed,
    )
    assert [(r.hook, r.outcome, r.error) for r in d.runs] == [
        ("hookrails", outcome, "hookrails: why")
    ]


def test_salvage_keeps_the_well_typed_fields_of_an_invalid_input() -> None:
    payload = {
        "session_id": "s1",
        "cwd": "/p",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": "ls",  # not an object: left out
        "tool_use_id": "toolu_1",
        "agent_id": 7,  # not a string: left out
    }
    event = salvage_event(payload, "PreToolUse")
    assert isinstance(event, PreToolUse)
    assert (event.session_id, event.tool_name, event.tool_input, event.tool_use_id) == (
        "s1",
        "Bash",
        {},
        "toolu_1",
    )
    assert event.agent_id is None
    assert salvage_event(payload, "NoSuchEvent") is None


def test_importing_the_policy_stays_light() -> None:
    """The hook process imports it before it knows whether a definition will load."""
    code = (
        "import sys, guardrails.claude_code.failure_policy\n"
        "heavy = ['guardrails.definition.model', 'guardrails.events',\n"
        "         'guardrails.dispatch.guard',\n"
        "         'guardrails.ledger.sqlite', 'guardrails.results', 'typing', 'asyncio']\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


# --- per event, as Claude reads each -----------------------------------------------------


@pytest.mark.parametrize("event", NAMES)
def test_only_an_event_claude_lets_a_hook_refuse_can_fail_closed(event: str) -> None:
    blocking = AgentDefinition(hooks={event: matchers("block")})
    assert fails_closed(blocking, event) is (event in REFUSALS)
    assert fails_closed_with(event, ["block"]) is (event in REFUSALS)
    assert on_failure_counts(event) is (event in ON_FAILURE_EVENTS)


@pytest.mark.parametrize(
    ("event", "closed", "code"),
    [
        ("PreToolUse", True, 2),
        ("PermissionRequest", True, 0),  # Claude ignores exit 2: the JSON deny refuses
        ("PermissionRequest", False, 1),
        ("ConfigChange", True, 2),
        ("AgentStop", True, 2),
        ("Notification", False, 1),
        (None, True, 2),
    ],
)
def test_the_exit_code_of_an_undecided_event(event: str | None, closed: bool, code: int) -> None:
    assert failure_exit(event, closed) == code


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (
            "PermissionRequest",
            {"decision": {"behavior": "deny", "message": "why"}},
        ),
        (
            "PreSkillShellCommand",
            {"permissionDecision": "deny", "permissionDecisionReason": "why"},
        ),
        ("PreModelSwitch", {"permissionDecision": "deny", "permissionDecisionReason": "why"}),
        ("Elicitation", {"action": "decline"}),
    ],
)
def test_a_closed_undecided_permission_event_is_denied_as_it_is_answered(
    event: str, expected: dict[str, Any]
) -> None:
    out = undecided_output(event, "why", closed=True)
    assert out["hookSpecificOutput"] == {"hookEventName": event, **expected}
    if event == "Elicitation":
        assert (out["decision"], out["reason"]) == ("block", "why")


@pytest.mark.parametrize(
    ("event", "words"),
    [
        ("PermissionRequest", "the PermissionRequest event is blocked (on_failure: block): the "
         "permission is denied"),
        ("PreCompact", "the compaction does not happen"),
        ("SubagentStop", "the subagent keeps working"),
    ],
)  # fmt: skip
def test_the_verdict_says_what_the_refusal_does(event: str, words: str) -> None:
    assert words in verdict(event, True)
