"""``tool_budget``: calls per tool glob per session, a warning before the end, then denial.

Counted in ``ctx.state`` without a ledger and from the ledger with one, so a
new process (a Claude command hook) keeps the count: most tests run both ways.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from guardrails import (
    AgentDefinition,
    DefinitionError,
    Guard,
    HookMatcher,
    HookResult,
    Ledger,
    Session,
)
from guardrails.builtins import ToolBudget
from guardrails.errors import LedgerError
from guardrails.testing import SpyTool
from tests._guards import build_guard

MODES = ("state", "ledger")


def make_guard(
    hooks: list[Any], mode: str, db: str, *, extra: list[HookMatcher] | None = None
) -> Guard:
    matchers = [HookMatcher(hooks=hooks, priority=10), *(extra or [])]
    return build_guard(matchers, ledger=Ledger(db) if mode == "ledger" else None)


def calls(session: Session, tool: str, n: int) -> list[str]:
    """Run ``tool`` ``n`` times; the status of each run."""
    return [session.sync.run_tool(tool, {"command": "ls"}, SpyTool()).status for _ in range(n)]


@pytest.mark.parametrize("mode", MODES)
def test_calls_up_to_the_limit_run_and_the_next_is_denied_unrun(
    mode: str, ledger_path: str
) -> None:
    s = make_guard([ToolBudget(limits={"Bash": 3})], mode, ledger_path).session("s1")
    assert calls(s, "Bash", 3) == ["ok"] * 3
    tool = SpyTool()
    run = s.sync.run_tool("Bash", {"command": "ls"}, tool)
    assert run.denied and tool.calls == []


def test_the_denial_names_the_limit_and_tells_the_model_not_to_retry(ledger_path: str) -> None:
    s = make_guard([ToolBudget(limits={"mcp__github__*": 1})], "state", ledger_path).session("s1")
    calls(s, "mcp__github__create_issue", 1)
    reason = s.sync.pre_tool_use("mcp__github__list_prs", {}).reason or ""
    assert "used 1 of its 1 calls matching mcp__github__*" in reason
    assert "(limit mcp__github__*: 1)" in reason and "Do not retry" in reason


@pytest.mark.parametrize("mode", MODES)
def test_a_glob_limit_is_shared_by_every_tool_it_matches(mode: str, ledger_path: str) -> None:
    s = make_guard([ToolBudget(limits={"mcp__github__*": 2})], mode, ledger_path).session("s1")
    calls(s, "mcp__github__create_issue", 1)
    calls(s, "mcp__github__list_prs", 1)
    assert calls(s, "mcp__github__get_issue", 1) == ["denied"]
    assert calls(s, "mcp__slack__post", 1) == ["ok"]


@pytest.mark.parametrize("mode", MODES)
def test_a_call_counts_against_every_limit_it_matches(mode: str, ledger_path: str) -> None:
    s = make_guard([ToolBudget(limits={"Bash": 10, "*": 3})], mode, ledger_path).session("s1")
    calls(s, "Bash", 2)
    calls(s, "Read", 1)
    d = s.sync.pre_tool_use("Bash", {"command": "ls"})
    assert d.decision == "deny" and "3 of its 3 tool calls" in (d.reason or "")


def test_alternatives_in_a_limit_glob_share_one_budget(ledger_path: str) -> None:
    s = make_guard([ToolBudget(limits={"Write|Edit": 2})], "state", ledger_path).session("s1")
    calls(s, "Write", 1)
    calls(s, "Edit", 1)
    assert calls(s, "Write", 1) == ["denied"]


def test_tools_no_limit_matches_are_never_counted_or_denied(ledger_path: str) -> None:
    s = make_guard([ToolBudget(limits={"Bash": 1})], "state", ledger_path).session("s1")
    assert calls(s, "Read", 5) == ["ok"] * 5


@pytest.mark.parametrize("mode", MODES)
def test_budget_denials_do_not_use_budget(mode: str, ledger_path: str) -> None:
    # Bash is spent after 2; three refused Bash calls must not eat into "*"
    s = make_guard([ToolBudget(limits={"Bash": 2, "*": 3})], mode, ledger_path).session("s1")
    assert calls(s, "Bash", 5) == ["ok", "ok", "denied", "denied", "denied"]
    assert calls(s, "Read", 2) == ["ok", "denied"]


def deny_rm(event: Any, ctx: Any) -> HookResult | None:
    if event.tool_input.get("command", "").startswith("rm"):
        return HookResult.deny("no rm")
    return None


def test_with_a_ledger_calls_a_later_hook_denied_do_not_use_budget(ledger_path: str) -> None:
    later = HookMatcher(hooks=[deny_rm], priority=50)
    s = make_guard([ToolBudget(limits={"Bash": 2})], "ledger", ledger_path, extra=[later]).session(
        "s1"
    )
    for _ in range(3):
        assert s.sync.run_tool("Bash", {"command": "rm -rf x"}, SpyTool()).denied
    assert calls(s, "Bash", 3) == ["ok", "ok", "denied"]


def test_without_a_ledger_a_hook_that_denies_first_keeps_the_budget_untouched(
    ledger_path: str,
) -> None:
    earlier = HookMatcher(hooks=[deny_rm], priority=1)
    s = make_guard([ToolBudget(limits={"Bash": 2})], "state", ledger_path, extra=[earlier]).session(
        "s1"
    )
    for _ in range(3):
        assert s.sync.run_tool("Bash", {"command": "rm -rf x"}, SpyTool()).denied
    assert calls(s, "Bash", 3) == ["ok", "ok", "denied"]


@pytest.mark.parametrize("mode", MODES)
def test_each_session_has_its_own_budget(mode: str, ledger_path: str) -> None:
    g = make_guard([ToolBudget(limits={"Bash": 2})], mode, ledger_path)
    assert calls(g.session("a"), "Bash", 3) == ["ok", "ok", "denied"]
    assert calls(g.session("b"), "Bash", 2) == ["ok", "ok"]


def test_with_a_ledger_a_new_process_keeps_counting(ledger_path: str) -> None:
    """A Claude command hook is a new process per call: only the ledger remembers."""
    first = make_guard([ToolBudget(limits={"Bash": 3})], "ledger", ledger_path)
    assert calls(first.session("s1"), "Bash", 2) == ["ok", "ok"]
    first.ledger.close()  # type: ignore[union-attr]
    second = make_guard([ToolBudget(limits={"Bash": 3})], "ledger", ledger_path)
    s = second.session("s1")
    assert s.sync.pre_tool_use("Bash", {"command": "ls"}).decision == "allow"
    s.sync.post_tool_use("Bash", {"command": "ls"}, "ok")
    third = make_guard([ToolBudget(limits={"Bash": 3})], "ledger", ledger_path)
    assert third.session("s1").sync.pre_tool_use("Bash", {"command": "ls"}).denied


def test_with_a_ledger_calls_another_process_makes_meanwhile_count(ledger_path: str) -> None:
    """Two processes (say a warm server and a command hook) sharing one session."""
    here = make_guard([ToolBudget(limits={"Bash": 4})], "ledger", ledger_path).session("s1")
    there = make_guard([ToolBudget(limits={"Bash": 4})], "ledger", ledger_path).session("s1")
    assert calls(here, "Bash", 1) == ["ok"]
    assert calls(there, "Bash", 2) == ["ok", "ok"]
    assert calls(here, "Bash", 2) == ["ok", "denied"]


def test_with_a_ledger_a_pending_call_already_counts(ledger_path: str) -> None:
    """A PreToolUse with no PostToolUse yet (running, or crashed) has used its unit."""
    first = make_guard([ToolBudget(limits={"Bash": 1})], "ledger", ledger_path)
    assert first.session("s1").sync.pre_tool_use("Bash", {"command": "sleep 60"}).allowed
    second = make_guard([ToolBudget(limits={"Bash": 1})], "ledger", ledger_path)
    assert second.session("s1").sync.pre_tool_use("Bash", {"command": "ls"}).denied


@pytest.mark.parametrize("mode", MODES)
def test_concurrent_calls_in_one_process_never_overrun_the_limit(
    mode: str, ledger_path: str
) -> None:
    s = make_guard([ToolBudget(limits={"Bash": 3})], mode, ledger_path).session("s1")
    tool = SpyTool()

    async def main() -> list[Any]:
        return await asyncio.gather(
            *(s.run_tool("Bash", {"command": f"echo {i}"}, tool) for i in range(10))
        )

    runs = asyncio.run(main())
    assert sum(r.ok for r in runs) == 3 and len(tool.calls) == 3


def test_an_unreadable_ledger_falls_back_to_this_process_count(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    g = make_guard([ToolBudget(limits={"Bash": 2})], "ledger", ledger_path)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise LedgerError("query failed: disk I/O error", kind="query")

    monkeypatch.setattr(g.ledger.reader, "query", broken)  # type: ignore[union-attr]
    assert calls(g.session("s1"), "Bash", 3) == ["ok", "ok", "denied"]


def test_a_ledger_readable_again_counts_the_calls_made_meanwhile_once(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    g = make_guard([ToolBudget(limits={"Bash": 3})], "ledger", ledger_path)
    reader = g.ledger.reader  # type: ignore[union-attr]

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise LedgerError("query failed: database is locked", kind="query")

    monkeypatch.setattr(reader, "query", broken)
    s = g.session("s1")
    assert calls(s, "Bash", 2) == ["ok", "ok"]
    monkeypatch.undo()
    assert calls(s, "Bash", 2) == ["ok", "denied"]


def warnings(session: Session, tool: str, n: int) -> list[str | None]:
    return [session.sync.pre_tool_use(tool, {"command": "ls"}).additional_context for _ in range(n)]


@pytest.mark.parametrize("mode", MODES)
def test_from_warn_at_every_call_says_how_many_are_left(mode: str, ledger_path: str) -> None:
    s = make_guard([ToolBudget(limits={"Bash": 10}, warn_at=0.8)], mode, ledger_path).session("s1")
    seen = warnings(s, "Bash", 10)
    assert seen[:7] == [None] * 7
    assert seen[7:] == [
        "Tool budget: 2 of 10 Bash calls left in this session.",
        "Tool budget: 1 of 10 Bash calls left in this session.",
        "Tool budget: 0 of 10 Bash calls left in this session.",
    ]


def test_warnings_name_every_limit_near_its_end(ledger_path: str) -> None:
    s = make_guard([ToolBudget(limits={"Bash": 5, "*": 4}, warn_at=0.5)], "state", ledger_path)
    seen = warnings(s.session("s1"), "Bash", 3)
    assert seen[2] == (
        "Tool budget: 2 of 5 Bash calls left in this session; "
        "1 of 4 tool calls left in this session."
    )


def test_warn_at_none_never_warns(ledger_path: str) -> None:
    s = make_guard([ToolBudget(limits={"Bash": 3}, warn_at=None)], "state", ledger_path).session(
        "s1"
    )
    assert warnings(s, "Bash", 3) == [None, None, None]


def test_a_zero_limit_forbids_the_tool(ledger_path: str) -> None:
    s = make_guard([ToolBudget(limits={"WebFetch": 0})], "state", ledger_path).session("s1")
    assert calls(s, "WebFetch", 1) == ["denied"]


def test_warnings_and_denials_are_annotated_on_the_ledger_row(ledger_path: str) -> None:
    s = make_guard([ToolBudget(limits={"Bash": 1}, warn_at=1)], "ledger", ledger_path).session("s1")
    calls(s, "Bash", 2)
    conn = sqlite3.connect(ledger_path)
    found = conn.execute("SELECT annotations FROM tool_calls ORDER BY id").fetchall()
    conn.close()
    expected = {"tool_budget": {"Bash": {"used": 1, "limit": 1}}}
    assert [json.loads(r[0]) for r in found] == [expected, expected]


def test_the_default_budget_is_200_calls_of_any_tool() -> None:
    budget = ToolBudget()
    assert (budget.limits, budget.warn_at) == ({"*": 200}, 0.8)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"limits": {}}, "limits must be a non-empty mapping"),
        ({"limits": ["Bash"]}, "limits must be a non-empty mapping"),
        ({"limits": {"Bash": -1}}, "limits['Bash'] must be a non-negative integer"),
        ({"limits": {"Bash": 2.5}}, "limits['Bash'] must be a non-negative integer"),
        ({"limits": {"Bash": True}}, "limits['Bash'] must be a non-negative integer"),
        ({"limits": {"": 3}}, "a key must be a non-empty tool glob"),
        ({"limits": {"Bash{": 3}}, "limits: "),
        ({"warn_at": 0}, "warn_at must be a fraction in (0, 1]"),
        ({"warn_at": 1.5}, "warn_at must be a fraction in (0, 1]"),
    ],
)
def test_bad_configuration_is_a_value_error_naming_the_parameter(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError) as exc:
        ToolBudget(**kwargs)
    assert message in str(exc.value)


def test_declared_by_name_in_a_file_uses_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text("hooks:\n  PreToolUse:\n    - hooks: [tool_budget]\n", encoding="utf-8")
    hook = AgentDefinition.from_file(path).hooks["PreToolUse"][0].resolved[0]
    assert isinstance(hook.fn, ToolBudget) and hook.fn.limits == {"*": 200}
    assert hook.name == "tool_budget"


def test_declared_with_params_in_a_file_enforces_them(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(
        "hooks:\n  PreToolUse:\n    - hooks:\n        - use: tool_budget\n"
        "          with: {limits: {Bash: 1, 'mcp__github__*': 5}, warn_at: 0.5}\n",
        encoding="utf-8",
    )
    s = Guard(path).session("s1")
    assert calls(s, "Bash", 2) == ["ok", "denied"]


def test_a_bad_parameter_in_a_file_is_a_definition_error(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(
        "hooks:\n  PreToolUse:\n    - hooks:\n        - use: tool_budget\n"
        "          with: {limits: {Bash: -1}}\n",
        encoding="utf-8",
    )
    with pytest.raises(DefinitionError) as exc:
        AgentDefinition.from_file(path)
    assert str(path) in str(exc.value) and "limits['Bash'] must be a non-negative" in str(exc.value)


def test_the_ready_instance_has_the_defaults() -> None:
    from guardrails.builtins.budget import tool_budget

    assert isinstance(tool_budget, ToolBudget) and tool_budget.limits == {"*": 200}
