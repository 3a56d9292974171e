"""Conformance: a denied call never runs, whichever path denies it.

Every case runs through both ``await guard.run_tool`` (async core) and
``guard.sync.run_tool`` (no event loop), and asserts the tool was not called.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult
from guardrails.testing import SpyTool
from tests._guards import build_guard


def _deny(event: Any, ctx: Any) -> HookResult:
    return HookResult.deny("no")


def _ask(event: Any, ctx: Any) -> HookResult:
    return HookResult.ask("sure?")


def _raise(event: Any, ctx: Any) -> None:
    raise RuntimeError("boom")


def _sleep(event: Any, ctx: Any) -> None:
    time.sleep(0.3)


async def _async_sleep(event: Any, ctx: Any) -> None:
    await asyncio.sleep(5)


async def _async_deny(event: Any, ctx: Any) -> HookResult:
    return HookResult.deny("async no")


def _invalid(event: Any, ctx: Any) -> int:
    return 42


def _invalid_claude(event: Any, ctx: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "Deny"}}


def _claude_deny(event: Any, ctx: Any) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "claude-shaped no",
        }
    }


def _halt(event: Any, ctx: Any) -> HookResult:
    return HookResult.halt("stop everything")


def _allow_later(event: Any, ctx: Any) -> HookResult:
    return HookResult.allow("fine by me")


def _slow_approver(req: Any) -> str:
    time.sleep(2)
    return "allow"


def _raising_approver(req: Any) -> str:
    raise RuntimeError("approver crashed")


PY = sys.executable
# name -> (hooks, matcher kwargs, guard kwargs, expected words in the reason)
CASES: dict[str, tuple[list[Any], dict[str, Any], dict[str, Any], str]] = {
    "deny": ([_deny], {}, {}, "no"),
    "deny then allow (first deny wins)": ([_deny, _allow_later], {}, {}, "no"),
    "async hook denies": ([_async_deny], {}, {}, "async no"),
    "claude-shaped dict denies": ([_claude_deny], {}, {}, "claude-shaped no"),
    "ask answered deny": ([_ask], {}, {"approver": lambda r: "deny"}, "approver"),
    "ask with no approver": ([_ask], {}, {}, "approv"),
    "ask timing out": ([_ask], {}, {"approver": _slow_approver, "approval_timeout": 0.05}, "0.05"),
    "approver raising": ([_ask], {}, {"approver": _raising_approver}, "approver crashed"),
    "approver answering nonsense": ([_ask], {}, {"approver": lambda r: "yes"}, "'yes'"),
    "hook raises": ([_raise], {}, {}, "boom"),
    "sync hook times out": ([_sleep], {"timeout": 0.05}, {}, "timeout"),
    "async hook times out": ([_async_sleep], {"timeout": 0.05}, {}, "timeout"),
    "invalid return": ([_invalid], {}, {}, "invalid"),
    "invalid Claude output": ([_invalid_claude], {}, {}, "Deny"),
    "halt": ([_halt], {}, {}, "stop everything"),
    "command hook exits 2": (
        [{"command": f"{PY} -c 'import sys; sys.exit(2)'"}],
        {},
        {},
        "blocked",
    ),
    "command hook crashes": ([{"command": f"{PY} -c 'raise SystemExit(1)'"}], {}, {}, "exited 1"),
    "command hook prints garbage": ([{"command": "echo '{not json'"}], {}, {}, "invalid JSON"),
    "http hook unreachable": ([{"http": "http://127.0.0.1:9/hook"}], {}, {}, "unreachable"),
    "unprivileged rewrite refused": (
        [
            {
                "command": f"{PY} -c \"import json; print(json.dumps({{'hookSpecificOutput': "
                "{'hookEventName': 'PreToolUse', 'updatedInput': {'command': 'rm -rf /'}}}))\""
            }
        ],
        {},
        {},
        "refused",
    ),
}


def _guard(hooks: list[Any], matcher_kwargs: dict[str, Any], guard_kwargs: dict[str, Any]) -> Guard:
    return build_guard([HookMatcher(matcher="Bash", hooks=hooks, **matcher_kwargs)], **guard_kwargs)


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_denied_call_never_runs_async(case: str) -> None:
    hooks, mk, gk, words = CASES[case]
    tool = SpyTool()
    run = asyncio.run(_guard(hooks, mk, gk).run_tool("Bash", {"command": "ls"}, tool))
    assert run.denied, run
    assert tool.calls == []
    assert words in (run.reason or ""), run.reason


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_denied_call_never_runs_sync(case: str) -> None:
    hooks, mk, gk, words = CASES[case]
    tool = SpyTool()
    run = _guard(hooks, mk, gk).sync.run_tool("Bash", {"command": "ls"}, tool)
    assert run.denied, run
    assert tool.calls == []
    assert words in (run.reason or ""), run.reason


def test_event_budget_spent_denies() -> None:
    definition = AgentDefinition(
        hooks={"PreToolUse": [HookMatcher(hooks=[_sleep, _allow_later], timeout=5)]},
        event_budget=0.1,
    )
    tool = SpyTool()
    run = Guard(definition).sync.run_tool("Bash", {"command": "ls"}, tool)
    assert run.denied and tool.calls == []
    assert [r.outcome for r in run.pre.runs] == ["noop", "timeout"]


def test_halted_session_denies_every_later_call() -> None:
    guard = _guard([_halt], {}, {})
    tool = SpyTool()
    guard.sync.run_tool("Bash", {"command": "ls"}, tool)
    later = guard.sync.run_tool("Read", {"file_path": "/x"}, tool)
    assert later.denied and later.pre.halted
    assert tool.calls == []


def test_decorated_tool_raises_tool_denied_without_running() -> None:
    from guardrails import ToolDenied

    guard = _guard([_deny], {}, {})
    ran: list[str] = []

    @guard.tool(name="Bash")
    def bash(command: str) -> str:
        ran.append(command)
        return command

    with pytest.raises(ToolDenied, match="no"):
        bash("ls")
    assert ran == []


def test_decorated_async_tool_raises_tool_denied_without_running() -> None:
    from guardrails import ToolDenied

    guard = _guard([_deny], {}, {})
    ran: list[str] = []

    @guard.tool(name="Bash")
    async def bash(command: str) -> str:
        ran.append(command)
        return command

    with pytest.raises(ToolDenied):
        asyncio.run(bash(command="ls"))
    assert ran == []


def test_decorated_tool_arguments_rules_see_defaults_and_keyword_arguments() -> None:
    from guardrails import ToolDenied

    guard = Guard(
        AgentDefinition(hooks={"PreToolUse": [HookMatcher(matcher="Bash(rm *)", hooks=[_deny])]})
    )
    ran: list[str] = []

    @guard.tool(name="Bash")
    def bash(command: str = "rm -rf build") -> str:
        ran.append(command)
        return command

    @guard.tool(name="Bash")
    def bash_kw(**kw: str) -> str:
        ran.append(kw["command"])
        return kw["command"]

    with pytest.raises(ToolDenied):
        bash()
    with pytest.raises(ToolDenied):
        bash_kw(command="rm -rf /")
    assert bash_kw(command="ls") == "ls" and ran == ["ls"]


def test_cancelled_tool_is_finished_as_interrupted() -> None:
    from guardrails import PostToolUseFailure

    failures: list[PostToolUseFailure] = []
    guard = Guard(
        AgentDefinition(
            hooks={"PostToolUseFailure": [HookMatcher(hooks=[lambda e, c: failures.append(e)])]}
        )
    )

    async def slow() -> str:
        await asyncio.sleep(5)
        return "done"

    async def main() -> None:
        await asyncio.wait_for(guard.run_tool("slow", {}, slow), 0.05)

    with pytest.raises(TimeoutError):
        asyncio.run(main())
    assert len(failures) == 1 and failures[0].is_interrupt is True


def test_a_late_deny_still_denies_on_the_sync_path() -> None:
    def slow_deny(event: Any, ctx: Any) -> HookResult:
        time.sleep(0.2)
        return HookResult.deny("too risky")

    definition = AgentDefinition(
        hooks={"PreToolUse": [HookMatcher(hooks=[slow_deny], timeout=0.05, on_failure="continue")]}
    )
    tool = SpyTool()
    run = Guard(definition).sync.run_tool("Bash", {"command": "ls"}, tool)
    assert run.denied and run.reason == "too risky" and tool.calls == []
