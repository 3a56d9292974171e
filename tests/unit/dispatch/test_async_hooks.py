"""The async driver runs a stretch of sync hooks in one worker thread, and still holds each
hook to its own limit (guardrails/dispatch/async_hooks.py)."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import time
from typing import Any

import pytest

from guardrails import AgentDefinition, Decision, Guard, HookMatcher, HookResult, Ledger
from guardrails.dispatch import threads
from guardrails.testing import SpyTool
from tests._db import rows, value


def _guard(*matchers: HookMatcher, ledger: Ledger | None = None) -> Guard:
    return Guard(AgentDefinition(hooks={"PreToolUse": list(matchers)}), ledger=ledger or False)


def _decide(guard: Guard) -> Decision:
    return asyncio.run(guard.pre_tool_use("Bash", {"command": "ls"}))


def _runs(decision: Decision) -> list[tuple[str, str]]:
    return [(r.hook.rsplit(":", 1)[-1], r.outcome) for r in decision.runs]


@pytest.fixture
def handoffs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of each function handed to a worker thread, in order."""
    names: list[str] = []
    real = threads.in_thread

    def counted(fn: Any, *args: Any) -> Any:
        names.append(fn.__name__)
        return real(fn, *args)

    monkeypatch.setattr(threads, "in_thread", counted)
    return names


class _Seen:
    """Hooks that note the thread they ran on, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def hook(self, name: str, answer: Any = None, sleep: float = 0.0) -> Any:
        def fn(event: Any, ctx: Any) -> Any:
            self.calls.append((name, threading.get_ident()))
            if sleep:
                time.sleep(sleep)
            return answer

        fn.__name__ = fn.__qualname__ = name
        return fn


def test_consecutive_sync_hooks_run_in_one_thread_off_the_loop() -> None:
    seen = _Seen()
    guard = _guard(HookMatcher(hooks=[seen.hook("a"), seen.hook("b"), seen.hook("c")]))
    decision = _decide(guard)
    assert decision.allowed
    assert [n for n, _ in seen.calls] == ["a", "b", "c"]
    threads = {t for _, t in seen.calls}
    assert len(threads) == 1  # one handoff for the stretch, not one per hook
    assert threads != {threading.get_ident()}  # and not on the event loop's thread
    assert _runs(decision) == [("a", "noop"), ("b", "noop"), ("c", "noop")]


def test_a_stretch_is_one_thread_handoff(handoffs: list[str]) -> None:
    """A handoff (a future, two wakes) costs ~0.1 ms, a no-op hook ~0.1 us: five sync hooks
    cost the event one handoff, not five."""
    seen = _Seen()
    guard = _guard(HookMatcher(hooks=[seen.hook(f"h{i}") for i in range(5)]))
    assert _decide(guard).allowed
    assert len(seen.calls) == 5
    assert handoffs == ["_stretch"]


def test_an_answer_ends_the_stretch_and_a_deny_stops_the_chain() -> None:
    seen = _Seen()
    hooks = [seen.hook("a"), seen.hook("b", HookResult.deny("no")), seen.hook("c")]
    decision = _decide(_guard(HookMatcher(hooks=hooks)))
    assert decision.decision == "deny"
    assert [n for n, _ in seen.calls] == ["a", "b"]  # c never ran
    assert _runs(decision)[:2] == [("a", "noop"), ("b", "deny")]


def test_a_rewrite_is_seen_by_the_hooks_after_it() -> None:
    got: list[str] = []

    def rewrite(event: Any, ctx: Any) -> HookResult:
        return HookResult.modify({"command": "ls -la"})

    def after(event: Any, ctx: Any) -> None:
        got.append(event.tool_input["command"])

    decision = _decide(_guard(HookMatcher(hooks=[rewrite, after])))
    assert got == ["ls -la"]
    assert decision.tool_input == {"command": "ls -la"}


def test_a_hook_past_its_limit_is_cut_off_and_the_rest_still_run() -> None:
    """Hook b hangs in the stretch's thread: at b's limit it is judged a timeout (the loop
    does not wait for it), and c runs in a new thread; b's late answer is dropped."""
    seen = _Seen()
    release = threading.Event()

    def hang(event: Any, ctx: Any) -> HookResult:
        seen.calls.append(("b", threading.get_ident()))
        release.wait(10)
        return HookResult.deny("too late to count")

    hang.__name__ = hang.__qualname__ = "b"
    matcher = HookMatcher(
        hooks=[seen.hook("a"), hang, seen.hook("c")], timeout=0.2, on_failure="continue"
    )
    t0 = time.monotonic()
    decision = _decide(_guard(matcher))
    took = time.monotonic() - t0
    release.set()
    assert took < 5  # cut off at b's limit, not after b's 10 s
    assert decision.allowed  # on_failure="continue": the late deny does not count
    assert [n for n, _ in seen.calls] == ["a", "b", "c"]
    threads = dict(seen.calls)
    assert threads["a"] == threads["b"] != threads["c"]
    assert _runs(decision) == [("a", "noop"), ("b", "timeout"), ("c", "noop")]


def test_a_late_no_opinion_that_fails_closed_stops_the_stretch() -> None:
    """A hook that answers nothing, but after its limit, is a timeout; with
    ``on_failure="block"`` that denies, and the hooks after it must not run (the thread
    stops at a late answer so the loop judges it first)."""
    seen = _Seen()
    matcher = HookMatcher(
        hooks=[seen.hook("a", sleep=0.3), seen.hook("b")], timeout=0.1, on_failure="block"
    )
    decision = _decide(_guard(matcher))
    assert decision.decision == "deny"
    assert [n for n, _ in seen.calls] == ["a"]


def test_async_and_sync_hooks_keep_their_chain_order() -> None:
    order: list[str] = []

    def s1(event: Any, ctx: Any) -> None:
        order.append("s1")

    async def a1(event: Any, ctx: Any) -> None:
        order.append("a1")

    def s2(event: Any, ctx: Any) -> None:
        order.append("s2")

    def s3(event: Any, ctx: Any) -> None:
        order.append("s3")

    assert _decide(_guard(HookMatcher(hooks=[s1, a1, s2, s3]))).allowed
    assert order == ["s1", "a1", "s2", "s3"]


def test_a_cancelled_event_records_the_hook_it_interrupted() -> None:
    started = threading.Event()
    release = threading.Event()
    seen = _Seen()

    def slow(event: Any, ctx: Any) -> None:
        started.set()
        release.wait(10)

    guard = _guard(HookMatcher(hooks=[seen.hook("a"), slow, seen.hook("c")], timeout=30))

    async def main() -> None:
        task = asyncio.ensure_future(guard.pre_tool_use("Bash", {"command": "ls"}))
        while not started.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        else:
            raise AssertionError("the event was not cancelled")

    asyncio.run(main())
    release.set()
    time.sleep(0.05)
    assert [n for n, _ in seen.calls] == ["a"]  # nothing ran after the interrupted hook


def test_with_a_ledger_a_quiet_chain_is_decided_and_recorded_in_its_thread(
    ledger_path: str, handoffs: list[str]
) -> None:
    """The record used to be a second thread handoff per event: a chain whose sync hooks
    all answer nothing in time is now decided and recorded by the thread that ran them."""
    seen = _Seen()
    ledger = Ledger(ledger_path)
    guard = _guard(HookMatcher(hooks=[seen.hook("a"), seen.hook("b")]), ledger=ledger)
    session = guard.session("s")
    spy = SpyTool()
    assert asyncio.run(session.run_tool("Bash", {"command": "ls"}, spy)).ok  # seeds the session
    handoffs.clear()
    run = asyncio.run(session.run_tool("Bash", {"command": "pwd"}, spy))
    assert run.ok and spy.calls == [{"command": "ls"}, {"command": "pwd"}]
    assert handoffs == ["_stretch", "recorded"]  # the PostToolUse has no hooks: a record alone
    ledger.close()
    rows = value(ledger_path, "SELECT count(*) FROM tool_calls WHERE status = 'ok'")
    assert rows == 2
    assert value(ledger_path, "SELECT count(*) FROM hook_runs WHERE event = 'PreToolUse'") == 4


def test_an_event_cancelled_while_its_thread_records_it_is_recorded_once(
    ledger_path: str,
) -> None:
    """Cancelled while the thread's record waits for another writer: the thread records
    the event (the loop does not record a refusal besides), and the call never runs."""
    ledger = Ledger(ledger_path, busy_timeout=10.0)
    guard = _guard(HookMatcher(hooks=[_Seen().hook("a")]), ledger=ledger)
    session = guard.session("s")
    spy = SpyTool()
    asyncio.run(session.pre_tool_use("Bash", {"command": "warm"}))  # seeds the session
    other = sqlite3.connect(ledger_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another writer holds the file

    async def main() -> None:
        task = asyncio.ensure_future(session.run_tool("Bash", {"command": "ls"}, spy))
        await asyncio.sleep(0.3)  # the hook ran; its thread waits for the write lock
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(main())
    other.execute("COMMIT")
    other.close()
    ledger.close()  # waits for nothing: the thread's record went through once the lock was free
    assert spy.calls == []
    assert value(ledger_path, "SELECT count(*) FROM tool_calls WHERE tool_call_arguments "
                 "= '{\"command\": \"ls\"}'") == 1  # fmt: skip


def test_a_later_hook_with_a_shorter_limit_is_cut_off_at_its_own_limit() -> None:
    """Nothing wakes the loop when the thread starts the next hook: the loop must look
    again within the shortest limit still ahead, not sleep to the deadline of the hook it
    saw running (a 10 s hook then a hung 0.2 s hook held the event for 10 s)."""
    release = threading.Event()
    seen = _Seen()

    def hang(event: Any, ctx: Any) -> None:
        release.wait(10)

    hang.__name__ = hang.__qualname__ = "hang"
    guard = _guard(
        HookMatcher(hooks=[seen.hook("a")], timeout=10, priority=1),
        HookMatcher(hooks=[hang], timeout=0.2, on_failure="continue", priority=2),
    )
    t0 = time.monotonic()
    decision = _decide(guard)
    took = time.monotonic() - t0
    release.set()
    assert took < 5, took  # 0.2 s and a little: not a's 10 s
    assert _runs(decision) == [("a", "noop"), ("hang", "timeout")]


def _rewrite_then_judge(ran: list[str]) -> list[Any]:
    def rewrite(event: Any, ctx: Any) -> HookResult:
        ran.append("rewrite")
        time.sleep(0.05)
        return HookResult.modify({"command": event.tool_input["command"] + " --force"})

    def judge(event: Any, ctx: Any) -> HookResult | None:
        ran.append("judge")
        return HookResult.deny("forced") if "--force" in event.tool_input["command"] else None

    return [rewrite, judge]


def _sync_then_async(ran: list[str]) -> list[Any]:
    def first(event: Any, ctx: Any) -> None:
        ran.append("first")
        time.sleep(0.05)

    async def second(event: Any, ctx: Any) -> None:
        ran.append("second")

    return [first, second]


@pytest.mark.parametrize(
    ("hooks", "ran_first", "refused"),
    [
        pytest.param(_rewrite_then_judge, "rewrite", "judge", id="the next hook of the stretch"),
        pytest.param(_sync_then_async, "first", "second", id="an async hook after the stretch"),
    ],
)
def test_a_cancel_after_the_thread_answered_refuses_the_hook_that_never_ran(
    ledger_path: str, hooks: Any, ran_first: str, refused: str
) -> None:
    """The thread's hook answered while the loop was busy, and the cancel came before the
    loop saw it: the chain did not end, so the call is refused and recorded as interrupted
    at the hook that never ran (it was recorded as allowed, with part of its chain)."""
    ran: list[str] = []
    ledger = Ledger(ledger_path)
    guard = _guard(HookMatcher(hooks=hooks(ran), timeout=5), ledger=ledger)
    session = guard.session("s")
    asyncio.run(session.pre_tool_use("Bash", {"command": "warm"}))  # seeds the session
    ran.clear()

    async def main() -> None:
        task = asyncio.ensure_future(session.pre_tool_use("Bash", {"command": "push"}))
        deadline = time.monotonic() + 10
        while not ran:  # until the thread started the first hook (it then sleeps 50 ms)
            assert time.monotonic() < deadline
            await asyncio.sleep(0)
        # no await from here on: the loop cannot see the hook's answer before the cancel
        time.sleep(0.3)  # the loop is busy; the thread's hook answers meanwhile
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(main())
    ledger.close()
    assert ran == [ran_first]
    (row,) = rows(
        ledger_path,
        "SELECT decision, status, reason FROM tool_calls WHERE tool_call_arguments LIKE ?",
        "%push%",
    )
    assert (row["decision"], row["status"]) == ("deny", "denied")
    assert "interrupted while hook" in row["reason"] and refused in row["reason"]
