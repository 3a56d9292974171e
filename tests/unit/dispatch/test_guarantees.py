"""A failed, late or tampering hook never lets a call run (docs/design.md §1, §5).

Every case runs through both drivers (``await guard.run_tool`` and
``guard.sync.run_tool``) with a spy tool, and checks what the tool received (if it
ran at all) and what the ledger kept as the model's input.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult, Ledger, ToolRun
from guardrails.builtins import deny_commands
from guardrails.results import MESSAGE_CAP
from guardrails.testing import SpyTool
from tests._db import rows

INPUT = {"command": "echo hi", "opts": {"force": False}, "args": ["a", "b"]}


def _fresh() -> dict[str, Any]:
    return {"command": "echo hi", "opts": {"force": False}, "args": ["a", "b"]}


def _run_async(guard: Guard, tool: SpyTool, tool_input: dict[str, Any]) -> ToolRun:
    return asyncio.run(guard.run_tool("Bash", tool_input, tool))


def _run_sync(guard: Guard, tool: SpyTool, tool_input: dict[str, Any]) -> ToolRun:
    return guard.sync.run_tool("Bash", tool_input, tool)


DRIVERS: dict[str, Callable[[Guard, SpyTool, dict[str, Any]], ToolRun]] = {
    "async": _run_async,
    "sync": _run_sync,
}
driver = pytest.mark.parametrize("run", list(DRIVERS.values()), ids=list(DRIVERS))


def _guard(*hooks: Any, ledger: Ledger | None = None, **matcher: Any) -> Guard:
    definition = AgentDefinition(
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=list(hooks), **matcher)]}
    )
    return Guard(definition, ledger=ledger if ledger is not None else False)


# --- late hooks ---------------------------------------------------------------------------


def _slow_sync(event: Any, ctx: Any) -> None:
    time.sleep(0.3)


async def _async_blocking(event: Any, ctx: Any) -> None:
    time.sleep(0.3)  # never yields: no timer can fire meanwhile


def _holds_the_gil(event: Any, ctx: Any) -> None:
    re.match(r"(a+)+$", "a" * 23 + "b")  # catastrophic backtracking, in C, GIL held


async def _late_async_allow(event: Any, ctx: Any) -> HookResult:
    time.sleep(0.3)
    return HookResult.allow("fine")


def _late_deny(event: Any, ctx: Any) -> HookResult:
    time.sleep(0.3)
    return HookResult.deny("no force pushes")


def _late_rewrite(event: Any, ctx: Any) -> HookResult:
    time.sleep(0.3)
    return HookResult.modify(input={"command": "rm -rf /"})


@driver
@pytest.mark.parametrize(
    "hook",
    [_slow_sync, _async_blocking, _holds_the_gil, _late_async_allow],
    ids=["slow sync hook", "async hook blocking the loop", "GIL-holding regex", "late allow"],
)
@pytest.mark.slow  # waits out real timeouts
def test_a_late_hook_timed_out_and_the_call_does_not_run(run: Any, hook: Any) -> None:
    tool = SpyTool()
    result = run(_guard(hook, timeout=0.05), tool, _fresh())
    assert result.denied and tool.calls == []
    (hook_run,) = result.pre.runs
    assert hook_run.outcome == "timeout"
    assert "over its 0.05s timeout" in (hook_run.error or "") or "no answer" in (
        hook_run.error or ""
    )


async def _late_async_deny(event: Any, ctx: Any) -> HookResult:
    time.sleep(0.3)  # blocks the loop: it returns, late
    return HookResult.deny("no force pushes")


@pytest.mark.parametrize(
    ("run", "hook"),
    [(_run_sync, _late_deny), (_run_sync, _late_async_deny), (_run_async, _late_async_deny)],
    ids=["sync driver, sync hook", "sync driver, async hook", "async driver, async hook"],
)
@pytest.mark.slow  # waits out real timeouts
def test_a_late_deny_still_denies_even_when_failures_continue(run: Any, hook: Any) -> None:
    """Whatever returns late counts as a timeout; a refusal in it still refuses. (On the
    async path a sync hook runs in a thread and is cut off at its timeout instead: see
    below.)"""
    tool = SpyTool()
    result = run(_guard(hook, timeout=0.05, on_failure="continue"), tool, _fresh())
    assert result.denied and tool.calls == []
    assert result.reason == "no force pushes"
    assert result.pre.runs[0].outcome == "timeout"
    assert "its deny stands" in (result.pre.runs[0].error or "")


@pytest.mark.slow  # waits out real timeouts
@pytest.mark.parametrize("on_failure", ["block", "continue"])
def test_a_sync_hook_cut_off_on_the_async_path_follows_on_failure(on_failure: str) -> None:
    tool = SpyTool()
    result = _run_async(_guard(_late_deny, timeout=0.05, on_failure=on_failure), tool, _fresh())
    assert result.pre.runs[0].outcome == "timeout"
    assert "no answer within 0.05s" in (result.pre.runs[0].error or "")
    assert result.denied is (on_failure == "block")
    assert tool.calls == ([] if on_failure == "block" else [_fresh()])


@pytest.mark.slow  # waits out real timeouts
@driver
def test_nothing_else_of_a_late_answer_counts(run: Any) -> None:
    """A late rewrite is not applied even where the timeout only continues."""
    tool = SpyTool()
    result = run(_guard(_late_rewrite, timeout=0.05, on_failure="continue"), tool, _fresh())
    assert result.ok
    assert tool.calls == [_fresh()]


# --- hooks that tamper with what they judge --------------------------------------------------


def _set_key(e: Any, c: Any) -> None:
    e.tool_input["command"] = "rm -rf /"


def _set_nested(e: Any, c: Any) -> None:
    e.tool_input["opts"]["force"] = True


def _append(e: Any, c: Any) -> None:
    e.tool_input["args"].append("-rf")


def _set_item(e: Any, c: Any) -> None:
    e.tool_input["args"][0] = "/"


def _extend(e: Any, c: Any) -> None:
    e.tool_input["args"] += ["/"]


def _update(e: Any, c: Any) -> None:
    e.tool_input.update(command="rm -rf /")


def _merge(e: Any, c: Any) -> None:
    e.tool_input |= {"command": "rm -rf /"}


def _delete(e: Any, c: Any) -> None:
    del e.tool_input["opts"]


def _setdefault(e: Any, c: Any) -> None:
    e.tool_input["opts"].setdefault("recursive", True)


def _clear(e: Any, c: Any) -> None:
    e.tool_input["args"].clear()


def _reassign_input(e: Any, c: Any) -> None:
    e.tool_input = {"command": "rm -rf /"}


def _rename_tool(e: Any, c: Any) -> None:
    e.tool_name = "Read"


def _other_session(e: Any, c: Any) -> None:
    e.session_id = "someone-else"


def _delete_attr(e: Any, c: Any) -> None:
    del e.tool_input


MUTATIONS = [
    _set_key,
    _set_nested,
    _append,
    _set_item,
    _extend,
    _update,
    _merge,
    _delete,
    _setdefault,
    _clear,
    _reassign_input,
    _rename_tool,
    _other_session,
    _delete_attr,
]


@driver
@pytest.mark.parametrize("mutate", MUTATIONS, ids=[m.__name__.strip("_") for m in MUTATIONS])
def test_a_hook_cannot_change_what_runs_in_place(run: Any, mutate: Any, ledger_path: str) -> None:
    """The attempt fails the hook; failing open, the tool still runs the model's input."""
    ledger = Ledger(ledger_path)
    tool = SpyTool()
    guard = _guard(mutate, deny_commands, ledger=ledger, on_failure="continue")
    result = run(guard, tool, _fresh())
    assert result.ok
    assert tool.calls == [_fresh()]  # as the model sent it, every level
    outcomes = [r.outcome for r in result.pre.runs]
    assert outcomes[0] == "error" and "hooks cannot change" in (result.pre.runs[0].error or "")
    ledger.close()
    (row,) = rows(
        ledger_path,
        "select tool_name, tool_call_arguments as arguments, final_arguments from tool_calls",
    )
    assert row["tool_name"] == "Bash"
    assert row["arguments"] == row["final_arguments"]
    assert '"echo hi"' in row["arguments"] and "rm -rf" not in row["arguments"]


@driver
@pytest.mark.parametrize("mutate", MUTATIONS[:3], ids=["key", "nested", "append"])
def test_by_default_a_tampering_hook_denies(run: Any, mutate: Any) -> None:
    tool = SpyTool()
    result = run(_guard(mutate), tool, _fresh())
    assert result.denied and tool.calls == []


@driver
def test_a_rewrite_the_hook_still_holds_cannot_be_changed_after_it_was_judged(run: Any) -> None:
    """The hook keeps its dict and edits it after deny_commands judged it: what runs is the
    rewrite as judged."""
    kept: dict[str, Any] = {}

    def rewrite(event: Any, ctx: Any) -> HookResult:
        kept["input"] = {"command": "echo safe"}
        return HookResult.modify(input=kept["input"])

    def later(event: Any, ctx: Any) -> None:
        kept["input"]["command"] = "rm -rf /"  # its own dict: allowed, but not what runs

    tool = SpyTool()
    result = run(_guard(rewrite, deny_commands, later), tool, _fresh())
    assert result.ok
    assert tool.calls == [{"command": "echo safe"}]


@pytest.mark.slow  # waits out real timeouts
@driver
def test_a_thread_a_hook_leaves_behind_cannot_change_the_input(run: Any) -> None:
    started = threading.Event()
    errors: list[BaseException] = []

    def spawn(event: Any, ctx: Any) -> None:
        def later() -> None:
            started.wait(5)
            time.sleep(0.05)
            try:
                event.tool_input["command"] = "rm -rf /"
            except BaseException as exc:
                errors.append(exc)

        threading.Thread(target=later, daemon=True).start()

    def slow_tool(**kwargs: Any) -> str:
        started.set()
        time.sleep(0.2)  # the thread tries meanwhile
        return str(kwargs["command"])

    result = run(_guard(spawn), slow_tool, _fresh())  # type: ignore[arg-type]
    assert result.ok and result.output == "echo hi"
    assert [type(e) for e in errors] == [TypeError]


def test_the_tool_gets_a_mutable_copy() -> None:
    def tool(command: str, opts: dict[str, Any], args: list[str]) -> list[str]:
        args.append("c")  # a tool may edit its own arguments
        opts["seen"] = True
        return args

    run = _guard(deny_commands).sync.run_tool("Bash", _fresh(), tool)
    assert run.ok and run.output == ["a", "b", "c"]


# --- interruptions and oversized answers ---------------------------------------------------


def _ctrl_c(event: Any, ctx: Any) -> None:
    raise KeyboardInterrupt


async def _cancelled(event: Any, ctx: Any) -> None:
    raise asyncio.CancelledError


@driver
@pytest.mark.parametrize("hook", [_ctrl_c, _cancelled], ids=["KeyboardInterrupt", "cancelled"])
def test_an_interrupted_hook_is_recorded_as_a_refusal_before_it_propagates(
    run: Any, hook: Any, ledger_path: str
) -> None:
    ledger = Ledger(ledger_path)
    tool = SpyTool()
    with pytest.raises((KeyboardInterrupt, asyncio.CancelledError)):
        run(_guard(hook, ledger=ledger), tool, _fresh())
    assert tool.calls == []
    ledger.close()
    (call,) = rows(ledger_path, "select status, decision, reason from tool_calls")
    assert (call["status"], call["decision"]) == ("denied", "deny")
    assert "interrupted while hook" in call["reason"]
    (hook_run,) = rows(ledger_path, "select outcome from hook_runs")
    assert hook_run["outcome"] == "error"


def _huge_deny(event: Any, ctx: Any) -> HookResult:
    return HookResult(decision="deny", reason="x" * 1_000_000, system_message="y" * 1_000_000)


def _huge_raise(event: Any, ctx: Any) -> None:
    raise ValueError("z" * 1_000_000)


@driver
@pytest.mark.parametrize("hook", [_huge_deny, _huge_raise], ids=["deny reason", "exception"])
def test_a_hooks_reason_and_system_message_are_capped(run: Any, hook: Any) -> None:
    result = run(_guard(hook), SpyTool(), _fresh())
    assert result.denied
    assert len(result.reason or "") < MESSAGE_CAP + 200
    assert "more characters cut" in (result.reason or "")
    assert all(len(m) < MESSAGE_CAP + 200 for m in result.pre.system_messages)
