"""Checkpoints of a long-lived writer's WAL, on a thread of their own.

SQLite moves the WAL back into the database file (a checkpoint) from inside the commit
that pushes the WAL past ``wal_autocheckpoint`` pages (1,000 by default): that caller
pays for copying the pages and, at ``synchronous=NORMAL`` or above, for an fsync of the
file, which on many disks costs more than a hundred guarded calls' commits together.
A :class:`~guardrails.ledger.Ledger` that stays open (a Guard in an agent, ``serve``)
hands that work to a daemon thread with a connection of its own: after every
``_CHECK_EVERY`` commits the writer looks at the WAL's size, and once it is over
``_WAL_BYTES`` the thread runs ``PRAGMA wal_checkpoint(PASSIVE)``, which never blocks a
writer or reader. From its first look on, the writer's own ``wal_autocheckpoint`` is
``INLINE_PAGES``, so a thread that falls behind (or cannot run) still bounds the WAL as
SQLite would. Durability is unchanged: a commit is as durable as before when it
returns; only where the later copy into the file happens moves.

Short-lived writers (a ``hookrails hook`` process) never start the thread.
"""

from __future__ import annotations

import _thread
import os
import sqlite3

__all__ = ["INLINE_PAGES", "Checkpointer"]

#: commits between two looks at the WAL's size (a ``stat``)
_CHECK_EVERY = 32
#: WAL size past which the thread checkpoints (about SQLite's default of 1,000 pages)
_WAL_BYTES = 4 * 1024 * 1024
#: the writer's own ``wal_autocheckpoint``: the bound when the thread falls behind
INLINE_PAGES = 16_000


class Checkpointer:
    """Checkpoints ``path``'s WAL on a daemon thread when it grows (see the module)."""

    __slots__ = (
        "_commits",
        "_pid",
        "_seen",
        "_wake",
        "_writer",
        "closed",
        "path",
        "running",
        "runs",
    )

    def __init__(self, path: str, writer: sqlite3.Connection | None) -> None:
        self.path = path
        self._writer: sqlite3.Connection | None = writer
        self._commits = 0
        #: the WAL file's size at the last look (see committed)
        self._seen = 0
        self._wake: _thread.LockType | None = None  # the thread's doorbell, once started
        self._pid = 0
        self.closed = False
        #: checkpoints the thread ran, and whether it is there (tests read them)
        self.runs = 0
        self.running = False

    def committed(self) -> None:
        """After a commit (the writer's lock held): look at the WAL now and then, and ring
        when it is big."""
        self._commits += 1
        if self._commits < _CHECK_EVERY:
            return
        self._commits = 0
        if self._writer is not None:  # a long-lived writer: the thread checkpoints from now
            try:
                self._writer.execute(f"PRAGMA wal_autocheckpoint = {INLINE_PAGES}")
            except sqlite3.Error:
                return
            self._writer = None
        try:
            size = os.stat(self.path + "-wal").st_size
        except OSError:
            return
        # a WAL file never shrinks: once past the bound, its size rings only when it grew
        # since the last look (after a checkpoint the log starts over inside the file). A
        # journal_size_limit would shrink it, but each call then paid ~20 us growing it back
        grew, self._seen = size != self._seen, size
        if size > _WAL_BYTES and grew:
            self._ring()

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

    def close(self) -> None:
        """Let the thread end (it closes its connection)."""
        self.closed = True
        wake = self._wake
        if wake is not None and wake.locked():
            wake.release()

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
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    self.runs += 1
                except sqlite3.Error:  # the writer's inline checkpoint is the fallback
                    if conn is not None:
                        conn.close()
                    conn = None
        finally:
            if conn is not None:
                conn.close()
            self.running = False
