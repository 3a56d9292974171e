"""The SQLite store's statements and one event's transaction.

Statements are named so the spool can store a name and parameters and a later
``recover()`` runs them again (:mod:`.sqlite_recover`). The writer's hot path runs the
same named operations with cheaper statements where it knows the row
(:func:`execute` with ``rowids``): a call's ``pre`` is a plain INSERT and its ``post``
an UPDATE by rowid; the upserts stay for a row met again (a spool replayed, a
PreToolUse sent twice, a call another process started), so the named-op format is
unchanged for the spool and other stores.

A writer waits for another one with :func:`begin`: the connection's own busy handler is
off (SQLite's sleeps 1, 2, 5, ... 100 ms steps, so a waiting writer can sleep long after
the lock is free) and ``BEGIN IMMEDIATE`` is retried after 0.5-2 ms sleeps with jitter
until the same total timeout.
"""

from __future__ import annotations

import os
import sqlite3
import time

from .records import EVENT_ID, from_hook_run

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Sequence

    from .records import Op
    from .sqlite_state import Settle

__all__ = [
    "SQL", "begin", "busy_retry", "commit", "commit_many", "execute", "rollback", "transaction",
]  # fmt: skip

# --- statements (named, so the spool can store a name and parameters) -------------

#: a call's or event's tenant, from its session's row (the statement's last parameter)
_TENANT = "(SELECT tenant FROM sessions WHERE session_id = ?)"
#: operations whose statement ends with the session id again, for :data:`_TENANT`
_WITH_TENANT = frozenset({"pre", "post", "event"})

SQL: dict[str, str] = {
    "session": (
        "INSERT INTO sessions (session_id, agent_name, tenant, cwd, started_at, last_seen_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
        "last_seen_at = excluded.last_seen_at"
    ),
    "session_end": ("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE session_id = ?"),
    "pre": (
        "INSERT INTO tool_calls (session_id, agent_name, agent_id, agent_type, tool_call_id, "
        "tool_name, tool_call_arguments, final_arguments, arguments_hash, decision, reason, "
        "status, started_at, finished_at, duration_ms, pid, annotations, tenant_id) "
        f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {_TENANT}) "
        # a PreToolUse met again (replayed from the spool after its PostToolUse reached
        # the file, or sent twice) fills in what it knows but never reopens a finished call
        "ON CONFLICT (session_id, tool_call_id) DO UPDATE SET "
        "tool_call_arguments = excluded.tool_call_arguments, "
        "arguments_hash = excluded.arguments_hash, "
        "final_arguments = excluded.final_arguments, decision = excluded.decision, "
        "reason = excluded.reason, pid = excluded.pid, "
        "annotations = coalesce(excluded.annotations, tool_calls.annotations), "
        "started_at = min(tool_calls.started_at, excluded.started_at), "
        "status = CASE tool_calls.status WHEN 'pending' THEN excluded.status "
        "ELSE tool_calls.status END, "
        "finished_at = CASE tool_calls.status WHEN 'pending' THEN excluded.finished_at "
        "ELSE tool_calls.finished_at END, "
        "duration_ms = CASE tool_calls.status WHEN 'pending' THEN excluded.duration_ms "
        "ELSE tool_calls.duration_ms END"
    ),
    "post": (
        "INSERT INTO tool_calls (session_id, agent_name, agent_id, agent_type, tool_call_id, "
        "tool_name, tool_call_arguments, final_arguments, arguments_hash, decision, status, "
        "tool_call_result, result_truncated, result_bytes, error_type, error_message, "
        "started_at, finished_at, duration_ms, tenant_id) "
        f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'allow', ?, ?, ?, ?, ?, ?, ?, ?, ?, {_TENANT}) "
        "ON CONFLICT (session_id, tool_call_id) DO UPDATE SET "
        "final_arguments = excluded.final_arguments, status = excluded.status, "
        "tool_call_result = excluded.tool_call_result, "
        "result_truncated = excluded.result_truncated, result_bytes = excluded.result_bytes, "
        "error_type = excluded.error_type, error_message = excluded.error_message, "
        "finished_at = excluded.finished_at, duration_ms = COALESCE(excluded.duration_ms, "
        "(julianday(excluded.finished_at) - julianday(tool_calls.started_at)) * 86400000.0)"
    ),
    "event": (
        "INSERT INTO events (session_id, event, agent_id, agent_type, payload, decision, "
        "reason, injected_chars, created_at, tenant_id) "
        f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, {_TENANT})"
    ),
    "hook_runs": (
        "INSERT INTO hook_run_sets (session_id, event, tool_call_id, event_id, created_at, "
        "runs, flags) VALUES (?, ?, ?, ?, ?, ?, ?)"
    ),
}
#: one run, as spools written before schema 7 hold it: :func:`execute` makes it a set
SQL["hook_run"] = SQL["hook_runs"]


#: the hot path's first record of a call: no conflict expected (``pre`` is the upsert)
_PRE_INSERT = SQL["pre"].split(" ON CONFLICT", 1)[0]
#: the hot path's finish of a call this writer started, by rowid (``post`` is the upsert);
#: session and call id are checked too, so a stale rowid (a rolled-back insert, a file
#: replaced under the writer) updates nothing and the upsert runs instead
_POST_UPDATE = (
    "UPDATE tool_calls SET final_arguments = ?, status = ?, tool_call_result = ?, "
    "result_truncated = ?, result_bytes = ?, error_type = ?, error_message = ?, "
    "finished_at = ?, duration_ms = coalesce(?, (julianday(?) - julianday(started_at)) "
    "* 86400000.0) WHERE id = ? AND session_id = ? AND tool_call_id = ?"
)
#: rowids of calls this writer started and has not finished yet, at most this many
_ROWIDS_MAX = 10_000
#: SQLite's primary result codes for "another connection holds the lock"
_BUSY_CODES = (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED
#: the retry loop's sleeps, in nanoseconds: 0.5 ms plus up to 1.5 ms of jitter
_SLEEP_MIN_NS = 500_000
_SLEEP_JITTER_NS = 1_500_000


def is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite saying another connection holds the lock."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _BUSY_CODES
    text = str(exc)
    return "locked" in text or "busy" in text


def busy_retry(conn: sqlite3.Connection, sql: str, timeout: float) -> sqlite3.Cursor:
    """``conn.execute(sql)``, tried again after short sleeps while another connection holds
    the lock, for ``timeout`` seconds in all. The sleeps are 0.5-2 ms with jitter (from the
    clock and the pid: ``random`` costs a hook process an import), so waiting writers do
    not wake in step and none sleeps long past the lock's release."""
    try:
        return conn.execute(sql)
    except sqlite3.OperationalError as exc:
        if not is_busy(exc):
            raise
    deadline = time.monotonic() + timeout
    seed = os.getpid() * 2654435761
    while True:
        jitter = (time.perf_counter_ns() ^ seed) % _SLEEP_JITTER_NS
        time.sleep((_SLEEP_MIN_NS + jitter) / 1e9)
        try:
            return conn.execute(sql)
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() >= deadline:
                raise


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back a transaction a failure left open (SQLITE_FULL and friends may have rolled
    it back already; a rollback that fails changes nothing more)."""
    if conn.in_transaction:
        try:  # noqa: SIM105  # contextlib.suppress: contextlib costs a hook 0.5 ms
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass


def begin(conn: sqlite3.Connection, timeout: float) -> None:
    """``BEGIN IMMEDIATE``, waiting up to ``timeout`` seconds for another writer."""
    busy_retry(conn, "BEGIN IMMEDIATE", timeout)


def commit(
    conn: sqlite3.Connection,
    ops: list[Op],
    settle: Settle | None = None,
    *,
    rowids: dict[tuple[str, str], int] | None = None,
    timeout: float = 5.0,
) -> list[Op]:
    """One event's statements in one ``BEGIN IMMEDIATE`` transaction, its session state
    settled first (``settle``, which may make the rows again); the rows written. Strings
    SQLite refuses (lone surrogates: ``UnicodeEncodeError``) are escaped and tried again,
    so the hot path pays nothing for them (:func:`.records.escape_ops`). ``rowids``: the
    writer's calls started and not finished (see :func:`execute`); ``timeout``: seconds
    to wait for another writer."""
    try:
        return transaction(conn, ops, settle, False, rowids, timeout)
    except UnicodeEncodeError:
        return transaction(conn, ops, settle, True, rowids, timeout)


def commit_many(
    conn: sqlite3.Connection,
    items: Sequence[tuple[list[Op], Settle | None]],
    rowids: dict[tuple[str, str], int],
    timeout: float,
) -> list[list[Op]]:
    """Several events' statements in one transaction (group commit), each settled right
    before its own statements, in order; the rows written. Raises when any fails, with
    nothing committed: the caller then writes them one at a time."""
    begin(conn, timeout)
    try:
        done = []
        for ops, settle in items:
            if settle is not None:
                ops = settle(conn, ops)
            execute(conn, ops, rowids)
            done.append(ops)
        conn.execute("COMMIT")
        return done
    except BaseException:
        rollback(conn)
        raise


def transaction(
    conn: sqlite3.Connection,
    ops: list[Op],
    settle: Settle | None,
    escape: bool,
    rowids: dict[tuple[str, str], int] | None = None,
    timeout: float = 5.0,
) -> list[Op]:
    begin(conn, timeout)
    try:
        if settle is not None:
            ops = settle(conn, ops)
        if escape:
            from .records import escape_ops

            ops = escape_ops(ops)
        execute(conn, ops, rowids)
        conn.execute("COMMIT")
        return ops
    except BaseException:
        rollback(conn)
        raise


def execute(
    conn: sqlite3.Connection,
    ops: Sequence[Op],
    rowids: dict[tuple[str, str], int] | None = None,
) -> None:
    """Run one event's statements (its hook runs are one ``hook_runs`` row; a spooled
    ``hook_run``, one run as spools before schema 7 hold it, is made a set of one).

    With ``rowids`` (the live writer's), a ``pre`` is tried as a plain INSERT (the
    upsert when the row is there already) and its rowid kept, and a ``post`` of a call
    kept there is an UPDATE by rowid (the upsert when that updates nothing): one B-tree
    descent and no conflict check on the hot path. Without (a spool's import), the
    upserts, which take a record met again in any order."""
    event_id: int | None = None
    for name, params in ops:
        if name == "hook_runs" or name == "hook_run":
            if name == "hook_run":
                name, params = "hook_runs", from_hook_run(params)
            if params[3] == EVENT_ID:
                params = [*params[:3], event_id, *params[4:]]
            conn.execute(SQL[name], params)
            continue
        if name in _WITH_TENANT:
            params = [*params, params[0]]
        if rowids is not None:
            if name == "pre":
                try:
                    cur = conn.execute(_PRE_INSERT, params)
                except sqlite3.IntegrityError:  # met again: the upsert decides (or refuses)
                    conn.execute(SQL[name], params)
                    continue
                if params[11] == "pending":
                    if len(rowids) >= _ROWIDS_MAX:
                        rowids.clear()
                    rowids[(params[0], params[4])] = cur.lastrowid  # type: ignore[assignment]
                continue
            if name == "post":
                rowid = rowids.pop((params[0], params[4]), None)
                if rowid is not None:
                    p = params
                    cur = conn.execute(
                        _POST_UPDATE,
                        (p[7], p[9], p[10], p[11], p[12], p[13], p[14], p[16], p[17], p[16],
                         rowid, p[0], p[4]),
                    )  # fmt: skip
                    if cur.rowcount == 1:
                        continue
        cur = conn.execute(SQL[name], params)
        if name == "event":
            event_id = cur.lastrowid
