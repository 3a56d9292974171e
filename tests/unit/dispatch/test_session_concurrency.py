"""One session's events, delivered at once by a host, are decided one at a time.

Claude Code, openai-agents and LangChain all run parallel tool calls
concurrently; hooks keep per-session state (``ctx.state``, stop counts,
budgets), so the Guard serialises the events of one session.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult, Ledger
from guardrails.events import AgentStop, Event, PreToolUse
from tests._guards import build_guard


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
    return build_guard([hook], **kw)


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


class _Overlap:
    """A slow hook that notes when two events of its session run at the same time."""

    def __init__(self) -> None:
        self.active: list[str] = []
        self.overlaps: list[tuple[str, ...]] = []

    def enter(self, name: str) -> None:
        self.active.append(name)
        if len(self.active) > 1:
            self.overlaps.append(tuple(self.active))

    def sync_hook(self, event: Any, ctx: Any) -> None:
        self.enter(event.tool_name)
        time.sleep(0.2)
        self.active.remove(event.tool_name)

    async def async_hook(self, event: Any, ctx: Any) -> None:
        self.enter(event.tool_name)
        await asyncio.sleep(0.2)
        self.active.remove(event.tool_name)


@pytest.mark.slow
def test_sync_and_async_events_of_one_session_take_turns() -> None:
    probe = _Overlap()
    session = _guard(probe.sync_hook).session("s1")
    worker = threading.Thread(target=lambda: session.sync.pre_tool_use("SyncA", {}))
    worker.start()
    time.sleep(0.05)
    asyncio.run(session.pre_tool_use("AsyncB", {}))
    worker.join()
    assert probe.overlaps == []


@pytest.mark.slow
def test_a_sync_call_with_an_async_hook_takes_its_turn_too() -> None:
    """run_tool_sync runs an async chain on a loop of its own: same session, same turn."""
    probe = _Overlap()
    session = _guard(probe.async_hook).session("s1")

    async def main() -> None:
        first = asyncio.create_task(session.pre_tool_use("A", {}))
        await asyncio.sleep(0.05)
        worker = threading.Thread(target=lambda: session.run_tool_sync("B", {}, lambda: "x"))
        worker.start()
        await asyncio.sleep(0.05)
        await asyncio.gather(first, session.pre_tool_use("C", {}))
        worker.join()

    asyncio.run(main())
    assert probe.overlaps == []


@pytest.mark.slow
def test_two_guards_with_the_same_session_id_do_not_share_a_turn() -> None:
    probe = _Overlap()
    b = _guard(probe.async_hook)

    async def from_a(event: Any, ctx: Any) -> None:
        await b.session("s1").pre_tool_use("FromA", {})

    a = _guard(from_a)

    async def main() -> None:
        direct = asyncio.create_task(b.session("s1").pre_tool_use("DirectB", {}))
        await asyncio.sleep(0.05)
        await a.session("s1").pre_tool_use("X", {})
        await direct

    asyncio.run(main())
    assert probe.overlaps == []


def test_a_sync_hook_in_an_async_chain_may_emit_into_its_own_session() -> None:
    async def noop(event: Any, ctx: Any) -> None:
        return None

    def nested(event: Any, ctx: Any) -> HookResult | None:
        if event.tool_name == "Outer":
            inner = ctx.session.sync.pre_tool_use("Inner", {})
            return HookResult.inject(f"inner: {inner.decision}")
        return None

    agent = AgentDefinition(hooks={"PreToolUse": [HookMatcher(hooks=[noop, nested], timeout=5)]})
    decision = Guard(agent).session("s1").sync.pre_tool_use("Outer", {})
    assert decision.additional_context == "inner: allow"  # not a timeout, not a deny


def test_a_sync_emit_on_the_loop_thread_does_not_deadlock_a_task_holding_the_turn() -> None:
    """Adapters record cancellations with emit_sync from async code: it must not wait for a
    task of its own loop (that task can only finish when the loop runs again)."""
    probe = _Overlap()
    session = _guard(probe.async_hook).session("s1")

    async def main() -> bool:
        holder = asyncio.create_task(session.pre_tool_use("Holder", {}))
        await asyncio.sleep(0.05)  # the holder is inside its hook now
        quick = session.emit_sync(PreToolUse(tool_name="Quick", tool_input={}))
        await holder
        return quick.allowed

    result: list[bool] = []
    worker = threading.Thread(target=lambda: result.append(asyncio.run(main())), daemon=True)
    worker.start()
    worker.join(10)
    assert result == [True], "emit_sync on the loop thread deadlocked"


@pytest.mark.slow
def test_a_timed_out_hooks_thread_waits_for_a_later_turn() -> None:
    """Its copy of the context names an old turn: no way in past the current holder."""
    probe = _Overlap()

    def slowpoke(event: Any, ctx: Any) -> None:
        if event.tool_name == "First":
            time.sleep(0.3)  # times out at 0.1, then emits while "Holder" has the turn
            ctx.session.sync.pre_tool_use("Late", {})

    async def tracked(event: Any, ctx: Any) -> None:
        if event.tool_name in ("Holder", "Late"):
            await probe.async_hook(event, ctx)

    agent = AgentDefinition(
        hooks={
            "PreToolUse": [
                HookMatcher(hooks=[slowpoke], timeout=0.1),
                HookMatcher(hooks=[tracked], timeout=3),
            ]
        }
    )
    session = Guard(agent).session("s1")

    async def main() -> None:
        await session.pre_tool_use("First", {})
        await asyncio.sleep(0.05)
        await session.pre_tool_use("Holder", {})
        await asyncio.sleep(0.4)

    asyncio.run(main())
    assert probe.overlaps == []


@pytest.mark.slow
def test_a_sync_emit_on_a_loop_thread_waits_for_another_threads_turn() -> None:
    probe = _Overlap()
    session = _guard(probe.sync_hook).session("s1")
    holder = threading.Thread(target=lambda: session.sync.pre_tool_use("Holder", {}))
    holder.start()
    time.sleep(0.05)

    async def main() -> None:
        session.emit_sync(PreToolUse(tool_name="FromLoop", tool_input={}))

    asyncio.run(main())
    holder.join()
    assert probe.overlaps == []


def test_a_sync_hook_may_use_the_async_api_on_its_own_session() -> None:
    def hook(event: Any, ctx: Any) -> HookResult | None:
        if event.tool_name == "Outer":
            inner = asyncio.run(ctx.session.pre_tool_use("Inner", {}))
            return HookResult.inject(f"inner: {inner.decision}")
        return None

    result: list[Any] = []
    worker = threading.Thread(
        target=lambda: result.append(_guard(hook).session("s1").sync.pre_tool_use("Outer", {})),
        daemon=True,
    )
    worker.start()
    worker.join(10)
    assert result and result[0].additional_context == "inner: allow"


def test_a_call_approved_after_a_sibling_halted_the_agent_never_runs() -> None:
    def hook(event: Any, ctx: Any) -> HookResult | None:
        if event.tool_name == "A":
            return HookResult.ask("needs a human")
        return HookResult.halt("stop everything")

    async def approver(req: Any) -> str:
        await asyncio.sleep(0.2)
        return "allow"

    session = _guard(hook, approver=approver).session("s1")
    ran: list[str] = []

    async def main() -> str:
        a = asyncio.create_task(session.run_tool("A", {}, lambda: ran.append("A")))
        await asyncio.sleep(0.05)
        await session.run_tool("B", {}, lambda: ran.append("B"))
        return (await a).status

    assert asyncio.run(main()) == "denied"
    assert ran == []


def test_threads_starting_one_session_share_it() -> None:
    guard = _guard(lambda e, c: None)
    split: list[int] = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: the race shows
    try:
        for trial in range(200):
            found: list[Any] = []
            barrier = threading.Barrier(4)

            def start(sid: str, barrier: threading.Barrier, found: list[Any]) -> None:
                barrier.wait()
                found.append(guard.session(sid))

            args = (f"new-{trial}", barrier, found)
            threads = [threading.Thread(target=start, args=args) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if len({id(s) for s in found}) > 1:
                split.append(trial)
    finally:
        sys.setswitchinterval(interval)
    assert split == []


@pytest.mark.slow
def test_a_call_waiting_for_its_approver_does_not_hold_up_its_siblings() -> None:
    async def approver(req: Any) -> str:
        await asyncio.sleep(1.0)
        return "allow"

    def ask(event: Any, ctx: Any) -> HookResult | None:
        return HookResult.ask("needs a human") if event.tool_name == "Slow" else None

    session = _guard(ask, approver=approver, approval_timeout=5).session("s1")
    done: dict[str, float] = {}

    async def one(name: str, t0: float) -> None:
        await session.pre_tool_use(name, {})
        done[name] = time.perf_counter() - t0

    async def main() -> None:
        t0 = time.perf_counter()
        await asyncio.gather(one("Slow", t0), one("Fast", t0))

    asyncio.run(main())
    assert list(sorted(done, key=done.__getitem__)) == ["Fast", "Slow"]


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
    keep_going = HookMatcher(hooks=[lambda e, c: HookResult.block("keep going")])
    return build_guard({"AgentStop": [keep_going]}, ledger=Ledger(ledger_path))


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
    fresh = Event.from_claude(  # Claude's payload for a new turn's first stop
        {"hook_event_name": "Stop", "session_id": "s1", "cwd": "/p",
         "transcript_path": "/p/s1.jsonl", "stop_hook_active": False}
    )  # fmt: skip
    assert guard.emit_sync(fresh).blocked
