"""Importing the journal (:mod:`.journal`) into the SQLite file, and seeding its halt markers.

:func:`import_journal` runs on a writer connection before the writer's own transaction: the
journal is taken under the write lock (renamed ``.importing``: records journaled meanwhile
start a new journal, and two importers never take the same lines), each record runs on its
own savepoint, one that cannot be imported goes to ``<ledger>.journal.jsonl.rejected`` with
why, and the file is removed once the import committed. The ``.importing`` file stays locked
until that removal, so an importer that gets the write lock between another's COMMIT and its
removal waits, then finds it gone (:func:`.spool.take`). An importer killed before its
COMMIT leaves ``.importing``, which the next one imports on its own first; killed between
its COMMIT and the removal, the same file is met again: its records are then already in the
file (one transaction put them all there), and the next importer skips each one it finds
there (:func:`.sqlite_watch.already_there`, asked for every record before any is imported),
so none is imported twice. That holds because every writer imports the journal before it
writes: a record still waiting in the journal has no rows in the file unless an import of it
committed.
"""

from __future__ import annotations

import os
import sqlite3
import time

from .journal import _LOCK_EX, _lock, _marker, halts_folder, journal_path, mark_halted, waiting
from .reader import LedgerReader
from .sqlite_recover import import_spool
from .sqlite_state import Settle
from .sqlite_write import SQL, begin, execute, rollback

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any

    from .records import Op

__all__ = [
    "ImportingReader",
    "MarkingSettle",
    "catch_up",
    "import_journal",
    "import_pending",
    "marking",
    "prune_halts",
    "seed_halts",
]


def catch_up(conn: sqlite3.Connection, path: str, timeout: float, opened: bool = False) -> None:
    """What a writer does with the journal (the ledger's lock held): once the file is
    ``opened``, its halt markers seeded; then the journal imported. A failure leaves the
    journal for the next writer or reader (and without markers no gate is journaled)."""
    from .common import logger

    if opened and not os.path.isdir(halts_folder(path)):
        try:  # noqa: SIM105
            seed_halts(conn, path, timeout)
        except (OSError, sqlite3.Error):
            pass
    if not waiting(path):
        return
    try:
        import_journal(conn, path, timeout)
    except (OSError, sqlite3.Error) as exc:
        logger().warning(
            "hookrails ledger %s: the journal was not imported (%s); it waits for the next "
            "writer or reader",
            path,
            exc,
        )


def import_pending(path: str) -> str | None:
    """Import what waits in the journal of the ledger ``path`` (a ``hookrails ledger``
    command's first step); why it could not, or None."""
    from .common import is_url

    if is_url(path) or not waiting(path):
        return None
    from .sqlite import Ledger

    work = journal_path(path)
    before = _first_line(work)
    ledger = Ledger(path)  # opening it imports the journal
    try:
        if ledger.degraded is not None:
            return (
                f"records of hook processes wait in {work}: the ledger cannot be "
                f"written ({ledger.degraded}), so they are not shown"
            )
        # not taken (its first record still first, or an import left unfinished): say so.
        # A new journal holds what was appended since (a running serve or hook): newer
        # than this read. (Records are told apart by content: inode numbers are reused.)
        after = _first_line(work)
        if os.path.exists(work + ".importing") or (after is not None and after == before):
            return f"records of hook processes still wait in {work}"
        return None
    finally:
        ledger.close()


def _first_line(path: str) -> bytes | None:
    """The first record's line (each starts with a blank one: :func:`.journal.line_of`)."""
    try:
        with open(path, "rb") as fh:
            while line := fh.readline(1 << 20):
                if line.strip():
                    return line
    except OSError:
        pass
    return None


def import_journal(
    conn: sqlite3.Connection,
    path: str,
    timeout: float = 5.0,
    kept: list[list[Op]] | None = None,
) -> tuple[int, int]:
    """Import what the journal of ``path`` holds: ``(records imported, rejected)``.
    ``kept`` gets the operations of every record imported (a writer that watches its
    file keeps them: :mod:`.sqlite_behind`)."""
    work = journal_path(path)
    imported = rejected = 0
    # what an importer that stopped left, on its own first (each record looked up), then
    # the journal: the records appended since
    for merge in (False, True) if os.path.exists(work + ".importing") else (True,):
        counts = import_spool(conn, work, SQL, execute, timeout, kept, merge=merge)
        if counts is not None:
            imported += counts[0]
            rejected += counts[1]
    return imported, rejected


def seed_halts(conn: sqlite3.Connection, path: str, timeout: float = 5.0) -> None:
    """Make the halt markers of ``path`` once (its folder does not exist yet): one for
    every session the file holds halted (an older hookrails halted it), made in a folder
    of their own and renamed into place, under the write lock so no halt commits
    meanwhile. Until the folder exists no gate is journaled."""
    import shutil

    folder = halts_folder(path)
    if os.path.isdir(folder):
        return
    begin(conn, timeout)
    try:
        if os.path.isdir(folder):  # another writer seeded it meanwhile
            return
        rows = conn.execute(
            "SELECT session_id, agent_name FROM session_state WHERE halted IS NOT NULL"
        ).fetchall()
        work = f"{folder}.seeding-{os.getpid()}"
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        for session_id, agent in rows:
            name = os.path.basename(_marker(path, session_id, agent))
            os.close(os.open(os.path.join(work, name), os.O_WRONLY | os.O_CREAT, 0o600))
        os.rename(work, folder)
    finally:  # it only read: ended without a COMMIT that could hide what went wrong
        rollback(conn)


def prune_halts(
    conn: sqlite3.Connection, path: str, timeout: float, dry_run_cutoff: str | None = None
) -> int:
    """Remove the halt markers of ``path`` whose session the file does not hold halted (its
    halt is over, or ``prune`` deleted its state): how many. Under the write lock, so no
    halt commits meanwhile, and the exclusive halt lock, so no gate looks meanwhile; a
    marker only ever stands for a halt the file may hold. ``dry_run_cutoff``: remove
    nothing, count as if the states last changed before it were deleted."""
    folder = halts_folder(path)
    if not os.path.isdir(folder):
        return 0
    begin(conn, timeout)
    try:
        keep = {
            os.path.basename(_marker(path, session_id, agent))
            for session_id, agent in conn.execute(
                "SELECT session_id, agent_name FROM session_state "
                "WHERE halted IS NOT NULL AND (?1 IS NULL OR updated_at >= ?1)",
                (dry_run_cutoff,),
            )
        }
        fd = _lock(path, _LOCK_EX)
        try:
            stale = [name for name in os.listdir(folder) if name not in keep]
            if dry_run_cutoff is None:
                for name in stale:
                    os.remove(os.path.join(folder, name))
        finally:
            os.close(fd)
    finally:  # it only read: ended without a COMMIT
        rollback(conn)
    return len(stale)


class MarkingSettle(Settle):
    """The :class:`~.sqlite_state.Settle` of an event that halts its session: the halt's
    marker (:func:`.journal.mark_halted`) is made in the transaction, before the settle."""

    __slots__ = ("path",)
    path: str

    def __call__(self, conn: Any, ops: list[Op]) -> list[Op]:
        try:
            mark_halted(self.path, self.decision.event.session_id, self.agent)
        except OSError:  # no marker: then no markers at all, so no gate is journaled past
            retire_halts(self.path)  # the halt (raises when even that fails: spooled)
        return super().__call__(conn, ops)


def retire_halts(path: str) -> None:
    """Take the halt markers' folder of ``path`` away (renamed, then removed): without it
    no gate is journaled, and the next writer that opens the file makes it again from the
    halts the file holds (:func:`seed_halts`). Raises ``OSError`` when it cannot."""
    import shutil

    folder = halts_folder(path)
    if not os.path.isdir(folder):
        return
    gone = f"{folder}.retired-{os.getpid()}-{time.monotonic_ns()}"
    os.rename(folder, gone)
    shutil.rmtree(gone, ignore_errors=True)


def marking(settle: Settle, path: str) -> MarkingSettle:
    """``settle`` as a :class:`MarkingSettle` for the ledger file ``path``."""
    s = settle
    made = MarkingSettle(s.rows, s.decision, s.change, s.now, s.agent, s.tenant, s.owner_pid, s.ops)
    made.path = path
    return made


class ImportingReader(LedgerReader):
    """A :class:`~.reader.LedgerReader` of a writer that imports the journal before each
    query (a ``stat`` when nothing waits), so ``ctx.ledger`` and ``serve`` see what hook
    processes journaled."""

    def __init__(self, path: str, catch_up: Any) -> None:
        super().__init__(path)
        self._catch_up = catch_up

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[dict[str, Any]]:
        if waiting(self.path):  # before this reader's lock: the import takes the writer's
            self._catch_up()
        return super().query(sql, params)

    def stats(self, limit: int) -> Iterator[tuple[str, list[dict[str, Any]]]]:
        if waiting(self.path):  # the sections read on connections of their own
            self._catch_up()
        return super().stats(limit)
