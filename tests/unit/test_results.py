"""HookResult (what one hook answers) and Decision.to_claude (what the host is told)."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from guardrails import AgentDefinition, Decision, Guard, HookMatcher, HookResult
from guardrails._package_data import data_path
from guardrails.results import UNSET

OUTPUT_SCHEMA = json.loads(
    (data_path("schemas") / "hooks" / "hook-output.json").read_text(encoding="utf-8")
)

# --- HookResult constructors --------------------------------------------------------


@pytest.mark.parametrize(
    ("made", "expected"),
    [
        (HookResult.allow(), HookResult(decision="allow")),
        (HookResult.allow("read-only"), HookResult(decision="allow", reason="read-only")),
        (HookResult.deny("no"), HookResult(decision="deny", reason="no")),
        (
            HookResult.deny("no", hint="try X"),
            HookResult(decision="deny", reason="no", hint="try X"),
        ),
        (HookResult.ask("sure?"), HookResult(decision="ask", reason="sure?")),
        (HookResult.block("keep going"), HookResult(decision="block", reason="keep going")),
        (HookResult.halt("quota"), HookResult(decision="halt", reason="quota")),
        (HookResult.inject("ctx"), HookResult(additional_context="ctx")),
        (HookResult.modify(input={"a": 1}), HookResult(updated_input={"a": 1})),
        (HookResult.modify(output="new"), HookResult(updated_output="new")),
        (HookResult.modify(output=None), HookResult(updated_output=None)),
        (HookResult.modify(input={}, reason="why"), HookResult(reason="why", updated_input={})),
    ],
)
def test_constructor_builds_the_result(made: HookResult, expected: HookResult) -> None:
    assert made == expected


def test_default_result_has_no_opinion() -> None:
    r = HookResult()
    assert (r.decision, r.reason, r.updated_input, r.additional_context, r.system_message) == (
        None,
        None,
        None,
        None,
        None,
    )
    assert r.updated_output is UNSET


def test_modify_output_none_is_a_rewrite_not_unset() -> None:
    assert HookResult.modify(output=None).updated_output is None
    assert HookResult.modify(input={"a": 1}).updated_output is UNSET


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"decision": "Deny"}, "decision must be one of"),
        ({"decision": "approve"}, "decision must be one of"),
        ({"updated_input": ["ls"]}, "updated_input must be a dict"),
        ({"updated_input": "ls"}, "updated_input must be a dict"),
    ],
)
def test_invalid_result_raises_value_error(kwargs: dict[str, Any], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        HookResult(**kwargs)


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (
            HookResult.deny("no force-push", hint="open a pull request"),
            "no force-push\nopen a pull request",
        ),
        (HookResult.deny("no force-push"), "no force-push"),
        (HookResult(hint="only a hint"), "only a hint"),
        (HookResult(), ""),
        (HookResult.block(""), ""),
    ],
)
def test_message_is_reason_then_hint(result: HookResult, message: str) -> None:
    assert result.message == message


# --- HookResult.from_claude ---------------------------------------------------------


def pre(**spec: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **spec}}


def post(**spec: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse", **spec}}


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ({}, HookResult()),
        (pre(permissionDecision="allow"), HookResult("allow")),
        (pre(permissionDecision="deny", permissionDecisionReason="no"), HookResult("deny", "no")),
        (
            pre(permissionDecision="ask", permissionDecisionReason="sure?"),
            HookResult("ask", "sure?"),
        ),
        (pre(permissionDecision="defer"), HookResult("defer")),
        (
            pre(permissionDecision="allow", updatedInput={"command": "ls -la"}),
            HookResult("allow", updated_input={"command": "ls -la"}),
        ),
        (pre(updatedInput={"command": "ls"}), HookResult(updated_input={"command": "ls"})),
        (pre(additionalContext="see docs"), HookResult(additional_context="see docs")),
        (post(updatedToolOutput={"stdout": "x"}), HookResult(updated_output={"stdout": "x"})),
        (post(updatedToolOutput=None), HookResult(updated_output=None)),
        (post(updatedMCPToolOutput=[1]), HookResult(updated_output=[1])),
        ({"decision": "block", "reason": "keep going"}, HookResult("block", "keep going")),
        ({"decision": "block"}, HookResult("block")),
        ({"decision": "approve"}, HookResult("allow")),
        ({"decision": "approve", **pre(permissionDecision="deny")}, HookResult("deny")),
        ({"continue": False, "stopReason": "quota spent"}, HookResult("halt", "quota spent")),
        ({"continue_": False}, HookResult("halt", "halted by hook")),
        ({"continue": True}, HookResult()),
        ({"systemMessage": "checked 3 files"}, HookResult(system_message="checked 3 files")),
        ({"async": True, "asyncTimeout": 30000}, HookResult()),
        ({"suppressOutput": True}, HookResult(claude={"suppressOutput": True})),
        (
            {"continue": False, "stopReason": "stop", **pre(permissionDecision="allow")},
            HookResult("halt", "stop"),
        ),
    ],
)
def test_from_claude_reads_the_output(output: dict[str, Any], expected: HookResult) -> None:
    assert HookResult.from_claude(output) == expected


@pytest.mark.parametrize(
    ("output", "words"),
    [
        (None, "expected a dict, got NoneType"),
        ([], "expected a dict, got list"),
        ('{"decision": "block"}', "expected a dict, got str"),
        (pre(permissionDecision="Deny"), "permissionDecision must be allow, deny, ask or defer"),
        (pre(permissionDecision=True), "permissionDecision"),
        (pre(permissionDecision="deny", permissionDecisionReason=3), "permissionDecisionReason"),
        (pre(updatedInput=["ls"]), "updatedInput must be an object"),
        (pre(updatedInput="ls"), "updatedInput must be an object"),
        (pre(additionalContext=["a"]), "additionalContext must be a string"),
        ({"hookSpecificOutput": "PreToolUse"}, "hookSpecificOutput must be an object"),
        ({"continue": "false"}, "continue must be a boolean"),
        ({"continue": 0}, "continue must be a boolean"),
        ({"continue": False, "stopReason": 3}, "stopReason must be a string"),
        ({"decision": "maybe"}, "decision must be 'block'"),
        ({"decision": "deny"}, "decision must be 'block'"),
        ({"decision": "block", "reason": ["x"]}, "reason must be a string"),
        ({"systemMessage": 1}, "systemMessage must be a string"),
    ],
)
def test_from_claude_rejects_invalid_output(output: Any, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        HookResult.from_claude(output)


# --- Decision.to_claude, from a real Guard --------------------------------------------

TOOL_INPUT = {"command": "git push --force"}


def returning(*results: Any) -> list[Callable[..., Any]]:
    def make(i: int, r: Any) -> Callable[..., Any]:
        def hook(event: Any, ctx: Any) -> Any:
            if isinstance(r, BaseException):
                raise r
            return r

        hook.hook_name = f"hook{i}"  # type: ignore[attr-defined]
        return hook

    return [make(i, r) for i, r in enumerate(results)]


EMIT: dict[str, Callable[[Guard], Decision]] = {
    "PreToolUse": lambda g: g.sync.pre_tool_use("Bash", dict(TOOL_INPUT)),
    "PostToolUse": lambda g: g.sync.post_tool_use("Bash", dict(TOOL_INPUT), {"stdout": "ok"}),
    "PostToolUseFailure": lambda g: g.sync.post_tool_use_failure("Bash", {}, "exit 1"),
    "UserPromptSubmit": lambda g: g.sync.user_prompt_submit("ship it"),
    "SubagentStart": lambda g: g.sync.subagent_start("a1", "researcher"),
    "SubagentStop": lambda g: g.sync.subagent_stop("a1", "researcher"),
    "AgentStop": lambda g: g.sync.agent_stop("done"),
    "SessionStart": lambda g: g.sync.session_start("startup"),
    "SessionEnd": lambda g: g.sync.session_end("other"),
}


def decide(event: str, *results: Any) -> Decision:
    hooks = {event: [HookMatcher(hooks=returning(*results))]} if results else {}
    return EMIT[event](Guard(AgentDefinition(hooks=hooks)))


def spec(event: str, **fields: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event, **fields}}


CASES: list[tuple[str, str, tuple[Any, ...], dict[str, Any]]] = [
    ("no hooks", "PreToolUse", (), {}),
    ("no opinion", "PreToolUse", (None, HookResult()), {}),
    (
        "deny with reason",
        "PreToolUse",
        (HookResult.deny("force-push is not allowed", hint="open a pull request"),),
        spec(
            "PreToolUse",
            permissionDecision="deny",
            permissionDecisionReason="force-push is not allowed\nopen a pull request",
        ),
    ),
    (
        "ask",
        "PreToolUse",
        (HookResult.ask("pushes need a human"),),
        spec(
            "PreToolUse", permissionDecision="ask", permissionDecisionReason="pushes need a human"
        ),
    ),
    (
        "allow with updated input",
        "PreToolUse",
        (HookResult("allow", "made safe", updated_input={"command": "git push"}),),
        spec(
            "PreToolUse",
            permissionDecision="allow",
            permissionDecisionReason="made safe",
            updatedInput={"command": "git push"},
        ),
    ),
    (
        "modify without an opinion",
        "PreToolUse",
        (HookResult.modify(input={"command": "git push"}),),
        spec("PreToolUse", updatedInput={"command": "git push"}),
    ),
    (
        "deny after a rewrite drops the rewrite",
        "PreToolUse",
        (HookResult.modify(input={"command": "git push"}), HookResult.deny("no pushes today")),
        spec("PreToolUse", permissionDecision="deny", permissionDecisionReason="no pushes today"),
    ),
    (
        "deny wins over a later allow",
        "PreToolUse",
        (HookResult.deny("no"), HookResult.allow("fine")),
        spec("PreToolUse", permissionDecision="deny", permissionDecisionReason="no"),
    ),
    (
        "inject keeps the host's permission flow",
        "PreToolUse",
        (HookResult.inject("remember the style guide"),),
        spec("PreToolUse", additionalContext="remember the style guide"),
    ),
    (
        "a failing hook fails closed",
        "PreToolUse",
        (RuntimeError("db down"),),
        spec(
            "PreToolUse",
            permissionDecision="deny",
            permissionDecisionReason="hook hook0 failed (error: RuntimeError: db down); "
            "blocking because on_failure=block",
        ),
    ),
    (
        "Claude-shaped dict with defer",
        "PreToolUse",
        (pre(permissionDecision="defer", permissionDecisionReason="later"),),
        spec("PreToolUse", permissionDecision="defer", permissionDecisionReason="later"),
    ),
    (
        "halt on a tool call",
        "PreToolUse",
        (HookResult.halt("budget spent"),),
        {
            **spec(
                "PreToolUse", permissionDecision="deny", permissionDecisionReason="budget spent"
            ),
            "continue": False,
            "stopReason": "budget spent",
        },
    ),
    (
        "PostToolUse updated output",
        "PostToolUse",
        (HookResult.modify(output={"stdout": "[redacted]"}),),
        spec("PostToolUse", updatedToolOutput={"stdout": "[redacted]"}),
    ),
    (
        "PostToolUse updated output to null",
        "PostToolUse",
        (HookResult.modify(output=None),),
        spec("PostToolUse", updatedToolOutput=None),
    ),
    (
        "PostToolUse contexts accumulate",
        "PostToolUse",
        (HookResult.inject("first"), HookResult.inject("second")),
        spec("PostToolUse", additionalContext="first\n\nsecond"),
    ),
    (
        "PostToolUse block",
        "PostToolUse",
        (HookResult.block("output leaks a key"),),
        {"decision": "block", "reason": "output leaks a key"},
    ),
    (
        "PostToolUseFailure inject",
        "PostToolUseFailure",
        (HookResult.inject("the schema says ..."),),
        spec("PostToolUseFailure", additionalContext="the schema says ..."),
    ),
    (
        "block on Stop",
        "AgentStop",
        (HookResult.block("report.md is missing"),),
        {"decision": "block", "reason": "report.md is missing"},
    ),
    (
        "context on Stop uses the wire name",
        "AgentStop",
        (HookResult.inject("almost there"),),
        spec("Stop", additionalContext="almost there"),
    ),
    (
        "block on SubagentStop",
        "SubagentStop",
        (HookResult.block("Retry required: report.md missing"),),
        {"decision": "block", "reason": "Retry required: report.md missing"},
    ),
    (
        "block a prompt",
        "UserPromptSubmit",
        (HookResult.block("no secrets in prompts"),),
        {"decision": "block", "reason": "no secrets in prompts"},
    ),
    (
        "halt on a prompt",
        "UserPromptSubmit",
        (HookResult.halt("session closed"),),
        {"continue": False, "stopReason": "session closed"},
    ),
    (
        "system messages",
        "SessionStart",
        (HookResult(system_message="ledger: on"), HookResult(system_message="3 hooks loaded")),
        {"systemMessage": "ledger: on\n3 hooks loaded"},
    ),
    (
        "SessionStart context",
        "SessionStart",
        (HookResult.inject("project rules: ..."),),
        spec("SessionStart", additionalContext="project rules: ..."),
    ),
    (
        "SubagentStart context",
        "SubagentStart",
        (HookResult.inject("you are the researcher"),),
        spec("SubagentStart", additionalContext="you are the researcher"),
    ),
    ("SessionEnd has no context output", "SessionEnd", (HookResult.inject("bye"),), {}),
]


@pytest.mark.parametrize(
    ("event", "results", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_decision_to_claude_has_the_right_shape(
    event: str, results: tuple[Any, ...], expected: dict[str, Any]
) -> None:
    assert decide(event, *results).to_claude() == expected


@pytest.mark.parametrize(("event", "results"), [c[1:3] for c in CASES], ids=[c[0] for c in CASES])
def test_decision_to_claude_validates_against_hook_output_schema(
    event: str, results: tuple[Any, ...]
) -> None:
    errors = [
        e.message
        for e in Draft202012Validator(OUTPUT_SCHEMA).iter_errors(
            decide(event, *results).to_claude()
        )
    ]
    assert errors == []


@pytest.mark.parametrize(
    ("event", "results", "kind"),
    [
        ("PreToolUse", (HookResult.deny("no"),), "deny"),
        ("PreToolUse", (HookResult.ask("sure?"),), "ask"),
        ("PreToolUse", (HookResult.allow("ok"),), "allow"),
        ("PreToolUse", (), None),
        ("AgentStop", (HookResult.block("not done"),), "block"),
        ("UserPromptSubmit", (HookResult.halt("quota"),), "halt"),
    ],
)
def test_to_claude_reads_back_as_the_same_verdict(
    event: str, results: tuple[Any, ...], kind: str | None
) -> None:
    decision = decide(event, *results)
    back = HookResult.from_claude(decision.to_claude())
    assert (back.decision, back.reason) == (kind, decision.reason)


def test_long_merged_context_still_validates() -> None:
    d = decide("PostToolUse", HookResult.inject("a" * 9000), HookResult.inject("b" * 9000))
    out = d.to_claude()
    assert len(out["hookSpecificOutput"]["additionalContext"]) == 18002
    assert Draft202012Validator(OUTPUT_SCHEMA).is_valid(out)


@pytest.mark.parametrize(
    "output",
    [
        pre(permissionDecision="Deny"),
        {"decision": "maybe"},
        {"continue": "no"},
        {"hookSpecificOutput": {"permissionDecision": "deny"}},
        {"systemMessage": 5},
    ],
)
def test_hook_output_schema_rejects_malformed_output(output: dict[str, Any]) -> None:
    assert not Draft202012Validator(OUTPUT_SCHEMA).is_valid(output)


@pytest.mark.parametrize(
    "output",
    [
        {"permissionDecision": "deny"},
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permisionDecision": "deny"}},
        {"Decision": "block"},
    ],
    ids=["decision-outside-hookSpecificOutput", "typo-in-hookSpecificOutput", "wrong-case"],
)
def test_misshapen_claude_outputs_are_invalid_not_silently_no_opinion(output: dict) -> None:
    with pytest.raises(ValueError, match="unknown key"):
        HookResult.from_claude(output)


@pytest.mark.parametrize(
    "clone", [copy.copy, copy.deepcopy, lambda v: pickle.loads(pickle.dumps(v))]
)
def test_unset_stays_unset_through_copy_and_pickle(clone: Any) -> None:
    """A copied decision must still say "no rewritten output", not rewrite it to a stranger."""
    assert clone(UNSET) is UNSET
    decision = clone(Decision(event=None))
    assert decision.updated_output is UNSET


# --- settling a decision against the session state the ledger holds ----------------------


def _injected(*texts: tuple[str, str]) -> Decision:
    from guardrails.events import PreToolUse
    from guardrails.results import HookRun, ModelContext

    d = Decision(PreToolUse(tool_name="Bash", tool_input={"command": "ls"}, tool_use_id="t"))
    d._raw.append(HookRun("quiet", "*", 100, "noop", 1.0))
    for hook, text in texts:
        d.injections.append(ModelContext(hook, text))
        d._raw.append(HookRun(hook, "*", 100, "inject", 1.0, None, len(text)))
    return d


#: (room left, (context kept per hook), notes)
CUTS = [
    (100, [("a", 4), ("b", 3)], []),
    (5, [("a", 4), ("b", 1)], ["b: context cut to the turn's remaining budget (1)"]),
    (4, [("a", 4)], ["b: context dropped, the turn's injection budget is spent"]),
    (0, [], ["a: context dropped, the turn's injection budget is spent",
             "b: context dropped, the turn's injection budget is spent"]),
]  # fmt: skip


@pytest.mark.parametrize(("room", "kept", "notes"), CUTS)
def test_cut_context_keeps_what_fits_and_the_runs_follow(
    room: int, kept: list[tuple[str, int]], notes: list[str]
) -> None:
    d = _injected(("a", "aaaa"), ("b", "bbb"))
    d.cut_context(room)
    assert [(c.hook, len(c.text)) for c in d.injections] == kept
    full = {"a": 4, "b": 3}
    assert [c.truncated for c in d.injections] == [n < full[h] for h, n in kept]
    counts = dict(kept)
    assert [(r.hook, r.injected_chars) for r in d.runs] == [
        ("quiet", 0), ("a", counts.get("a", 0)), ("b", counts.get("b", 0))
    ]  # fmt: skip
    assert d.notes == notes


def test_refuse_halted_denies_and_drops_the_context() -> None:
    d = _injected(("a", "aaaa"))
    d.explicit = True
    d.refuse_halted("the budget is spent")
    d.refuse_halted("the budget is spent")  # settled again: a batch written one by one after
    assert (d.decision, d.halted, d.explicit, d.injections) == ("deny", True, True, [])
    assert d.reason == "the agent was halted: the budget is spent"
    assert [r.injected_chars for r in d.runs] == [0, 0]
    assert d.notes == [
        "denied: the agent was halted before this call was recorded (the budget is spent)"
    ]
    out = d.to_claude()
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert (out["continue"], "additionalContext" in out["hookSpecificOutput"]) == (False, False)
