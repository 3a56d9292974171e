"""The PostgreSQL ledger's schema: ``sql/postgres/migrations`` and ``sql/postgres/views``.

Numbered together with SQLite's (:func:`.migrations.check_dialects`), tracked in the
same ``_hookrails_migrations`` table. Every migration runs in its own transaction
holding a transaction-scoped advisory lock, so machines opening a new database at once
apply each migration exactly once; the views are recreated with every migration.
"""

from __future__ import annotations

import time

from . import migrations
from .common import iso_time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import psycopg

__all__ = ["MIGRATION_LOCK", "apply_migrations", "schema_version"]

#: the advisory lock (a constant key) that migrations of one database take in turn
MIGRATION_LOCK = 0x686F6F6B7261696C  # "hookrail"
_TABLE = "_hookrails_migrations"


def schema_version(conn: psycopg.Connection[Any]) -> int:
    """The newest migration applied to the database (0: none, or no ledger yet)."""
    row = conn.execute(f"SELECT to_regclass('{_TABLE}') IS NOT NULL").fetchone()
    if row is None or not row[0]:
        return 0
    found = conn.execute(f"SELECT coalesce(max(number), 0) FROM {_TABLE}").fetchone()
    return int(found[0]) if found else 0


def apply_migrations(conn: psycopg.Connection[Any]) -> None:
    """Bring the database to the latest schema (``conn`` is in autocommit mode)."""
    pending = migrations.migrations("postgres")
    last = pending[-1].number if pending else 0
    for migration in pending:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {_TABLE} (number integer PRIMARY KEY, "
                "name text NOT NULL, applied_at text NOT NULL)"
            )
            if schema_version(conn) >= migration.number:
                continue
            conn.execute(migration.sql.encode("utf-8"))  # a script: the simple protocol
            conn.execute(
                f"INSERT INTO {_TABLE} (number, name, applied_at) VALUES (%s, %s, %s)",
                (migration.number, migration.name, iso_time(time.time())),
            )
            if migration.number != last:  # the views are written for the latest tables
                continue
            for name, sql in migrations.views("postgres"):
                conn.execute(f"DROP VIEW IF EXISTS {name} CASCADE".encode())  # its readers follow
                conn.execute(sql.encode("utf-8"))
