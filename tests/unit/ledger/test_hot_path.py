"""The ledger's hot path (issue #13): the statements a guarded call runs, the writer's own
busy retry, closing without a checkpoint, ``PRAGMA optimize``, the time text cache and
the indexes the shipped queries use. Timings are never asserted, only behaviour."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, HookMatcher, Ledger
from guardrails.ledger import sqlite_write
from guardrails.ledger.common import iso_time
from guardrails.ledger.query import saved_queries
from guardrails.ledger.reader import _EVENT_DECISIONS, _HOOK_OUTCOMES
from tests._db import records, rows, value
from tests._paths import REPO


def _noop(event: Any, ctx: Any) -> None:
    return None


def _guard(ledger: Ledger) -> Guard:
    definition = AgentDefinition(
        name="hot",
        hooks={
            "PreToolUse": [HookMatcher(matcher="Bash", hooks=[_noop, _noop])],
            "PostToolUse": [HookMatcher(matcher="Bash", hooks=[_noop])],
        },
    )
    return Guard(definition, ledger=ledger)


def _call(guard: Guard) -> Any:
    return guard.sync.run_tool("Bash", {"command": "ls"}, lambda command: "out")


def _traced(ledger: Ledger, fn: Any) -> list[str]:
    conn = ledger._conn
    assert conn is not None, ledger.degraded
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        fn()
    finally:
        conn.set_trace_callback(None)
    return seen


# --- the statements of a guarded call -------------------------------------------------------


def test_a_guarded_call_inserts_then_updates_by_rowid(ledger_path: str) -> None:
    with Ledger(ledger_path) as ledger:
        guard = _guard(ledger)
        _call(guard)  # the session's row is written once a while: not part of this trace
        seen = _traced(ledger, lambda: _call(guard))
    writes = [s for s in seen if s.split()[0] in ("INSERT", "UPDATE")]
    assert [s.split()[0] + " " + s.split()[2 if s.startswith("INSERT") else 1] for s in writes] == [
        "INSERT tool_calls",
        "INSERT hook_run_sets",  # both PreToolUse hooks' runs: one row
        "UPDATE tool_calls",
        "INSERT hook_run_sets",
    ]
    assert "ON CONFLICT" not in writes[0]
    assert "WHERE id = " in writes[2] and "ON CONFLICT" not in writes[2]
    assert [s for s in seen if s in ("BEGIN IMMEDIATE", "COMMIT")] == [
        "BEGIN IMMEDIATE",
        "COMMIT",
    ] * 2
    assert ledger._rowids == {}  # the finished call's rowid is forgotten
    calls = rows(ledger_path, "SELECT status, duration_ms FROM tool_calls")
    assert [c["status"] for c in calls] == ["ok", "ok"]
    assert all(c["duration_ms"] is not None for c in calls)


def test_a_stale_rowid_finishes_the_right_call_by_its_upsert(ledger_path: str) -> None:
    with Ledger(ledger_path) as ledger:
        guard = _guard(ledger)
        _call(guard)
        real = ledger._rowids

        class Wrong(dict[tuple[str, str], int]):
            """Every call's rowid points at the first row (a rolled-back insert's id)."""

            def pop(self, key: Any, default: Any = None) -> Any:
                real.pop(key, None)
                return 1

        ledger._rowids = Wrong()
        run = _call(guard)
    assert run.ok
    got = rows(ledger_path, "SELECT tool_call_id, status FROM tool_calls ORDER BY id")
    assert [r["status"] for r in got] == ["ok", "ok"]
    assert len({r["tool_call_id"] for r in got}) == 2


def test_a_post_of_a_call_another_writer_started_lands_on_its_row(ledger_path: str) -> None:
    from guardrails import PostToolUse, PreToolUse

    with Ledger(ledger_path) as first, Ledger(ledger_path) as second:
        pre = PreToolUse(session_id="s", tool_name="Bash", tool_input={"command": "ls"},
                         tool_use_id="toolu_x")  # fmt: skip
        _guard(first).emit_sync(pre)
        post = PostToolUse(session_id="s", tool_name="Bash", tool_input={"command": "ls"},
                           tool_use_id="toolu_x", tool_response="out")  # fmt: skip
        _guard(second).emit_sync(post)
    assert rows(ledger_path, "SELECT status FROM tool_calls") == [{"status": "ok"}]


def test_a_pretooluse_sent_twice_keeps_one_row(ledger_path: str) -> None:
    from guardrails import PreToolUse

    with Ledger(ledger_path) as ledger:
        guard = _guard(ledger)
        pre = PreToolUse(session_id="s", tool_name="Bash", tool_input={"command": "ls"},
                         tool_use_id="toolu_x")  # fmt: skip
        guard.emit_sync(pre)
        guard.emit_sync(pre)  # the plain INSERT meets the row: the upsert decides
        assert ledger.degraded is None
    assert value(ledger_path, "SELECT count(*) FROM tool_calls") == 1
    assert value(ledger_path, "SELECT count(*) FROM hook_runs") == 4


# --- the writer's own busy retry ----------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "busy"),
    [(5, True), (6, True), (5 | (1 << 8), True), (517, True), (1, False), (11, False)],
)
def test_is_busy_reads_the_primary_result_code(code: int, busy: bool) -> None:
    exc = sqlite3.OperationalError("x")
    exc.sqlite_errorcode = code  # type: ignore[attr-defined]
    assert sqlite_write.is_busy(exc) is busy


def _hold_write_lock(path: str) -> sqlite3.Connection:
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    return holder


def test_a_writer_waits_in_short_sleeps_for_another_writer(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    real_sleep = time.sleep

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        real_sleep(seconds)

    with Ledger(ledger_path, busy_timeout=5.0) as ledger:
        guard = _guard(ledger)
        _call(guard)
        holder = _hold_write_lock(ledger_path)
        timer = threading.Timer(0.05, lambda: holder.execute("COMMIT"))
        monkeypatch.setattr(sqlite_write.time, "sleep", sleep)
        timer.start()
        try:
            run = _call(guard)
        finally:
            timer.join()
            holder.close()
        assert run.ok and ledger.degraded is None
    assert slept, "the writer never waited"
    assert all(0.0005 <= s <= 0.002 for s in slept), slept
    assert value(ledger_path, "SELECT count(*) FROM tool_calls WHERE status = 'ok'") == 2


def test_a_writer_spools_once_its_timeout_is_spent(ledger_path: str) -> None:
    with Ledger(ledger_path, busy_timeout=0.05) as ledger:
        guard = _guard(ledger)
        holder = _hold_write_lock(ledger_path)
        try:
            run = _call(guard)
            degraded = ledger.degraded
        finally:
            holder.close()
        assert run.ok  # guarding goes on
        assert degraded is not None and degraded.startswith("locked")
        assert len(records(ledger.spool_path)) == 2  # the call's pre and post: nothing lost
        report = ledger.recover()
    assert report.imported == 2
    assert value(ledger_path, "SELECT status FROM tool_calls") == "ok"


def test_keys_wait_in_the_same_loop(ledger_path: str) -> None:
    with Ledger(ledger_path, busy_timeout=5.0) as ledger:
        holder = _hold_write_lock(ledger_path)
        timer = threading.Timer(0.05, lambda: holder.execute("COMMIT"))
        timer.start()
        try:
            with ledger.write_transaction() as conn:
                conn.execute("SELECT 1")
        finally:
            timer.join()
            holder.close()


# --- closing ------------------------------------------------------------------------------

_WRITE_AND_EXIT = """
import os, sys
from guardrails import AgentDefinition, Guard, HookMatcher, Ledger, PreToolUse
ledger = Ledger(sys.argv[1])
guard = Guard(AgentDefinition(name="x", hooks={}), ledger=ledger)
guard.emit_sync(PreToolUse(session_id="s", tool_name="Bash", tool_input={"command": "ls"},
                           tool_use_id="toolu_kept"))
ledger.close(checkpoint=sys.argv[2] == "1")
os._exit(0)
"""


@pytest.mark.parametrize("checkpoint", [False, True])
def test_a_closed_ledger_keeps_its_record_with_or_without_a_checkpoint(
    ledger_path: str, checkpoint: bool
) -> None:
    Ledger(ledger_path).close()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    subprocess.run(
        [sys.executable, "-c", _WRITE_AND_EXIT, ledger_path, "1" if checkpoint else "0"],
        check=True,
        env=env,
        timeout=60,
    )
    wal = ledger_path + "-wal"
    if checkpoint:
        assert not os.path.exists(wal)  # checkpointed into the file, WAL deleted
    else:
        assert os.path.getsize(wal) > 0  # the record waits in the WAL, as committed
    assert rows(ledger_path, "SELECT tool_call_id, status FROM tool_calls") == [
        {"tool_call_id": "toolu_kept", "status": "pending"}
    ]


def test_close_runs_pragma_optimize(ledger_path: str) -> None:
    ledger = Ledger(ledger_path)
    _call(_guard(ledger))
    conn = ledger._conn
    assert conn is not None
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    ledger.close()
    assert "PRAGMA optimize" in seen


# --- the time text ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("t", "text"),
    [
        (0.0, "1970-01-01T00:00:00.000Z"),
        (1767225599.999, "2025-12-31T23:59:59.999Z"),
        (1767225600.0, "2026-01-01T00:00:00.000Z"),
        (1767225600.5, "2026-01-01T00:00:00.500Z"),
        (1767225599.25, "2025-12-31T23:59:59.250Z"),  # back to an earlier second
        (1767225601.001, "2026-01-01T00:00:01.001Z"),
    ],
)
def test_iso_time_is_right_whichever_second_came_before(t: float, text: str) -> None:
    for before in (t, t - 1, t + 1, 0.0):
        iso_time(before)
        assert iso_time(t) == text


# --- the shipped queries use indexes ------------------------------------------------------

#: shipped queries whose every row is an aggregate over the whole ledger: a full pass is
#: what they ask for (docs/ledger.md, "Big ledgers")
_WHOLE_LEDGER = {
    "view hook_runs",
    "view repeated_calls",
    "view slow_hooks",
    "view tool_stats",
    "saved denials_by_tool",
    "saved repeated_calls",
    "saved slowest_hooks",
}
#: one session's rows in time order across three tables: the sort is of that session's
#: rows only (each part found by index)
#: a sort of one session's rows, or of one denied call's hook runs (denials)
_ONE_SESSION_SORT = {"saved session_timeline", "view denials"}


def _cases(conn: sqlite3.Connection) -> list[tuple[str, str, Any]]:
    views = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'view'")]
    cases: list[tuple[str, str, Any]] = [
        (f"view {v}", f"SELECT * FROM {v} LIMIT 100", ()) for v in sorted(views)
    ]
    values = {"session": "s", "tool": "Bash", "limit": 50}
    cases += [(f"saved {q.name}", q.sql, {p: values[p] for p in q.params}) for q in saved_queries()]
    cases.append(("stop_blocks_in_a_row", _EVENT_DECISIONS, ("s", "Stop", "", 3)))
    cases.append(("hook_blocks_in_a_row", _HOOK_OUTCOMES, ("s", "Stop", "h", None, 3)))
    return cases


def test_shipped_queries_read_by_index(ledger_path: str) -> None:
    Ledger(ledger_path).close()
    conn = sqlite3.connect(ledger_path)
    try:
        checked = []
        for name, sql, params in _cases(conn):
            if name in _WHOLE_LEDGER:
                continue
            plan = [r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql, params)]
            scans = [p for p in plan if p.startswith("SCAN ") and " USING " not in p]
            scans = [p for p in scans if not p.startswith("SCAN (") and "CONSTANT" not in p]
            # json_each over one row's hook runs (a set found by index) is not a table scan,
            # nor is the read of a view's co-routine (its own plan is checked)
            coroutines = {p.split()[-1] for p in plan if p.startswith("CO-ROUTINE ")}
            scans = [p for p in scans if "VIRTUAL TABLE" not in p]
            scans = [p for p in scans if p.split()[1] not in coroutines]
            assert not scans, (name, plan)
            if name not in _ONE_SESSION_SORT:
                # a merge sorting only rows tied on the index's key ("RIGHT PART") streams
                sorts = [p for p in plan if "TEMP B-TREE" in p and "RIGHT PART" not in p]
                assert not sorts, (name, plan)
            checked.append(name)
    finally:
        conn.close()
    assert {"view denials", "view session_summary", "saved recent_calls"} <= set(checked)


def test_the_stop_count_reads_its_session_and_event_index(ledger_path: str) -> None:
    Ledger(ledger_path).close()
    conn = sqlite3.connect(ledger_path)
    try:
        plan = [r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + _EVENT_DECISIONS,
                                           ("s", "Stop", "", 3))]  # fmt: skip
    finally:
        conn.close()
    assert any("events_by_session_event" in p for p in plan), plan
    assert not any("TEMP B-TREE" in p for p in plan), plan
