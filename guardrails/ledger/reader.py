"""The read side: read-only connections, and :class:`LedgerReader` with the named
queries hooks and the rest of hookrails ask.

Every hook context of a Guard with a ledger holds a reader (``ctx.ledger``), so this
module imports no more than the writer does; the connection opens on the first query.
"""

from __future__ import annotations

import os
import sqlite3
from _thread import allocate_lock as _new_lock  # threading.Lock, without threading

from ..errors import LedgerError
from .common import error_kind

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any

__all__ = ["EXAMPLE_QUERY", "HOOK_OUTCOMES", "STATS", "LedgerReader", "connect_readonly"]

_READ_ONLY_OPS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    sqlite3.SQLITE_RECURSIVE,
}


def _authorizer(
    action: int, arg1: str | None, arg2: str | None, db: str | None, src: str | None
) -> int:
    if action in _READ_ONLY_OPS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and arg1 in ("table_info", "table_xinfo", "index_list"):
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_UPDATE and arg1 == "sqlite_master" and src is None:
        # SQLite asks this while it declares a table-valued function's columns (json_each,
        # which the hook_runs view reads); sqlite_master itself cannot be written (mode=ro,
        # and no writable_schema)
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def connect_readonly(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """A connection that can only read: opened ``mode=ro`` and with an authorizer
    that refuses writes, ATTACH and PRAGMAs, so a query cannot change anything."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise LedgerError("no ledger here yet", path=path, kind="missing")
    from urllib.parse import quote

    try:
        conn = sqlite3.connect(
            f"file:{quote(os.path.abspath(path))}?mode=ro", uri=True, check_same_thread=False
        )
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise LedgerError(
            f"cannot read the ledger: {exc}", path=path, kind=error_kind(exc)
        ) from None
    conn.set_authorizer(_authorizer)
    return conn


# --- named queries (what the rest of hookrails asks, so its SQL stays here) -------------

#: decisions on one event of a session and agent, newest first
_EVENT_DECISIONS = (
    "select decision from events where session_id = ? and event = ? "
    "and coalesce(agent_id, '') = ? order by id desc limit ?"
)
#: one hook's latest outcomes on one stop event, newest first (skipped runs ignored);
#: ``{same}``: the engine's comparison that holds for two NULLs (the main agent's None)
HOOK_OUTCOMES = (
    "SELECT h.outcome FROM events e JOIN hook_runs h ON h.event_id = e.id "
    "WHERE e.session_id = ? AND e.event = ? AND h.tool_call_id IS NULL AND h.hook = ? "
    "AND e.agent_id {same} ? AND h.event_id IS NOT NULL AND h.outcome != 'skipped' "
    "ORDER BY e.id DESC LIMIT ?"
)
#: SQLite's
_HOOK_OUTCOMES = HOOK_OUTCOMES.format(same="IS")
_SUCCEEDED_TOOLS = (
    "SELECT DISTINCT tool_name FROM tool_calls WHERE session_id = ? AND status = 'ok'"
)
_COUNT_INJECTED = (
    "SELECT count(*) FROM tool_calls AS t WHERE t.session_id = ? AND t.tool_name = ? "
    "AND t.arguments_hash = ? AND t.status = 'ok' AND EXISTS (SELECT 1 FROM hook_runs AS h "
    "WHERE h.session_id = t.session_id AND h.tool_call_id = t.tool_call_id AND h.flags != 0 "
    "AND h.hook = ? AND h.outcome = 'inject')"
)
_SESSION_TOTALS = (
    "SELECT tool_name, sum(status != 'denied') AS n, max(id) AS last_id FROM tool_calls "
    "WHERE session_id = ? GROUP BY tool_name"
)
_SESSION_CALLS = "SELECT id, tool_call_id, tool_name, status FROM tool_calls WHERE session_id = ?"
#: ``+session_id``: walk the rowids after the last one seen, not the session's index
_SESSION_CALLS_SINCE = (
    "SELECT id, tool_call_id, tool_name, status FROM tool_calls WHERE +session_id = ? AND id > ?"
)
_SESSION_CALL_COUNTS = """\
select coalesce(agent_type, 'main') as agent, tool_name, status, count(*) as calls
from tool_calls where session_id = :session
group by 1, 2, 3 order by agent != 'main', 1, 2, 3"""
_SESSION_STOPS = """\
select event, decision, count(*) as times from events
where session_id = :session and event in ('SubagentStop', 'AgentStop')
group by 1, 2 order by 1, 2"""
_SESSION_REFUSALS = """\
select hook, outcome, count(*) as times from hook_runs
where session_id = :session and flags != 0 and outcome in ('deny', 'block', 'ask')
group by 1, 2 order by 1, 2"""
#: an ad-hoc query to suggest (``hookrails demo`` prints it with ``-p session ID``)
EXAMPLE_QUERY = (
    "select tool_name, status, count(*) from tool_calls where session_id = :session group by 1, 2"
)
#: a denied call's first denying (or failing) hook run, as the denials view finds it
FIRST_DENIAL = (
    "(SELECT r.value FROM hook_run_sets AS s, json_each(s.runs) AS r "
    "WHERE s.session_id = {c}.session_id AND s.tool_call_id = {c}.tool_call_id "
    "AND s.flags != 0 AND r.value ->> 3 IN ('deny', 'error', 'timeout', 'invalid', 'refused') "
    "ORDER BY s.id, r.key LIMIT 1)"
)
#: rows of each table ``stats`` folds into the rollups before it reads
STATS_REFRESH = 100_000
#: what ``GET /v1/stats`` of ``hookrails serve`` shows, in order (``:limit`` bound)
STATS: dict[str, str] = {
    "calls_by_status": (  # the rollup and the calls after its mark, not every row
        "WITH c AS MATERIALIZED (SELECT sum(calls) AS calls, sum(ok) AS ok, "
        "sum(denials) AS denied, sum(errors) AS error, sum(interrupted) AS interrupted FROM ("
        "SELECT calls, ok, denials, errors, interrupted FROM tool_rollup UNION ALL "
        "SELECT new, status = 'ok', status = 'denied', status = 'error', "
        "status = 'interrupted' FROM (SELECT status, 1 AS new FROM tool_calls "
        "WHERE id > (SELECT last_id FROM rollup_marks WHERE name = 'tool_calls') UNION ALL "
        "SELECT c.status, 0 FROM rollup_pending AS p CROSS JOIN tool_calls AS c "
        "ON c.id = p.id WHERE c.status != 'pending'))) "
        "SELECT status, calls FROM (SELECT 'ok' AS status, ok AS calls FROM c "
        "UNION ALL SELECT 'denied', denied FROM c UNION ALL SELECT 'error', error FROM c "
        "UNION ALL SELECT 'interrupted', interrupted FROM c UNION ALL SELECT 'pending', "
        "calls - ok - denied - error - interrupted FROM c) WHERE calls > 0 "
        "ORDER BY calls DESC, status"
    ),
    "tools": (
        "SELECT tool_name, calls, ok, denials, errors, interrupted, p50_ms, p95_ms, avg_ms, "
        "last_called_at FROM tool_stats LIMIT :limit"
    ),
    "denials_by_hook": (  # the rollup and the denials after its mark, not every denial
        "SELECT nullif(hook, '') AS hook, nullif(matcher, '') AS matcher, "
        "nullif(hook_outcome, '') AS hook_outcome, sum(denials) AS denials, "
        "max(last_at) AS last_at FROM (SELECT hook, matcher, hook_outcome, denials, last_at "
        "FROM denial_rollup UNION ALL SELECT coalesce(run ->> 0, ''), coalesce(run ->> 1, ''), "
        "coalesce(run ->> 3, ''), 1, started_at FROM (SELECT d.started_at, "
        + FIRST_DENIAL.format(c="d")
        + " AS run FROM tool_calls AS d WHERE d.id > (SELECT last_id FROM rollup_marks "
        "WHERE name = 'tool_calls') AND d.status = 'denied')) "
        "GROUP BY 1, 2, 3 ORDER BY denials DESC, hook LIMIT :limit"
    ),
    "events": (
        "SELECT event, decision, count(*) AS count FROM events GROUP BY event, decision "
        "ORDER BY event, decision"
    ),
    "recent_sessions": "SELECT * FROM session_summary LIMIT :limit",
    "slow_hooks": "SELECT * FROM slow_hooks LIMIT :limit",
}


def _leading(rows: list[dict[str, Any]], column: str, value: str) -> int:
    """How many rows from the first have ``column == value``, without a break."""
    n = 0
    for row in rows:
        if row[column] != value:
            break
        n += 1
    return n


class LedgerReader:
    """Read access for hooks: ``ctx.ledger.succeeded("run_tests", ctx.session_id)``.

    It sees what earlier events committed, never the event being decided. Every
    method raises :class:`~guardrails.LedgerError` when the file cannot be read.
    """

    #: ``tool_name`` matched against a GLOB parameter, in this engine's SQL
    _TOOL_GLOB = "tool_name GLOB ?"
    _HOOK_OUTCOMES = _HOOK_OUTCOMES

    def __init__(self, path: str) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        # hooks may run in worker threads (the async core runs sync hooks off the loop)
        self._lock = _new_lock()

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = connect_readonly(self.path)
            self._conn.row_factory = sqlite3.Row
        return self._conn

    def close(self) -> None:
        """Close the connection (a query opens a new one): after the file was replaced,
        the next query reads the new file."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[dict[str, Any]]:
        """Run one read-only statement: its rows as dicts."""
        try:
            with self._lock:
                return [dict(row) for row in self._connection().execute(sql, params)]
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"query failed: {exc}", path=self.path, kind="query") from None

    def value(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        """The first column of the first row (None without rows)."""
        rows = self.query(sql, params)
        return next(iter(rows[0].values())) if rows else None

    def succeeded(self, tool: str, session_id: str) -> bool:
        """Did a call of ``tool`` (a GLOB, e.g. ``run_*``) finish ``ok`` in this session?"""
        return bool(
            self.value(
                "SELECT EXISTS (SELECT 1 FROM tool_calls WHERE session_id = ? "
                f"AND {self._TOOL_GLOB} AND status = 'ok')",
                (session_id, tool),
            )
        )

    def calls(
        self, session_id: str, tool: str = "*", status: str | None = None
    ) -> list[dict[str, Any]]:
        sql = f"SELECT * FROM tool_calls WHERE session_id = ? AND {self._TOOL_GLOB}"
        params: list[Any] = [session_id, tool]
        if status is not None:
            sql += " AND status = ?"
            params.append(status)
        return self.query(sql + " ORDER BY id", params)

    def count_failures(self, session_id: str, tool: str, arguments_hash: str) -> int:
        """How often this exact input of ``tool`` already failed or was denied here."""
        return int(
            self.value(
                "SELECT count(*) FROM tool_calls WHERE session_id = ? AND tool_name = ? "
                "AND arguments_hash = ? AND status IN ('error', 'denied')",
                (session_id, tool, arguments_hash),
            )
            or 0
        )

    def count_injected(self, session_id: str, tool: str, arguments_hash: str, hook: str) -> int:
        """How many calls of this exact input of ``tool`` finished ``ok`` and had ``hook``
        inject text after them (``schema_nudge``: earlier nudges for the same input)."""
        return int(self.value(_COUNT_INJECTED, (session_id, tool, arguments_hash, hook)) or 0)

    def succeeded_tools(self, session_id: str) -> list[str]:
        """The names of the tools with a call that finished ``ok`` in this session."""
        return [r["tool_name"] for r in self.query(_SUCCEEDED_TOOLS, (session_id,))]

    def stop_blocks_in_a_row(
        self, session_id: str, event_name: str, agent_id: str | None, limit: int
    ) -> int:
        """How many of the latest ``event_name`` events of this session and agent (None:
        the main agent) were blocked in a row, newest first; at most ``limit``."""
        rows = self.query(_EVENT_DECISIONS, [session_id, event_name, agent_id or "", limit])
        return _leading(rows, "decision", "block")

    def hook_blocks_in_a_row(
        self, session_id: str, event_name: str, hook: str, agent_id: str | None, limit: int
    ) -> int:
        """How many of ``hook``'s latest runs (not skipped) on ``event_name`` events of this
        session and agent blocked in a row, newest first; at most ``limit``."""
        rows = self.query(self._HOOK_OUTCOMES, (session_id, event_name, hook, agent_id, limit))
        return _leading(rows, "outcome", "block")

    def session_tool_totals(self, session_id: str) -> list[dict[str, Any]]:
        """Per tool of this session: ``tool_name``, ``n`` (calls not denied) and
        ``last_id`` (its newest ``tool_calls.id``)."""
        return self.query(_SESSION_TOTALS, (session_id,))

    def session_calls(self, session_id: str, after_id: int | None = None) -> list[dict[str, Any]]:
        """This session's calls (after ``tool_calls.id`` ``after_id``, when given):
        ``id``, ``tool_call_id``, ``tool_name``, ``status``."""
        if after_id is None:
            return self.query(_SESSION_CALLS, (session_id,))
        return self.query(_SESSION_CALLS_SINCE, (session_id, after_id))

    def has_session(self, session_id: str) -> bool:
        """Whether this session has a ``sessions`` row (it was recorded, live or replayed)."""
        return bool(
            self.value("SELECT EXISTS (SELECT 1 FROM sessions WHERE session_id = ?)", (session_id,))
        )

    def session_call_counts(self, session_id: str) -> list[dict[str, Any]]:
        """Calls per agent (``main`` or the subagent type), tool and status."""
        return self.query(_SESSION_CALL_COUNTS, {"session": session_id})

    def session_stop_decisions(self, session_id: str) -> list[dict[str, Any]]:
        """How often each stop event (``AgentStop``, ``SubagentStop``) got each decision."""
        return self.query(_SESSION_STOPS, {"session": session_id})

    def session_hook_refusals(self, session_id: str) -> list[dict[str, Any]]:
        """How often each hook denied, blocked or asked."""
        return self.query(_SESSION_REFUSALS, {"session": session_id})

    #: the sections of :meth:`stats` (a store without rollups names its own)
    stats_queries = STATS

    def refresh_rollups(self, limit: int | None = None) -> int:
        """Fold the rows recorded since the last refresh into the aggregate views' rollups
        (``rollup.py``; a writable connection of its own, at most ``limit`` rows of each
        table); 0 when the file cannot be written now: the views stay exact, only slower."""
        from .rollup import refresh_file

        return refresh_file(self.path, limit)

    def stats(self, limit: int) -> Iterator[tuple[str, list[dict[str, Any]]]]:
        """``(section, rows)`` of :data:`STATS`, in order, each at most ``limit`` rows
        where it has a limit; a section that fails raises, the earlier ones stand. The
        aggregate views' rollups are moved forward first (at most :data:`STATS_REFRESH` rows:
        a server's stats stay bounded after the rollups were emptied)."""
        self.refresh_rollups(STATS_REFRESH)
        from concurrent.futures import ThreadPoolExecutor

        sections = list(self.stats_queries.items())
        params = {"limit": limit}
        # side by side, each on a connection of its own: SQLite releases the GIL while a
        # statement runs, so the sections' reads overlap on every core
        with ThreadPoolExecutor(max_workers=min(len(sections), os.cpu_count() or 1)) as pool:
            pending = [pool.submit(self._section, sql, params) for _, sql in sections]
            for (key, _), rows in zip(sections, pending, strict=True):
                yield key, rows.result()

    def _section(self, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """One section of :meth:`stats`, on a read-only connection of its own."""
        try:
            conn = connect_readonly(self.path)
        except LedgerError:
            return self.query(sql, params)
        try:
            conn.row_factory = sqlite3.Row
            return [dict(row) for row in conn.execute(sql, params)]
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"query failed: {exc}", path=self.path, kind="query") from None
        finally:
            conn.close()
