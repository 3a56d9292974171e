"""What ``recover`` does to a PostgreSQL ledger: import the local spool, mark stale calls.

Loaded by ``recover`` only (``hookrails ledger recover``, or a Guard's owner after an
outage), never on the hot path.
"""

from __future__ import annotations

import time

from . import spool as spooled
from .common import iso_time
from .postgres_write import SQL, escape_ops, execute

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import psycopg

    from .records import Op
    from .spool import RecoverReport

__all__ = ["import_spools", "mark_stale"]


def import_spools(conn: psycopg.Connection[Any], url: str) -> RecoverReport:
    """Import every spool of ``url`` on this machine, one transaction per spool and a
    savepoint per record: a record the schema refuses goes to ``<spool>.rejected`` with
    why, the rest are imported; nothing is committed until every record was tried."""
    from .spool import RecoverReport, spool_paths

    report = RecoverReport()
    for spool in dict.fromkeys(spool_paths(url)):
        counts = _import_spool(conn, spool)
        if counts is not None:
            report.imported += counts[0]
            report.rejected += counts[1]
            report.spools.append(spool)
    return report


def _import_spool(conn: psycopg.Connection[Any], spool: str) -> tuple[int, int] | None:
    import psycopg

    #: what one record's values can raise: that record is rejected, the import goes on
    refused = (
        psycopg.DataError,
        psycopg.IntegrityError,
        psycopg.ProgrammingError,
        ValueError,
        TypeError,
        IndexError,
        KeyError,
    )

    def run(ops: list[Op]) -> None:
        with conn.transaction():  # a savepoint
            execute(conn, escape_ops(ops))

    if not spooled.waiting(spool):
        return None
    taken = None
    try:
        with conn.transaction():
            # two recovers on this machine take the spool in turn
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))", (spool,))
            taken = spooled.take(spool)
            if not taken.held:  # another recover took it meanwhile
                return None
            imported, rejected = spooled.import_records(taken.parsed(SQL), run, refused)
            spooled.reject(spool, rejected)
    except BaseException:
        if taken is not None:
            taken.release()
        raise
    taken.finish()
    return imported, len(rejected)


def mark_stale(conn: psycopg.Connection[Any], older_than: float | None, now: float | None) -> int:
    """Mark ``pending`` calls that started more than ``older_than`` seconds before ``now``
    ``interrupted``; how many. Without ``older_than`` none: a call's process may run on
    another machine, so whether it still runs cannot be asked from here."""
    if older_than is None:
        return 0
    now = time.time() if now is None else now
    with conn.transaction():
        cur = conn.execute(
            "UPDATE tool_calls SET status = 'interrupted', finished_at = %s, "
            "error_message = COALESCE(error_message, 'interrupted: the call never finished "
            "(process ended or timed out)') WHERE status = 'pending' AND started_at < %s",
            (iso_time(now), iso_time(now - older_than)),
        )
        return int(cur.rowcount)
