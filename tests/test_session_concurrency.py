"""One session's events, delivered at once by a host, are decided one at a time.

Claude Code, openai-agents and LangChain all run parallel tool calls
concurrently; hooks keep per-session state (``ctx.state``, stop counts,
budgets), so the Guard serialises the events of one session.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult, Ledger
from guardrails.events import AgentStop, PreToolUse


def _first_call_only_async() -> Any:
    async def hook(event: Any, ctx: Any) -> HookResult | None:
        n = ctx.state.get("n", 0)
        await asyncio.sleep(0.01)  # a read-modify-write spread over an await
        ctx.state["n"] = n + 1
        return HookResult.deny("one call per session") if n else None

    return hook


def _first_call_only_sync(event: Any, ctx: Any) -> HookResult | None:
    n = ctx.state.get("n", 0)
    time.sleep(0.01)
    ctx.state["n"] = n + 1
    return HookResult.deny("one call per session") if n else None


def _guard(hook: Any, **kw: Any) -> Guard:
    agent = AgentDefinition(hooks={"PreToolUse": [HookMatcher(hooks=[hook])]})
    return Guard(agent, **kw)


def test_parallel_async_events_of_one_session_see_each_others_state() -> None:
    guard = _guard(_first_call_only_async())
    session = guard.session("s1")

    async def main() -> list[bool]:
        events = [PreToolUse(tool_name="Read", tool_input={"n": i}) for i in range(5)]
        decisions = await asyncio.gather(*(session.emit(e) for e in events))
        return [d.denied for d in decisions]

    assert sorted(asyncio.run(main())) == [False, True, True, True, True]


def test_parallel_threads_of_one_session_see_each_others_state() -> None:
    guard = _guard(_first_call_only_sync)
    session = guard.session("s1")
    results: list[bool] = []

    def call(i: int) -> None:
        results.append(session.emit_sync(PreToolUse(tool_name="Read", tool_input={"n": i})).denied)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False, True, True, True, True]


def test_different_sessions_are_not_serialised_against_each_other() -> None:
    started: list[str] = []

    async def slow(event: Any, ctx: Any) -> None:
        started.append(ctx.session_id)
        await asyncio.sleep(0.2)

    guard = _guard(slow)

    async def main() -> None:
        await asyncio.gather(
            guard.session("a").emit(PreToolUse(tool_name="Read", tool_input={})),
            guard.session("b").emit(PreToolUse(tool_name="Read", tool_input={})),
            _both_started(started),
        )

    asyncio.run(main())


async def _both_started(started: list[str]) -> None:
    for _ in range(100):
        if len(started) == 2:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"only {started} started while the other session's hook was running")


def test_a_hook_emitting_into_its_own_session_does_not_deadlock() -> None:
    async def nested(event: Any, ctx: Any) -> HookResult | None:
        if event.tool_name == "Outer":
            inner = await ctx.session.emit(PreToolUse(tool_name="Inner", tool_input={}))
            return HookResult.inject(f"inner allowed: {inner.allowed}")
        return None

    guard = _guard(nested)
    decision = asyncio.run(
        asyncio.wait_for(guard.session("s1").emit(PreToolUse(tool_name="Outer", tool_input={})), 10)
    )
    assert decision.additional_context == "inner allowed: True"


def test_a_hook_calling_exit_is_a_failed_hook_not_the_end_of_the_host() -> None:
    ran: list[str] = []

    def exits(event: Any, ctx: Any) -> None:
        raise SystemExit(0)

    async def aexits(event: Any, ctx: Any) -> None:
        raise SystemExit(0)

    for hook in (exits, aexits):
        guard = _guard(hook)
        run = guard.sync.run_tool("Bash", {"command": "ls"}, lambda command: ran.append(command))
        assert run.denied and "SystemExit" in (run.reason or "")
    assert ran == []  # PreToolUse fails closed: the tool never ran


def _stop_guard(ledger_path: Path) -> Guard:
    agent = AgentDefinition(
        hooks={"AgentStop": [HookMatcher(hooks=[lambda e, c: HookResult.block("keep going")])]}
    )
    return Guard(agent, ledger=Ledger(ledger_path))


def test_the_stop_cap_holds_across_processes_through_the_ledger(tmp_path: Path) -> None:
    """`hookrails hook` is a new process per event: each stop starts with a fresh Guard."""
    blocked = []
    for i in range(10):
        guard = _stop_guard(tmp_path / "l.db")  # a new process's Guard
        event = AgentStop(session_id="s1", stop_hook_active=i > 0, last_assistant_message="x")
        blocked.append(guard.emit_sync(event).blocked)
        guard.ledger.close()  # type: ignore[union-attr]
    assert blocked == [True] * 8 + [False, True]


def test_claude_saying_the_last_stop_was_not_blocked_resets_the_count(tmp_path: Path) -> None:
    for _ in range(8):
        guard = _stop_guard(tmp_path / "l.db")
        guard.emit_sync(AgentStop(session_id="s1", stop_hook_active=True))
        guard.ledger.close()  # type: ignore[union-attr]
    guard = _stop_guard(tmp_path / "l.db")
    fresh = AgentStop(session_id="s1", stop_hook_active=False)  # a new turn's first stop
    assert guard.emit_sync(fresh).blocked
