"""A quiet chain is timed once (``dispatch/untimed.py``, docs/design.md §5 "timing"): the
same decisions and runs as hook-by-hook timing; past its shortest limit, each hook that
could have been late is counted late (the worst case), and the chain is timed per hook
again. No timing is asserted: the chains are made quiet by hand, lateness by sleeping."""

from __future__ import annotations

import time
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult
from guardrails.dispatch.chains import QUIET_RUNS
from guardrails.events import PreToolUse

SLOW = {"on": False}


def _noop(event: Any, ctx: Any) -> None:
    return None


def _noop2(event: Any, ctx: Any) -> None:
    return None


def _sometimes_slow(event: Any, ctx: Any) -> None:
    if SLOW["on"]:
        time.sleep(0.12)


def _deny_rm(event: Any, ctx: Any) -> HookResult | None:
    if event.tool_input.get("command", "").startswith("rm"):
        return HookResult.deny("no rm")
    return None


def _raises(event: Any, ctx: Any) -> None:
    if event.tool_input.get("command") == "boom":
        raise RuntimeError("boom")


def _interrupts(event: Any, ctx: Any) -> None:
    if event.tool_input.get("command") == "ctrl-c":
        raise KeyboardInterrupt


def _rewrite(event: Any, ctx: Any) -> HookResult | None:
    if event.tool_input.get("command") == "safe":
        return HookResult.modify({"command": "rm -rf /"})
    return None


@pytest.fixture(autouse=True)
def _not_slow() -> Any:
    SLOW["on"] = False
    yield
    SLOW["on"] = False


def _guard(*matchers: HookMatcher, **definition: Any) -> Guard:
    return Guard(AgentDefinition(name="quiet", hooks={"PreToolUse": list(matchers)}, **definition))


def _pre(command: str = "ls") -> PreToolUse:
    return PreToolUse(session_id="s", tool_name="Bash", tool_input={"command": command})


def _quiet(guard: Guard) -> None:
    """Make every chain the Guard's sessions compiled quiet (as QUIET_RUNS calls would)."""
    for s in guard._sessions.values():
        for plan, _ in s._plans.values():
            plan.quiet = QUIET_RUNS


def _timed_once(decision: Any) -> bool:
    return len(decision._raw) == 1 and type(decision._raw[0][0]) is tuple


def _runs(decision: Any) -> list[tuple[str, str]]:
    return [(r.hook.rsplit(":", 1)[-1], r.outcome) for r in decision.runs]


def test_quiet_chain_decides_as_the_timed_one() -> None:
    guard = _guard(HookMatcher(matcher="Bash", hooks=[_noop, _noop2, _deny_rm]))
    timed = guard.emit_sync(_pre())
    assert not _timed_once(timed)
    _quiet(guard)
    untimed = guard.emit_sync(_pre())
    assert _timed_once(untimed)
    assert _runs(untimed) == _runs(timed) == [(n, "noop") for n in ("_noop", "_noop2", "_deny_rm")]
    assert untimed.allowed and all(r.duration_ms >= 0 for r in untimed.runs)
    denied = guard.emit_sync(_pre("rm -rf /"))
    assert denied.denied and denied.reason == "no rm"
    assert _runs(denied) == [("_noop", "noop"), ("_noop2", "noop"), ("_deny_rm", "deny")]


def test_a_chain_becomes_quiet_after_quiet_runs_in_time() -> None:
    guard = _guard(HookMatcher(matcher="Bash", hooks=[_noop]))
    decisions = [guard.emit_sync(_pre()) for _ in range(QUIET_RUNS + 1)]
    # no timing asserted: on a loaded machine a run may exceed 5 s only in theory
    assert not _timed_once(decisions[0])
    assert all(d.allowed for d in decisions)


def test_a_late_hook_in_a_quiet_chain_is_late() -> None:
    guard = _guard(HookMatcher(matcher="Bash", hooks=[_noop, _sometimes_slow], timeout=0.05))
    guard.emit_sync(_pre())
    _quiet(guard)
    SLOW["on"] = True
    late = guard.emit_sync(_pre())
    assert late.denied and "on_failure=block" in (late.reason or "")
    assert ("_sometimes_slow", "timeout") in _runs(late)
    plan = next(iter(guard._sessions["s"]._plans.values()))[0]
    assert plan.quiet == 0  # timed per hook again: the next call is exact
    exact = guard.emit_sync(_pre())
    assert _runs(exact) == [("_noop", "noop"), ("_sometimes_slow", "timeout")]


def test_late_then_an_answer_counts_only_a_refusal() -> None:
    guard = _guard(
        HookMatcher(matcher="Bash", hooks=[_sometimes_slow], timeout=0.05, on_failure="continue"),
        HookMatcher(matcher="Bash", hooks=[_deny_rm], timeout=0.05),
    )
    guard.emit_sync(_pre())
    _quiet(guard)
    SLOW["on"] = True
    d = guard.emit_sync(_pre("rm x"))
    assert d.denied and d.reason == "no rm"  # a refusal of a late hook still refuses


def test_past_the_event_budget_the_hooks_that_could_have_started_late_fail() -> None:
    guard = _guard(HookMatcher(matcher="Bash", hooks=[_sometimes_slow, _noop]), event_budget=0.05)
    guard.emit_sync(_pre())
    _quiet(guard)
    SLOW["on"] = True
    d = guard.emit_sync(_pre())
    assert d.denied
    assert ("_noop", "timeout") in _runs(d)


def test_a_hook_that_raises_in_a_quiet_chain_fails_closed() -> None:
    guard = _guard(HookMatcher(matcher="Bash", hooks=[_noop, _raises, _noop2]))
    guard.emit_sync(_pre())
    _quiet(guard)
    d = guard.emit_sync(_pre("boom"))
    assert d.denied
    assert _runs(d) == [("_noop", "noop"), ("_raises", "error"), ("_noop2", "skipped")]


def test_an_interrupted_quiet_chain_lets_the_interruption_go_on() -> None:
    guard = Guard(
        AgentDefinition(
            name="quiet", hooks={"PreToolUse": [HookMatcher(hooks=[_noop, _interrupts])]}
        ),
        ledger=False,
    )
    guard.emit_sync(_pre())
    _quiet(guard)
    seen: list[Any] = []
    real = guard.emit_sync

    with pytest.raises(KeyboardInterrupt):
        seen.append(real(_pre("ctrl-c")))
    assert not seen  # the interruption goes on; the denial was made before it


def test_a_rewrite_in_a_quiet_chain_is_judged_by_the_rest() -> None:
    """Argument rules (the rule index) see the rewritten input."""
    rewriter = HookMatcher(matcher="Bash", hooks=[_rewrite])
    guard = _guard(rewriter, HookMatcher(matcher="Bash(rm *)", hooks=[_deny_rm]))
    assert guard.emit_sync(_pre()).allowed
    _quiet(guard)
    d = guard.emit_sync(_pre("safe"))
    assert d.denied and d.reason == "no rm"


def test_a_quiet_chain_with_argument_rules_selects_per_input() -> None:
    guard = _guard(
        HookMatcher(matcher="Bash(git *)", hooks=[_noop]),
        HookMatcher(matcher="!Bash(git *)", hooks=[_noop2]),
    )
    guard.emit_sync(_pre())
    _quiet(guard)
    assert _runs(guard.emit_sync(_pre("git status"))) == [("_noop", "noop")]
    assert _runs(guard.emit_sync(_pre("ls"))) == [("_noop2", "noop")]
