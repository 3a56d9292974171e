"""Ordering and merging of hook results (docs/design.md §5)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult
from guardrails.testing import RecordingHook, SpyTool
from tests._guards import GuardFactory


def _order_hook(tag: str, seen: list[str], result: Any = None) -> Any:
    def hook(event: Any, ctx: Any) -> Any:
        seen.append(tag)
        return result

    hook.hook_name = tag  # type: ignore[attr-defined]
    return hook


def test_hooks_run_by_priority_then_declaration_order() -> None:
    seen: list[str] = []
    definition = AgentDefinition(
        hooks={
            "PreToolUse": [
                HookMatcher(hooks=[_order_hook("a", seen), _order_hook("b", seen)]),
                HookMatcher(hooks=[_order_hook("early", seen)], priority=10),
                HookMatcher(hooks=[_order_hook("c", seen)]),
                HookMatcher(hooks=[_order_hook("late", seen)], priority=500),
            ]
        }
    )
    Guard(definition).sync.pre_tool_use("Bash", {"command": "ls"})
    assert seen == ["early", "a", "b", "c", "late"]


def test_first_deny_wins_and_later_hooks_are_recorded_as_skipped() -> None:
    seen: list[str] = []
    definition = AgentDefinition(
        hooks={
            "PreToolUse": [
                HookMatcher(
                    hooks=[
                        _order_hook("first", seen, HookResult.deny("first says no")),
                        _order_hook("second", seen, HookResult.deny("second says no")),
                        _order_hook("third", seen, HookResult.allow()),
                    ]
                )
            ]
        }
    )
    d = Guard(definition).sync.pre_tool_use("Bash", {"command": "ls"})
    assert d.decision == "deny" and d.reason == "first says no"
    assert seen == ["first"]
    assert [(r.hook, r.outcome) for r in d.runs] == [
        ("first", "deny"),
        ("second", "skipped"),
        ("third", "skipped"),
    ]


def test_updated_input_chains_from_hook_to_hook() -> None:
    def add_flag(event: Any, ctx: Any) -> HookResult:
        return HookResult.modify(
            input={**event.tool_input, "command": event.tool_input["command"] + " -v"}
        )

    second = RecordingHook()
    definition = AgentDefinition(
        hooks={"PreToolUse": [HookMatcher(hooks=[add_flag, add_flag, second])]}
    )
    tool = SpyTool()
    run = Guard(definition).sync.run_tool("Bash", {"command": "ls"}, tool)
    assert second.events[0].tool_input == {"command": "ls -v -v"}
    assert tool.calls == [{"command": "ls -v -v"}]
    assert run.pre.updated_input == {"command": "ls -v -v"}


@pytest.mark.parametrize(
    ("results", "expected"),
    [
        (["allow", "ask"], "ask"),
        (["ask", "allow"], "ask"),
        (["allow", "deny"], "deny"),
        (["ask", "deny"], "deny"),
        (["allow", "allow"], "allow"),
        ([None, None], "allow"),
    ],
)
def test_precedence_is_deny_over_ask_over_allow(
    results: list[str | None], expected: str, make_guard: GuardFactory
) -> None:
    makers = {"allow": HookResult.allow, "ask": HookResult.ask, "deny": HookResult.deny}
    hooks = [RecordingHook(None if r is None else makers[r]("because")) for r in results]
    d = make_guard(hooks).sync.pre_tool_use("Bash", {"command": "ls"})
    assert d.decision == expected
    assert d.explicit == any(r is not None for r in results)


def test_no_opinion_leaves_decision_implicit_so_hosts_keep_their_permission_flow(
    make_guard: GuardFactory,
) -> None:
    d = make_guard([RecordingHook()]).sync.pre_tool_use("Bash", {"command": "ls"})
    assert d.decision == "allow" and not d.explicit
    assert d.to_claude() == {}


def test_injections_carry_their_hook_as_provenance(make_guard: GuardFactory) -> None:
    def style(event: Any, ctx: Any) -> HookResult:
        return HookResult.inject("use short answers")

    def rules(event: Any, ctx: Any) -> HookResult:
        return HookResult.inject("never push to main")

    g = make_guard({"UserPromptSubmit": [style, rules]})
    d = g.sync.user_prompt_submit("hi")
    assert [(i.hook, i.text) for i in d.injections] == [
        (
            "tests.unit.dispatch.test_chains:test_injections_carry_their_hook_as_provenance.<locals>.style",
            "use short answers",
        ),
        (
            "tests.unit.dispatch.test_chains:test_injections_carry_their_hook_as_provenance.<locals>.rules",
            "never push to main",
        ),
    ]
    assert d.additional_context == "use short answers\n\nnever push to main"
    assert [r.injected_chars for r in d.runs] == [17, 18]


def test_an_injection_is_capped_at_10000_characters() -> None:
    g = Guard(
        AgentDefinition(
            hooks={
                "UserPromptSubmit": [
                    HookMatcher(hooks=[lambda e, c: HookResult.inject("x" * 25_000)])
                ]
            }
        )
    )
    d = g.sync.user_prompt_submit("hi")
    assert len(d.injections[0].text) == 10_000 and d.injections[0].truncated
    assert any("10000" in n for n in d.notes)


def test_the_per_turn_injection_budget_cuts_then_drops_and_resets_on_the_next_prompt() -> None:
    hook = lambda e, c: HookResult.inject("y" * 600)  # noqa: E731
    g = Guard(
        AgentDefinition(
            hooks={
                "UserPromptSubmit": [HookMatcher(hooks=[hook])],
                "PostToolUse": [HookMatcher(hooks=[hook])],
            },
            injection_budget=1000,
        )
    )
    s = g.session("s1")
    assert len(s.sync.user_prompt_submit("go").injections[0].text) == 600
    cut = s.sync.post_tool_use("Bash", {"command": "ls"}, "out")
    assert len(cut.injections[0].text) == 400 and cut.injections[0].truncated
    dropped = s.sync.post_tool_use("Bash", {"command": "ls"}, "out")
    assert dropped.injections == [] and any("budget" in n for n in dropped.notes)
    assert len(s.sync.user_prompt_submit("again").injections[0].text) == 600


def test_stop_block_is_capped_at_8_consecutive_blocks_per_session() -> None:
    g = Guard(
        AgentDefinition(
            hooks={"Stop": [HookMatcher(hooks=[lambda e, c: HookResult.block("keep going")])]}
        )
    )
    s = g.session("s1")
    blocked = [s.sync.agent_stop("done?").blocked for _ in range(10)]
    assert blocked == [True] * 8 + [False] + [True]
    other = g.session("s2")
    assert other.sync.agent_stop("done?").blocked


def test_subagent_stop_blocks_are_counted_per_agent() -> None:
    g = Guard(
        AgentDefinition(
            hooks={
                "SubagentStop": [HookMatcher(hooks=[lambda e, c: HookResult.block("no report")])]
            }
        )
    )
    s = g.session("s1")
    for _ in range(8):
        assert s.sync.subagent_stop("a1", "worker").blocked
    assert s.sync.subagent_stop("a2", "worker").blocked
    assert not s.sync.subagent_stop("a1", "worker").blocked


def test_an_allowed_stop_resets_the_block_count(make_guard: GuardFactory) -> None:
    answers = iter([True] * 7 + [False] + [True] * 8)

    def hook(event: Any, ctx: Any) -> HookResult | None:
        return HookResult.block("again") if next(answers) else None

    s = make_guard({"Stop": [hook]}).session("s")
    results = [s.sync.agent_stop("x").blocked for _ in range(16)]
    assert results == [True] * 7 + [False] + [True] * 8


def test_halt_ends_the_agent_and_is_returned_as_continue_false(make_guard: GuardFactory) -> None:
    g = make_guard({"PostToolUse": [lambda e, c: HookResult.halt("budget gone")]})
    d = g.sync.post_tool_use("Bash", {"command": "ls"}, "out")
    assert d.halted
    assert d.to_claude()["continue"] is False and d.to_claude()["stopReason"] == "budget gone"


def test_post_tool_use_output_rewrites_chain_and_contexts_accumulate(
    make_guard: GuardFactory,
) -> None:
    def redact(event: Any, ctx: Any) -> HookResult:
        return HookResult.modify(output=event.tool_response.replace("secret", "[redacted]"))

    def shout(event: Any, ctx: Any) -> HookResult:
        return HookResult(
            updated_output=event.tool_response.upper(), additional_context="saw output"
        )

    g = make_guard({"PostToolUse": [redact, shout]})
    run = g.sync.run_tool("Bash", {"command": "cat"}, lambda command: "the secret")
    assert run.output == "THE [REDACTED]"
    assert run.post is not None and run.post.additional_context == "saw output"


def test_tool_failure_emits_post_tool_use_failure_with_the_error(make_guard: GuardFactory) -> None:
    seen = RecordingHook()
    g = make_guard({"PostToolUseFailure": [seen]})
    run = g.sync.run_tool("Bash", {"command": "x"}, SpyTool(error=ValueError("bad arg")))
    assert run.status == "error" and run.error == "ValueError: bad arg"
    assert seen.events[0].error == "ValueError: bad arg"
    assert seen.events[0].tool_use_id == run.pre.event.tool_use_id
    with pytest.raises(ValueError):
        run.unwrap()


@pytest.mark.parametrize(
    ("event", "emit", "expected"),
    [
        ("PreToolUse", lambda s: s.sync.pre_tool_use("Bash", {"command": "ls"}), "deny"),
        ("UserPromptSubmit", lambda s: s.sync.user_prompt_submit("hi"), "block"),
        ("PostToolUse", lambda s: s.sync.post_tool_use("Bash", {}, "out"), "continue"),
        ("AgentStop", lambda s: s.sync.agent_stop("bye"), "continue"),
        ("SubagentStop", lambda s: s.sync.subagent_stop("a", "w"), "continue"),
        ("SessionStart", lambda s: s.sync.session_start(), "continue"),
    ],
)
def test_failure_default_blocks_on_pre_tool_use_and_prompts_and_continues_elsewhere(
    event: str, emit: Any, expected: str, make_guard: GuardFactory
) -> None:
    def boom(e: Any, c: Any) -> None:
        raise RuntimeError("boom")

    s = make_guard({event: [boom]}).session("s")
    d = emit(s)
    assert d.runs[0].outcome == "error" and "boom" in (d.runs[0].error or "")
    if expected == "deny":
        assert d.decision == "deny"
    elif expected == "block":
        assert d.blocked
    else:
        assert d.decision == "allow" and not d.blocked
        assert any("continuing" in n for n in d.notes)


def test_on_failure_continue_fails_open_and_records_the_failure(make_guard: GuardFactory) -> None:
    def boom(e: Any, c: Any) -> None:
        raise RuntimeError("boom")

    g = make_guard([HookMatcher(hooks=[boom], on_failure="continue")])
    tool = SpyTool()
    run = g.sync.run_tool("Bash", {"command": "ls"}, tool)
    assert run.ok and tool.calls == [{"command": "ls"}]
    assert run.pre.runs[0].outcome == "error"


def test_on_failure_block_on_a_stop_event_keeps_the_agent_working(
    make_guard: GuardFactory,
) -> None:
    def boom(e: Any, c: Any) -> None:
        raise RuntimeError("boom")

    g = make_guard({"Stop": [HookMatcher(hooks=[boom], on_failure="block")]})
    assert g.sync.agent_stop("x").blocked


def test_async_and_sync_hooks_mix_in_one_chain(make_guard: GuardFactory) -> None:
    seen: list[str] = []

    async def a(event: Any, ctx: Any) -> HookResult:
        await asyncio.sleep(0)
        seen.append("async")
        return HookResult.modify(input={"command": "echo async"})

    def s(event: Any, ctx: Any) -> None:
        seen.append(f"sync saw {event.tool_input['command']}")

    g = make_guard([a, s])
    d = g.sync.pre_tool_use("Bash", {"command": "ls"})  # sync facade drives the async hook
    assert seen == ["async", "sync saw echo async"]
    d2 = asyncio.run(g.pre_tool_use("Bash", {"command": "ls"}))
    assert d.updated_input == d2.updated_input == {"command": "echo async"}


def test_sync_facade_works_inside_a_running_event_loop(make_guard: GuardFactory) -> None:
    async def a(event: Any, ctx: Any) -> HookResult:
        return HookResult.deny("async says no")

    g = make_guard([a])

    async def main() -> str:
        return g.sync.pre_tool_use("Bash", {"command": "ls"}).decision

    assert asyncio.run(main()) == "deny"


def test_hook_context_carries_session_definition_config_state_and_clock() -> None:
    seen: dict[str, Any] = {}

    def first(event: Any, ctx: Any) -> None:
        ctx.state["count"] = ctx.state.get("count", 0) + 1
        seen.update(
            session_id=ctx.session_id,
            name=ctx.definition.name,
            config=ctx.config,
            now=ctx.clock(),
            hook=ctx.hook_name,
        )

    def second(event: Any, ctx: Any) -> None:
        seen["count_seen_by_second"] = ctx.state["count"]

    definition = AgentDefinition(
        name="researcher",
        hooks={
            "PreToolUse": [
                HookMatcher(
                    hooks=[
                        {"use": "tests.unit.dispatch.test_chains:configured", "with": {"limit": 3}}
                    ]
                ),
                HookMatcher(hooks=[first, second]),
            ]
        },
    )
    g = Guard(definition, clock=lambda: 123.0)
    s = g.session("sess-1")
    s.sync.pre_tool_use("Bash", {"command": "ls"})
    s.sync.pre_tool_use("Bash", {"command": "ls"})
    assert seen["session_id"] == "sess-1" and seen["name"] == "researcher"
    assert seen["now"] == 123.0 and seen["count_seen_by_second"] == 2
    assert CONFIG_SEEN == [{"limit": 3}, {"limit": 3}]
    assert g.session("sess-2").state == {}


CONFIG_SEEN: list[dict[str, Any]] = []


def configured(event: Any, ctx: Any) -> None:
    CONFIG_SEEN.append(dict(ctx.config))


def test_claude_hook_runs_an_sdk_callback_unchanged() -> None:
    from guardrails import claude_hook

    calls: list[tuple[Any, ...]] = []

    async def sdk_callback(
        input_data: dict[str, Any], tool_use_id: str | None, context: Any
    ) -> dict[str, Any]:
        calls.append((input_data, tool_use_id, context))
        if "rm" in input_data["tool_input"]["command"]:
            return {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "no rm",
                }
            }
        return {}

    g = Guard(
        AgentDefinition(
            hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[claude_hook(sdk_callback)])]}
        )
    )
    d = g.sync.pre_tool_use("Bash", {"command": "rm x"}, tool_use_id="toolu_1", session_id="s")
    assert d.decision == "deny" and d.reason == "no rm"
    payload, tool_use_id, context = calls[0]
    assert payload["hook_event_name"] == "PreToolUse" and payload["tool_input"] == {
        "command": "rm x"
    }
    assert payload["session_id"] == "s" and tool_use_id == "toolu_1" and context == {"signal": None}
    assert g.sync.pre_tool_use("Bash", {"command": "ls"}).decision == "allow"


def test_events_are_routed_to_their_session_by_session_id() -> None:
    g = Guard(
        AgentDefinition(hooks={"Stop": [HookMatcher(hooks=[lambda e, c: HookResult.block("x")])]})
    )
    from guardrails import AgentStop

    for _ in range(8):
        g.emit_sync(AgentStop(session_id="A"))
    assert g.emit_sync(AgentStop(session_id="B")).blocked
    assert not g.emit_sync(AgentStop(session_id="A")).blocked


def test_sessions_inherit_the_guards_cwd() -> None:
    g = Guard(AgentDefinition(), cwd="/srv/project")
    assert g.session("s1").cwd == "/srv/project"
    assert g.session("s2", cwd="/elsewhere").cwd == "/elsewhere"


def test_an_event_naming_another_session_gets_that_sessions_state() -> None:
    g = Guard(
        AgentDefinition(hooks={"Stop": [HookMatcher(hooks=[lambda e, c: HookResult.block("x")])]})
    )
    a = g.session("A")
    for _ in range(8):
        a.sync.agent_stop("done?", session_id="B")
    assert g.session("B").stop_blocks == {"": 8}
    assert a.stop_blocks == {}


def test_an_allow_reason_on_a_stop_event_is_kept() -> None:
    g = Guard(
        AgentDefinition(
            hooks={"Stop": [HookMatcher(hooks=[lambda e, c: HookResult.allow("Report found")])]}
        )
    )
    d = g.sync.agent_stop("done")
    assert not d.blocked and d.reason == "Report found"


def test_a_guard_forgets_a_session_once_it_ends() -> None:
    g = Guard(AgentDefinition())
    with g.session("s1"):
        assert "s1" in g._sessions
    assert "s1" not in g._sessions
