"""Reading a ledger the way another process would: a connection of its own (a SQLite file,
or a PostgreSQL URL, read so it answers as the file does: ISO text times, JSON as text).
What ``hookrails hook`` processes journaled is imported first, as every hookrails reader
does (``guardrails.ledger.journal``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any


def rows(path: str | Path, sql: str, *params: Any) -> list[dict[str, Any]]:
    if isinstance(path, str) and path.startswith("postgresql://"):
        return _pg_rows(path, sql, params)
    catch_up(path)
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


def catch_up(path: str | Path) -> None:
    """Import what hook processes journaled, as every hookrails reader does first."""
    from guardrails.ledger.journal import waiting
    from guardrails.ledger.journal_import import import_pending

    if waiting(str(path)):
        import_pending(str(path))


def _pg_rows(url: str, sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
    import psycopg
    from psycopg.rows import dict_row

    from guardrails.ledger.postgres_reader import sqlite_like, translate

    with psycopg.connect(url, options="-c TimeZone=UTC", autocommit=True) as conn:
        sqlite_like(conn)
        cur = conn.cursor(row_factory=dict_row)
        cur.execute(translate(sql), params or None)
        return list(cur.fetchall()) if cur.description else []


def execute(path: str | Path, sql: str, *params: Any) -> None:
    """Run one writing statement on the ledger (a test setting the scene)."""
    if isinstance(path, str) and path.startswith("postgresql://"):
        _pg_rows(path, sql, params)
        return
    catch_up(path)
    conn = sqlite3.connect(path)
    try:
        conn.execute(sql, params)
        conn.commit()
    finally:
        conn.close()


def value(path: str | Path, sql: str, *params: Any) -> Any:
    found = rows(path, sql, *params)
    return next(iter(found[0].values())) if found else None


def records(path: str | Path) -> list[str]:
    """The records a spool or journal file holds, one line each (each record is written
    after a blank line, so a line torn before it stays apart: ``journal.line_of``)."""
    return [x for x in Path(path).read_text(encoding="utf-8").splitlines() if x.strip()]
