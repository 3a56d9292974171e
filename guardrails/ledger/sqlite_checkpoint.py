"""Checkpoints of a long-lived writer's WAL, on a thread of their own.

SQLite moves the WAL back into the database file (a checkpoint) from inside the commit
that pushes the WAL past ``wal_autocheckpoint`` pages (1,000 by default): that caller
pays for copying the pages and, at ``synchronous=NORMAL`` or above, for an fsync of the
file, which on many disks costs more than a hundred guarded calls' commits together.
A :class:`~guardrails.ledger.Ledger` that stays open (a Guard in an agent, ``serve``)
hands that work to a daemon thread with a connection of its own: once the writer changed
``_RING_CHANGES`` rows since it last rang (``total_changes``, a counter of the connection:
~4,000 WAL frames of guarded calls, SQLite's default bound), the thread runs ``PRAGMA
wal_checkpoint(PASSIVE)``, which never blocks a writer or reader.

The writer does not look at the log's files itself: a descriptor of the ``-shm`` file
closed by this process drops every lock the process's SQLite connections hold on it
(https://www.sqlite.org/howtocorrupt.html, 2.2), and another process may then reset the
wal-index under a reader or writer of this one.

The thread alone cannot start the log over: SQLite does that at a write transaction
that finds the whole log copied, and under a steady stream of commits each lands while
the thread copies. So once the thread copied all but the last few frames, the writer
copies those between two of its transactions (:meth:`Checkpointer._finish`: the few
pages, and the syncs a checkpoint owes), and its next transaction starts the log at the
beginning of the file. Without that the log grew to ``INLINE_PAGES`` (64 MB) before the
writer's own checkpoint copied it in one commit of ~35 ms, and at ``synchronous=FULL``
every commit's sync was slowed by a file that kept growing.

From its ``_CHECK_EVERY``-th commit on, the writer's own ``wal_autocheckpoint`` is
``INLINE_PAGES``, so a thread that falls behind (or cannot run) still bounds the WAL as
SQLite would.
Durability is unchanged: a commit is as durable as before when it returns; only where
the later copy into the file happens moves. Short-lived writers (a ``hookrails hook``
process) never start the thread.
"""

from __future__ import annotations

import _thread
import os
import sqlite3
import time

__all__ = ["INLINE_PAGES", "Checkpointer"]

#: commits after which a writer counts as long-lived (its own checkpoints handed over)
_CHECK_EVERY = 32
#: rows the writer changes between two rings: a guarded call changes five and writes ~13
#: WAL frames, so ~4,000 frames (SQLite's default bound, in pages); a batch counts whole
_RING_CHANGES = 1_600
#: the writer's own ``wal_autocheckpoint``: the bound when the thread falls behind
INLINE_PAGES = 16_000
#: frames of its log a checkpoint may leave (readers on older snapshots hold them) for the
#: writer to copy, besides those written meanwhile (see Checkpointer._finish)
_FINISH_FRAMES = 256


class Checkpointer:
    """Checkpoints ``path``'s WAL on a daemon thread when it grows (see the module)."""

    __slots__ = (
        "_commits",
        "_conn",
        "_handed",
        "_mark",
        "_pid",
        "_wake",
        "closed",
        "finish",
        "path",
        "running",
        "runs",
    )

    def __init__(self, path: str, writer: sqlite3.Connection | None) -> None:
        self.path = path
        self._conn = writer
        #: the writer's own checkpoints raised to INLINE_PAGES: the thread's from now on
        self._handed = False
        self._commits = 0
        #: the writer's ``total_changes`` when it last rang (or was handed over)
        self._mark = 0
        self._wake: _thread.LockType | None = None  # the thread's doorbell, once started
        self._pid = 0
        self.closed = False
        #: checkpoints the thread ran, and whether it is there (tests read them)
        self.runs = 0
        self.running = False
        #: the thread's checkpoint caught up to a few frames: the writer copies those
        self.finish = False

    def committed(self) -> None:
        """After a commit (the writer's lock held): ring when the writer changed enough
        rows since the last ring; finish a checkpoint the thread all but did."""
        if self.finish:
            self._finish()
        conn = self._conn
        if conn is None:
            return
        if not self._handed:  # a short-lived writer keeps SQLite's own checkpoints
            self._commits += 1
            if self._commits < _CHECK_EVERY:
                return
            try:
                conn.execute(f"PRAGMA wal_autocheckpoint = {INLINE_PAGES}")
            except sqlite3.Error:
                return
            self._handed = True
        changes = conn.total_changes
        if changes - self._mark >= _RING_CHANGES:
            self._mark = changes
            self._ring()

    def _finish(self) -> None:
        """The last frames of the thread's checkpoint, copied between two transactions of
        the writer: the log is then all in the file, and the next transaction starts it
        over at the beginning of the file (see the module)."""
        self.finish = False
        conn = self._conn
        if conn is None:
            return
        try:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error:
            return  # the thread, or the writer's own checkpoint, tries again later

    def _ring(self) -> None:
        wake = self._wake
        if wake is None or self._pid != os.getpid():  # not started, or a forked child
            wake = self._wake = _thread.allocate_lock()
            wake.acquire()
            self._pid = os.getpid()
            self.running = True
            _thread.start_new_thread(self._loop, (wake,))
        if wake.locked():
            wake.release()

    def close(self, wait: float = 0.0) -> None:
        """Let the thread end (it closes its connection); ``wait``: at most so many seconds
        for that. A writer that follows a replaced file waits: SQLite closing the thread's
        connection to the old file closes its descriptor of the ``-shm`` at the path, which
        drops the locks the new connection holds there (the locks are the process's)."""
        self.closed = True
        self._conn = None
        wake = self._wake
        if wake is not None and wake.locked():
            wake.release()
        deadline = time.monotonic() + wait
        while self.running and self._pid == os.getpid() and time.monotonic() < deadline:
            time.sleep(0.001)

    def _loop(self, wake: _thread.LockType) -> None:
        conn: sqlite3.Connection | None = None
        try:
            while True:
                wake.acquire()
                if self.closed or wake is not self._wake:
                    return
                try:
                    if conn is None:
                        conn = sqlite3.connect(self.path, isolation_level=None, timeout=0)
                    _, log, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    self.runs += 1
                    # all but a few frames copied (those the writer added meanwhile come
                    # after them): the writer copies the rest between two transactions
                    # ((1, -1, -1): busy, or no WAL: nothing to finish)
                    self.finish = copied >= 0 and 0 <= log - copied <= _FINISH_FRAMES
                except sqlite3.Error:  # the writer's inline checkpoint is the fallback
                    if conn is not None:
                        conn.close()
                    conn = None
        finally:
            if conn is not None:
                conn.close()
            self.running = False
