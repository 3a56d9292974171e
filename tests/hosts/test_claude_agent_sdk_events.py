"""The claude-agent-sdk adapter for every event the SDK (and the CLI behind it) delivers:
registration, answers, ``from_sdk_options`` and ``to_can_use_tool`` (fake Transport)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
)

from guardrails import DefinitionError, Guard, HookResult, Ledger
from guardrails import HookMatcher as Matcher
from guardrails._event_table import NAMES, NO_MATCHER
from guardrails.adapters.claude_agent_sdk import (
    NOT_DELIVERED,
    SDK_EVENTS,
    from_sdk_options,
    to_can_use_tool,
    to_sdk_hooks,
    translate_matcher,
)
from guardrails.approvers import ApprovalRequest
from guardrails.events import Event
from tests._db import rows
from tests._paths import FIXTURES_DIR
from tests.hosts.test_claude_agent_sdk import FakeCLI, answering, drive, guard

WIRE = ["Stop" if n == "AgentStop" else n for n in NAMES]


def fixture(wire: str, session: str = "s1", **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (FIXTURES_DIR / "claude_payloads" / f"{wire}.json").read_text(encoding="utf-8")
    )
    return {**data, "session_id": session, **changes}


def test_the_sdk_events_are_the_ten_the_python_sdk_types() -> None:
    from typing import get_args

    from claude_agent_sdk.types import HookEvent

    typed = {a for arg in get_args(HookEvent) for a in get_args(arg)}
    assert set(SDK_EVENTS) == typed


@pytest.mark.parametrize("wire", [w for w in WIRE if w not in NOT_DELIVERED])
def test_every_bound_event_the_cli_delivers_is_registered_and_answered(wire: str) -> None:
    canonical = "AgentStop" if wire == "Stop" else wire
    g = guard({canonical: [Matcher(hooks=[answering(HookResult.halt("seen"))])]})
    answers: list[dict[str, Any]] = []

    async def scenario(cli: FakeCLI) -> None:
        answers.append(await cli.hook(wire, fixture(wire)))

    cli = drive(to_sdk_hooks(g), scenario)
    assert set(cli.init_request["hooks"]) == {wire, "UserPromptSubmit"}
    assert (answers[0]["continue"], answers[0]["stopReason"]) == (False, "seen")


def test_session_end_is_never_registered() -> None:
    g = guard({"SessionEnd": [Matcher(hooks=[answering(None)])]})
    assert set(drive(to_sdk_hooks(g)).init_request["hooks"]) == {"UserPromptSubmit"}


@pytest.mark.parametrize(
    ("wire", "answer", "expected"),
    [
        ("PermissionRequest", HookResult.deny("no"), {"behavior": "deny", "message": "no"}),
        ("PermissionRequest", HookResult.allow(), {"behavior": "allow"}),
        ("PreCompact", HookResult.block("not now"), None),
        ("Notification", HookResult.inject("noted"), None),
    ],
)  # fmt: skip
def test_the_new_sdk_events_answer_as_the_cli_reads_them(
    wire: str, answer: HookResult, expected: dict[str, Any] | None
) -> None:
    g = guard({wire: [Matcher(hooks=[answering(answer)])]})
    answers: list[dict[str, Any]] = []

    async def scenario(cli: FakeCLI) -> None:
        answers.append(await cli.hook(wire, fixture(wire)))

    drive(to_sdk_hooks(g), scenario)
    out = answers[0]
    if wire == "PermissionRequest":
        assert out["hookSpecificOutput"]["decision"] == expected
    elif wire == "PreCompact":
        assert (out["decision"], out["reason"]) == ("block", "not now")
    else:
        assert out["hookSpecificOutput"]["additionalContext"] == "noted"


def test_a_failing_permission_request_dispatcher_denies_where_the_matcher_blocks() -> None:
    g = guard({"PermissionRequest": [Matcher(hooks=[answering(None)], on_failure="block")]})
    answers: list[dict[str, Any]] = []

    async def scenario(cli: FakeCLI) -> None:
        answers.append(
            await cli.hook("PermissionRequest", fixture("PermissionRequest", tool_input=1))
        )

    cli = drive(to_sdk_hooks(g), scenario)
    assert cli.init_request["hooks"]["PermissionRequest"][0]["onFailure"] == "block"
    assert answers[0]["hookSpecificOutput"]["decision"]["behavior"] == "deny"


# --- from_sdk_options ---------------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRE)
def test_from_sdk_options_takes_every_claude_event(wire: str) -> None:
    seen: list[dict[str, Any]] = []

    async def callback(input_data: Any, tool_use_id: Any, context: Any) -> Any:
        seen.append(input_data)
        return {"systemMessage": "seen"}

    definition = from_sdk_options({wire: [HookMatcher(hooks=[callback])]})
    canonical = "AgentStop" if wire == "Stop" else wire
    decision = Guard(definition, ledger=False).emit_sync(Event.from_claude(fixture(wire)))
    assert list(definition.hooks) == [canonical]
    assert seen == [fixture(wire)] and decision.system_messages == ["seen"]


@pytest.mark.parametrize(
    ("event", "matcher", "pattern"),
    [
        ("Notification", "permission_prompt|idle_prompt", "permission_prompt|idle_prompt"),
        ("SessionStart", "startup, resume", "startup|resume"),
        ("PermissionRequest", "Task", "Task|Agent"),
        ("PreSkillShellCommand", "Bash", "Bash"),
        ("PreCompact", "Task", "Task"),
        ("FileChanged", "envrc", "envrc"),
        ("FileChanged", "a-b", "re:(?s:.*?)(?a:a-b)(?s:.*)"),
        ("StopFailure", "rate_limit, overloaded", "re:(?s:.*?)(?a:rate_limit, overloaded)(?s:.*)"),
    ],
)
def test_claude_matchers_translate_with_each_events_rules(
    event: str, matcher: str, pattern: str
) -> None:
    assert translate_matcher(matcher, event) == pattern


@pytest.mark.parametrize("event", sorted(NO_MATCHER - {"AgentStop"}))
def test_matchers_on_events_claude_does_not_match_become_match_all(event: str) -> None:
    assert translate_matcher("anything", event) is None


# --- to_can_use_tool -----------------------------------------------------------------------


def ask(tool: str, tool_input: dict[str, Any], can_use: Any, call: str = "toolu_9") -> Any:
    context = ToolPermissionContext(tool_use_id=call, decision_reason="not in allowed_tools")
    return asyncio.run(can_use(tool, tool_input, context))


def test_can_use_tool_needs_an_approver() -> None:
    with pytest.raises(DefinitionError, match="needs a Guard with an approver"):
        to_can_use_tool(guard({}))


@pytest.mark.parametrize(
    ("answer", "result"),
    [
        ("allow", PermissionResultAllow),
        ("deny", PermissionResultDeny),
        ("nonsense", PermissionResultDeny),
    ],
)
def test_claudes_own_ask_goes_to_the_approver(answer: str, result: type, tmp_path: Path) -> None:
    requests: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> str:
        requests.append(request)
        return answer

    db = tmp_path / "ledger.db"
    g = guard({}, ledger=Ledger(db), approver=approver)
    got = ask("Write", {"file_path": "/p/x.txt", "content": "hi"}, to_can_use_tool(g))
    assert isinstance(got, result)
    assert [(r.tool_name, r.reason) for r in requests] == [("Write", "not in allowed_tools")]
    (row,) = rows(db, "SELECT tool_name, decision FROM tool_calls WHERE tool_call_id = 'toolu_9'")
    assert (row["tool_name"], row["decision"]) == (
        "Write",
        "allow" if answer == "allow" else "deny",
    )
    (run,) = rows(db, "SELECT hook, outcome FROM hook_runs")
    assert (run["hook"], run["outcome"]) == ("approver", "allow" if answer == "allow" else "deny")


def test_allow_always_is_remembered_for_the_session_the_call_came_from(tmp_path: Path) -> None:
    answers = iter(["allow_always", "deny"])
    g = guard({"PreToolUse": [Matcher(hooks=[answering(None)])]}, approver=lambda r: next(answers))
    can_use = to_can_use_tool(g)

    async def scenario(cli: FakeCLI) -> None:
        await cli.hook("PreToolUse", fixture("PreToolUse", "claude-1", tool_use_id="toolu_a"))

    drive(to_sdk_hooks(g), scenario)
    first = ask("Bash", {"command": "ls"}, can_use, "toolu_a")
    second = ask("Bash", {"command": "ls -l"}, can_use, "toolu_a")
    assert isinstance(first, PermissionResultAllow) and isinstance(second, PermissionResultAllow)
    assert g.session("claude-1").allow_always
