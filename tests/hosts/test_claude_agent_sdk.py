"""The claude-agent-sdk adapter through the SDK's public API, with a fake Transport.

``query(..., transport=FakeCLI(...))`` runs the real SDK: it sends the
``initialize`` request (the registration we check), and answers the fake
CLI's ``hook_callback`` requests with the JSON a real CLI would read. What the
real CLI then does with that JSON is in ``test_e2e_claude_sdk.py``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeAgentOptions, HookMatcher, Transport, query

from guardrails import AgentDefinition, DefinitionError, Guard, HookResult, Ledger
from guardrails import HookMatcher as Matcher
from guardrails.adapters.claude_agent_sdk import (
    SDK_EVENTS,
    from_sdk_options,
    to_sdk_hooks,
    translate_matcher,
)
from guardrails.claude_code.failure_policy import on_failure_counts
from guardrails.definition.matchers import Pattern
from guardrails.testing import SpyTool
from tests._db import rows
from tests._guards import build_guard

Scenario = Callable[["FakeCLI"], Awaitable[None]]

RESULT = {
    "type": "result",
    "subtype": "success",
    "duration_ms": 1,
    "duration_api_ms": 1,
    "is_error": False,
    "num_turns": 1,
    "session_id": "s1",
}


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON: the CLI cannot parse this message")


class FakeCLI(Transport):
    """Answers ``initialize``, then plays ``scenario`` when the prompt arrives."""

    def __init__(self, scenario: Scenario | None = None) -> None:
        self.scenario = scenario
        self.init_request: dict[str, Any] = {}
        self._out: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._ids = 0
        self._task: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        return None

    def is_ready(self) -> bool:
        return True

    async def end_input(self) -> None:  # stdin closed after the result: the CLI exits
        self._out.put_nowait(None)

    async def close(self) -> None:
        self._out.put_nowait(None)

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        while (message := await self._out.get()) is not None:
            yield message

    async def write(self, data: str) -> None:
        message = json.loads(data, parse_constant=_not_json)  # JSON.parse, as the CLI reads
        kind = message.get("type")
        if kind == "control_request" and message["request"]["subtype"] == "initialize":
            self.init_request = message["request"]
            self._out.put_nowait(
                {
                    "type": "control_response",
                    "response": {
                        "subtype": "success",
                        "request_id": message["request_id"],
                        "response": {"commands": [], "hook_on_failure_supported": True},
                    },
                }
            )
        elif kind == "control_response":
            response = message["response"]
            self._waiting.pop(response["request_id"]).set_result(response)
        elif kind == "user":
            self._task = asyncio.ensure_future(self._play())

    async def _play(self) -> None:
        try:
            if self.scenario is not None:
                await self.scenario(self)
        finally:
            self._out.put_nowait(RESULT)

    async def hook(
        self, event: str, payload: dict[str, Any], tool_use_id: str | None = None
    ) -> dict[str, Any]:
        """Call the (single) callback registered for ``event``; return its wire answer."""
        callback = self.init_request["hooks"][event][0]["hookCallbackIds"][0]
        self._ids += 1
        request_id = f"req_hook_{self._ids}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        self._out.put_nowait(
            {
                "type": "control_request",
                "request_id": request_id,
                "request": {
                    "subtype": "hook_callback",
                    "callback_id": callback,
                    "input": payload,
                    "tool_use_id": tool_use_id,
                },
            }
        )
        response = await future
        assert response["subtype"] == "success", response
        answer: dict[str, Any] = response["response"]
        return answer


def drive(hooks: dict[Any, Any], scenario: Scenario | None = None) -> FakeCLI:
    """Run one SDK query against a FakeCLI playing ``scenario``."""
    cli = FakeCLI(scenario)

    async def main() -> None:
        options = ClaudeAgentOptions(hooks=hooks)
        async for _ in query(prompt="go", options=options, transport=cli):
            pass

    asyncio.run(main())
    return cli


def payload(event: str, session: str = "s1", **fields: Any) -> dict[str, Any]:
    """A hook input in the shape the CLI sends (CLI 2.1.x)."""
    base: dict[str, Any] = {
        "session_id": session,
        "transcript_path": f"/home/u/.claude/projects/-p/{session}.jsonl",
        "cwd": "/p",
        "permission_mode": "default",
        "hook_event_name": event,
    }
    if event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        base.update(tool_name="Bash", tool_input={"command": "ls"}, tool_use_id="toolu_1")
    defaults: dict[str, dict[str, Any]] = {
        "PostToolUse": {"tool_response": {"stdout": "a", "stderr": ""}},
        "PostToolUseFailure": {"error": "Exit code 1"},
        "UserPromptSubmit": {"prompt": "hello"},
        "Stop": {"stop_hook_active": False},
        "SubagentStart": {"agent_id": "a1", "agent_type": "worker"},
        "SubagentStop": {"agent_id": "a1", "agent_type": "worker", "stop_hook_active": False},
    }
    return {**base, **defaults.get(event, {}), **fields}


def answering(result: Any) -> Callable[[Any, Any], Any]:
    def hook(event: Any, ctx: Any) -> Any:
        return result

    return hook


def guard(hooks: dict[str, list[Matcher]], **kwargs: Any) -> Guard:
    kwargs.setdefault("ledger", False)
    return build_guard(hooks, name="t", **kwargs)


# --- registration ----------------------------------------------------------------------


def test_one_dispatcher_per_bound_event_with_matcher_none() -> None:
    g = guard(
        {
            "PreToolUse": [
                Matcher(matcher="Bash", hooks=[answering(None)]),
                Matcher(matcher="Write|Edit", hooks=[answering(None)]),
            ],
            "AgentStop": [Matcher(hooks=[answering(None)])],
            "SessionStart": [Matcher(hooks=[answering(None)])],
        }
    )
    registered = drive(to_sdk_hooks(g)).init_request["hooks"]
    # SessionStart too: the CLI sends it to SDK callbacks after /compact (never at startup)
    assert sorted(registered) == ["PreToolUse", "SessionStart", "Stop", "UserPromptSubmit"]
    pre, stop = registered["PreToolUse"], registered["Stop"]
    assert len(pre) == 1 and len(pre[0]["hookCallbackIds"]) == 1 and pre[0]["matcher"] is None
    assert pre[0]["onFailure"] == "block"
    assert len(stop) == 1 and stop[0]["matcher"] is None and "onFailure" not in stop[0]


def test_user_prompt_submit_fails_closed_too() -> None:
    g = guard({"UserPromptSubmit": [Matcher(hooks=[answering(None)])]})
    registered = drive(to_sdk_hooks(g)).init_request["hooks"]
    assert registered["UserPromptSubmit"][0]["onFailure"] == "block"


def test_a_ledger_registers_every_event_the_sdk_delivers(tmp_path: Path) -> None:
    g = guard(
        {"AgentStop": [Matcher(hooks=[answering(None)])]},
        ledger=Ledger(tmp_path / "ledger.db"),
    )
    registered = drive(to_sdk_hooks(g)).init_request["hooks"]
    assert sorted(registered) == sorted(SDK_EVENTS)
    assert {"PreToolUse", "PostToolUse", "PostToolUseFailure"} <= set(registered)


def test_a_definition_is_accepted_in_place_of_a_guard() -> None:
    definition = AgentDefinition(hooks={"PostToolUse": [Matcher(hooks=[answering(None)])]})
    assert sorted(to_sdk_hooks(definition)) == ["PostToolUse", "UserPromptSubmit"]


# --- result mapping --------------------------------------------------------------------

MAPPING = [
    (
        "PreToolUse",
        HookResult.deny("no rm", hint="Use trash instead."),
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "no rm\nUse trash instead.",
            }
        },
    ),
    (
        "PreToolUse",
        HookResult.modify(input={"command": "ls -i"}),
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "updatedInput": {"command": "ls -i"},
            }
        },
    ),
    (
        "PreToolUse",
        HookResult("allow", "fine", additional_context="cwd is /p"),
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "permissionDecisionReason": "fine",
                "additionalContext": "cwd is /p",
            }
        },
    ),
    (
        "PreToolUse",
        HookResult.ask("needs a human"),
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "ask",
                "permissionDecisionReason": "needs a human",
            }
        },
    ),
    (
        "PreToolUse",
        HookResult.halt("budget spent"),
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "budget spent",
            },
            "continue": False,
            "stopReason": "budget spent",
        },
    ),
    (
        "PostToolUse",
        HookResult.block("the output leaks a token"),
        {"decision": "block", "reason": "the output leaks a token"},
    ),
    (
        "PostToolUse",
        HookResult.modify(output={"stdout": "[redacted]", "stderr": ""}),
        {
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "updatedToolOutput": {"stdout": "[redacted]", "stderr": ""},
            }
        },
    ),
    (
        "PostToolUse",
        HookResult(system_message="3 of 5 Bash calls used"),
        {"systemMessage": "3 of 5 Bash calls used"},
    ),
    (
        "PostToolUseFailure",
        HookResult.inject("Bash input fields: command (string, required)"),
        {
            "hookSpecificOutput": {
                "hookEventName": "PostToolUseFailure",
                "additionalContext": "Bash input fields: command (string, required)",
            }
        },
    ),
    (
        "UserPromptSubmit",
        HookResult.block("the prompt holds a secret"),
        {"decision": "block", "reason": "the prompt holds a secret"},
    ),
    (
        "UserPromptSubmit",
        HookResult.inject("skill: deploy"),
        {
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": "skill: deploy",
            }
        },
    ),
    (
        "Stop",
        HookResult.block("report.md missing"),
        {"decision": "block", "reason": "report.md missing"},
    ),
    (
        "SubagentStop",
        HookResult.block("report.md missing"),
        {"decision": "block", "reason": "report.md missing"},
    ),
    (
        "SubagentStart",
        HookResult.inject("work in /p/out"),
        {
            "hookSpecificOutput": {
                "hookEventName": "SubagentStart",
                "additionalContext": "work in /p/out",
            }
        },
    ),
    ("PostToolUse", HookResult.halt("enough"), {"continue": False, "stopReason": "enough"}),
    ("PreToolUse", None, {}),
    ("Stop", None, {}),
]


@pytest.mark.parametrize(("event", "result", "wire"), MAPPING)
def test_result_reaches_the_cli_as_claude_json(
    event: str, result: Any, wire: dict[str, Any]
) -> None:
    g = guard({event: [Matcher(hooks=[answering(result)])]})
    answers: list[dict[str, Any]] = []

    async def scenario(cli: FakeCLI) -> None:
        answers.append(await cli.hook(event, payload(event), "toolu_1"))

    drive(to_sdk_hooks(g), scenario)
    assert answers == [wire]


# --- failure, denial, sessions, subagents ----------------------------------------------


def test_a_failing_pre_tool_use_dispatcher_answers_an_explicit_deny() -> None:
    g = guard({"PreToolUse": [Matcher(hooks=[answering(None)])]})
    answers: list[dict[str, Any]] = []

    async def scenario(cli: FakeCLI) -> None:  # tool_input must be an object
        answers.append(await cli.hook("PreToolUse", payload("PreToolUse", tool_input="ls")))

    drive(to_sdk_hooks(g), scenario)
    spec = answers[0]["hookSpecificOutput"]
    assert spec["permissionDecision"] == "deny"
    assert "fails closed" in spec["permissionDecisionReason"]


@pytest.mark.parametrize(
    ("event", "bad", "expected"),
    [
        ("UserPromptSubmit", {"prompt": 5}, "block"),
        ("PostToolUse", {"tool_response": None, "tool_input": []}, None),
    ],
)
def test_a_failing_dispatcher_elsewhere_follows_the_event_default(
    event: str, bad: dict[str, Any], expected: str | None
) -> None:
    g = guard({event: [Matcher(hooks=[answering(None)])]})
    answers: list[dict[str, Any]] = []

    async def scenario(cli: FakeCLI) -> None:
        answers.append(await cli.hook(event, payload(event, **bad)))

    drive(to_sdk_hooks(g), scenario)
    assert answers[0].get("decision") == expected
    if expected is None:  # fails open, and says so
        assert "continuing (fails open)" in answers[0]["systemMessage"]


@pytest.mark.parametrize(
    ("event", "on_failure", "blocked"),
    [
        ("SubagentStop", "block", True),
        ("SubagentStop", None, False),
        ("Stop", "block", True),
        ("PostToolUse", "block", True),
        ("UserPromptSubmit", "continue", False),
    ],
)
def test_a_failing_dispatcher_follows_the_matchers_on_failure(
    event: str, on_failure: Any, blocked: bool
) -> None:
    canonical = "AgentStop" if event == "Stop" else event
    g = guard({canonical: [Matcher(hooks=[answering(None)], on_failure=on_failure)]})
    answers: list[dict[str, Any]] = []

    async def scenario(cli: FakeCLI) -> None:  # a field of the wrong type: cannot be decided
        bad = {"agent_id": 7, "stop_hook_active": "no", "tool_response": None, "prompt": 5}
        answers.append(await cli.hook(event, payload(event, **bad)))

    cli = drive(to_sdk_hooks(g), scenario)
    assert (answers[0].get("decision") == "block") is blocked, answers
    registered = cli.init_request["hooks"][event][0]
    # the CLI honours onFailure only where a hook that cannot run may refuse (not on the
    # stop and post events): there the dispatcher's explicit block is what holds
    assert (registered.get("onFailure") == "block") is (blocked and on_failure_counts(event))


def nan_rewrite(event: Any, ctx: Any) -> HookResult:
    return HookResult.modify(input={"command": "ls", "retries": float("nan")})


def test_a_rewrite_json_cannot_hold_is_a_deny_not_a_broken_run(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    g = guard({"PreToolUse": [Matcher(hooks=[nan_rewrite])]}, ledger=Ledger(db))
    answers: list[dict[str, Any]] = []

    async def scenario(cli: FakeCLI) -> None:
        answers.append(await cli.hook("PreToolUse", payload("PreToolUse"), "toolu_1"))

    drive(to_sdk_hooks(g), scenario)
    spec = answers[0]["hookSpecificOutput"]
    assert spec["permissionDecision"] == "deny" and "updatedInput" not in spec
    assert "not strict JSON" in spec["permissionDecisionReason"]
    assert rows(db, "SELECT status, decision FROM tool_calls") == [
        {"status": "denied", "decision": "deny"}
    ]


@pytest.mark.e2e
@pytest.mark.slow
def test_the_real_cli_denies_a_nan_rewrite_and_the_run_goes_on(tmp_path: Path) -> None:
    """The SDK would write `NaN`; the CLI cannot parse it and the whole run dies (exit 1)."""
    from guardrails.testing import tool_use
    from tests._claude_cli import run_claude

    g = guard({"PreToolUse": [Matcher(hooks=[nan_rewrite])]})
    call = tool_use("Bash", {"command": "touch ran.txt"}, id="toolu_nan")
    run = run_claude([call, "Done."], tmp_path, hooks=to_sdk_hooks(g))
    assert not (run.cwd / "ran.txt").exists()  # the denied call never ran
    assert "not strict JSON" in run.result_text("toolu_nan")
    assert run.result is not None and not run.result.is_error


def test_an_invalid_pre_tool_use_is_denied_and_recorded(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    g = guard({}, ledger=Ledger(db))

    async def scenario(cli: FakeCLI) -> None:
        await cli.hook("PreToolUse", payload("PreToolUse", tool_input="ls"), "toolu_1")

    drive(to_sdk_hooks(g), scenario)
    [call] = rows(db, "SELECT tool_call_id, tool_name, status, reason FROM tool_calls")
    assert (call["tool_call_id"], call["tool_name"], call["status"]) == (
        "toolu_1",
        "Bash",
        "denied",
    )
    assert "tool_input" in call["reason"] and "denied (fails closed)" in call["reason"]


def test_a_hook_that_raises_on_pre_tool_use_denies() -> None:
    def broken(event: Any, ctx: Any) -> None:
        raise RuntimeError("boom")

    g = guard({"PreToolUse": [Matcher(hooks=[broken])]})
    answers: list[dict[str, Any]] = []

    async def scenario(cli: FakeCLI) -> None:
        answers.append(await cli.hook("PreToolUse", payload("PreToolUse")))

    drive(to_sdk_hooks(g), scenario)
    assert answers[0]["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_denied_call_never_runs(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    g = guard(
        {"PreToolUse": [Matcher(matcher="Bash(rm *)", hooks=[answering(HookResult.deny("no"))])]},
        ledger=Ledger(db),
    )
    tool = SpyTool()

    async def scenario(cli: FakeCLI) -> None:  # a host: run only what PreToolUse allows
        for n, command in enumerate(["rm -rf /p", "ls"]):
            pre = payload("PreToolUse", tool_input={"command": command}, tool_use_id=f"t{n}")
            answer = await cli.hook("PreToolUse", pre, f"t{n}")
            if answer.get("hookSpecificOutput", {}).get("permissionDecision") == "deny":
                continue
            output = tool(command=command)
            post = {**pre, "hook_event_name": "PostToolUse", "tool_response": output}
            await cli.hook("PostToolUse", post, f"t{n}")

    drive(to_sdk_hooks(g), scenario)
    assert tool.calls == [{"command": "ls"}]
    found = rows(db, "SELECT tool_call_id, status FROM tool_calls ORDER BY tool_call_id")
    assert found == [
        {"tool_call_id": "t0", "status": "denied"},
        {"tool_call_id": "t1", "status": "ok"},
    ]


def test_the_tool_use_id_argument_fills_an_input_without_one(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    g = guard({}, ledger=Ledger(db))

    async def scenario(cli: FakeCLI) -> None:
        pre = payload("PreToolUse")
        del pre["tool_use_id"]
        await cli.hook("PreToolUse", pre, "toolu_from_the_cli")

    drive(to_sdk_hooks(g), scenario)
    assert rows(db, "SELECT tool_call_id FROM tool_calls") == [
        {"tool_call_id": "toolu_from_the_cli"}
    ]


def test_subagent_calls_reach_the_ledger_with_their_agent(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    g = guard({}, ledger=Ledger(db))
    sub = {"agent_id": "a7", "agent_type": "worker"}

    async def scenario(cli: FakeCLI) -> None:
        await cli.hook("PreToolUse", payload("PreToolUse", **sub), "toolu_1")
        post = payload("PostToolUse", **sub)
        await cli.hook("PostToolUse", post, "toolu_1")

    drive(to_sdk_hooks(g), scenario)
    found = rows(db, "SELECT agent_id, agent_type, status, session_id FROM tool_calls")
    assert found == [{"agent_id": "a7", "agent_type": "worker", "status": "ok", "session_id": "s1"}]


def test_a_halt_denies_every_call_until_the_next_prompt() -> None:
    def halt_on_deploy(event: Any, ctx: Any) -> HookResult | None:
        return (
            HookResult.halt("deploys are frozen")
            if "deploy" in event.tool_input["command"]
            else None
        )

    g = guard({"PreToolUse": [Matcher(hooks=[halt_on_deploy])]})
    decisions: list[str | None] = []

    async def scenario(cli: FakeCLI) -> None:
        for command in ["deploy", "ls", None, "ls"]:
            if command is None:
                await cli.hook("UserPromptSubmit", payload("UserPromptSubmit"))
                continue
            pre = payload("PreToolUse", tool_input={"command": command})
            answer = await cli.hook("PreToolUse", pre)
            decisions.append(answer.get("hookSpecificOutput", {}).get("permissionDecision"))

    drive(to_sdk_hooks(g), scenario)
    assert decisions == ["deny", "deny", None]


def test_one_claude_session_is_one_hookrails_session() -> None:
    g = guard({"AgentStop": [Matcher(hooks=[answering(HookResult.block("keep going"))])]})
    blocked: list[tuple[str, bool]] = []

    async def scenario(cli: FakeCLI) -> None:
        for session in ["s1"] * 8 + ["s2", "s1"]:
            answer = await cli.hook("Stop", payload("Stop", session=session))
            blocked.append((session, answer.get("decision") == "block"))

    drive(to_sdk_hooks(g), scenario)
    # s1's ninth consecutive stop goes through (the cap); s2 counts on its own
    assert blocked == [("s1", True)] * 8 + [("s2", True), ("s1", False)]
    assert {s.session_id for s in g._sessions.values()} >= {"s1", "s2"}


# --- from_sdk_options ------------------------------------------------------------------


def test_from_sdk_options_keeps_matchers_timeouts_and_failure_policy() -> None:
    async def cb(input_data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        return {}

    options = ClaudeAgentOptions(
        hooks={
            "PreToolUse": [
                HookMatcher(matcher="Edit, Write", hooks=[cb], timeout=7, on_failure="continue")
            ],
            "Stop": [HookMatcher(matcher="ignored", hooks=[cb])],
            "SubagentStop": [HookMatcher(matcher="^work", hooks=[cb])],
        }
    )
    definition = from_sdk_options(options, name="imported")
    pre = definition.hooks["PreToolUse"][0]
    assert (definition.name, pre.matcher, pre.timeout, pre.on_failure) == (
        "imported",
        "Edit|Write",
        7,
        "continue",
    )
    assert definition.hooks["AgentStop"][0].matcher is None  # Claude ignores Stop matchers
    sub = definition.hooks["SubagentStop"][0].pattern
    assert sub.matches_name("worker") and not sub.matches_name("coworker")


def test_from_sdk_options_round_trip_answers_like_the_original_callbacks() -> None:
    seen: list[tuple[str, str | None, Any]] = []

    async def deny_rm(input_data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append((input_data["hook_event_name"], tool_use_id, context))
        if "rm " in input_data["tool_input"]["command"]:
            return {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "no rm",
                }
            }
        return {}

    async def keep_going(input_data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        return {"decision": "block", "reason": "not done"}

    async def halt(input_data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        return {"continue_": False, "stopReason": "over budget"}

    options = ClaudeAgentOptions(
        hooks={
            "PreToolUse": [HookMatcher(matcher="Bash", hooks=[deny_rm])],
            "PostToolUse": [HookMatcher(matcher="Write|Edit", hooks=[halt])],
            "Stop": [HookMatcher(hooks=[keep_going])],
        }
    )
    g = Guard(from_sdk_options(options), ledger=False)
    answers: list[dict[str, Any]] = []

    async def scenario(cli: FakeCLI) -> None:
        rm = {"command": "rm -rf x"}
        answers.append(await cli.hook("PreToolUse", payload("PreToolUse", tool_input=rm), "t1"))
        read = payload("PreToolUse", tool_name="Read", tool_input={"command": "rm -rf x"})
        answers.append(await cli.hook("PreToolUse", read, "t2"))
        answers.append(await cli.hook("PostToolUse", payload("PostToolUse", tool_name="Write")))
        answers.append(await cli.hook("Stop", payload("Stop")))

    drive(to_sdk_hooks(g), scenario)
    assert answers[0]["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert answers[0]["hookSpecificOutput"]["permissionDecisionReason"] == "no rm"
    assert answers[1] == {}  # Read is not matched by "Bash": the callback never ran
    assert answers[2] == {"continue": False, "stopReason": "over budget"}
    assert answers[3] == {"decision": "block", "reason": "not done"}
    assert seen == [("PreToolUse", "toolu_1", {"signal": None})]


def test_from_sdk_options_accepts_the_hooks_dict_itself() -> None:
    async def cb(input_data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        return {}

    definition = from_sdk_options({"PostToolUse": [HookMatcher(matcher="Bash", hooks=[cb])]})
    assert definition.hooks["PostToolUse"][0].matcher == "Bash"


@pytest.mark.parametrize(
    ("hooks", "where"),
    [
        ({"PreCompacted": [HookMatcher(hooks=[print])]}, "hooks.PreCompacted"),
        ({"PreToolUse": [HookMatcher(matcher="Bash(", hooks=[print])]}, "hooks.PreToolUse[0]"),
    ],
)
def test_from_sdk_options_refuses_what_it_cannot_translate(
    hooks: dict[str, Any], where: str
) -> None:
    with pytest.raises(DefinitionError) as caught:
        from_sdk_options(hooks)
    assert caught.value.path.startswith(where)


# --- matcher translation ---------------------------------------------------------------

SUBJECTS = ["Bash", "Agent", "Edit", "NotebookEdit", "TaskStop", "mcp__github__get_issue"]

#: (Claude matcher, hookrails pattern, subjects it fires on). The Bash/Agent columns were
#: observed with CLI 2.1.332 (test_e2e_claude_sdk checks them against the real CLI).
#: TaskStop's legacy name is KillBash, so a regex matching "KillBash" fires on TaskStop.
TRANSLATIONS: list[tuple[str | None, str | None, set[str]]] = [
    (None, None, set(SUBJECTS)),
    ("", None, set(SUBJECTS)),
    ("*", None, set(SUBJECTS)),
    ("Bash", "Bash", {"Bash"}),
    ("bash", "bash", set()),
    ("Bas", "Bas", set()),
    ("Edit|Bash", "Edit|Bash", {"Edit", "Bash"}),
    ("Edit, Bash", "Edit|Bash", {"Edit", "Bash"}),
    (" Bash ", "Bash", {"Bash"}),
    ("Bash-x", "Bash-x", set()),
    ("|", "re:(?!)", set()),
    ("Task", "Task|Agent", {"Agent"}),
    ("^Bash$", "re:(?s:.*?)(?a:^Bash$)(?s:.*)", {"Bash"}),
    ("Ba.*", "re:(?:(?s:.*?)(?a:Ba.*)(?s:.*)|TaskStop)", {"Bash", "TaskStop"}),
    ("Edit.*", "re:(?s:.*?)(?a:Edit.*)(?s:.*)", {"Edit", "NotebookEdit"}),
    ("sh$", "re:(?:(?s:.*?)(?a:sh$)(?s:.*)|TaskStop)", {"Bash", "TaskStop"}),
    ("^Bash", "re:(?s:.*?)(?a:^Bash)(?s:.*)", {"Bash"}),
    ("mcp__github__.*", "re:(?s:.*?)(?a:mcp__github__.*)(?s:.*)", {"mcp__github__get_issue"}),
    ("mcp__.*", "re:(?s:.*?)(?a:mcp__.*)(?s:.*)", {"mcp__github__get_issue"}),
    ("Bash(echo *)", "re:(?s:.*?)(?a:Bash(echo *))(?s:.*)", set()),
    ("^Task$", "re:(?:(?s:.*?)(?a:^Task$)(?s:.*)|Agent)", {"Agent"}),
    ("^(?<t>Bash)$", "re:(?s:.*?)(?a:^(?P<t>Bash)$)(?s:.*)", {"Bash"}),
]


@pytest.mark.parametrize(("claude", "ours", "fires"), TRANSLATIONS)
def test_claude_matcher_translates_to_an_equivalent_pattern(
    claude: str | None, ours: str | None, fires: set[str]
) -> None:
    assert translate_matcher(claude, "PreToolUse") == ours
    pattern = Pattern(ours)
    assert {s for s in SUBJECTS if pattern.matches_name(s)} == fires


@pytest.mark.parametrize("event", ["UserPromptSubmit", "Stop", "AgentStop"])
def test_matchers_claude_ignores_become_match_all(event: str) -> None:
    assert translate_matcher("Bash", event) is None


def test_aliases_apply_to_tool_names_only() -> None:
    assert translate_matcher("Task", "SubagentStop") == "Task"
