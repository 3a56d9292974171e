"""Every answer Claude accepts can be produced, on the events where it applies, and merges
across hooks (docs/concepts.md, "What a hook can answer")."""

from __future__ import annotations

import json
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult
from guardrails._event_table import NAMES, OUTPUT_FIELDS, OUTPUT_KEYS, TOP_LEVEL_OUTPUT
from guardrails.approvers import CallbackApprover
from guardrails.definition.hook_refs import Hook
from guardrails.events import Event
from guardrails.results import Decision
from tests._paths import FIXTURES_DIR


def payload(name: str, **changes: Any) -> dict[str, Any]:
    wire = "Stop" if name == "AgentStop" else name
    data: dict[str, Any] = json.loads(
        (FIXTURES_DIR / "claude_payloads" / f"{wire}.json").read_text(encoding="utf-8")
    )
    return {**data, **changes}


def decide(name: str, *answers: Any, privileged: bool = True, **guard_kwargs: Any) -> Decision:
    hooks = [
        Hook(lambda e, c, a=a: a, f"hook{i}", privileged=privileged, kind="command")
        for i, a in enumerate(answers)
    ]
    definition = AgentDefinition(hooks={name: [HookMatcher(hooks=hooks)]})  # type: ignore[dict-item]
    guard = Guard(definition, ledger=False, **guard_kwargs)
    return guard.emit_sync(Event.from_claude(payload(name)))


def specific(d: Decision) -> dict[str, Any]:
    out: dict[str, Any] = d.to_claude().get("hookSpecificOutput", {})
    return out


@pytest.mark.parametrize("name", NAMES)
def test_no_opinion_is_an_empty_answer_on_every_event(name: str) -> None:
    assert decide(name, None).to_claude() == {}
    assert decide(name, HookResult.allow()).to_claude().get("decision") is None


# --- the permission events ---------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "answers", "expected"),
    [
        ("PreToolUse", [HookResult.defer("later")], ("defer", "later")),
        ("PreToolUse", [HookResult.defer("later"), HookResult.ask("human")], ("defer", "later")),
        ("PreToolUse", [HookResult.ask("human"), HookResult.defer("later")], ("defer", "later")),
        ("PreToolUse", [HookResult.defer("later"), HookResult.deny("no")], ("deny", "no")),
        ("PreSkillShellCommand", [HookResult.allow()], ("allow", None)),
        ("PreSkillShellCommand", [HookResult.deny("not here")], ("deny", "not here")),
        ("PreSkillShellCommand", [HookResult.block("not here")], ("deny", "not here")),
        ("PreSkillShellCommand", [HookResult.ask("sure?")], ("ask", "sure?")),
        ("PreSkillShellCommand", [HookResult.defer()], ("defer", None)),
        ("PreModelSwitch", [HookResult.deny("stay on sonnet")], ("deny", "stay on sonnet")),
        ("PreModelSwitch", [HookResult.ask("costly")], ("ask", "costly")),
        ("PreModelSwitch", [HookResult.defer()], (None, None)),
    ],
)
def test_permission_events_answer_a_permission_decision(
    name: str, answers: list[HookResult], expected: tuple[str | None, str | None]
) -> None:
    spec = specific(decide(name, *answers))
    assert (spec.get("permissionDecision"), spec.get("permissionDecisionReason")) == expected
    assert "updatedInput" not in spec


def test_a_defer_never_goes_to_the_approver() -> None:
    asked: list[Any] = []
    approver = CallbackApprover(lambda req: asked.append(req) or True)
    d = decide("PreToolUse", HookResult.defer("host decides"), approver=approver)
    assert (d.decision, d.deferred, asked) == ("ask", True, [])
    assert specific(d)["permissionDecision"] == "defer"


def test_a_rewritten_skill_command_is_refused_as_claude_refuses_it() -> None:
    d = decide("PreSkillShellCommand", HookResult.modify(input={"command": "git status -s"}))
    assert d.denied and "cannot apply" in (d.reason or "")
    assert specific(d) == {
        "hookEventName": "PreSkillShellCommand",
        "permissionDecision": "deny",
        "permissionDecisionReason": d.reason,
    }


@pytest.mark.parametrize(
    ("answers", "expected"),
    [
        ([HookResult.allow()], {"behavior": "allow"}),
        (
            [HookResult.allow(), HookResult.modify(input={"command": "git push origin feat"})],
            {"behavior": "allow", "updatedInput": {"command": "git push origin feat"}},
        ),
        (
            [HookResult("allow", claude={"updatedPermissions": [{"type": "setMode"}]})],
            {"behavior": "allow", "updatedPermissions": [{"type": "setMode"}]},
        ),
        ([HookResult.deny("not main")], {"behavior": "deny", "message": "not main"}),
        ([HookResult.block("not main")], {"behavior": "deny", "message": "not main"}),
        (
            [HookResult.halt("stop everything")],
            {"behavior": "deny", "message": "stop everything", "interrupt": True},
        ),
        ([HookResult.ask("a human decides")], None),
        ([HookResult.allow(), HookResult.deny("no")], {"behavior": "deny", "message": "no"}),
    ],
)
def test_permission_request_answers_claudes_decision_object(
    answers: list[HookResult], expected: dict[str, Any] | None
) -> None:
    assert specific(decide("PermissionRequest", *answers)).get("decision") == expected


def test_permissions_are_not_granted_with_a_deny() -> None:
    d = decide(
        "PermissionRequest",
        HookResult(claude={"updatedPermissions": [{"type": "setMode"}]}),
        HookResult.deny("no"),
    )
    assert specific(d)["decision"] == {"behavior": "deny", "message": "no"}
    assert any("updatedPermissions dropped" in n for n in d.notes)


# --- the events Claude lets a hook refuse, and those it does not ---------------------------

REFUSABLE = [
    "UserPromptExpansion",
    "PostToolBatch",
    "TeammateIdle",
    "TaskCreated",
    "TaskCompleted",
    "PreCompact",
    "ConfigChange",
    "WorktreeCreate",
]
NOT_REFUSABLE = [
    "Notification",
    "SessionStart",
    "SessionEnd",
    "StopFailure",
    "SubagentStart",
    "PostCompact",
    "PostModelSwitch",
    "PermissionDenied",
    "Setup",
    "WorktreeRemove",
    "InstructionsLoaded",
    "CwdChanged",
    "FileChanged",
    "DirectoryAdded",
    "MessageDisplay",
]


@pytest.mark.parametrize("name", REFUSABLE)
def test_a_block_blocks_where_claude_honours_it(name: str) -> None:
    d = decide(name, HookResult.block("not now"), HookResult.allow())
    assert d.blocked and d.to_claude()["decision"] == "block"
    assert [r.outcome for r in d.runs] == ["block", "skipped"]


@pytest.mark.parametrize("name", ["Elicitation", "ElicitationResult"])
def test_a_block_declines_an_elicitation(name: str) -> None:
    out = decide(name, HookResult.deny("not to that server")).to_claude()
    assert out["decision"] == "block" and out["reason"] == "not to that server"
    assert out["hookSpecificOutput"]["action"] == "decline"


@pytest.mark.parametrize("name", NOT_REFUSABLE)
def test_a_block_claude_ignores_is_a_note_not_a_block(name: str) -> None:
    d = decide(name, HookResult.block("no"))
    assert not d.blocked and "decision" not in d.to_claude()
    assert [r.outcome for r in d.runs] == ["block"]
    assert any("Claude cannot block" in n for n in d.notes)


@pytest.mark.parametrize("name", NOT_REFUSABLE)
def test_a_failing_hook_with_on_failure_block_cannot_block_there_either(name: str) -> None:
    def broken(event: Event, ctx: Any) -> None:
        raise RuntimeError("boom")

    definition = AgentDefinition(hooks={name: [HookMatcher(hooks=[broken], on_failure="block")]})
    d = Guard(definition, ledger=False).emit_sync(Event.from_claude(payload(name)))
    assert not d.blocked and "decision" not in d.to_claude()
    assert [r.outcome for r in d.runs] == ["error"]


@pytest.mark.parametrize(
    ("name", "read"),
    [("SessionEnd", False), ("Notification", True), ("Setup", True)],
)
def test_context_goes_only_where_claude_reads_it(name: str, read: bool) -> None:
    d = decide(name, HookResult.inject("remember this"))
    assert ("additionalContext" in specific(d)) is read
    assert bool(d.injections) is read


def test_pre_compact_context_is_the_compactions_instructions() -> None:
    """Claude reads no additionalContext on PreCompact, but adds a hook's output to the
    compaction's custom instructions: an SDK callback's is its systemMessage."""
    d = decide("PreCompact", HookResult.inject("keep the rules"))
    assert [i.text for i in d.injections] == ["keep the rules"]
    out = d.to_claude()
    assert "hookSpecificOutput" not in out and out["systemMessage"] == "keep the rules"
    blocked = decide("PreCompact", HookResult.block("not now")).to_claude()
    assert "systemMessage" not in blocked and blocked["decision"] == "block"


def test_a_halt_stops_claude_on_any_event() -> None:
    out = decide("Notification", HookResult.halt("enough")).to_claude()
    assert (out["continue"], out["stopReason"]) == (False, "enough")


# --- the fields hookrails has no name for (HookResult.claude) -------------------------------

#: a valid value for every Claude output field
VALUES: dict[str, Any] = {
    "sessionTitle": "Bug triage",
    "suppressOriginalPrompt": True,
    "initialUserMessage": "Start with the failing tests.",
    "watchPaths": ["/home/user/project/.envrc"],
    "reloadSkills": True,
    "classifierContext": "The user approved deploys to staging.",
    "updatedPermissions": [{"type": "addRules", "rules": [{"toolName": "Bash"}]}],
    "retry": True,
    "action": "accept",
    "content": {"repo": "acme/web"},
    "worktreePath": "/home/user/project/.claude/worktrees/fix",
    "displayContent": "[redacted]",
    "suppressOutput": True,
    "terminalSequence": "\x1b]0;hookrails\x07",
}
WHERE = [(name, key) for name, keys in sorted(OUTPUT_KEYS.items()) for key in sorted(keys)]


def test_every_output_field_has_a_test_value() -> None:
    assert set(VALUES) == set(OUTPUT_FIELDS)


@pytest.mark.parametrize(("name", "key"), WHERE)
def test_each_field_reaches_claude_on_the_events_that_read_it(name: str, key: str) -> None:
    result = HookResult("allow" if key == "updatedPermissions" else None, claude={key: VALUES[key]})
    spec = specific(decide(name, result))
    if key == "updatedPermissions":
        assert spec["decision"]["updatedPermissions"] == VALUES[key]
    else:
        assert spec[key] == VALUES[key]


@pytest.mark.parametrize("key", sorted(TOP_LEVEL_OUTPUT))
@pytest.mark.parametrize("name", ["PreToolUse", "Notification", "AgentStop", "MessageDisplay"])
def test_top_level_fields_reach_claude_on_every_event(name: str, key: str) -> None:
    assert decide(name, HookResult(claude={key: VALUES[key]})).to_claude()[key] == VALUES[key]


@pytest.mark.parametrize(
    ("name", "key"),
    [("PreToolUse", "sessionTitle"), ("Notification", "watchPaths"), ("AgentStop", "retry")],
)
def test_a_field_claude_does_not_read_on_the_event_is_noted_and_dropped(
    name: str, key: str
) -> None:
    d = decide(name, HookResult(claude={key: VALUES[key]}))
    assert key not in json.dumps(d.to_claude())
    assert any(f"{key} ignored on {name}" in n for n in d.notes)


@pytest.mark.parametrize(
    ("name", "key", "values", "merged"),
    [
        ("SessionStart", "watchPaths", (["/a", "/b"], ["/b", "/c"]), ["/a", "/b", "/c"]),
        ("SessionStart", "sessionTitle", ("first", "second"), "first"),
        ("SessionStart", "reloadSkills", (False, True), True),
        ("PermissionDenied", "retry", (True, False), False),
        ("PermissionDenied", "retry", (True, True), True),
        ("PostToolUse", "classifierContext", ("one", "two"), "one\n\ntwo"),
        ("UserPromptSubmit", "suppressOriginalPrompt", (True, False), True),
    ],
)
def test_several_hooks_fields_merge(
    name: str, key: str, values: tuple[Any, Any], merged: Any
) -> None:
    d = decide(name, *(HookResult(claude={key: v}) for v in values))
    assert specific(d)[key] == merged


def test_a_later_single_valued_field_is_noted() -> None:
    d = decide("SessionStart", *(HookResult(claude={"sessionTitle": t}) for t in ("a", "b")))
    assert any("sessionTitle ignored, an earlier hook set it" in n for n in d.notes)


def test_an_mcp_tools_rewritten_output_reaches_older_clis_too() -> None:
    d = decide("PostToolUse", HookResult.modify(output={"ok": True}))
    assert "updatedMCPToolOutput" not in specific(d)
    definition = AgentDefinition(
        hooks={"PostToolUse": [HookMatcher(hooks=[lambda e, c: HookResult.modify(output=[1])])]}
    )
    event = Event.from_claude(payload("PostToolUse", tool_name="mcp__github__get_issue"))
    spec = specific(Guard(definition, ledger=False).emit_sync(event))
    assert spec["updatedToolOutput"] == spec["updatedMCPToolOutput"] == [1]


# --- privilege --------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(set(OUTPUT_FIELDS) - {"suppressOutput"}))
def test_an_unprivileged_hook_may_not_give_fields_that_change_what_claude_does(key: str) -> None:
    name = (
        next(n for n, keys in OUTPUT_KEYS.items() if key in keys)
        if key not in TOP_LEVEL_OUTPUT
        else "Notification"
    )
    d = decide(name, HookResult(claude={key: VALUES[key]}), privileged=False)
    assert [r.outcome for r in d.runs] == ["refused"]
    assert key not in json.dumps(d.to_claude())


def test_an_unprivileged_hook_may_suppress_output_and_its_refusal_stands() -> None:
    d = decide("Notification", {"suppressOutput": True}, privileged=False)
    assert d.to_claude() == {"suppressOutput": True}
    d = decide(
        "ConfigChange",
        HookResult("block", "policy", claude={"sessionTitle": "x"}),
        privileged=False,
    )
    assert d.blocked and "sessionTitle" not in json.dumps(d.to_claude())


# --- Claude-shaped answers ---------------------------------------------------------------


@pytest.mark.parametrize(("name", "key"), WHERE)
def test_a_claude_shaped_answer_using_any_field_claude_reads_is_never_invalid(
    name: str, key: str
) -> None:
    spec: dict[str, Any] = {"hookEventName": name}
    if key == "updatedPermissions":
        spec["decision"] = {"behavior": "allow", key: VALUES[key]}
    else:
        spec[key] = VALUES[key]
    d = decide(name, {"hookSpecificOutput": spec})
    assert [r.outcome for r in d.runs] != ["invalid"], d.runs
    assert d.to_claude()["hookSpecificOutput"] == spec


def test_classifier_context_from_a_command_hook_is_an_answer_not_a_failure() -> None:
    """The bug in the issue: classifierContext made a hook count as failed."""
    answer = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "classifierContext": "ok"}}
    d = decide("PostToolUse", answer)
    assert [r.outcome for r in d.runs] == ["noop"]
    assert specific(d)["classifierContext"] == "ok"


def test_a_field_for_another_event_in_a_claude_shaped_answer_is_noted_not_invalid() -> None:
    d = decide("PreToolUse", {"hookSpecificOutput": {"hookEventName": "X", "watchPaths": ["/a"]}})
    assert [r.outcome for r in d.runs] == ["noop"]
    assert any("watchPaths ignored on PreToolUse" in n for n in d.notes)


def hso(**fields: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "X", **fields}}


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (hso(sesionTitle="a"), "did you mean 'sessionTitle'"),
        ({"terminalSequense": "x"}, "did you mean 'terminalSequence'"),
        (hso(updatedPermissions=[]), "updatedPermissions"),
        (hso(watchPaths="/a"), "watchPaths must be an array of strings"),
        (hso(retry="yes"), "retry must be a boolean"),
        (hso(action="maybe"), "action must be accept, decline or cancel"),
        (hso(decision={"behavior": "ask"}), "behavior must be allow or deny"),
        (hso(decision={"behavior": "deny", "interrupt": 1}), "interrupt must be a boolean"),
        (hso(decision={"behavior": "allow", "message": "m"}), "decision.'message'"),
    ],
)
def test_what_claude_would_reject_is_invalid_naming_the_field(
    answer: dict[str, Any], words: str
) -> None:
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace("'", "'")):
        HookResult.from_claude(answer)
    d = decide("PermissionRequest", answer)
    assert [r.outcome for r in d.runs] == ["invalid"]


ALLOW_REWRITTEN = HookResult("allow", updated_input={"a": 1})


@pytest.mark.parametrize(
    ("decision", "expected"),
    [
        ({"behavior": "allow"}, HookResult("allow")),
        ({"behavior": "allow", "updatedInput": {"a": 1}}, ALLOW_REWRITTEN),
        ({"behavior": "deny", "message": "no"}, HookResult("deny", "no")),
        ({"behavior": "deny", "message": "no", "interrupt": True}, HookResult("halt", "no")),
        ({"behavior": "deny", "interrupt": False}, HookResult("deny")),
    ],
)  # fmt: skip
def test_permission_request_decisions_are_read(
    decision: dict[str, Any], expected: HookResult
) -> None:
    answer = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}
    assert HookResult.from_claude(answer) == expected


@pytest.mark.parametrize(
    "result",
    [
        HookResult.allow(),
        HookResult.deny("no"),
        HookResult.halt("stop"),
        HookResult("allow", claude={"updatedPermissions": VALUES["updatedPermissions"]}),
    ],
)
def test_a_permission_request_answer_reads_back_as_it_was_given(result: HookResult) -> None:
    out = decide("PermissionRequest", result).to_claude()
    back = HookResult.from_claude(out)
    assert (back.decision, back.claude) == (result.decision, result.claude)
