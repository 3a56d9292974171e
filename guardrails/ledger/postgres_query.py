"""``hookrails ledger`` on a PostgreSQL ledger: query, views, status, tail, export, prune.

:mod:`.query` and :mod:`.admin` hand a ``postgresql://`` location here. Reads run on
read-only connections that answer as SQLite does (:mod:`.postgres_reader`); ``query``
runs one prepared statement in a ``READ ONLY`` transaction with a statement timeout;
``tail --follow`` waits for ``LISTEN hookrails_ledger`` (the ``tool_calls`` trigger
notifies at each commit) and looks at least every ``interval`` seconds anyway.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..errors import LedgerError
from .common import safe_url
from .postgres_reader import _first_line, connect, readonly_cursor

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "ORDER",
    "catalog_views",
    "export_rows",
    "prune",
    "run_query",
    "status",
    "tail_rows",
]

#: each table's rows in the order they were written (what export and copy follow)
ORDER = {
    "sessions": "started_at, session_id",
    "tool_calls": "id",
    "events": "id",
    "hook_runs": "id",
    "hook_run_sets": "id",
    "idempotency_keys": "created_at, key",
    "session_state": "session_id, agent_name",
}


def _error(exc: BaseException) -> LedgerError:
    import psycopg

    text = _first_line(exc)
    if isinstance(
        exc, psycopg.errors.ReadOnlySqlTransaction | psycopg.errors.InsufficientPrivilege
    ):
        return LedgerError(f"ledger queries are read-only: {text}", kind="query")
    if "query parameter missing" in text:
        name = text.rsplit(":", 1)[-1].strip()
        return LedgerError(f"missing query parameter :{name} (-p {name} VALUE)", kind="query")
    if "should be a sequence" in text or "positional" in text:
        return LedgerError(
            "positional ? parameters are not supported; name them (:name) and pass -p name VALUE",
            kind="query",
        )
    return LedgerError(f"query failed: {text}", kind="query")


def _timeout_error(limit: float) -> LedgerError:
    return LedgerError(
        f"query stopped after {limit:g} s, the --timeout limit (PostgreSQL's statement_timeout); "
        "raise it with --timeout SECONDS, or --timeout 0 for no limit",
        kind="query",
    )


def run_query(
    url: str, sql: str, params: dict[str, Any], timeout: float | None
) -> tuple[list[str], Iterator[tuple[Any, ...]]]:
    """Columns and a stream of rows of one read-only statement."""
    import psycopg

    conn = connect(url)
    try:
        cur = readonly_cursor(conn, sql, params, timeout)
    except psycopg.errors.QueryCanceled:
        conn.close()
        raise _timeout_error(timeout or 0) from None
    except psycopg.Error as exc:
        conn.close()
        raise _error(exc) from None
    except BaseException:
        conn.close()
        raise
    columns = [d.name for d in cur.description or ()]
    return columns, _stream(conn, cur, timeout)


def _stream(conn: Any, cur: Any, timeout: float | None) -> Iterator[tuple[Any, ...]]:
    import psycopg

    try:
        while True:
            try:
                batch = cur.fetchmany(500)
            except psycopg.errors.QueryCanceled:
                raise _timeout_error(timeout or 0) from None
            except psycopg.Error as exc:
                raise _error(exc) from None
            if not batch:
                return
            yield from (tuple(r) for r in batch)
    finally:
        conn.close()


def catalog_views(url: str) -> dict[str, tuple[str, ...]]:
    """Each view of the ledger with its columns, by name."""
    conn = connect(url)
    try:
        out = {}
        for name in _view_names(conn):
            cur = conn.execute(f'SELECT * FROM "{name}" LIMIT 0')
            out[name] = tuple(d.name for d in cur.description or ())
        return out
    finally:
        conn.close()


def _view_names(conn: psycopg.Connection[Any]) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT table_name FROM information_schema.views "
            "WHERE table_schema = current_schema() ORDER BY table_name"
        )
    ]


def status(url: str, tables: tuple[str, ...]) -> dict[str, Any]:
    """Schema version, rows per table, views and the database's size."""
    import psycopg

    from .postgres_schema import schema_version

    conn = connect(url)
    try:
        version = schema_version(conn)
        present = [
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = "
                "current_schema() AND table_type = 'BASE TABLE' "
                "AND table_name NOT LIKE '\\_hookrails%%' ORDER BY table_name"
            )
        ]
        ordered = [t for t in tables if t in present] + [t for t in present if t not in tables]
        counts = {
            t: int(conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0])  # type: ignore[index]
            for t in ordered
        }
        size = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        views = _view_names(conn)
        conn.rollback()
    except psycopg.Error as exc:
        raise unreadable(url, exc) from None
    finally:
        conn.close()
    return {
        "version": version,
        "tables": counts,
        "views": views,
        "size": int(size[0]) if size else 0,
    }


def export_rows(url: str, table: str) -> tuple[list[str], Iterator[tuple[Any, ...]]]:
    return run_query(url, f"SELECT * FROM {table} ORDER BY {ORDER[table]}", {}, None)


def unreadable(url: str, exc: Exception) -> LedgerError:
    """What a failed read of the ledger at ``url`` says: a database without hookrails'
    tables is not a ledger yet, which the user can do something about."""
    import psycopg

    if isinstance(exc, psycopg.errors.UndefinedTable):
        return LedgerError(
            "no hookrails ledger in this database yet (a Guard or `hookrails serve` recording "
            "into it creates its tables with its first event; or choose another with --ledger "
            "or $HOOKRAILS_LEDGER)",
            path=safe_url(url),
            kind="missing",
        )
    return LedgerError(f"cannot read the ledger: {_first_line(exc)}", path=safe_url(url))


def tail_rows(
    url: str,
    columns: str,
    n: int,
    *,
    follow: bool,
    interval: float,
    stop: Callable[[], bool] | None,
    max_polls: int | None,
    make: Callable[[tuple[Any, ...]], Any],
) -> Iterator[Any]:
    """``tail``'s calls: the latest ``n``, then (``follow``) each new or finished one, woken
    by ``NOTIFY hookrails_ledger`` or after ``interval`` seconds at the latest."""
    import psycopg

    conn = connect(url)
    listener = None
    try:
        try:
            rows = conn.execute(
                f"SELECT {columns} FROM tool_calls ORDER BY id DESC LIMIT %s", (n,)
            ).fetchall()
            last = conn.execute("SELECT coalesce(max(id), 0) FROM tool_calls").fetchone()
            last_id = int(last[0]) if last else 0
            conn.rollback()
            if follow:
                listener = psycopg.connect(url, autocommit=True, application_name="hookrails-tail")
                listener.execute("LISTEN hookrails_ledger")
        except psycopg.Error as exc:
            raise unreadable(url, exc) from None
        pending: set[int] = set()
        for row in reversed(rows):
            call = make(row)
            if call.status == "pending":
                pending.add(call.id)
            yield call
        polls = 0
        while follow and listener is not None and not (stop is not None and stop()):
            if max_polls is not None and polls >= max_polls:
                return
            for _ in listener.notifies(timeout=interval, stop_after=1):
                pass
            time.sleep(0.01)  # let a burst of commits land together
            polls += 1
            try:
                new = conn.execute(
                    f"SELECT {columns} FROM tool_calls WHERE id > %s ORDER BY id", (last_id,)
                ).fetchall()
                done = []
                if pending:
                    done = conn.execute(
                        f"SELECT {columns} FROM tool_calls WHERE id = ANY(%s) "
                        "AND status <> 'pending' ORDER BY id",
                        (sorted(pending),),
                    ).fetchall()
                conn.rollback()
            except psycopg.Error as exc:
                raise unreadable(url, exc) from None
            for row in done:
                call = make(row)
                pending.discard(call.id)
                yield call
            for row in new:
                call = make(row)
                last_id = max(last_id, call.id)
                if call.status == "pending":
                    pending.add(call.id)
                yield call
    finally:
        conn.close()
        if listener is not None:
            listener.close()


def prune(
    url: str,
    conditions: dict[str, str],
    cutoff: str,
    dry_run: bool,
    check: Callable[[int, set[str]], None],
) -> dict[str, int]:
    """Delete (or, ``dry_run``, count) each table's rows matching its condition, in one
    transaction, in the order given; rows per table. ``check(version, tables)`` refuses a
    database that is not a ledger this hookrails may prune (it raises), before anything."""
    import psycopg

    from .postgres_reader import translate
    from .postgres_schema import schema_version

    try:
        with psycopg.connect(url, options="-c TimeZone=UTC") as conn:
            present = {
                str(r[0])
                for r in conn.execute(
                    "SELECT table_name FROM information_schema.tables "
                    "WHERE table_schema = current_schema()"
                )
            }
            check(schema_version(conn), present)
            counts = {}
            for table, condition in conditions.items():
                where = translate(condition)
                if dry_run:
                    row = conn.execute(
                        f"SELECT count(*) FROM {table} WHERE {where}", {"cutoff": cutoff}
                    ).fetchone()
                    counts[table] = int(row[0]) if row else 0
                else:
                    cur = conn.execute(f"DELETE FROM {table} WHERE {where}", {"cutoff": cutoff})
                    counts[table] = int(cur.rowcount)
            if dry_run:
                conn.rollback()
            return counts
    except psycopg.Error as exc:
        raise LedgerError(f"prune failed: {_first_line(exc)}", path=safe_url(url)) from None
