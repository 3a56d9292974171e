"""LedgerReader's named queries (the SQL other packages used to hold) on rows written
straight into a migrated file."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guardrails import (
    AgentDefinition,
    Guard,
    HookMatcher,
    HookResult,
    Ledger,
    LedgerError,
    LedgerReader,
)
from guardrails.ledger.reader import STATS

AT = "2025-01-01T00:00:00.000Z"


@pytest.fixture
def path(tmp_path: Path) -> str:
    db = str(tmp_path / "ledger.db")
    Ledger(db).close()  # migrated, empty
    return db


@pytest.fixture
def reader(path: str) -> Iterator[LedgerReader]:
    r = LedgerReader(path)
    yield r
    r.close()


def insert(path: str, table: str, **row: Any) -> int:
    conn = sqlite3.connect(path)
    try:
        cols = ", ".join(row)
        marks = ", ".join("?" * len(row))
        cur = conn.execute(f"INSERT INTO {table} ({cols}) VALUES ({marks})", list(row.values()))
        conn.commit()
        return int(cur.lastrowid or 0)
    finally:
        conn.close()


def call(path: str, call_id: str, tool: str, status: str, **more: Any) -> int:
    row = {"session_id": "s1", "tool_call_id": call_id, "tool_name": tool, "status": status}
    return insert(path, "tool_calls", **{**row, "started_at": AT, **more})


def event(path: str, name: str, decision: str, **more: Any) -> int:
    row = {"session_id": "s1", "event": name, "decision": decision, "created_at": AT}
    return insert(path, "events", **{**row, **more})


def hook_run(path: str, name: str, hook: str, outcome: str, **more: Any) -> int:
    row = {"session_id": "s1", "event": name, "hook": hook, "outcome": outcome, "created_at": AT}
    return insert(path, "hook_runs", **{**row, **more})


# --- stop blocks in a row -------------------------------------------------------------------


def test_stop_blocks_in_a_row_counts_the_newest_blocks_until_another_decision(
    path: str, reader: LedgerReader
) -> None:
    for decision in ("block", "allow", "block", "block"):
        event(path, "AgentStop", decision)
    assert reader.stop_blocks_in_a_row("s1", "AgentStop", None, 9) == 2
    assert reader.stop_blocks_in_a_row("s1", "AgentStop", None, 1) == 1  # at most the limit
    event(path, "AgentStop", "allow")
    assert reader.stop_blocks_in_a_row("s1", "AgentStop", None, 9) == 0


def test_stop_blocks_in_a_row_is_per_session_event_and_agent(
    path: str, reader: LedgerReader
) -> None:
    event(path, "AgentStop", "block")
    event(path, "SubagentStop", "block", agent_id="a1")
    event(path, "SubagentStop", "block", agent_id="a1")
    event(path, "AgentStop", "block", session_id="s2")
    event(path, "UserPromptSubmit", "allow")  # another event does not break the run
    assert reader.stop_blocks_in_a_row("s1", "AgentStop", None, 9) == 1
    assert reader.stop_blocks_in_a_row("s1", "SubagentStop", "a1", 9) == 2
    assert reader.stop_blocks_in_a_row("s1", "SubagentStop", None, 9) == 0
    assert reader.stop_blocks_in_a_row("s3", "AgentStop", None, 9) == 0


def test_stop_blocks_of_the_main_agent_match_an_empty_agent_id(
    path: str, reader: LedgerReader
) -> None:
    event(path, "AgentStop", "block", agent_id="")
    event(path, "AgentStop", "block")
    assert reader.stop_blocks_in_a_row("s1", "AgentStop", None, 9) == 2
    assert reader.stop_blocks_in_a_row("s1", "AgentStop", "", 9) == 2


def test_hook_blocks_in_a_row_counts_one_hooks_runs_and_skips_skipped_ones(
    path: str, reader: LedgerReader
) -> None:
    for outcome in ("allow", "block", "skipped", "block"):
        ev = event(path, "AgentStop", "block")
        hook_run(path, "AgentStop", "promise", outcome, event_id=ev)
    ev = event(path, "AgentStop", "block")
    hook_run(path, "AgentStop", "other", "allow", event_id=ev)  # another hook
    sub = event(path, "AgentStop", "block", agent_id="a1")
    hook_run(path, "AgentStop", "promise", "allow", event_id=sub)  # another agent
    assert reader.hook_blocks_in_a_row("s1", "AgentStop", "promise", None, 9) == 2
    assert reader.hook_blocks_in_a_row("s1", "AgentStop", "promise", None, 1) == 1
    assert reader.hook_blocks_in_a_row("s1", "AgentStop", "promise", "a1", 9) == 0
    assert reader.hook_blocks_in_a_row("s1", "SubagentStop", "promise", None, 9) == 0


#: id, the stops in turn (agent: None for the main one, what the hook ``gate`` answers), the
#: question (event, agent, limit), the answer: the one count both engines give
_HOOK_BLOCKS: list[tuple[str, list[tuple[str | None, str]], tuple[str, str | None, int], int]] = [
    ("newest-first", [(None, "block"), (None, "allow"), (None, "block"), (None, "block")],
     ("AgentStop", None, 9), 2),
    ("at-most-the-limit", [(None, "block"), (None, "block")], ("AgentStop", None, 1), 1),
    ("an-allow-ends-it", [(None, "block"), (None, "allow")], ("AgentStop", None, 9), 0),
    ("a-subagent", [("a1", "block"), ("a1", "block"), (None, "allow")],
     ("SubagentStop", "a1", 9), 2),
    ("the-main-agent-is-none", [(None, "block"), ("a1", "allow"), (None, "block")],
     ("AgentStop", None, 9), 2),
    ("not-the-subagents", [("a1", "block")], ("SubagentStop", None, 9), 0),
    ("another-agent", [("a1", "block")], ("SubagentStop", "a2", 9), 0),
    ("another-event", [(None, "block")], ("SubagentStop", None, 9), 0),
    ("none-yet", [], ("AgentStop", None, 9), 0),
]  # fmt: skip


@pytest.mark.parametrize(
    ("stops", "question", "count"),
    [case[1:] for case in _HOOK_BLOCKS],
    ids=[case[0] for case in _HOOK_BLOCKS],
)
def test_hook_blocks_in_a_row_answers_alike_on_both_engines(
    ledger_url: str,
    stops: list[tuple[str | None, str]],
    question: tuple[str, str | None, int],
    count: int,
) -> None:
    """One method (its SQL the engine's: a NULL-safe agent match) on SQLite and PostgreSQL,
    over stops a Guard recorded."""
    answers = iter(outcome for _, outcome in stops)

    def gate(event: Any, ctx: Any) -> HookResult | None:
        return HookResult.block("not yet") if next(answers) == "block" else None

    hooks = {"Stop": [HookMatcher(hooks=[gate])], "SubagentStop": [HookMatcher(hooks=[gate])]}
    with Ledger(ledger_url) as led:
        session = Guard(AgentDefinition(hooks=hooks), ledger=led).session("s1")
        for agent, _ in stops:
            if agent is None:
                session.sync.agent_stop("done")
            else:
                session.sync.subagent_stop(agent, "reviewer")
        event, agent_id, limit = question
        hook = f"{__name__}:{gate.__qualname__}"  # the name the ledger records it by
        assert led.reader.hook_blocks_in_a_row("s1", event, hook, agent_id, limit) == count
        assert led.reader.hook_blocks_in_a_row("s1", event, "other", agent_id, limit) == 0


# --- tool calls ------------------------------------------------------------------------------


def test_succeeded_tools_lists_each_tool_with_an_ok_call_once(
    path: str, reader: LedgerReader
) -> None:
    call(path, "t1", "Bash", "ok")
    call(path, "t2", "Bash", "ok")
    call(path, "t3", "Write", "error")
    call(path, "t4", "Read", "ok", session_id="s2")
    assert reader.succeeded_tools("s1") == ["Bash"]


def test_count_injected_counts_ok_calls_of_the_input_the_hook_injected_after(
    path: str, reader: LedgerReader
) -> None:
    for call_id, status, digest in (("t1", "ok", "h"), ("t2", "ok", "h"), ("t3", "ok", "x")):
        call(path, call_id, "mcp", status, arguments_hash=digest)
        hook_run(path, "PostToolUse", "schema_nudge", "inject", tool_call_id=call_id)
    call(path, "t4", "mcp", "ok", arguments_hash="h")  # not nudged
    call(path, "t5", "mcp", "ok", arguments_hash="h")
    hook_run(path, "PostToolUse", "other", "inject", tool_call_id="t5")
    assert reader.count_injected("s1", "mcp", "h", "schema_nudge") == 2
    assert reader.count_injected("s1", "mcp", "x", "schema_nudge") == 1
    assert reader.count_injected("s1", "mcp", "h", "other") == 1
    assert reader.count_injected("s2", "mcp", "h", "schema_nudge") == 0


def test_session_tool_totals_count_calls_not_denied(path: str, reader: LedgerReader) -> None:
    call(path, "t1", "Bash", "ok")
    call(path, "t2", "Bash", "denied")
    last = call(path, "t3", "Bash", "pending")
    write = call(path, "t4", "Write", "denied")
    call(path, "t5", "Bash", "ok", session_id="s2")
    totals = sorted(reader.session_tool_totals("s1"), key=lambda r: r["tool_name"])
    assert totals == [
        {"tool_name": "Bash", "n": 2, "last_id": last},
        {"tool_name": "Write", "n": 0, "last_id": write},
    ]


def test_session_calls_all_or_after_an_id(path: str, reader: LedgerReader) -> None:
    first = call(path, "t1", "Bash", "ok")
    call(path, "t2", "Bash", "ok", session_id="s2")
    second = call(path, "t3", "Write", "denied")
    rows = sorted(reader.session_calls("s1"), key=lambda r: r["id"])
    assert rows == [
        {"id": first, "tool_call_id": "t1", "tool_name": "Bash", "status": "ok"},
        {"id": second, "tool_call_id": "t3", "tool_name": "Write", "status": "denied"},
    ]
    assert reader.session_calls("s1", after_id=first) == rows[1:]
    assert reader.session_calls("s1", after_id=second) == []


def test_has_session(path: str, reader: LedgerReader) -> None:
    insert(path, "sessions", session_id="s1", started_at=AT, last_seen_at=AT)
    assert reader.has_session("s1") is True
    assert reader.has_session("s2") is False


# --- summaries ------------------------------------------------------------------------------


def test_session_summaries(path: str, reader: LedgerReader) -> None:
    call(path, "t1", "Bash", "ok")
    call(path, "t2", "Bash", "ok")
    call(path, "t3", "Write", "ok", agent_type="writer")
    call(path, "t4", "Bash", "denied")
    event(path, "AgentStop", "block")
    event(path, "AgentStop", "allow")
    event(path, "SubagentStop", "allow")
    event(path, "UserPromptSubmit", "allow")
    hook_run(path, "PreToolUse", "protect_paths", "deny")
    hook_run(path, "PreToolUse", "protect_paths", "deny")
    hook_run(path, "AgentStop", "promise", "block")
    hook_run(path, "PreToolUse", "schema", "allow")
    assert reader.session_call_counts("s1") == [
        {"agent": "main", "tool_name": "Bash", "status": "denied", "calls": 1},
        {"agent": "main", "tool_name": "Bash", "status": "ok", "calls": 2},
        {"agent": "writer", "tool_name": "Write", "status": "ok", "calls": 1},
    ]
    assert reader.session_stop_decisions("s1") == [
        {"event": "AgentStop", "decision": "allow", "times": 1},
        {"event": "AgentStop", "decision": "block", "times": 1},
        {"event": "SubagentStop", "decision": "allow", "times": 1},
    ]
    assert reader.session_hook_refusals("s1") == [
        {"hook": "promise", "outcome": "block", "times": 1},
        {"hook": "protect_paths", "outcome": "deny", "times": 2},
    ]


def test_stats_yields_every_section_in_order(path: str, reader: LedgerReader) -> None:
    call(path, "t1", "Bash", "ok")
    call(path, "t2", "Bash", "ok")
    call(path, "t3", "Bash", "denied")
    sections = list(reader.stats(10))
    assert [key for key, _ in sections] == list(STATS)
    assert sections[0][1] == [{"status": "ok", "calls": 2}, {"status": "denied", "calls": 1}]


def test_stats_sections_read_side_by_side_answer_as_one_query_each(
    path: str, reader: LedgerReader
) -> None:
    """The sections run on connections of their own, in parallel: each answers as the same
    statement on the reader's own connection, and they come in STATS' order."""
    for i, status in enumerate(["ok", "ok", "denied", "error", "ok", "denied"]):
        call(path, f"t{i}", "Bash" if i % 2 else "Read", status)
    sections = list(reader.stats(5))
    assert [key for key, _ in sections] == list(STATS)
    for key, rows in sections:
        assert rows == reader.query(STATS[key], {"limit": 5}), key


def test_stats_raises_at_the_section_that_fails(path: str, reader: LedgerReader) -> None:
    conn = sqlite3.connect(path)
    conn.execute("DROP VIEW tool_stats")
    conn.commit()
    conn.close()
    sections = reader.stats(10)
    assert next(sections)[0] == "calls_by_status"
    with pytest.raises(LedgerError, match="tool_stats"):
        next(sections)


def test_named_queries_raise_a_ledger_error_without_a_file(tmp_path: Path) -> None:
    reader = LedgerReader(str(tmp_path / "none.db"))
    with pytest.raises(LedgerError) as info:
        reader.stop_blocks_in_a_row("s1", "AgentStop", None, 9)
    assert info.value.kind == "missing"
