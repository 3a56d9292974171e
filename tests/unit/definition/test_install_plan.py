"""The matchers `hookrails claude install` writes are never narrower than hookrails' own.

The proof is table-driven: for every hookrails matcher below and every tool
name, a call hookrails' matcher can match must be one Claude Code fires the
written handler for (by the model of Claude's matching, ``claude_fires``, which
is itself checked against what the real CLI 2.1.332 fired, in
tests/hosts/test_claude_agent_sdk.py's table and tests/e2e/test_claude_install.py).
"""

from __future__ import annotations

import pytest

from guardrails.definition.install_plan import (
    EventPlan,
    claude_fires,
    coverage_tag,
    plan_event,
    plan_matchers,
)
from guardrails.definition.matchers import Pattern
from guardrails.definition.model import AgentDefinition, HookMatcher, ToolSpec
from tests.hosts.test_claude_agent_sdk import SUBJECTS, TRANSLATIONS

TOOLS = [
    "Bash", "Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS",
    "TodoWrite", "WebFetch", "WebSearch", "Agent", "Task", "TaskStop", "BashOutput",
    "mcp__github__get_issue", "mcp__github__create_pr", "mcp__brave-search__web_search",
    "mcp__plugin_x_srv__tool", "bash", "Bash2", "XBash", "Ba", "deploy", "deploy-prod",
    "a.b", "a+b", "a b", "a,b", "(x)", "tool.v1", "ünïcode", "x\ny", "", "*", "{a,b}",
    "mcp__a.b__c", "日本",
]  # fmt: skip

#: hookrails matchers (alone on an event), and the plan written: a matcher string, or
#: None (every tool) with a word of the reason
MATCHERS: list[tuple[str | None, str | None]] = [
    (None, None),
    ("*", None),
    ("Bash", "Bash"),
    ("Bash|Read", "Bash|Read"),
    ("Write|Edit|MultiEdit|NotebookEdit|Bash", "Write|Edit|MultiEdit|NotebookEdit|Bash"),
    ("Bash(git push --force*)", "Bash"),
    ("Bash(git push --force*)|Bash(git push -f*)", "Bash"),
    ("Bash(curl * | sh)|Read", "Bash|Read"),
    ("mcp__github__*", "^(?:mcp__github__[\\s\\S]*)$"),
    ("mcp__*|Bash", "^(?:mcp__[\\s\\S]*|Bash)$"),
    ("Bash?", "^(?:Bash(?:[\\uD800-\\uDBFF][\\uDC00-\\uDFFF]|[\\s\\S]))$"),
    ("{Read,Write}", "^(?:(?:Read|Write))$"),
    ("deploy{,-prod}", "^(?:deploy(?:|-prod))$"),
    ("{a,{b,c}}x", "^(?:(?:a|(?:b|c))x)$"),
    ("a.b", "^(?:a\\.b)$"),
    ("a+b", "^(?:a\\+b)$"),
    ("\\*", "^(?:\\*)$"),
    ("x\\(y\\)", "^(?:x\\(y\\))$"),
    ("mcp__brave-search__*", "^(?:mcp__brave-search__[\\s\\S]*)$"),
    ("deploy(prod*)", "deploy"),
    ("Bash-x", "Bash-x"),
    ("日本", "^(?:日本)$"),
    ("!Read", None),
    ("!Read|Write", None),
    ("re:Bash|Read", None),
    ("re:mcp__.*", None),
    ("[BR]ash", None),
    ("Bash[0-9]", None),
    ("tool{1..3}", None),
    ("{Bash}", None),
    ("*(x)", None),
    ("*sh", "^(?:[\\s\\S]*sh)$"),
    ("?", "^(?:(?:[\\uD800-\\uDBFF][\\uDC00-\\uDFFF]|[\\s\\S]))$"),
]


@pytest.mark.parametrize(("matcher", "written"), MATCHERS, ids=[str(m) for m, _ in MATCHERS])
def test_the_written_matcher_is_the_expected_one(matcher: str | None, written: str | None) -> None:
    plan = plan_matchers("PreToolUse", [(matcher, False)])
    assert plan.matcher == written
    assert (plan.broad_because is not None) == (written is None)


@pytest.mark.parametrize(("matcher", "written"), MATCHERS, ids=[str(m) for m, _ in MATCHERS])
def test_every_call_hookrails_matches_reaches_it(matcher: str | None, written: str | None) -> None:
    pattern = Pattern(matcher)
    plan = plan_matchers("PreToolUse", [(matcher, False)])
    for tool in TOOLS:
        if pattern.matches_name(tool):
            assert claude_fires(plan.matcher, tool), (matcher, plan.matcher, tool)


def test_narrow_matchers_leave_other_tools_out() -> None:
    """Narrow means narrow: the written matcher fires on no tool hookrails cannot match."""
    for matcher, written in MATCHERS:
        if written is None:
            continue
        pattern = Pattern(matcher)
        fired = {t for t in TOOLS if claude_fires(written, t)}
        assert fired == {t for t in TOOLS if pattern.matches_name(t)}, matcher


#: several matchers on one event: the union, or every tool when one cannot be narrowed
EVENTS: list[tuple[list[str | None], str | None]] = [
    (["Bash", "Write|Edit"], "Bash|Write|Edit"),
    (["Bash(rm *)", "Bash"], "Bash"),
    (["Bash", "mcp__x__*"], "^(?:Bash|mcp__x__[\\s\\S]*)$"),
    (["Bash", "!Read"], None),
    (["Bash", None], None),
    (["Bash", "re:.*"], None),
]


@pytest.mark.parametrize(("matchers", "written"), EVENTS)
def test_an_event_writes_the_union_of_its_matchers(
    matchers: list[str | None], written: str | None
) -> None:
    plan = plan_matchers("PostToolUse", [(m, False) for m in matchers])
    assert plan.matcher == written
    for tool in TOOLS:
        if any(Pattern(m).matches_name(tool) for m in matchers):
            assert claude_fires(plan.matcher, tool)


#: (the event's matchers, the ``if`` written): only a lone plain-word Bash rule gets one
CONDITIONS: list[tuple[list[str], str | None]] = [
    (["Bash(git push --force*)"], "Bash(git push --force*)"),
    (["Bash(ls)"], "Bash(ls)"),
    (["Bash(git push *)"], "Bash(git push *)"),
    (["Bash(git push --force*)", "Bash(git push --force*)"], "Bash(git push --force*)"),
    (["Bash(git push --force*)|Bash(git push -f*)"], None),  # two rules: one if cannot say it
    (["Bash(git push *)", "Bash"], None),
    (["Bash(* --force)"], None),  # a name-only matcher wants every command
    (["Bash(curl * | sh)"], None),  # Claude splits at the pipe: narrower than ours
    (["Bash(*secret*)"], None),  # Claude drops comments: "echo hi # secret"
    (["Bash(npm run test:*)"], None),  # Claude's legacy prefix form
    (["Bash(rm -rf /*)"], "Bash(rm -rf /*)"),
    (["Bash(echo $HOME*)"], None),
    (["Bash(a  b*)"], None),  # two spaces
    (["Read(.env)"], None),  # paths: Claude resolves them its own way
    (["Bash(git *)", "Read"], None),
]


@pytest.mark.parametrize(("matchers", "condition"), CONDITIONS)
def test_if_is_written_only_where_claude_evaluates_it_as_widely(
    matchers: list[str], condition: str | None
) -> None:
    plan = plan_matchers("PreToolUse", [(m, False) for m in matchers])
    assert plan.condition == condition
    assert plan_matchers("PostToolUse", [(m, False) for m in matchers]).condition is None


def test_no_if_when_the_definition_tests_another_argument_of_bash() -> None:
    definition = AgentDefinition(
        name="x",
        tools={"Bash": ToolSpec(primary_arg="description")},
        hooks={"PreToolUse": [HookMatcher("Bash(git push*)", ["allow"])]},
    )
    plan = plan_event("PreToolUse", definition.hooks["PreToolUse"], definition.arg_of)
    assert (plan.matcher, plan.condition) == ("Bash", None)


def test_scopes_are_left_to_hookrails() -> None:
    """agents=/tenants= only narrow a matcher: the name alone is a superset."""
    matcher = HookMatcher("Bash", ["allow"], agents=["worker"], tenants=["acme"])
    assert plan_event("PreToolUse", [matcher]).matcher == "Bash"


def test_events_without_a_tool_subject_are_not_narrowed() -> None:
    matcher = HookMatcher("worker", ["allow"])
    assert plan_event("SubagentStop", [matcher]) == EventPlan("SubagentStop", None)


def test_the_coverage_tag_changes_with_the_plan() -> None:
    a = plan_matchers("PreToolUse", [("Bash", False)])
    assert coverage_tag(a) == coverage_tag(plan_matchers("PreToolUse", [("Bash", False)]))
    others = [
        plan_matchers("PreToolUse", [("Bash|Read", False)]),
        plan_matchers("PreToolUse", [("Bash(git *)", False)]),
        plan_matchers("PostToolUse", [("Bash", False)]),
        plan_matchers("PreToolUse", [(None, False)]),
    ]
    assert len({coverage_tag(p) for p in [a, *others]}) == 5


@pytest.mark.parametrize(("claude", "ours", "fires"), TRANSLATIONS)
def test_the_model_never_claims_a_fire_the_real_cli_does_not(
    claude: str | None, ours: str | None, fires: set[str]
) -> None:
    """claude_fires is a subset of what CLI 2.1.332 fired (observed table): what the model
    says fires does (aliases such as Task -> Agent only add)."""
    modelled = {s for s in SUBJECTS if claude_fires(claude, s)}
    assert modelled <= fires
    if claude in (None, "", "*", "Bash", "Edit|Bash", "Edit, Bash", "^Bash$", "mcp__.*"):
        assert modelled == fires  # the forms the plan writes: exactly
