"""The aggregate views' rollups (rollup.py, sql/migrations/0008_rollups.sql): a view answers
the same before and after a refresh, with calls pending at the mark, and after a prune."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from guardrails import Ledger
from guardrails.ledger import rollup
from guardrails.ledger.reader import STATS

VIEWS = ("tool_stats", "slow_hooks", "repeated_calls")


def _fill(path: str, calls: int, start: int = 0, pending_every: int = 0) -> None:
    conn = sqlite3.connect(path)
    for i in range(start, start + calls):
        status = "pending" if pending_every and i % pending_every == 0 else "ok"
        if status == "ok" and i % 7 == 0:
            status = "error"
        if status == "ok" and i % 5 == 0:
            status = "denied"  # by the set's deny run, or (every 10th) by no hook at all
        dur = None if status == "pending" else 1.0 + (i % 13) * 0.731
        conn.execute(
            "INSERT INTO tool_calls (session_id, tool_call_id, tool_name, arguments_hash, "
            "tool_call_arguments, status, started_at, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (f"s{i % 3}", f"c{i}", f"t{i % 4}", f"h{i % 5}", "{}", status,
             f"2026-01-01T00:00:{i % 60:02d}.000Z", dur),
        )  # fmt: skip
        conn.execute(
            "INSERT INTO hook_run_sets (session_id, event, tool_call_id, created_at, runs, flags) "
            "VALUES (?, 'PreToolUse', ?, '2026-01-01T00:00:00.000Z', ?, ?)",
            (f"s{i % 3}", f"c{i}" if not (status == "denied" and i % 10 == 0) else f"x{i}",
             f'[["h{i % 2}", null, 100, "{_outcome(i, status)}", '
             f'{0.01 * (i % 17) + 0.001}, null, 0]]',
             {"error": 2, "deny": 1}.get(_outcome(i, status), 0)),
        )  # fmt: skip
    conn.commit()
    conn.close()


def _outcome(i: int, status: str) -> str:
    return "deny" if status == "denied" else "error" if i % 11 == 0 else "noop"


#: /v1/stats' denials by hook as it was defined before its rollup: over the denials view
DENIALS_BY_HOOK = (
    "SELECT hook, matcher, hook_outcome, count(*) AS denials, max(started_at) AS last_at "
    "FROM denials GROUP BY hook, matcher, hook_outcome ORDER BY denials DESC, hook LIMIT 20"
)


def _answers(path: str) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(path)
    try:
        found = {v: conn.execute(f"SELECT * FROM {v}").fetchall() for v in VIEWS}
        stats = conn.execute(STATS["denials_by_hook"], {"limit": 20}).fetchall()
        assert stats == conn.execute(DENIALS_BY_HOOK).fetchall()
        found["denials_by_hook"] = stats
        return found
    finally:
        conn.close()


def _rollup_rows(path: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT count(*) FROM tool_rollup").fetchone()[0])
    finally:
        conn.close()


def test_views_answer_alike_before_and_after_refreshes(tmp_path: Path) -> None:
    path = str(tmp_path / "l.db")
    Ledger(path).close()
    _fill(path, 120, pending_every=9)
    before = _answers(path)
    assert len(before["denials_by_hook"]) == 2  # h1's denials, and those without a hook run
    assert rollup.refresh_file(path, limit=50) > 0  # part of the rows: rollup plus live
    assert _rollup_rows(path) > 0
    assert _answers(path) == before
    rollup.refresh_file(path)
    assert _answers(path) == before
    _fill(path, 40, start=120)  # rows after the mark
    after = _answers(path)
    rollup.refresh_file(path)
    assert _answers(path) == after


def test_a_call_pending_at_the_mark_counts_once_it_finishes(tmp_path: Path) -> None:
    path = str(tmp_path / "l.db")
    Ledger(path).close()
    _fill(path, 60, pending_every=5)
    rollup.refresh_file(path)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM rollup_pending").fetchone()[0] == 12
    conn.execute("UPDATE tool_calls SET status = 'ok', duration_ms = 99.5 WHERE id = 6")
    conn.commit()
    conn.close()
    finished = _answers(path)
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM rollup_pending")
    conn.execute("DELETE FROM tool_rollup")
    conn.execute("DELETE FROM tool_duration_rollup")
    conn.execute("DELETE FROM repeated_rollup")
    conn.execute("UPDATE rollup_marks SET last_id = 0 WHERE name = 'tool_calls'")
    conn.commit()
    conn.close()
    assert _answers(path) == finished  # the same as reading every row
    rollup.refresh_file(path)
    assert _answers(path) == finished


def test_prune_empties_the_rollups(tmp_path: Path) -> None:
    from guardrails.ledger.admin import prune_ledger

    path = str(tmp_path / "l.db")
    Ledger(path).close()
    _fill(path, 30)
    rollup.refresh_file(path)
    assert _rollup_rows(path) > 0
    prune_ledger(path, before="2026-01-01T00:00:10Z")
    assert _rollup_rows(path) == 0
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT max(last_id) FROM rollup_marks").fetchone()[0] == 0
    conn.close()


def test_refresh_never_creates_or_writes_a_file_of_another_schema(tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    assert rollup.refresh_file(str(missing)) == 0
    assert not missing.exists()
    path = str(tmp_path / "l.db")
    Ledger(path).close()
    _fill(path, 10)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    assert rollup.refresh_file(path) == 0
    assert _rollup_rows(path) == 0


def test_a_ledger_closes_with_a_bounded_refresh(tmp_path: Path) -> None:
    path = str(tmp_path / "l.db")
    Ledger(path).close()
    _fill(path, rollup.CLOSE_BACKLOG + 10)
    Ledger(path).close()
    assert _rollup_rows(path) > 0


def _post(call: str, status: str) -> tuple[str, list[object]]:
    """A PostToolUse record as the spool holds it (records.EventRows' ``post``)."""
    return (
        "post",
        ["s1", "a", None, None, call, "t1", "{}", "{}", "h1", status, None, 0, None,
         "RuntimeError", "late", "2026-01-01T00:00:01.000Z", "2026-01-01T00:00:02.000Z", 7.0],
    )  # fmt: skip


def test_an_imported_record_that_changes_a_summed_call_empties_the_rollups(
    tmp_path: Path,
) -> None:
    """A spooled (or journaled) record met again upserts a call below the mark: the views
    would count its old status, so the rollups are emptied and read every row again; a
    record of a new call leaves them as they are."""
    from guardrails.ledger.spool import append

    path = str(tmp_path / "l.db")
    Ledger(path).close()
    _fill(path, 30)
    rollup.refresh_file(path)
    append(path, [_post("c_new", "ok")])  # a call the file does not hold: no summed row
    with Ledger(path) as ledger:
        assert ledger.recover().imported == 1
    assert _rollup_rows(path) > 0
    before = _answers(path)
    append(path, [_post("c1", "error")])  # c1 finished ok, below the mark
    with Ledger(path) as ledger:
        assert ledger.recover().imported == 1
    assert _rollup_rows(path) == 0
    after = _answers(path)
    assert after["tool_stats"] != before["tool_stats"]
    rollup.refresh_file(path)
    assert _answers(path) == after


@pytest.mark.parametrize(
    ("calls", "summed"),
    [
        (["c_new"], False),
        (["c_new", "c_other_new", "c_new"], False),  # a new call met twice in one batch
        (["c_new", "c1"], True),  # c1 finished ok, below the mark
        ([f"c_new{i}" for i in range(450)] + ["c4"], True),  # past the first 400
    ],
)
def test_a_batch_is_judged_as_its_records_one_by_one(
    tmp_path: Path, calls: list[str], summed: bool
) -> None:
    """The import that runs a batch on one savepoint asks the rollups once (one query per
    400 calls) and must answer what asking before each record would."""
    path = str(tmp_path / "l.db")
    Ledger(path).close()
    _fill(path, 30)
    rollup.refresh_file(path)
    batch = [[_post(call, "error")] for call in calls]
    conn = sqlite3.connect(path)
    try:
        one_by_one = any(rollup.changes_summed(conn, [ops]) for ops in batch)
        assert rollup.changes_summed(conn, batch) is one_by_one is summed
    finally:
        conn.close()
