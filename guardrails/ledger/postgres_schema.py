"""The PostgreSQL ledger's schema: ``sql/postgres/migrations`` and ``sql/postgres/views``.

Numbered together with SQLite's (:func:`.migrations.check_dialects`), tracked in the
same ``_hookrails_migrations`` table. The pending migrations run in one transaction
holding a transaction-scoped advisory lock, so machines opening a new database at once
apply each migration exactly once, and a failure leaves the schema as it was (PostgreSQL's
DDL is transactional). A new database takes a handful of round trips, not one per
statement: the scripts go as one, and the views are recreated once, after the last.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

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
    if not pending:
        return
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {_TABLE} (number integer PRIMARY KEY, "
            "name text NOT NULL, applied_at text NOT NULL)"
        )
        version = schema_version(conn)
        todo = [m for m in pending if m.number > version]
        if not todo:
            return  # another machine applied them while this one waited for the lock
        conn.execute(_script(m.sql for m in todo))  # a script: the simple protocol
        at = iso_time(time.time())
        with conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO {_TABLE} (number, name, applied_at) VALUES (%s, %s, %s)",
                [(m.number, m.name, at) for m in todo],
            )
        # the views are written for the latest tables; DROP ... CASCADE takes their readers
        views = migrations.views("postgres")
        drops = [f"DROP VIEW IF EXISTS {name} CASCADE" for name, _ in views]
        conn.execute(_script([*drops, *(sql for _, sql in views)]))


def _script(parts: Iterable[str]) -> bytes:
    """SQL scripts run as one: each ends on a line of its own, so a closing comment in one
    cannot swallow the next (an empty statement between two is harmless)."""
    return "\n;\n".join(part.rstrip().rstrip(";") for part in parts).encode("utf-8")
