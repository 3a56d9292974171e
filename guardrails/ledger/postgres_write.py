"""The PostgreSQL store's statements, one event's transaction and its session state.

The same named operations as :mod:`.sqlite_write` (what :mod:`.records` makes and the
spool keeps), written for PostgreSQL: ``least()`` for ``min()``, the duration from
``hookrails_julianday()`` (the same double SQLite computes), ``RETURNING id`` for the
event's id, and each call's and event's ``tenant_id`` from its session's row.
:class:`Settle` locks the session's state (an advisory lock on the session and agent,
then ``SELECT ... FOR UPDATE``) from its read to its write.
"""

from __future__ import annotations

from .common import escape_surrogates
from .records import EVENT_ID, from_hook_run
from .session_state import SessionState
from .sqlite_state import Settle as _SqliteSettle
from .sqlite_state import _earlier

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    import psycopg

    from .records import Op

    Conn = psycopg.Connection[tuple[Any, ...]]

__all__ = ["SQL", "Settle", "commit", "escape_ops", "execute", "read_state"]

_TENANT = "(SELECT tenant FROM sessions WHERE session_id = %s)"

SQL: dict[str, str] = {
    "session": (
        "INSERT INTO sessions (session_id, agent_name, tenant, cwd, started_at, last_seen_at) "
        "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (session_id) DO UPDATE SET "
        "last_seen_at = excluded.last_seen_at"
    ),
    "session_end": "UPDATE sessions SET ended_at = %s, end_reason = %s WHERE session_id = %s",
    "pre": (
        "INSERT INTO tool_calls (session_id, agent_name, agent_id, agent_type, tool_call_id, "
        "tool_name, tool_call_arguments, final_arguments, arguments_hash, decision, reason, "
        "status, started_at, finished_at, duration_ms, pid, annotations, tenant_id) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
        f"{_TENANT}) "
        "ON CONFLICT (session_id, tool_call_id) DO UPDATE SET "
        "tool_call_arguments = excluded.tool_call_arguments, "
        "arguments_hash = excluded.arguments_hash, "
        "final_arguments = excluded.final_arguments, decision = excluded.decision, "
        "reason = excluded.reason, pid = excluded.pid, "
        "annotations = coalesce(excluded.annotations, tool_calls.annotations), "
        "started_at = least(tool_calls.started_at, excluded.started_at), "
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
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, 'allow', %s, %s, %s, %s, %s, %s, %s, %s, "
        f"%s::double precision, {_TENANT}) "
        "ON CONFLICT (session_id, tool_call_id) DO UPDATE SET "
        "final_arguments = excluded.final_arguments, status = excluded.status, "
        "tool_call_result = excluded.tool_call_result, "
        "result_truncated = excluded.result_truncated, result_bytes = excluded.result_bytes, "
        "error_type = excluded.error_type, error_message = excluded.error_message, "
        "finished_at = excluded.finished_at, duration_ms = coalesce(excluded.duration_ms, "
        "(hookrails_julianday(excluded.finished_at) - hookrails_julianday(tool_calls.started_at))"
        " * 86400000.0)"
    ),
    "event": (
        "INSERT INTO events (session_id, event, agent_id, agent_type, payload, decision, "
        f"reason, injected_chars, created_at, tenant_id) VALUES (%s, %s, %s, %s, %s, %s, %s, "
        f"%s, %s, {_TENANT}) RETURNING id"
    ),
    "hook_runs": (
        "INSERT INTO hook_run_sets (session_id, event, tool_call_id, event_id, created_at, "
        "runs, flags) VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s)"
    ),
}
#: one run, as spools written before schema 7 hold it: :func:`execute` makes it a set
SQL["hook_run"] = SQL["hook_runs"]
#: operations whose statement ends with the session's tenant, looked up by session id
_WITH_TENANT = frozenset({"pre", "post", "event"})


def escape_ops(ops: list[Op]) -> list[Op]:
    """``ops`` with what PostgreSQL cannot hold in text made storable (:func:`storable`)."""
    return [(name, storable(params)) for name, params in ops]


def execute(conn: Conn, ops: Sequence[Op]) -> None:
    """Run one event's statements (its hook runs are one ``hook_runs`` row; a spooled
    ``hook_run``, one run as spools before schema 7 hold it, is made a set of one)."""
    event_id: int | None = None
    cur = conn.cursor()
    for name, params in ops:
        if name == "hook_runs" or name == "hook_run":
            if name == "hook_run":
                name, params = "hook_runs", from_hook_run(params)
            if params[3] == EVENT_ID:
                params = [*params[:3], event_id, *params[4:]]
            cur.execute(SQL[name], params)
            continue
        if name in _WITH_TENANT:
            params = [*params, params[0]]
        cur.execute(SQL[name], params)
        if name == "event":
            row = cur.fetchone()
            event_id = None if row is None else int(row[0])


def commit(conn: Conn, ops: list[Op], settle: Settle | None = None) -> list[Op]:
    """One event's statements in one transaction, its session state settled first; the
    rows written. Text PostgreSQL refuses (a lone surrogate, a NUL) is escaped and the
    transaction tried again, so the usual event pays nothing for it."""
    import psycopg

    try:
        return _transaction(conn, ops, settle, False)
    except (UnicodeEncodeError, psycopg.DataError):
        return _transaction(conn, ops, settle, True)


def _transaction(conn: Conn, ops: list[Op], settle: Settle | None, escape: bool) -> list[Op]:
    with conn.transaction():
        if settle is not None:
            ops = settle(conn, ops)
        if escape:
            ops = escape_ops(ops)
        execute(conn, ops)
    return ops


# --- session state ------------------------------------------------------------------------

_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"
_READ = (
    "SELECT turn, halted, injected_chars, prompt_id, earlier_prompts FROM session_state "
    "WHERE session_id = %s AND agent_name = %s"
)
_WRITE = (
    "INSERT INTO session_state (session_id, agent_name, turn, turn_started_at, halted, "
    "injected_chars, prompt_id, earlier_prompts, updated_at) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
    "ON CONFLICT (session_id, agent_name) DO UPDATE SET turn = excluded.turn, "
    "turn_started_at = coalesce(excluded.turn_started_at, session_state.turn_started_at), "
    "halted = excluded.halted, injected_chars = excluded.injected_chars, "
    "prompt_id = excluded.prompt_id, earlier_prompts = excluded.earlier_prompts, "
    "updated_at = excluded.updated_at"
)


def storable(params: Sequence[Any]) -> list[Any]:
    """``params`` with lone surrogates (UTF-8 cannot encode them) and NUL characters (text
    cannot hold them) as their JSON escapes."""
    return [
        escape_surrogates(p).replace("\x00", "\\u0000") if type(p) is str else p for p in params
    ]


def read_state(
    conn: Conn, session_id: str, agent: str, *, lock: bool = False
) -> SessionState | None:
    """The state of ``session_id`` for ``agent`` (None: none yet); ``lock``: inside a
    transaction, hold the session's state until it ends (also while it has no row yet)."""
    params = storable((session_id, agent))
    if lock:
        conn.execute(_LOCK, (f"{params[0]}\x1f{params[1]}",))
    row = conn.execute(_READ + (" FOR UPDATE" if lock else ""), params).fetchone()
    if row is None:
        return None
    return SessionState(row[0], row[1], row[2], row[3], _earlier(row[4]))


class Settle(_SqliteSettle):
    """:class:`.sqlite_state.Settle` with the row locked: a transaction-scoped advisory
    lock on (session, agent) covers a state that has no row yet, ``FOR UPDATE`` the row."""

    __slots__ = ()

    def read(self, conn: Any, session_id: str, agent: str) -> SessionState | None:
        return read_state(conn, session_id, agent, lock=True)

    def write(self, conn: Any, params: tuple[Any, ...]) -> None:
        conn.execute(_WRITE, storable(params))
