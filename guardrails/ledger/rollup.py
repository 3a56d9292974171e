"""The rollups of the aggregate views (``sql/migrations/0008_rollups.sql``), moved forward
off the hot path.

``tool_stats``, ``slow_hooks``, ``repeated_calls`` (and ``/v1/stats``' denials by hook)
read the rollup tables for the rows
up to a mark and the tables themselves after it, so they are exact whether or not a
refresh ran; a refresh only makes them cheaper. :func:`refresh` folds the rows after the
marks into the rollups in one write transaction, at most ``limit`` rows of each table
(so a caller bounds its work): a ``Ledger``'s close (only when enough rows wait, see
:data:`CLOSE_BACKLOG`), ``hookrails ledger`` commands before they read, and
``LedgerReader.stats`` (``GET /v1/stats``). A call still pending when the mark passes
it counts as a call only and waits in ``rollup_pending`` (the views read its status from
``tool_calls``) until a refresh finds it finished; :func:`invalidate` empties the
rollups when rows below a mark change off the hot path (prune, a spool import, a copy).
"""

from __future__ import annotations

import os
import sqlite3
import time

from .reader import FIRST_DENIAL as _FIRST_DENIAL

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .records import Op

__all__ = [
    "CLOSE_BACKLOG", "CLOSE_LIMIT", "at_close", "backlog", "invalidate", "is_rollup", "refresh",
    "refresh_file",
]  # fmt: skip

#: a Ledger's close refreshes only when at least this many rows wait after a mark
CLOSE_BACKLOG = 2_000
#: and then folds at most this many rows of each table
CLOSE_LIMIT = 5_000
#: and spends at most about this long on it
CLOSE_SECONDS = 0.01
#: rows per transaction when a command refreshes everything
CHUNK = 200_000
#: ids of each table per transaction of a bounded refresh (a close, /v1/stats), and the
#: pause between two: the file's other writers wait for one short transaction at a time
#: (a few ms), never for the whole refresh
STEP = 500
_PAUSE = 0.003

_MARK = "SELECT last_id FROM rollup_marks WHERE name = ?"
_SET_MARK = "UPDATE rollup_marks SET last_id = ? WHERE name = ?"
#: 3 significant digits: the value the percentiles rank (docs/ledger.md)
_ROUNDED = "CAST(printf('%.2e', {0}) AS REAL)"

#: the new calls (``:lo`` < id <= ``:hi``), and the calls pending at the mark now finished
_NEW = "SELECT *, 1 AS new FROM tool_calls WHERE id > :lo AND id <= :hi"
_DONE = (
    "SELECT c.*, 0 AS new FROM rollup_pending AS p CROSS JOIN tool_calls AS c ON c.id = p.id "
    "WHERE c.status != 'pending'"
)
_TOOLS = """\
INSERT INTO tool_rollup (tool_name, calls, ok, denials, errors, interrupted, last_called_at)
SELECT tool_name, sum(new), sum(status = 'ok'), sum(status = 'denied'),
       sum(status = 'error'), sum(status = 'interrupted'), max(started_at)
FROM ({rows}) WHERE true GROUP BY tool_name
ON CONFLICT (tool_name) DO UPDATE SET
    calls = calls + excluded.calls, ok = ok + excluded.ok,
    denials = denials + excluded.denials, errors = errors + excluded.errors,
    interrupted = interrupted + excluded.interrupted,
    last_called_at = max(last_called_at, excluded.last_called_at)"""
_TOOL_DURATIONS = """\
INSERT INTO tool_duration_rollup (tool_name, duration_ms, n, sum_ms)
SELECT tool_name, CAST(printf('%.2e', duration_ms) AS REAL), count(*), sum(duration_ms)
FROM ({rows}) WHERE status IN ('ok', 'error') AND duration_ms IS NOT NULL
GROUP BY 1, 2
ON CONFLICT (tool_name, duration_ms) DO UPDATE SET
    n = n + excluded.n, sum_ms = sum_ms + excluded.sum_ms"""
#: the groups the new rows touch, counted again over all their calls (by their index)
_GROUP = (
    "FROM tool_calls AS c WHERE c.session_id = g.session_id AND c.tool_name = g.tool_name "
    "AND c.arguments_hash = g.arguments_hash"
)
_REPEATED = """\
INSERT OR REPLACE INTO repeated_rollup
SELECT * FROM (
    SELECT g.session_id, g.tool_name, g.arguments_hash,
           (SELECT count(*) {group}) AS times,
           (SELECT min(c.started_at) {group}) AS first_at,
           (SELECT max(c.started_at) {group}) AS last_at,
           (SELECT group_concat(d.status, ',') FROM
                (SELECT DISTINCT c.status {group} ORDER BY c.status) AS d) AS statuses,
           (SELECT c.tool_call_arguments {group} ORDER BY c.started_at, c.id LIMIT 1)
    FROM (SELECT DISTINCT session_id, tool_name, arguments_hash FROM ({rows})
          WHERE arguments_hash IS NOT NULL) AS g
) WHERE times > 1"""
_DENIALS = f"""\
INSERT INTO denial_rollup (hook, matcher, hook_outcome, denials, last_at)
SELECT coalesce(run ->> 0, ''), coalesce(run ->> 1, ''), coalesce(run ->> 3, ''), count(*),
       max(started_at)
FROM (SELECT d.started_at, {_FIRST_DENIAL.format(c="d")} AS run
      FROM ({{rows}}) AS d WHERE d.status = 'denied') WHERE true GROUP BY 1, 2, 3
ON CONFLICT (hook, matcher, hook_outcome) DO UPDATE SET
    denials = denials + excluded.denials, last_at = max(last_at, excluded.last_at)"""
_PASSED_PENDING = "INSERT INTO rollup_pending SELECT id FROM ({rows}) WHERE status = 'pending'"
_RUNS = """\
SELECT s.event, r.value ->> 0 AS hook, r.value ->> 3 AS outcome, r.value ->> 4 AS duration_ms
FROM hook_run_sets AS s, json_each(s.runs) AS r WHERE s.id > :lo AND s.id <= :hi"""
_HOOKS = f"""\
INSERT INTO hook_rollup (hook, event, runs, failures)
SELECT hook, event, count(*), sum(outcome IN ('error', 'timeout', 'invalid', 'refused'))
FROM ({_RUNS}) WHERE true GROUP BY hook, event
ON CONFLICT (hook, event) DO UPDATE SET
    runs = runs + excluded.runs, failures = failures + excluded.failures"""
_HOOK_DURATIONS = f"""\
INSERT INTO hook_duration_rollup (hook, event, duration_ms, n, sum_ms, max_ms)
SELECT hook, event, {_ROUNDED.format("duration_ms")}, count(*), sum(duration_ms),
       max(duration_ms)
FROM ({_RUNS}) WHERE duration_ms IS NOT NULL GROUP BY 1, 2, 3
ON CONFLICT (hook, event, duration_ms) DO UPDATE SET
    n = n + excluded.n, sum_ms = sum_ms + excluded.sum_ms,
    max_ms = max(max_ms, excluded.max_ms)"""
_ROLLUPS = (
    "rollup_pending", "tool_rollup", "tool_duration_rollup", "hook_rollup",
    "hook_duration_rollup", "repeated_rollup", "denial_rollup",
)  # fmt: skip


def is_rollup(table: str) -> bool:
    """Whether ``table`` is one of the rollups (derived: status and copies leave them out)."""
    return table.startswith("rollup_") or table.endswith("_rollup")


def has_rollups(conn: sqlite3.Connection) -> bool:
    """Whether the file has the rollup tables (schema 8 or later)."""
    return bool(
        conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rollup_marks'"
        ).fetchone()
    )


def backlog(conn: sqlite3.Connection) -> int:
    """How many ids lie after the marks (of both tables, the larger), 0 without rollups."""
    if not has_rollups(conn):
        return 0
    waiting = 0
    for table in ("tool_calls", "hook_run_sets"):
        top = conn.execute(f"SELECT max(id) FROM {table}").fetchone()[0] or 0
        waiting = max(waiting, top - conn.execute(_MARK, (table,)).fetchone()[0])
    return waiting


def _fold_calls(conn: sqlite3.Connection, rows: str, span: dict[str, int]) -> None:
    conn.execute(_TOOLS.format(rows=rows), span)
    conn.execute(_TOOL_DURATIONS.format(rows=rows), span)
    conn.execute(_REPEATED.format(group=_GROUP, rows=rows), span)
    conn.execute(_DENIALS.format(rows=rows), span)


def _advance_calls(conn: sqlite3.Connection, limit: int) -> int:
    lo = int(conn.execute(_MARK, ("tool_calls",)).fetchone()[0])
    top = conn.execute("SELECT max(id) FROM tool_calls").fetchone()[0] or 0
    span = {"lo": lo, "hi": min(top, lo + limit)}
    # first the calls pending at the mark that have finished since: their status now
    done = [r[0] for r in conn.execute(f"SELECT id FROM ({_DONE})")]
    if done:
        _fold_calls(conn, _DONE, span)
        conn.executemany("DELETE FROM rollup_pending WHERE id = ?", [(i,) for i in done])
    if span["hi"] <= lo:
        return len(done)
    _fold_calls(conn, _NEW, span)
    conn.execute(_PASSED_PENDING.format(rows=_NEW), span)
    conn.execute(_SET_MARK, (span["hi"], "tool_calls"))
    return span["hi"] - lo + len(done)


def _advance_runs(conn: sqlite3.Connection, limit: int) -> int:
    lo = int(conn.execute(_MARK, ("hook_run_sets",)).fetchone()[0])
    top = conn.execute("SELECT max(id) FROM hook_run_sets").fetchone()[0] or 0
    hi = min(top, lo + limit)
    if hi <= lo:
        return 0
    span = {"lo": lo, "hi": hi}
    conn.execute(_HOOKS, span)
    conn.execute(_HOOK_DURATIONS, span)
    conn.execute(_SET_MARK, (hi, "hook_run_sets"))
    return hi - lo


def at_close(conn: sqlite3.Connection) -> int:
    """A writer's close moves the marks a little, when enough rows wait: at most
    :data:`CLOSE_LIMIT` ids and :data:`CLOSE_SECONDS` (other processes may be writing)."""
    if backlog(conn) < CLOSE_BACKLOG:
        return 0
    return refresh(conn, CLOSE_LIMIT, budget=CLOSE_SECONDS)


def refresh(
    conn: sqlite3.Connection, limit: int | None = None, *, budget: float | None = None
) -> int:
    """Fold the rows after the marks into the rollups: about ``limit`` ids, in transactions
    of :data:`STEP` ids of each table with a pause between (all of them, in transactions of
    :data:`CHUNK`, when None); how many ids the marks moved. ``conn`` is a writable
    connection in autocommit mode."""
    if not has_rollups(conn):
        return 0
    moved = 0
    started = time.monotonic()
    while True:
        step = CHUNK if limit is None else min(STEP, limit - moved)
        conn.execute("BEGIN IMMEDIATE")
        try:
            done = _advance_calls(conn, step) + _advance_runs(conn, step)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        moved += done
        if done == 0 or (limit is not None and moved >= limit):
            return moved
        if budget is not None and time.monotonic() - started >= budget:
            return moved
        if limit is not None:  # let a waiting writer in (they retry every 0.5-2 ms)
            time.sleep(_PAUSE)


def changes_summed(conn: sqlite3.Connection, batch: list[list[Op]]) -> bool:
    """Whether running the records of ``batch`` (each a list of named operations) would
    change a call the rollups have summed (finished, at or below the mark): a spooled or
    journaled record met again upserts a row off the hot path. One query per 400 calls,
    asked before any record runs (a call the batch starts is new, so not summed). Asked
    record by record, a call pending at the mark that the batch finishes and then touches
    again would empty the rollups; asked for the batch it does not, and needs not: a call
    pending at the mark stays in ``rollup_pending``, so the views count it as it ends up."""
    calls = list(
        dict.fromkeys(
            (p[0], p[4])
            for ops in batch
            for name, p in ops
            if name in ("pre", "post") and len(p) > 4
        )
    )
    if not calls or not has_rollups(conn):
        return False
    for i in range(0, len(calls), 400):
        part = calls[i : i + 400]
        rows = ", ".join(["(?, ?)"] * len(part))
        found = conn.execute(
            f"WITH v(s, c) AS (VALUES {rows}) SELECT 1 FROM v JOIN tool_calls t "
            "ON t.session_id = v.s AND t.tool_call_id = v.c WHERE t.status != 'pending' "
            "AND t.id <= (SELECT last_id FROM rollup_marks WHERE name = 'tool_calls') LIMIT 1",
            [value for call in part for value in call],
        ).fetchone()
        if found is not None:
            return True
    return False


def invalidate(conn: sqlite3.Connection) -> None:
    """Empty the rollups and set the marks back (inside the caller's transaction): rows
    below a mark changed, so every row is read from its table until the next refresh."""
    if not has_rollups(conn):
        return
    for table in _ROLLUPS:
        conn.execute(f"DELETE FROM {table}")
    conn.execute("UPDATE rollup_marks SET last_id = 0")


def refresh_file(path: str, limit: int | None = None, busy_timeout: float = 1.0) -> int:
    """:func:`refresh` on the file at ``path``; 0 when it cannot be written now (read-only,
    locked, an older or newer schema): the views stay exact, only slower."""
    from urllib.parse import quote

    from .migrations import latest_version

    try:  # mode=rw: never creates a file
        conn = sqlite3.connect(
            f"file:{quote(os.path.abspath(path))}?mode=rw",
            uri=True,
            isolation_level=None,
            timeout=busy_timeout,
        )
    except sqlite3.Error:
        return 0
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] != latest_version():
            return 0  # never write a file of another schema (a newer one, or not migrated)
        return refresh(conn, limit)
    except sqlite3.Error:
        return 0
    finally:
        conn.close()
