"""Tools a definition's tool matchers never match: what adapters warn about and check reports."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from guardrails import AgentDefinition, HookMatcher, UnmatchedToolWarning
from guardrails.cli.main import cli
from guardrails.definition.coverage import unmatched_tools, warn_unmatched_tools


def _allow(event: Any, ctx: Any) -> None:
    return None


def _definition(*matchers: str | None, event: str = "PreToolUse", **kw: Any) -> AgentDefinition:
    hooks = {event: [HookMatcher(matcher=m, hooks=[_allow]) for m in matchers]}
    return AgentDefinition(name="ops", hooks=hooks, **kw)


def _messages(definition: AgentDefinition, *tools: str) -> dict[str, str]:
    return {u.tool: u.message for u in unmatched_tools(definition, tools)}


def test_a_tool_no_matcher_matches_is_reported_once() -> None:
    found = unmatched_tools(_definition("Read|Write"), ["deploy", "Read", "deploy"])
    assert [u.tool for u in found] == ["deploy"]
    assert found[0].message == (
        "tool 'deploy' matches no matcher of definition 'ops'; "
        "no PreToolUse, PostToolUse or PostToolUseFailure hook runs for it"
    )


@pytest.mark.parametrize("event", ["PostToolUse", "PostToolUseFailure"])
def test_every_tool_event_counts(event: str) -> None:
    assert _messages(_definition("deploy", event=event), "deploy") == {}


@pytest.mark.parametrize(
    ("matchers", "named"),
    [
        (["Bash"], "'Bash'"),
        (["Bash(git *)"], "'Bash'"),
        (["B?sh|Read"], "'B?sh'"),
        (["re:Ba.h"], "'re:Ba.h'"),
        (["Bash", "BASH(ls)"], "'Bash' or 'BASH'"),
    ],
)
def test_a_case_only_mismatch_names_what_the_definition_says(
    matchers: list[str], named: str
) -> None:
    assert _messages(_definition(*matchers), "bash")["bash"] == (
        f"tool 'bash' matches no matcher of definition 'ops'; the definition names {named} "
        "(tool names are case-sensitive)"
    )


@pytest.mark.parametrize(
    "matchers",
    [["*"], [""], [None], ["bash"], ["b*"], ["re:b.*"], ["!Read"], ["Read", "Bash|bash"]],
)
def test_a_matcher_that_can_match_the_tool_is_enough(matchers: list[str | None]) -> None:
    assert _messages(_definition(*matchers), "bash") == {}


def test_an_argument_rule_needs_a_primary_argument_to_match() -> None:
    declared = _definition("deploy(prod*)", tools={"deploy": {"primary_arg": "target"}})
    assert _messages(declared, "deploy") == {}
    assert (
        "set tools.deploy.primary_arg"
        in _messages(_definition("deploy(prod*)"), "deploy")["deploy"]
    )


def test_no_report_for_a_tool_left_out_on_purpose_or_a_definition_without_tool_hooks() -> None:
    assert _messages(_definition("!deploy"), "deploy") == {}
    assert _messages(_definition(None, event="Stop"), "deploy") == {}
    assert _messages(AgentDefinition(), "deploy") == {}


def test_the_message_names_the_definition_file() -> None:
    found = unmatched_tools(_definition("Read", source="agents/ops.yaml"), ["bash"])
    assert found[0].message.startswith(
        "tool 'bash' matches no matcher of definition 'ops' (agents/ops.yaml);"
    )


def test_warn_unmatched_tools_warns_with_its_own_category_at_the_caller() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_unmatched_tools(_definition("Read"), ["bash", "Read", "deploy"], stacklevel=1)
    assert [w.category for w in caught] == [UnmatchedToolWarning] * 2
    assert {w.filename for w in caught} == {__file__}
    assert issubclass(UnmatchedToolWarning, UserWarning)


# --- hookrails check -------------------------------------------------------------------------

DECLARED = """\
name: ops
tools:
  Bash: {side_effects: true}
  read: {}
  deploy: {}
hooks:
  PreToolUse:
    - matcher: "Bash|Read"
      hooks: [allow]
"""


def test_check_warns_about_declared_tools_no_matcher_matches(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(DECLARED, encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 0
    label = f"definition 'ops' ({path})"
    assert result.stderr.splitlines() == [
        f"warning: {path}:4: tool 'read' matches no matcher of {label}; the definition names "
        "'Read' (tool names are case-sensitive)",
        f"warning: {path}:5: tool 'deploy' matches no matcher of {label}; "
        "no PreToolUse, PostToolUse or PostToolUseFailure hook runs for it",
    ]
    assert "warning" not in result.stdout


def test_check_is_quiet_when_every_declared_tool_is_matched(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(DECLARED.replace('"Bash|Read"', '"Bash|read|deploy"'), encoding="utf-8")
    assert CliRunner().invoke(cli, ["check", str(path)]).stderr == ""
