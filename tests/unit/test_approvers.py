"""The approver protocol: allow / deny / allow_always, a session cache, a timeout that denies."""

from __future__ import annotations

import asyncio
import io
import time
from typing import Any

import pytest

from guardrails import (
    AgentDefinition,
    ApprovalRequest,
    CallbackApprover,
    Guard,
    HookMatcher,
    HookResult,
    TerminalApprover,
    always_allow,
    always_deny,
)
from tests._guards import build_guard


def _asks(event: Any, ctx: Any) -> HookResult:
    return HookResult.ask("deploys need a human")


def _guard(approver: Any, **kw: Any) -> Guard:
    return build_guard([HookMatcher(matcher="deploy", hooks=[_asks])], approver=approver, **kw)


@pytest.mark.parametrize(
    ("approver", "expected"),
    [
        (always_allow, "allow"),
        (always_deny, "deny"),
        (CallbackApprover(lambda r: True), "allow"),
        (CallbackApprover(lambda r: False), "deny"),
        (CallbackApprover(lambda r: "allow_always"), "allow"),
    ],
)
def test_builtin_approvers_answer_ask(approver: Any, expected: str) -> None:
    assert _guard(approver).sync.pre_tool_use("deploy", {"env": "prod"}).decision == expected


def test_the_approver_sees_tool_input_reason_session_and_asking_hooks() -> None:
    seen: list[ApprovalRequest] = []

    def approver(req: ApprovalRequest) -> str:
        seen.append(req)
        return "allow"

    _guard(approver).session("s1").sync.pre_tool_use("deploy", {"env": "prod"})
    req = seen[0]
    assert (req.tool_name, req.tool_input, req.reason, req.session_id) == (
        "deploy",
        {"env": "prod"},
        "deploys need a human",
        "s1",
    )
    assert req.hooks == ("tests.unit.test_approvers:_asks",)


def test_allow_always_is_cached_for_the_session_only() -> None:
    answers: list[str] = []

    def approver(req: ApprovalRequest) -> str:
        answers.append("asked")
        return "allow_always"

    g = _guard(approver)
    s = g.session("s1")
    assert s.sync.pre_tool_use("deploy", {}).decision == "allow"
    assert s.sync.pre_tool_use("deploy", {}).decision == "allow"
    assert answers == ["asked"]
    assert g.session("s2").sync.pre_tool_use("deploy", {}).decision == "allow"
    assert answers == ["asked", "asked"]


def test_plain_allow_is_not_cached() -> None:
    answers: list[str] = []

    def approver(req: ApprovalRequest) -> str:
        answers.append("asked")
        return "allow"

    s = _guard(approver).session("s1")
    s.sync.pre_tool_use("deploy", {})
    s.sync.pre_tool_use("deploy", {})
    assert answers == ["asked", "asked"]


def test_approval_timeout_answers_deny_in_the_async_core() -> None:
    def slow(req: ApprovalRequest) -> str:
        time.sleep(1)
        return "allow"

    d = asyncio.run(_guard(slow, approval_timeout=0.05).pre_tool_use("deploy", {}))
    assert d.decision == "deny" and "0.05" in (d.reason or "")
    assert d.runs[-1].hook == "approver" and d.runs[-1].outcome == "deny"


def test_async_approvers_are_awaited() -> None:
    async def approver(req: ApprovalRequest) -> str:
        await asyncio.sleep(0)
        return "deny"

    assert asyncio.run(_guard(approver).pre_tool_use("deploy", {})).decision == "deny"
    assert _guard(approver).sync.pre_tool_use("deploy", {}).decision == "deny"


def test_without_an_approver_ask_is_returned_to_the_host() -> None:
    d = _guard(None).sync.pre_tool_use("deploy", {})
    assert d.decision == "ask"
    assert d.to_claude()["hookSpecificOutput"]["permissionDecision"] == "ask"


def test_deny_after_ask_never_reaches_the_approver() -> None:
    asked: list[ApprovalRequest] = []
    definition = AgentDefinition(
        hooks={
            "PreToolUse": [
                HookMatcher(hooks=[_asks, lambda e, c: HookResult.deny("no deploys on Friday")])
            ]
        }
    )
    d = Guard(definition, approver=lambda r: asked.append(r) or "allow").sync.pre_tool_use(
        "deploy", {}
    )
    assert d.decision == "deny" and asked == []


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("y\n", "allow"),
        ("yes\n", "allow"),
        ("a\n", "allow_always"),
        ("n\n", "deny"),
        ("\n", "deny"),
    ],
)
def test_terminal_approver_reads_the_answer(typed: str, expected: str) -> None:
    out = io.StringIO()
    approver = TerminalApprover(stdin=io.StringIO(typed), stdout=out)
    req = ApprovalRequest("deploy", {"env": "prod"}, "needs a human", "s")
    assert approver(req) == expected
    assert "deploy(env='prod')" in out.getvalue() and "needs a human" in out.getvalue()


def test_terminal_approver_denies_without_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert TerminalApprover()(ApprovalRequest("deploy", {}, "r", "s")) == "deny"
