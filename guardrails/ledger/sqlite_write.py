"""The SQLite store's statements and one event's transaction.

Statements are named so the spool can store a name and parameters and a later
``recover()`` runs them again (:mod:`.sqlite_recover`).
"""

from __future__ import annotations

import sqlite3

from .records import EVENT_ID

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from .records import Op
    from .sqlite_state import Settle

__all__ = ["SQL", "commit", "execute", "transaction"]

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
    "hook_run": (
        "INSERT INTO hook_runs (session_id, event, tool_call_id, event_id, hook, matcher, "
        "priority, outcome, duration_ms, error, injected_chars, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ),
}


def commit(conn: sqlite3.Connection, ops: list[Op], settle: Settle | None = None) -> list[Op]:
    """One event's statements in one ``BEGIN IMMEDIATE`` transaction, its session state
    settled first (``settle``, which may make the rows again); the rows written. Strings
    SQLite refuses (lone surrogates: ``UnicodeEncodeError``) are escaped and tried again,
    so the hot path pays nothing for them (:func:`.records.escape_ops`)."""
    try:
        return transaction(conn, ops, settle, False)
    except UnicodeEncodeError:
        return transaction(conn, ops, settle, True)


def transaction(
    conn: sqlite3.Connection, ops: list[Op], settle: Settle | None, escape: bool
) -> list[Op]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        if settle is not None:
            ops = settle(conn, ops)
        if escape:
            from .records import escape_ops

            ops = escape_ops(ops)
        execute(conn, ops)
        conn.execute("COMMIT")
        return ops
    except BaseException:
        if conn.in_transaction:
            try:  # noqa: SIM105  # contextlib.suppress: contextlib costs a hook 0.5 ms
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
        raise


def execute(conn: sqlite3.Connection, ops: Sequence[Op]) -> None:
    """Run one event's statements; its hook runs go in one ``executemany``."""
    event_id: int | None = None
    runs: list[list[Any]] = []
    for name, params in ops:
        if name == "hook_run":
            if params[3] == EVENT_ID:
                params = [*params[:3], event_id, *params[4:]]
            runs.append(params)
            continue
        if name in _WITH_TENANT:
            params = [*params, params[0]]
        cur = conn.execute(SQL[name], params)
        if name == "event":
            event_id = cur.lastrowid
    if runs:
        conn.executemany(SQL["hook_run"], runs)
