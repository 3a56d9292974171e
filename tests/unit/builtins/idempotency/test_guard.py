"""idempotency_guard (docs/design.md §8): a side-effecting call runs once per key.

Most behaviours run twice, with claims in memory (no ledger) and in a ledger
file, through real Guards and ``run_tool``; ``SpyTool`` proves what ran.
The race tests start 4 processes on one ledger file.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult, Ledger, LedgerError
from guardrails.builtins import IdempotencyGuard, idempotency_guard
from guardrails.builtins.idempotency.guard import parse_ttl
from guardrails.errors import DefinitionError
from guardrails.testing import FakeClock, RecordingHook, SpyTool

THREE = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
CHARGE = {"charge": {"side_effects": True}}


def definition(
    tools: dict[str, Any] | None = None,
    hook: Any = None,
    events: tuple[str, ...] = THREE,
    pre_extra: list[Any] | None = None,
) -> AgentDefinition:
    hook = hook if hook is not None else IdempotencyGuard()
    hooks: dict[str, list[Any]] = {e: [HookMatcher(matcher="*", hooks=[hook])] for e in events}
    if pre_extra:
        hooks["PreToolUse"] = hooks.get("PreToolUse", []) + pre_extra
    return AgentDefinition(tools=tools if tools is not None else CHARGE, hooks=hooks)


Make = Callable[..., Guard]


@pytest.fixture(params=["memory", "ledger", "postgres"])
def store(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make(store: str, request: pytest.FixtureRequest) -> Iterator[Make]:
    """Guards over one clock and (for ``ledger``, ``postgres``) one shared ledger: a SQLite
    file, or a PostgreSQL database (the same suite on both engines)."""
    clock = FakeClock()
    ledgers: list[Ledger] = []
    where = ""
    if store == "ledger":
        where = str(request.getfixturevalue("ledger_path"))
    elif store == "postgres":
        where = str(request.getfixturevalue("postgres_url"))

    def build(defn: AgentDefinition | None = None, **kwargs: Any) -> Guard:
        ledger: Ledger | bool = False
        if where:
            ledger = Ledger(where)
            ledgers.append(ledger)
        return Guard(defn or definition(), ledger=ledger, clock=clock, **kwargs)

    build.clock = clock  # type: ignore[attr-defined]
    yield build
    for ledger in ledgers:
        ledger.close()


def keys(path: Path) -> list[dict[str, Any]]:
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM idempotency_keys ORDER BY created_at")]
    finally:
        conn.close()


# --- the four states -------------------------------------------------------------------------


def test_completed_duplicate_is_replayed_by_run_tool_without_running(make: Make) -> None:
    guard = make()
    tool = SpyTool({"charge_id": "ch_1"})
    first = guard.sync.run_tool("charge", {"amount": 10}, tool)
    again = guard.sync.run_tool("charge", {"amount": 10}, tool)
    assert first.ok and not first.replayed
    assert again.ok and again.replayed and again.output == {"charge_id": "ch_1"}
    assert len(tool.calls) == 1


def test_completed_duplicate_reason_says_when_it_ran_and_its_result(make: Make) -> None:
    guard = make(definition(hook=IdempotencyGuard(replay=False)))
    tool = SpyTool("charged 10 EUR, receipt r-77")
    guard.sync.run_tool("charge", {"amount": 10}, tool)
    make.clock.advance(5 * 60 + 3)  # type: ignore[attr-defined]
    again = guard.sync.run_tool("charge", {"amount": 10}, tool)
    assert again.denied and len(tool.calls) == 1
    reason = again.reason or ""
    assert "already ran" in reason and "5 minutes ago" in reason
    assert "(at 2023-11-14T22:13:20.000Z)" in reason  # FakeClock's epoch, as ISO
    assert "charged 10 EUR, receipt r-77" in reason


def test_completed_duplicate_decision_carries_key_state_and_replay(make: Make) -> None:
    guard = make()
    guard.sync.run_tool("charge", {"amount": 10}, SpyTool([1, 2]))
    d = guard.sync.pre_tool_use("charge", {"amount": 10})
    assert d.decision == "deny"
    notes = d.annotations or {}
    assert notes["replay"] == {"output": [1, 2]}
    assert notes["idempotency"]["state"] == "completed"
    assert len(notes["idempotency"]["key"]) == 64


def test_replay_disabled_leaves_no_replay_annotation(make: Make) -> None:
    guard = make(definition(hook=IdempotencyGuard(replay=False)))
    guard.sync.run_tool("charge", {"amount": 10}, SpyTool())
    d = guard.sync.pre_tool_use("charge", {"amount": 10})
    assert d.decision == "deny" and "replay" not in (d.annotations or {})


def test_result_summary_in_the_reason_is_cut_to_about_200_chars(make: Make) -> None:
    guard = make(definition(hook=IdempotencyGuard(replay=False)))
    guard.sync.run_tool("charge", {"amount": 10}, SpyTool("x" * 1000))
    reason = guard.sync.run_tool("charge", {"amount": 10}, SpyTool()).reason or ""
    assert "x" * 200 + "…" in reason and "x" * 201 not in reason


def test_in_progress_duplicate_is_told_to_retry_later(make: Make) -> None:
    guard = make()
    assert guard.sync.pre_tool_use("charge", {"amount": 10}).decision == "allow"
    d = guard.sync.pre_tool_use("charge", {"amount": 10})  # the first has not finished
    assert d.decision == "deny"
    assert "already running" in (d.reason or "") and "retry later" in (d.reason or "")
    assert (d.annotations or {})["idempotency"]["state"] == "in_progress"


def test_failed_call_may_be_retried(make: Make) -> None:
    guard = make()
    failing = SpyTool(error=RuntimeError("card declined"))
    assert guard.sync.run_tool("charge", {"amount": 10}, failing).status == "error"
    working = SpyTool("ok")
    retry = guard.sync.run_tool("charge", {"amount": 10}, working)
    assert retry.ok and not retry.replayed and len(working.calls) == 1


def test_retry_of_a_failed_call_is_claimed_again(make: Make) -> None:
    guard = make()
    guard.sync.run_tool("charge", {"amount": 10}, SpyTool(error=RuntimeError("declined")))
    guard.sync.run_tool("charge", {"amount": 10}, SpyTool("ok"))
    third = SpyTool("again")
    assert guard.sync.run_tool("charge", {"amount": 10}, third).replayed and not third.calls


def test_different_arguments_are_different_calls(make: Make) -> None:
    guard = make()
    tool = SpyTool()
    guard.sync.run_tool("charge", {"amount": 10}, tool)
    guard.sync.run_tool("charge", {"amount": 11}, tool)
    assert [c["amount"] for c in tool.calls] == [10, 11]


def test_the_same_event_decided_twice_is_not_its_own_duplicate(make: Make) -> None:
    guard = make()
    first = guard.sync.pre_tool_use("charge", {"amount": 10}, tool_use_id="toolu_1")
    again = guard.sync.pre_tool_use("charge", {"amount": 10}, tool_use_id="toolu_1")
    assert first.decision == again.decision == "allow"


def test_async_run_tool_replays_too(make: Make) -> None:
    guard = make()
    tool = SpyTool("done")

    async def twice() -> list[Any]:
        return [await guard.run_tool("charge", {"amount": 1}, tool) for _ in range(2)]

    runs = asyncio.run(twice())
    assert [r.replayed for r in runs] == [False, True] and len(tool.calls) == 1


# --- keys: declared fields, conflicts, canonical form ------------------------------------------

ORDERS = {"create_order": {"side_effects": True, "idempotency": {"key": ["order_id"]}}}


def test_declared_key_with_different_payload_is_a_conflict(make: Make) -> None:
    guard = make(definition(tools=ORDERS))
    tool = SpyTool("created")
    guard.sync.run_tool("create_order", {"order_id": "A1", "amount": 10}, tool)
    again = guard.sync.run_tool("create_order", {"order_id": "A1", "amount": 12}, tool)
    assert again.denied and len(tool.calls) == 1
    reason = again.reason or ""
    assert "idempotency conflict" in reason and "(order_id)" in reason
    assert "amount was 10, now 12" in reason
    assert (again.pre.annotations or {})["idempotency"]["state"] == "conflict"


def test_declared_key_with_the_same_payload_is_replayed(make: Make) -> None:
    guard = make(definition(tools=ORDERS))
    tool = SpyTool("created")
    guard.sync.run_tool("create_order", {"order_id": "A1", "amount": 10}, tool)
    again = guard.sync.run_tool("create_order", {"amount": 10, "order_id": "A1"}, tool)
    assert again.replayed and len(tool.calls) == 1


def test_conflict_is_checked_while_the_first_call_is_in_progress(make: Make) -> None:
    guard = make(definition(tools=ORDERS))
    guard.sync.pre_tool_use("create_order", {"order_id": "A1", "amount": 10})
    d = guard.sync.pre_tool_use("create_order", {"order_id": "A1", "amount": 12})
    assert d.decision == "deny" and "idempotency conflict" in (d.reason or "")


def test_declared_key_reaches_nested_fields_by_dotted_path(make: Make) -> None:
    tools = {"ship": {"side_effects": True, "idempotency": {"key": ["order.id", "lines.0.sku"]}}}
    guard = make(definition(tools=tools))
    tool = SpyTool()
    base = {"order": {"id": 7, "note": "a"}, "lines": [{"sku": "X", "qty": 1}]}
    other_order = {"order": {"id": 8, "note": "a"}, "lines": [{"sku": "X", "qty": 1}]}
    guard.sync.run_tool("ship", base, tool)
    assert guard.sync.run_tool("ship", other_order, tool).ok
    changed = {"order": {"id": 7, "note": "b"}, "lines": [{"sku": "X", "qty": 1}]}
    conflict = guard.sync.run_tool("ship", changed, tool)
    assert conflict.denied and "order was" in (conflict.reason or "") and len(tool.calls) == 2


def test_call_missing_a_key_field_is_keyed_by_all_its_fields(make: Make) -> None:
    guard = make(definition(tools=ORDERS))
    tool = SpyTool()
    guard.sync.run_tool("create_order", {"amount": 10}, tool)
    assert guard.sync.run_tool("create_order", {"amount": 12}, tool).ok  # no false conflict
    assert guard.sync.run_tool("create_order", {"amount": 10}, tool).replayed
    assert len(tool.calls) == 2


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        ({"amount": 1}, {"amount": 1.0}),
        ({"to": "José"}, {"to": "Jos\u00e9"}),
        ({"n": 2**70}, {"n": 2**70}),
    ],
    ids=["key-order", "int-vs-float", "non-ascii", "big-int"],
)
def test_equal_inputs_give_the_same_key(make: Make, first: Any, second: Any) -> None:
    guard = make()
    guard.sync.run_tool("charge", first, SpyTool())
    assert guard.sync.run_tool("charge", second, SpyTool()).replayed


def test_non_json_input_is_refused_with_the_canonical_error(make: Make) -> None:
    guard = make()
    tool = SpyTool()
    run = guard.sync.run_tool("charge", {"tags": {"a", "b"}}, tool)
    assert run.denied and not tool.calls
    assert "set is not a JSON value" in (run.reason or "") and "$.tags" in (run.reason or "")


# --- TTL and scope -------------------------------------------------------------------------------


def test_expired_claim_is_treated_as_absent(make: Make) -> None:
    guard = make(definition(hook=IdempotencyGuard(ttl="1h")))
    tool = SpyTool()
    guard.sync.run_tool("charge", {"amount": 10}, tool)
    make.clock.advance(3599)  # type: ignore[attr-defined]
    assert guard.sync.run_tool("charge", {"amount": 10}, tool).replayed
    make.clock.advance(2)  # type: ignore[attr-defined]
    assert guard.sync.run_tool("charge", {"amount": 10}, tool).ok and len(tool.calls) == 2


def test_expired_in_progress_claim_is_taken_over(make: Make) -> None:
    guard = make(definition(hook=IdempotencyGuard(ttl=60)))
    guard.sync.pre_tool_use("charge", {"amount": 10})  # never finishes
    make.clock.advance(61)  # type: ignore[attr-defined]
    assert guard.sync.pre_tool_use("charge", {"amount": 10}).decision == "allow"


def test_ttl_none_keeps_a_claim_for_ever(make: Make) -> None:
    guard = make(definition(hook=IdempotencyGuard(ttl=None)))
    guard.sync.run_tool("charge", {"amount": 10}, SpyTool())
    make.clock.advance(10 * 365 * 86400)  # type: ignore[attr-defined]
    assert guard.sync.run_tool("charge", {"amount": 10}, SpyTool()).replayed


def test_default_ttl_is_24_hours(make: Make) -> None:
    guard = make()
    tool = SpyTool()
    guard.sync.run_tool("charge", {"amount": 10}, tool)
    make.clock.advance(24 * 3600 - 1)  # type: ignore[attr-defined]
    assert guard.sync.run_tool("charge", {"amount": 10}, tool).replayed
    make.clock.advance(2)  # type: ignore[attr-defined]
    assert not guard.sync.run_tool("charge", {"amount": 10}, tool).replayed


def test_tool_may_set_its_own_ttl(make: Make) -> None:
    tools = {"charge": {"side_effects": True, "idempotency": {"ttl": "10m"}}}
    guard = make(definition(tools=tools))
    tool = SpyTool()
    guard.sync.run_tool("charge", {"amount": 10}, tool)
    make.clock.advance(601)  # type: ignore[attr-defined]
    assert guard.sync.run_tool("charge", {"amount": 10}, tool).ok and len(tool.calls) == 2


@pytest.mark.parametrize(
    ("scope", "other", "replayed"),
    [
        ("session", {"session_id": "s2"}, False),
        ("session", {"agent_id": "sub-1"}, True),
        ("agent", {"agent_id": "sub-1"}, False),
        ("agent", {}, True),
        ("global", {"session_id": "s2"}, True),
        ("global", {"session_id": "s2", "agent_id": "sub-1"}, True),
    ],
    ids=[
        "session:other-session-runs",
        "session:subagent-shares",
        "agent:subagent-apart",
        "agent:same-agent",
        "global:other-session",
        "global:other-agent",
    ],
)
def test_scope_decides_who_shares_a_key(
    make: Make, scope: str, other: dict[str, Any], replayed: bool
) -> None:
    guard = make(definition(hook=IdempotencyGuard(scope=scope)))
    guard.sync.run_tool("charge", {"amount": 10}, SpyTool(), session_id="s1")
    fields = {"session_id": "s1", **other}
    assert guard.sync.run_tool("charge", {"amount": 10}, SpyTool(), **fields).replayed is replayed


def test_agent_scope_keeps_two_subagents_apart(make: Make) -> None:
    guard = make(definition(hook=IdempotencyGuard(scope="agent")))
    tool = SpyTool()
    for agent in ("sub-1", "sub-2", "sub-1"):
        guard.sync.run_tool("charge", {"amount": 10}, tool, agent_id=agent)
    assert len(tool.calls) == 2


def test_tool_may_set_its_own_scope(make: Make) -> None:
    tools = {"charge": {"side_effects": True, "idempotency": {"scope": "global"}}}
    guard = make(definition(tools=tools))
    guard.sync.run_tool("charge", {"amount": 10}, SpyTool(), session_id="s1")
    assert guard.sync.run_tool("charge", {"amount": 10}, SpyTool(), session_id="s2").replayed


# --- which calls are checked ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "checked"),
    [
        (None, False),
        ({}, False),
        ({"side_effects": True}, True),
        ({"side_effects": False}, False),
        ({"side_effects": True, "annotations": {"idempotentHint": True}}, False),
        ({"side_effects": True, "annotations": {"readOnlyHint": True}}, False),
        ({"annotations": {"title": "Create issue"}}, True),
        ({"annotations": {"destructiveHint": False}}, True),
        ({"annotations": {"readOnlyHint": False, "idempotentHint": False}}, True),
        ({"annotations": {"readOnlyHint": True}}, False),
        ({"annotations": {"idempotentHint": True}}, False),
        ({"annotations": {}}, True),
        ({"idempotency": {}}, True),
        ({"idempotency": {"key": ["id"]}, "annotations": {"idempotentHint": True}}, True),
        ({"idempotency": {}, "annotations": {"readOnlyHint": True}}, False),
    ],
    ids=[
        "undeclared",
        "plain-spec",
        "side-effects",
        "side-effects-false",
        "idempotent-hint-wins",
        "read-only-hint-wins",
        "mcp-defaults",
        "mcp-additive",
        "mcp-explicit-defaults",
        "mcp-read-only",
        "mcp-idempotent",
        "empty-annotations-mcp-defaults",
        "declared-idempotency",
        "declared-beats-idempotent-hint",
        "read-only-beats-declared",
    ],
)
def test_which_tools_are_checked(make: Make, spec: dict[str, Any] | None, checked: bool) -> None:
    tools = {} if spec is None else {"mcp__x__do": spec}
    guard = make(definition(tools=tools))
    tool = SpyTool()
    guard.sync.run_tool("mcp__x__do", {"id": 1}, tool)
    guard.sync.run_tool("mcp__x__do", {"id": 1}, tool)
    assert len(tool.calls) == (1 if checked else 2)


def test_unchecked_calls_leave_no_claim(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.db") as ledger:
        guard = Guard(definition(tools={}), ledger=ledger)
        guard.sync.run_tool("Read", {"file_path": "/a"}, SpyTool())
    assert keys(tmp_path / "l.db") == []


# --- shell commands (bash_side_effects' classifier) ----------------------------------------------


@pytest.mark.parametrize(
    ("command", "checked"),
    [
        ("git push origin main", True),
        ("rm -rf build", True),
        ("ls -la", False),
        ("git status", False),
        ("cat README.md", False),
    ],
)
def test_shell_command_is_checked_when_it_has_side_effects(
    make: Make, command: str, checked: bool
) -> None:
    guard = make(definition(tools={}))
    tool = SpyTool()
    for _ in range(2):
        guard.sync.run_tool("Bash", {"command": command}, tool)
    assert len(tool.calls) == (1 if checked else 2)


def test_shell_read_is_not_checked_even_when_the_tool_declares_side_effects(make: Make) -> None:
    tools = {"execute_bash_command": {"side_effects": True, "primary_arg": "command"}}
    guard = make(definition(tools=tools))
    tool = SpyTool()
    for _ in range(2):
        guard.sync.run_tool("execute_bash_command", {"command": "ls"}, tool)
    assert len(tool.calls) == 2


def test_shell_key_ignores_description_and_timeout(make: Make) -> None:
    guard = make(definition(tools={}))
    tool = SpyTool()
    guard.sync.run_tool("Bash", {"command": "git push", "description": "Push"}, tool)
    again = guard.sync.run_tool(
        "Bash", {"command": "git push", "description": "Push the branch", "timeout": 60000}, tool
    )
    assert again.replayed and len(tool.calls) == 1


def test_shell_tool_without_classifier_falls_back_to_its_declaration(
    make: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    import guardrails.builtins.idempotency.guard as mod

    monkeypatch.setattr(mod, "_classifier", lambda: None)
    tools = {"sh": {"side_effects": True, "primary_arg": "command"}}
    guard = make(definition(tools=tools))
    tool = SpyTool()
    for _ in range(2):
        guard.sync.run_tool("sh", {"command": "deploy"}, tool)
    assert len(tool.calls) == 1


# --- the ledger: rows, redaction, cap, processes -------------------------------------------------


def test_ledger_row_records_the_completed_call(tmp_path: Path) -> None:
    clock = FakeClock()
    with Ledger(tmp_path / "l.db") as ledger:
        guard = Guard(definition(), ledger=ledger, clock=clock)
        run = guard.sync.run_tool("charge", {"amount": 10}, SpyTool({"id": "ch_1"}), agent_id="a1")
    (row,) = keys(tmp_path / "l.db")
    assert row["state"] == "completed" and json.loads(row["result"]) == {"id": "ch_1"}
    assert row["tool_name"] == "charge" and row["scope"] == "session"
    assert row["session_id"] == guard.sync._s.session_id and row["agent_id"] == "a1"
    assert row["tool_call_id"] == run.pre.event.tool_use_id
    assert row["created_at"] == "2023-11-14T22:13:20.000Z"
    assert row["expires_at"] == "2023-11-15T22:13:20.000Z"
    assert row["key"] == run.pre.annotations["idempotency"]["key"]  # type: ignore[index]


def test_ledger_row_of_a_failed_call_keeps_the_error(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.db") as ledger:
        guard = Guard(definition(), ledger=ledger)
        guard.sync.run_tool("charge", {"amount": 1}, SpyTool(error=RuntimeError("declined")))
    (row,) = keys(tmp_path / "l.db")
    assert row["state"] == "failed" and "declined" in json.loads(row["result"])


def test_ttl_none_stores_no_expiry(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.db") as ledger:
        Guard(definition(hook=IdempotencyGuard(ttl=None)), ledger=ledger).sync.run_tool(
            "charge", {"amount": 1}, SpyTool()
        )
    assert keys(tmp_path / "l.db")[0]["expires_at"] is None


def test_stored_result_is_redacted(make: Make, store: str, tmp_path: Path) -> None:
    secret = "sk-ant-" + "a1" * 20
    guard = make()
    guard.sync.run_tool("charge", {"amount": 1}, SpyTool(f"token {secret}"))
    again = guard.sync.run_tool("charge", {"amount": 1}, SpyTool())
    assert again.replayed and secret not in again.output and "token" in again.output
    if store == "ledger":
        assert secret not in keys(tmp_path / "ledger.db")[0]["result"]


def test_expired_claims_are_swept_now_and_then(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import guardrails.ledger.sqlite_keys as mod

    clock = FakeClock()
    with Ledger(tmp_path / "l.db") as ledger:
        guard = Guard(definition(hook=IdempotencyGuard(ttl=60)), ledger=ledger, clock=clock)
        for amount in range(3):
            guard.sync.run_tool("charge", {"amount": amount}, SpyTool())
        clock.advance(30)
        guard.sync.run_tool("charge", {"amount": 3}, SpyTool())  # not expired yet
        clock.advance(31)
        monkeypatch.setattr(mod, "SWEEP_EVERY", 1)
        guard.sync.run_tool("charge", {"amount": 4}, SpyTool())
    assert len(keys(tmp_path / "l.db")) == 2


def test_ledger_redaction_patterns_apply_to_stored_results(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.db", redact_patterns=[r"acct-\d+"]) as ledger:
        guard = Guard(definition(), ledger=ledger)
        guard.sync.run_tool("charge", {"amount": 1}, SpyTool("billed acct-12345"))
    assert "acct-12345" not in keys(tmp_path / "l.db")[0]["result"]


def test_oversized_result_is_stored_cut_and_replayed_cut(make: Make) -> None:
    guard = make(definition(hook=IdempotencyGuard(max_result=1024)))
    guard.sync.run_tool("charge", {"amount": 1}, SpyTool("y" * 100_000))
    again = guard.sync.run_tool("charge", {"amount": 1}, SpyTool())
    assert again.replayed and again.output.endswith("…[truncated]")
    assert len(again.output.encode()) <= 1024 + len("…[truncated]".encode())


def test_non_json_result_is_stored_as_text(make: Make) -> None:
    guard = make()
    guard.sync.run_tool("charge", {"amount": 1}, SpyTool({"at": object}))
    again = guard.sync.run_tool("charge", {"amount": 1}, SpyTool())
    assert again.replayed and again.output == {"at": str(object)}


def test_completion_from_another_process_finds_the_claim(tmp_path: Path) -> None:
    """Claude Code runs each hook event in its own process: the post recomputes the key."""
    path = tmp_path / "l.db"
    with Ledger(path) as a, Ledger(path) as b:
        pre = Guard(definition(), ledger=a).sync.pre_tool_use(
            "charge", {"amount": 1}, session_id="s", tool_use_id="toolu_9"
        )
        assert pre.decision == "allow"
        Guard(definition(), ledger=b).sync.post_tool_use(
            "charge", {"amount": 1}, "paid", session_id="s", tool_use_id="toolu_9"
        )
    (row,) = keys(path)
    assert row["state"] == "completed" and json.loads(row["result"]) == "paid"


def test_completion_finds_a_claim_whose_input_a_later_hook_rewrote(tmp_path: Path) -> None:
    """The post sees the final input; the claim was keyed on the input before the rewrite."""
    path = tmp_path / "l.db"
    rewrite = RecordingHook(lambda e, c: HookResult.modify(input={**e.tool_input, "cents": 1}))
    later = HookMatcher(matcher="*", hooks=[rewrite], priority=200)
    with Ledger(path) as a, Ledger(path) as b:
        Guard(definition(pre_extra=[later]), ledger=a).sync.pre_tool_use(
            "charge", {"amount": 1}, session_id="s", tool_use_id="toolu_9"
        )
        Guard(definition(), ledger=b).sync.post_tool_use(
            "charge", {"amount": 1, "cents": 1}, "paid", session_id="s", tool_use_id="toolu_9"
        )
    assert keys(path)[0]["state"] == "completed"


# --- bound to PreToolUse alone; claims whose call never ran --------------------------------------


def deny_second(event: Any, ctx: Any) -> HookResult | None:
    """A later hook that denies once, after idempotency_guard claimed the call."""
    if ctx.state.get("denied_once"):
        return None
    ctx.state["denied_once"] = True
    return HookResult.deny("not now")


def test_claim_denied_by_a_later_hook_is_taken_over_with_a_ledger(tmp_path: Path) -> None:
    later = HookMatcher(matcher="*", hooks=[deny_second], priority=200)
    with Ledger(tmp_path / "l.db") as ledger:
        guard = Guard(definition(pre_extra=[later]), ledger=ledger)
        tool = SpyTool()
        assert guard.sync.run_tool("charge", {"amount": 1}, tool).denied
        assert guard.sync.run_tool("charge", {"amount": 1}, tool).ok and len(tool.calls) == 1


def test_claim_denied_by_a_later_hook_stays_in_progress_without_a_ledger() -> None:
    later = HookMatcher(matcher="*", hooks=[deny_second], priority=200)
    guard = Guard(definition(pre_extra=[later]), ledger=False)
    guard.sync.run_tool("charge", {"amount": 1}, SpyTool())
    again = guard.sync.run_tool("charge", {"amount": 1}, SpyTool())
    assert "already running" in (again.reason or "")


CRASH = """
import os, sys
from guardrails import AgentDefinition, Guard, HookMatcher, Ledger
from guardrails.builtins import IdempotencyGuard
hook = IdempotencyGuard()
defn = AgentDefinition(tools={"charge": {"side_effects": True}}, hooks={
    e: [HookMatcher(matcher="*", hooks=[hook])] for e in ("PreToolUse", "PostToolUse")})
guard = Guard(defn, ledger=Ledger(sys.argv[1]))
guard.sync.run_tool("charge", {"amount": 1}, lambda amount: os._exit(3), session_id="s")
"""


@pytest.mark.slow
def test_claim_of_a_process_that_died_mid_call_is_taken_over(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "l.db"
    crashed = subprocess.run([sys.executable, "-c", CRASH, str(path)], check=False)
    assert crashed.returncode == 3 and keys(path)[0]["state"] == "in_progress"
    with Ledger(path) as ledger:
        tool = SpyTool()
        run = Guard(definition(), ledger=ledger).sync.run_tool(
            "charge", {"amount": 1}, tool, session_id="s"
        )
    assert run.ok and len(tool.calls) == 1


def test_bound_to_pre_tool_use_alone_a_ledger_tells_the_call_completed(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.db") as ledger:
        guard = Guard(definition(events=("PreToolUse",)), ledger=ledger)
        tool = SpyTool({"ok": True})
        guard.sync.run_tool("charge", {"amount": 1}, tool)
        again = guard.sync.run_tool("charge", {"amount": 1}, tool)
    assert again.replayed and again.output == {"ok": True} and len(tool.calls) == 1


def test_bound_to_pre_tool_use_alone_a_ledger_tells_the_call_failed(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.db") as ledger:
        guard = Guard(definition(events=("PreToolUse",)), ledger=ledger)
        guard.sync.run_tool("charge", {"amount": 1}, SpyTool(error=RuntimeError("x")))
        tool = SpyTool()
        assert guard.sync.run_tool("charge", {"amount": 1}, tool).ok and len(tool.calls) == 1


# --- the store cannot be written -----------------------------------------------------------------


def broken(monkeypatch: pytest.MonkeyPatch, ledger: Ledger) -> None:
    def write_transaction() -> Any:
        raise LedgerError("the ledger cannot be written (read_only: test)", kind="degraded")

    monkeypatch.setattr(ledger, "write_transaction", write_transaction)


def test_store_error_denies_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Ledger(tmp_path / "l.db") as ledger:
        broken(monkeypatch, ledger)
        tool = SpyTool()
        run = Guard(definition(), ledger=ledger).sync.run_tool("charge", {"amount": 1}, tool)
    assert run.denied and not tool.calls
    assert "cannot be written" in (run.reason or "")
    assert run.pre.annotations["idempotency"]["state"] == "unchecked"  # type: ignore[index]


def test_store_error_allows_when_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = IdempotencyGuard(on_store_error="allow")
    with Ledger(tmp_path / "l.db") as ledger:
        broken(monkeypatch, ledger)
        tool = SpyTool()
        guard = Guard(definition(hook=hook), ledger=ledger)
        runs = [guard.sync.run_tool("charge", {"amount": 1}, tool) for _ in range(2)]
    assert all(r.ok for r in runs) and len(tool.calls) == 2
    assert runs[0].pre.annotations["idempotency"]["state"] == "unchecked"  # type: ignore[index]


def test_sqlite_error_while_claiming_counts_as_a_store_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Ledger(tmp_path / "l.db") as ledger:

        def write_transaction() -> Any:
            raise sqlite3.OperationalError("database is locked")

        monkeypatch.setattr(ledger, "write_transaction", write_transaction)
        run = Guard(definition(), ledger=ledger).sync.run_tool("charge", {"a": 1}, SpyTool())
    assert run.denied and "database is locked" in (run.reason or "")


# --- configuration -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (None, None),
        (1, 1.0),
        (2.5, 2.5),
        ("90s", 90.0),
        ("15m", 900.0),
        ("24h", 86400.0),
        ("7d", 604800.0),
        ("1.5h", 5400.0),
    ],
)
def test_ttl_accepts_seconds_and_durations(value: Any, seconds: float | None) -> None:
    assert parse_ttl(value) == seconds


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"scope": "world"}, ValueError, "scope must be one of session, agent, global"),
        ({"ttl": 0}, ValueError, "ttl must be positive"),
        ({"ttl": -5}, ValueError, "ttl must be positive"),
        ({"ttl": float("inf")}, ValueError, "ttl must be positive"),
        ({"ttl": "1w"}, ValueError, "duration like '90s'"),
        ({"ttl": True}, TypeError, "ttl must be a number"),
        ({"ttl": [1]}, TypeError, "ttl must be a number"),
        ({"replay": "yes"}, TypeError, "replay must be true or false"),
        ({"on_store_error": "ignore"}, ValueError, "on_store_error must be 'deny' or 'allow'"),
        ({"max_result": 10}, ValueError, "max_result must be an integer >= 256"),
        ({"max_result": True}, ValueError, "max_result must be an integer >= 256"),
    ],
)
def test_bad_parameter_is_refused_by_name(
    kwargs: dict[str, Any], error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        IdempotencyGuard(**kwargs)


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ({"keys": ["id"]}, "unknown key 'keys'"),
        ({"key": []}, "key must be a non-empty list"),
        ({"key": [1]}, "key must be a non-empty list"),
        ({"scope": "planet"}, "scope must be one of"),
        ({"ttl": "soon"}, "ttl must be seconds"),
    ],
)
def test_bad_tool_idempotency_config_denies_naming_it(config: dict[str, Any], words: str) -> None:
    guard = Guard(definition(tools={"t": {"side_effects": True, "idempotency": config}}))
    d = guard.sync.pre_tool_use("t", {"id": 1})
    assert d.decision == "deny" and "tools.t.idempotency" in (d.reason or "")
    assert words in (d.reason or "")


def test_ready_instance_has_the_defaults() -> None:
    assert idempotency_guard.scope == "session" and idempotency_guard.ttl == 86400.0
    assert idempotency_guard.replay and idempotency_guard.on_store_error == "deny"
    assert IdempotencyGuard.hook_name == "idempotency_guard"


YAML = """\
tools:
  charge: {{side_effects: true}}
hooks:
  PreToolUse:
    - {{matcher: "*", priority: 1000, hooks: [{hook}]}}
  PostToolUse:
    - {{matcher: "*", hooks: [{hook}]}}
  PostToolUseFailure:
    - {{matcher: "*", hooks: [{hook}]}}
"""


def test_declared_by_name_in_a_file_guards_the_three_events(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(YAML.format(hook="idempotency_guard"))
    guard = Guard(AgentDefinition.from_file(path), ledger=False)
    tool = SpyTool("done")
    runs = [guard.sync.run_tool("charge", {"amount": 1}, tool) for _ in range(2)]
    assert runs[1].replayed and len(tool.calls) == 1


def test_declared_with_parameters_in_a_file(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    hook = "{use: idempotency_guard, with: {scope: global, ttl: 1h, replay: false}}"
    path.write_text(YAML.format(hook=hook))
    guard = Guard(AgentDefinition.from_file(path), ledger=False)
    guard.sync.run_tool("charge", {"amount": 1}, SpyTool(), session_id="s1")
    again = guard.sync.run_tool("charge", {"amount": 1}, SpyTool(), session_id="s2")
    assert again.denied and "already ran" in (again.reason or "")


def test_bad_parameter_in_a_file_is_a_definition_error(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(YAML.format(hook="{use: idempotency_guard, with: {scope: world}}"))
    with pytest.raises(DefinitionError, match="scope must be one of"):
        AgentDefinition.from_file(path)


# --- processes racing on one ledger file ---------------------------------------------------------

RACE_CALLS = 500
RACE_PROCESSES = 4


def _race_worker(db: str, out: str, tag: int, same_key: bool, barrier: Any, results: Any) -> None:
    hook = IdempotencyGuard(scope="global")
    defn = AgentDefinition(
        tools={"append_line": {"side_effects": True}},
        hooks={e: [HookMatcher(matcher="*", hooks=[hook])] for e in THREE},
    )
    guard = Guard(defn, ledger=Ledger(db, busy_timeout=30.0))

    def append_line(line: str) -> str:
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
        return f"appended {line}"

    barrier.wait()
    seen: Counter[str] = Counter()
    for i in range(RACE_CALLS):
        line = "the-one-line" if same_key else f"{tag}-{i}"
        run = guard.sync.run_tool("append_line", {"line": line}, append_line)
        outcome: str = "replayed" if run.replayed else run.status
        if run.denied:
            outcome += ":in_progress" if "already running" in (run.reason or "") else ":other"
        seen[outcome] += 1
    results.put(dict(seen))


def race(tmp_path: Path, same_key: bool) -> tuple[list[str], Counter[str]]:
    ctx = multiprocessing.get_context("spawn")
    db, out = str(tmp_path / "race.db"), str(tmp_path / "lines.txt")
    Ledger(db).close()  # migrate once, before the race
    barrier, results = ctx.Barrier(RACE_PROCESSES), ctx.Queue()
    procs = [
        ctx.Process(target=_race_worker, args=(db, out, i, same_key, barrier, results))
        for i in range(RACE_PROCESSES)
    ]
    for p in procs:
        p.start()
    total: Counter[str] = Counter()
    for _ in procs:
        total.update(results.get(timeout=60))
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    lines = Path(out).read_text(encoding="utf-8").splitlines() if os.path.exists(out) else []
    return lines, total


@pytest.mark.slow
def test_processes_racing_on_one_key_run_it_exactly_once(tmp_path: Path) -> None:
    lines, outcomes = race(tmp_path, same_key=True)
    assert lines == ["the-one-line"]
    assert outcomes["ok"] == 1
    assert outcomes["replayed"] + outcomes["denied:in_progress"] == RACE_PROCESSES * RACE_CALLS - 1


@pytest.mark.slow
def test_processes_with_distinct_keys_each_run_once(tmp_path: Path) -> None:
    lines, outcomes = race(tmp_path, same_key=False)
    assert len(lines) == RACE_PROCESSES * RACE_CALLS == len(set(lines))
    assert outcomes == {"ok": RACE_PROCESSES * RACE_CALLS}
