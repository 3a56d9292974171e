"""One dispatch loop: the sync and the async driver judge, word and record alike.

The two drivers used to be written twice and drifted (a spent event budget was
worded differently, a late async hook was not judged late, the stop was checked
at different points). Each behaviour below was chosen on purpose; every test
runs through both drivers and expects the same outcome.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from guardrails import AgentDefinition, Decision, Guard, HookMatcher, HookResult
from guardrails.testing import SpyTool


def _sync_driver(guard: Guard, name: str, tool_input: dict[str, Any]) -> Decision:
    return guard.sync.pre_tool_use(name, tool_input)


def _async_driver(guard: Guard, name: str, tool_input: dict[str, Any]) -> Decision:
    return asyncio.run(guard.pre_tool_use(name, tool_input))


DRIVERS: dict[str, Callable[[Guard, str, dict[str, Any]], Decision]] = {
    "sync": _sync_driver,
    "async": _async_driver,
}
driver = pytest.mark.parametrize("drive", list(DRIVERS.values()), ids=list(DRIVERS))


def _guard(*matchers: HookMatcher, **kw: Any) -> Guard:
    return Guard(AgentDefinition(hooks={"PreToolUse": list(matchers)}, **kw))


def _sleep(event: Any, ctx: Any) -> None:
    time.sleep(0.3)


async def _blocking_async(event: Any, ctx: Any) -> None:
    time.sleep(0.3)  # blocks the loop without yielding: no timer can cut it off


async def _late_async_deny(event: Any, ctx: Any) -> HookResult:
    time.sleep(0.3)
    return HookResult.deny("late, but a refusal")


def _noop(event: Any, ctx: Any) -> None:
    return None


def _deny(event: Any, ctx: Any) -> HookResult:
    return HookResult.deny("no")


def _exit(event: Any, ctx: Any) -> None:
    raise SystemExit(0)


async def _async_exit(event: Any, ctx: Any) -> None:
    raise SystemExit(3)


@pytest.mark.slow  # waits out real timeouts
@driver
def test_a_spent_event_budget_is_worded_the_same_and_only_gates_starting(drive: Any) -> None:
    """The budget bounds when hooks start; a started hook has its own timeout."""
    guard = _guard(HookMatcher(hooks=[_sleep, _noop], timeout=5), event_budget=0.1)
    d = drive(guard, "Bash", {"command": "ls"})
    assert [(r.hook.rsplit(":", 1)[-1], r.outcome) for r in d.runs] == [
        ("_sleep", "noop"),
        ("_noop", "timeout"),
    ]
    assert d.runs[1].error == "the event budget of 0.1s is spent"
    assert d.denied  # PreToolUse fails closed by default


@pytest.mark.slow  # waits out real timeouts
@driver
def test_a_hook_answering_after_its_timeout_timed_out(drive: Any) -> None:
    guard = _guard(HookMatcher(hooks=[_sleep], timeout=0.1))
    d = drive(guard, "Bash", {"command": "ls"})
    (run,) = d.runs
    assert run.outcome == "timeout"
    assert run.error is not None and "0.1s" in run.error
    assert d.denied and "failed (timeout" in (d.reason or "")


@pytest.mark.slow  # waits out real timeouts
@driver
def test_an_async_hook_blocking_the_loop_past_its_timeout_timed_out(drive: Any) -> None:
    """No timer fires while it blocks the loop: the loop judges it late when it returns."""
    tool = SpyTool()
    guard = _guard(HookMatcher(hooks=[_blocking_async], timeout=0.1))
    d = drive(guard, "Bash", {"command": "ls"})
    assert [r.outcome for r in d.runs] == ["timeout"]
    assert d.denied
    run = guard.sync.run_tool("Bash", {"command": "ls"}, tool)
    assert run.denied and tool.calls == []


@pytest.mark.slow  # waits out real timeouts
@driver
def test_a_late_refusal_still_refuses(drive: Any) -> None:
    guard = _guard(HookMatcher(hooks=[_late_async_deny], timeout=0.1, on_failure="continue"))
    d = drive(guard, "Bash", {"command": "ls"})
    assert d.denied and d.reason == "late, but a refusal"


@driver
def test_after_a_deny_later_matching_hooks_are_skipped_and_others_not_listed(drive: Any) -> None:
    guard = _guard(
        HookMatcher(matcher="Bash", hooks=[_deny], priority=1),
        HookMatcher(matcher="Bash(git *)", hooks=[_noop], priority=2),  # does not match
        HookMatcher(matcher="Bash(ls*)", hooks=[_noop], priority=3),
    )
    d = drive(guard, "Bash", {"command": "ls -l"})
    assert [r.outcome for r in d.runs] == ["deny", "skipped"]
    assert d.runs[1].matcher == "Bash(ls*)"


@driver
@pytest.mark.parametrize("hook", [_exit, _async_exit], ids=["sync exit", "async exit"])
def test_a_hooks_exit_is_a_failed_hook_not_the_end_of_the_host(drive: Any, hook: Any) -> None:
    guard = _guard(HookMatcher(hooks=[hook]))
    d = drive(guard, "Bash", {"command": "ls"})
    assert [r.outcome for r in d.runs] == ["error"]
    assert d.denied and "SystemExit" in (d.reason or "")


@pytest.mark.slow  # waits out real timeouts
def test_both_drivers_record_the_same_outcomes_for_the_same_chain() -> None:
    def chain() -> Guard:
        return _guard(
            HookMatcher(hooks=[_noop, _sleep], timeout=0.1, on_failure="continue"),
            HookMatcher(hooks=[_deny]),
        )

    sync = _sync_driver(chain(), "Bash", {"command": "ls"})
    async_ = _async_driver(chain(), "Bash", {"command": "ls"})
    assert [(r.outcome, r.matcher) for r in sync.runs] == [
        (r.outcome, r.matcher) for r in async_.runs
    ]
    assert (sync.decision, sync.reason) == (async_.decision, async_.reason)
