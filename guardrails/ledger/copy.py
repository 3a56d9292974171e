"""``hookrails ledger copy SRC DST``: move a ledger between SQLite and PostgreSQL.

Each table is read in the order it was written and inserted with ``ON CONFLICT DO
NOTHING``, keeping ids (so hook runs keep their events), all in one transaction on the
destination: copying again inserts nothing, and a copy that stops leaves the
destination as it was. Afterwards the rows of every table are counted on both sides:
the destination must hold at least as many as the source (it may hold more: agents may
write to it already), else the copy fails naming the table. PostgreSQL's identities
are moved past the copied ids, so the next event does not collide.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from ..errors import LedgerError
from .common import is_url, safe_url

__all__ = ["TABLES", "CopyReport", "copy_ledger"]

#: what is copied, in an order that keeps references (events before hook runs)
TABLES = (
    "sessions", "tool_calls", "events", "hook_run_sets", "idempotency_keys", "session_state",
)  # fmt: skip
_IDS = ("tool_calls", "events", "hook_run_sets")
_BATCH = 1000


@dataclass
class CopyReport:
    source: str
    dest: str
    #: table -> (rows in the source, rows inserted, rows in the destination after)
    tables: dict[str, tuple[int, int, int]] = field(default_factory=dict)

    def lines(self) -> list[str]:
        out = [f"copied {self.source} -> {self.dest}:"]
        for table, (src, new, dst) in self.tables.items():
            out.append(f"  {table:<17} {src:>8,} rows, {new:>8,} new, {dst:>8,} there now")
        return out


class _Side:
    """One end of a copy: a SQLite file or a PostgreSQL database, the same few calls."""

    def __init__(self, where: str, *, write: bool) -> None:
        self.where = where
        self.pg = is_url(where)
        self.conn: Any
        if self.pg:
            import psycopg

            from .postgres_reader import sqlite_like

            self.conn = psycopg.connect(where, options="-c TimeZone=UTC")
            sqlite_like(self.conn)
        else:
            if not write and not os.path.exists(where):
                raise LedgerError("no ledger here", path=where, kind="missing")
            self.conn = sqlite3.connect(where, isolation_level=None)
            if write:
                self.conn.execute("BEGIN IMMEDIATE")

    @property
    def mark(self) -> str:
        return "%s" if self.pg else "?"

    def columns(self, table: str) -> list[str]:
        if self.pg:
            rows = self.conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = "
                "current_schema() AND table_name = %s ORDER BY ordinal_position",
                (table,),
            ).fetchall()
        else:
            rows = self.conn.execute(f"SELECT name FROM pragma_table_info('{table}')").fetchall()
        return [r[0] for r in rows]

    def count(self, table: str) -> int:
        return int(self.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    def rows(self, table: str, cols: list[str]) -> Any:
        from .postgres_query import ORDER

        cur = self.conn.cursor()
        cur.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY {ORDER[table]}")
        while batch := cur.fetchmany(_BATCH):
            yield batch

    def insert(self, table: str, cols: list[str], batch: list[Any]) -> int:
        marks = ", ".join([self.mark] * len(cols))
        sql = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks}) ON CONFLICT DO NOTHING"
        if self.pg:
            from .postgres_write import storable

            batch = [storable(r) for r in batch]
            cur = self.conn.cursor()
            cur.executemany(sql, batch)
            return int(cur.rowcount)
        before = self.conn.total_changes
        self.conn.executemany(sql, batch)
        return int(self.conn.total_changes - before)

    def after(self, inserted: int) -> None:
        """Move PostgreSQL's identities past the copied ids; on SQLite, rows copied in with
        ids below the rollups' marks would be missed by them: the rollups start over."""
        if self.pg:
            for table in _IDS:
                self.conn.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                    f"greatest((SELECT max(id) FROM {table}), 1))"
                )
        elif inserted:
            from .rollup import invalidate

            invalidate(self.conn)

    def commit(self) -> None:
        self.conn.execute("COMMIT") if not self.pg else self.conn.commit()

    def close(self, ok: bool = False) -> None:
        try:
            if not ok:
                if self.pg:
                    self.conn.rollback()
                elif self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
        finally:
            self.conn.close()


def copy_ledger(source: str, dest: str) -> CopyReport:
    """Copy every row of the ledger ``source`` into ``dest`` (either may be a file or a
    ``postgresql://`` URL); see the module's docstring. ``dest`` is created or migrated
    first (opened as a :class:`~guardrails.Ledger`)."""
    from .sqlite import Ledger

    if source == dest:
        raise LedgerError("source and destination are the same ledger", path=safe_url(dest))
    if not is_url(source) and not os.path.isfile(source):  # opening would make an empty one
        from .query import missing_ledger

        raise missing_ledger(source)
    with Ledger(source) as src_ledger:  # brings an older source up to date, never writes rows
        if src_ledger.degraded:
            raise LedgerError(
                f"cannot open the source ({src_ledger.degraded})", path=safe_url(source)
            )
    with Ledger(dest) as dst_ledger:
        if dst_ledger.degraded:
            raise LedgerError(
                f"cannot open the destination ({dst_ledger.degraded})", path=safe_url(dest)
            )
    report = CopyReport(safe_url(source), safe_url(dest))
    src = _Side(source, write=False)
    try:
        dst = _Side(dest, write=True)
    except BaseException:
        src.close(ok=True)
        raise
    ok = False
    try:
        for table in TABLES:
            cols = [c for c in src.columns(table) if c in set(dst.columns(table))]
            inserted = 0
            for batch in src.rows(table, cols):
                inserted += dst.insert(table, cols, batch)
            report.tables[table] = (src.count(table), inserted, dst.count(table))
        dst.after(sum(new for _, new, _ in report.tables.values()))
        short = [t for t, (n, _, there) in report.tables.items() if there < n]
        if short:
            t = short[0]
            raise LedgerError(
                f"copy check failed: {t} has {report.tables[t][0]} rows in the source but "
                f"{report.tables[t][2]} in the destination (rows conflicting with others "
                "already there); nothing was copied",
                path=safe_url(dest),
            )
        dst.commit()
        ok = True
    except (sqlite3.Error, ValueError) as exc:
        raise LedgerError(f"copy failed: {exc}; nothing was copied", path=safe_url(dest)) from None
    except Exception as exc:
        if isinstance(exc, LedgerError):
            raise
        import psycopg

        if isinstance(exc, psycopg.Error):
            text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise LedgerError(
                f"copy failed: {text}; nothing was copied", path=safe_url(dest)
            ) from None
        raise
    finally:
        dst.close(ok)
        src.close(ok=True)
    return report
