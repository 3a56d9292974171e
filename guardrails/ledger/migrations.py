"""The ledger's schema: forward-only named migrations and the views, from ``sql/``.

``sql/migrations/NNNN_name.sql`` run in order, each in its own transaction, and
``PRAGMA user_version`` says how far a file has come; the views are recreated with
every migration. :func:`latest_version` reads only the folder listing, because every
hook process asks it when it opens the file.

PostgreSQL has its own files (``sql/postgres/migrations``, ``sql/postgres/views``, and
``sql/postgres/queries`` for the saved queries whose SQL must differ), numbered together
with SQLite's: both dialects have the same migration names (:func:`check_dialects`), and
:mod:`.postgres_schema` applies them.
"""

from __future__ import annotations

import functools
import os
import re
import sqlite3
import time

from .._dataclass_free import record
from ..errors import LedgerError
from .common import iso_time

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Iterator
    from dataclasses import Field
    from pathlib import Path
    from typing import Any, ClassVar

__all__ = [
    "DIALECTS",
    "SQL_DIR",
    "Migration",
    "apply_migrations",
    "check_dialects",
    "dialect_folder",
    "latest_version",
    "migrations",
    "schema_sql",
    "statements",
    "views",
]

#: the ledger's SQL (migrations, views, saved queries): data inside this package
SQL_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sql")
_MIGRATIONS_TABLE = "_hookrails_migrations"
_MIGRATION_NAME = re.compile(r"(\d{4})_(\w+)\.sql")
#: views other views are written over, so created first
_READ_BY_VIEWS = frozenset({"hook_runs"})


@record(frozen=True)
class Migration:
    if TYPE_CHECKING:
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    number: int
    name: str
    sql: str

    def __init__(self, number: int, name: str, sql: str) -> None:
        object.__setattr__(self, "number", number)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "sql", sql)


#: the SQL dialects, and where each one's files are under :data:`SQL_DIR`
DIALECTS = {"sqlite": "", "postgres": "postgres"}


def dialect_folder(kind: str, dialect: str = "sqlite") -> str:
    """``sql/KIND`` (SQLite) or ``sql/postgres/KIND``: migrations, views or queries."""
    return os.path.join(SQL_DIR, DIALECTS[dialect], kind)


def _migration_folder(dialect: str = "sqlite") -> str:
    return dialect_folder("migrations", dialect)


def _migration_files(dialect: str = "sqlite") -> list[tuple[re.Match[str], Path]]:
    """``(name match, path)`` of each migration file, in order; nothing is read."""
    from pathlib import Path

    folder = Path(_migration_folder(dialect))
    return [
        (m, folder / entry)
        for entry in sorted(os.listdir(folder))
        if (m := _MIGRATION_NAME.fullmatch(entry))
    ]


def migrations(dialect: str = "sqlite") -> list[Migration]:
    """Forward-only migrations from ``ledger/migrations/NNNN_name.sql``, in order (read
    once a process: they are this package's files)."""
    found = _read_migrations(dialect)
    numbers = [m.number for m in found]
    if numbers != list(range(1, len(found) + 1)):
        raise LedgerError(f"migrations are not numbered 0001.. without gaps: {numbers}")
    return list(found)


@functools.cache
def _read_migrations(dialect: str) -> tuple[Migration, ...]:
    return tuple(
        Migration(int(m.group(1)), m.group(2), path.read_text(encoding="utf-8"))
        for m, path in _migration_files(dialect)
    )


def latest_version(dialect: str = "sqlite") -> int:
    """The newest schema version, from the migration file names alone (no reading, and
    no ``pathlib``: every hook process asks)."""
    return sum(
        1 for entry in os.listdir(_migration_folder(dialect)) if _MIGRATION_NAME.fullmatch(entry)
    )


def check_dialects() -> None:
    """Raise :class:`LedgerError` unless every dialect has the same migrations (numbers and
    names) and the same views: they are numbered together, so a version means one schema."""
    names = {d: [(m.number, m.name) for m in migrations(d)] for d in DIALECTS}
    view_names = {d: [name for name, _ in views(d)] for d in DIALECTS}
    for d in DIALECTS:
        if names[d] != names["sqlite"]:
            raise LedgerError(f"{d} migrations {names[d]} differ from sqlite's {names['sqlite']}")
        if view_names[d] != view_names["sqlite"]:
            raise LedgerError(f"{d} views {view_names[d]} differ from sqlite's")


def views(dialect: str = "sqlite") -> list[tuple[str, str]]:
    """``(name, SQL)`` of every view in ``sql/views``: the views others read first
    (:data:`_READ_BY_VIEWS`), then by name (read once a process)."""
    return list(_read_views(dialect))


@functools.cache
def _read_views(dialect: str) -> tuple[tuple[str, str], ...]:
    from pathlib import Path

    folder = Path(dialect_folder("views", dialect))
    if not folder.is_dir():
        return ()
    names = sorted(e[:-4] for e in os.listdir(folder) if e.endswith(".sql"))
    names.sort(key=lambda name: name not in _READ_BY_VIEWS)
    return tuple((name, (folder / f"{name}.sql").read_text(encoding="utf-8")) for name in names)


def statements(script: str) -> Iterator[str]:
    """Split a script into complete statements (``executescript`` would COMMIT for us)."""
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            stmt = buf.strip()
            buf = ""
            if stmt and not all(
                ln.strip().startswith("--") or not ln.strip() for ln in stmt.splitlines()
            ):
                yield stmt
    if buf.strip() and not all(
        ln.strip().startswith("--") or not ln.strip() for ln in buf.splitlines()
    ):
        raise LedgerError(f"incomplete SQL statement: {buf.strip()[:60]!r}")


@functools.cache
def _split(script: str) -> tuple[str, ...]:
    """:func:`statements` of ``script``, split once a process (a suite or a server that
    makes many new files would split every script for each)."""
    return tuple(statements(script))


def apply_migrations(conn: sqlite3.Connection) -> None:
    """Bring the file to the latest schema: each migration in its own transaction."""
    import sqlite_utils

    db = sqlite_utils.Database(conn, recursive_triggers=False, execute_plugins=False)
    pending = migrations()
    last = pending[-1].number if pending else 0
    for migration in pending:
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version >= migration.number:
                conn.execute("ROLLBACK")
                continue
            if not db[_MIGRATIONS_TABLE].exists():
                conn.execute(
                    f"CREATE TABLE {_MIGRATIONS_TABLE} "
                    "(number INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
                )
            for stmt in _split(migration.sql):
                conn.execute(stmt)
            conn.execute(
                f"INSERT INTO {_MIGRATIONS_TABLE} (number, name, applied_at) VALUES (?, ?, ?)",
                (migration.number, migration.name, iso_time(time.time())),
            )
            if migration.number == last:  # the views are written for the latest tables
                _create_views(conn)
            conn.execute(f"PRAGMA user_version = {migration.number}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # SQLITE_FULL and friends may have rolled back already
                conn.execute("ROLLBACK")
            raise


def _create_views(conn: sqlite3.Connection) -> None:
    """(Re)create every view. Views are part of the schema: a release that changes a
    view ships a migration too, so files on disk pick the change up on their next open
    (opening an up-to-date file never reads these files)."""
    for name, sql in views():
        conn.execute(f"DROP VIEW IF EXISTS {name}")
        for stmt in _split(sql):
            conn.execute(stmt)


def schema_sql() -> str:
    """The schema the migrations produce, as checked in at ``ledger/schema.sql``."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        apply_migrations(conn)
        rows = conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
            "AND name NOT LIKE 'sqlite_%' ORDER BY CASE type WHEN 'table' THEN 0 "
            "WHEN 'index' THEN 1 ELSE 2 END, name"
        ).fetchall()
    finally:
        conn.close()
    head = (
        "-- Generated from ledger/migrations and ledger/views by `make schemas`; do not edit.\n"
        f"-- Schema version {len(migrations())}.\n\n"
    )
    return head + "".join(f"{sql};\n\n" for _, _, sql in rows).rstrip() + "\n"
