"""What :meth:`Ledger.recover <guardrails.ledger.sqlite.Ledger.recover>` does to the file:
import the spool, record by record, and mark calls that will never finish.

Loaded by ``recover`` only (``hookrails ledger recover``, or a Guard's owner after a
degraded spell), never on the hot path.
"""

from __future__ import annotations

import os
import sqlite3
import time

from ..errors import LedgerError
from . import spool as spooled
from .common import error_kind, iso_time, process_alive
from .records import escape_ops
from .sqlite_write import begin, rollback

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Container, Iterable, Sequence

    from .records import Op
    from .spool import Parsed, RecoverReport
    from .sqlite import Ledger

__all__ = [
    "cannot_recover", "import_records", "import_spool", "mark_stale", "not_there", "recover_ledger",
]  # fmt: skip

#: what one record's values can raise: that record is rejected, the import goes on.
#: Anything else (locked, full, I/O: sqlite3.OperationalError) stops the import, rolls
#: it back and keeps the spool for the next recover.
_RECORD_ERRORS = (
    sqlite3.IntegrityError,
    sqlite3.ProgrammingError,
    sqlite3.InterfaceError,
    sqlite3.DataError,
    ValueError,  # UnicodeError among them
    TypeError,
    OverflowError,
    IndexError,
    KeyError,
)


def import_records(
    conn: sqlite3.Connection,
    records: Iterable[Parsed],
    execute: Callable[[sqlite3.Connection, Sequence[Op]], None],
    kept: list[list[Op]] | None = None,
) -> tuple[int, list[tuple[str, str]]]:
    """Run parsed records ``(line, ops or None, why not)`` inside the caller's transaction,
    all on one savepoint (:func:`_all_at_once`) or, when one cannot be imported, each on
    its own, with their strings made storable (:func:`.records.escape_ops`):
    ``(imported, [(line, why rejected)])``; one that is not a record, or that the schema or
    SQLite refuses, is rejected and the rest go on (:func:`.spool.import_records`, the loop
    the PostgreSQL import shares). A record that changes a call the aggregate views'
    rollups already summed empties them (:func:`.rollup.changes_summed`), so the views stay
    exact. The spool's import and the journal's share it. ``kept``: gets the (escaped)
    operations of each record that stayed imported, none rolled back."""
    from .rollup import changes_summed, invalidate

    records = list(records)
    done = _all_at_once(conn, records, execute, kept)
    if done is not None:
        return done
    summed = False

    def run(ops: list[Op]) -> None:
        nonlocal summed
        ops = escape_ops(ops)
        conn.execute("SAVEPOINT import_record")
        try:  # a malformed record fails its check as it would fail its statements
            summed = changes_summed(conn, [ops]) or summed
            execute(conn, ops)
        except _RECORD_ERRORS:
            conn.execute("ROLLBACK TO import_record")
            conn.execute("RELEASE import_record")
            raise
        conn.execute("RELEASE import_record")
        if kept is not None:
            kept.append(ops)

    imported, rejected = spooled.import_records(records, run, _RECORD_ERRORS)
    if summed:
        invalidate(conn)
    return imported, rejected


def _all_at_once(
    conn: sqlite3.Connection,
    records: list[Parsed],
    execute: Callable[[sqlite3.Connection, Sequence[Op]], None],
    kept: list[list[Op]] | None,
) -> tuple[int, list[tuple[str, str]]] | None:
    """Every record on one savepoint, the rollups asked once (the usual case: all of them
    import): two statements a record fewer than a savepoint each. None when one cannot
    be imported: rolled back, and the records go one by one."""
    from .rollup import changes_summed, invalidate

    if any(ops is None for _, ops, _ in records):
        return None
    conn.execute("SAVEPOINT import_batch")
    try:
        batch = [escape_ops(ops) for _, ops, _ in records if ops is not None]
        summed = changes_summed(conn, batch)
        for i, ops in enumerate(batch, 1):
            execute(conn, ops)
            if not i % 8:  # let other threads in (a server's answers wait otherwise)
                time.sleep(0)
    except _RECORD_ERRORS:
        conn.execute("ROLLBACK TO import_batch")
        conn.execute("RELEASE import_batch")
        return None
    conn.execute("RELEASE import_batch")
    if summed:
        invalidate(conn)
    if kept is not None:
        kept.extend(batch)
    return len(batch), []


def not_there(conn: sqlite3.Connection, parsed: list[Parsed]) -> list[Parsed]:
    """The records of a file an import that stopped left which the file does not hold yet
    (it may have been killed after its COMMIT): those it holds are not imported twice."""
    from .sqlite_watch import already_there

    return [r for r in parsed if r[1] is None or not already_there(conn, escape_ops(r[1]))]


def import_spool(
    conn: sqlite3.Connection,
    spool: str,
    known: Container[str],
    execute: Callable[[sqlite3.Connection, Sequence[Op]], None],
    timeout: float = 5.0,
    kept: list[list[Op]] | None = None,
    *,
    merge: bool = True,
) -> tuple[int, int] | None:
    """Import one spool in one transaction: ``(records imported, records rejected)``;
    None when nothing waits there. ``kept``: see :func:`import_records`; ``merge``: see
    :func:`.spool.take` (without, only the file an import that stopped left).

    The spool is taken (:func:`.spool.take`: renamed ``.importing``, or one a stopped
    recover left, resumed) under the write lock, and kept locked until it is removed
    after the COMMIT, so the next import never takes it again. Each record runs on its own savepoint
    with its strings made storable (:func:`.records.escape_ops`); one that is not a
    record, or that the schema or SQLite refuses, goes to ``<spool>.rejected`` with
    why, and the rest go on. Nothing is committed until every record was tried.
    """
    if not spooled.waiting(spool):
        return None
    begin(conn, timeout)
    taken = None
    try:
        taken = spooled.take(spool, merge=merge)
        if not taken.held:  # another import took it meanwhile
            conn.execute("ROLLBACK")
            return None
        parsed = taken.parsed(known)
        if taken.left:
            parsed = not_there(conn, parsed)
        imported, rejected = import_records(conn, parsed, execute, kept)
        spooled.reject(spool, rejected)
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        if taken is not None:
            taken.release()
        raise
    taken.finish()
    return imported, len(rejected)


def mark_stale(
    conn: sqlite3.Connection, older_than: float | None, now: float | None, timeout: float = 5.0
) -> int:
    """Mark ``pending`` calls that will never finish ``interrupted``: their process
    (``pid``, this machine) is gone, or with ``older_than`` seconds, they started
    before that. Returns how many."""
    now = time.time() if now is None else now
    rows = conn.execute(
        "SELECT id, pid, started_at FROM tool_calls WHERE status = 'pending'"
    ).fetchall()
    cutoff = iso_time(now - older_than) if older_than is not None else None
    stale = [
        row_id
        for row_id, pid, started in rows
        if (pid is not None and pid != os.getpid() and not process_alive(pid))
        or (cutoff is not None and started < cutoff)
    ]
    if stale:
        begin(conn, timeout)
        conn.executemany(
            "UPDATE tool_calls SET status = 'interrupted', finished_at = ?, "
            "error_message = COALESCE(error_message, 'interrupted: the call never finished "
            "(process ended or timed out)') WHERE id = ? AND status = 'pending'",
            [(iso_time(now), row_id) for row_id in stale],
        )
        conn.execute("COMMIT")
    return len(stale)


def cannot_recover(path: str, kind: str | None, degraded: str | None) -> LedgerError:
    """Why ``recover`` cannot import into the file at ``path``, with what to do and where
    the spooled (and journaled) records wait."""
    from .journal import journal_path

    kind = kind or "error"
    files = [*dict.fromkeys(spooled.spool_paths(path)), journal_path(path)]
    waiting = [f for s in files for f in (s, s + ".importing") if os.path.exists(f)]
    where = f"; the spooled records stay in {', '.join(waiting)}" if waiting else ""
    if kind == "corrupt":
        advice = (
            "SQLite cannot read it, so nothing can be imported into it: move it aside "
            "(keep it for inspection) and run recover again to import into a fresh ledger"
        )
    elif kind == "newer_schema":
        advice = "run recover with that newer hookrails (upgrade this one)"
    else:
        advice = "fix the cause and run recover again"
    return LedgerError(
        f"cannot recover into this ledger ({degraded}): {advice}{where}", path=path, kind=kind
    )


def recover_ledger(ledger: Ledger, older_than: float | None, now: float | None) -> RecoverReport:
    """:meth:`.sqlite.Ledger.recover`: the file reopened when it must be, the journal and
    the spools imported, then the stale calls marked, all under the writer's lock."""
    from .journal_import import import_journal
    from .spool import RecoverReport, spool_paths
    from .sqlite_write import SQL, execute

    with ledger._lock:
        if ledger._conn is not None and ledger._degraded is None:
            moved = ledger._watch.moved()
            if moved is not None:
                ledger._follow(moved, committed=True)
        if ledger._conn is None or ledger._degraded is not None:
            ledger._close_connection()
            ledger._open()
        conn = ledger._conn
        if conn is None:
            raise cannot_recover(ledger.path, ledger._kind, ledger._degraded)
        report = RecoverReport()
        try:
            got = import_journal(conn, ledger.path, ledger.busy_timeout)  # hook processes'
            report.imported, report.rejected = got
            for spool in dict.fromkeys(spool_paths(ledger.path)):
                counts = import_spool(conn, spool, SQL, execute, ledger.busy_timeout)
                if counts is not None:
                    report.imported += counts[0]
                    report.rejected += counts[1]
                    report.spools.append(spool)
            report.interrupted = mark_stale(conn, older_than, now, ledger.busy_timeout)
        except (sqlite3.Error, OSError) as exc:
            rollback(conn)
            raise LedgerError(
                f"recover failed: {exc}; the spool is kept, run recover again",
                path=ledger.path,
                kind=error_kind(exc),
            ) from exc
        ledger._degraded = ledger._kind = None
    return report
