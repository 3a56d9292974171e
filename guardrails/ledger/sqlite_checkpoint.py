"""Checkpoints of a long-lived writer's WAL, on a thread of their own.

SQLite moves the WAL back into the database file (a checkpoint) from inside the commit
that pushes the WAL past ``wal_autocheckpoint`` pages (1,000 by default): that caller
pays for copying the pages and, at ``synchronous=NORMAL`` or above, for an fsync of the
file, which on many disks costs more than a hundred guarded calls' commits together.
A :class:`~guardrails.ledger.Ledger` that stays open (a Guard in an agent, ``serve``)
hands that work to a daemon thread with a connection of its own: after every
``_CHECK_EVERY`` commits the writer reads how many frames the log holds (the wal-index
header's ``mxFrame``, https://www.sqlite.org/walformat.html, one ``pread``), and once
they are ``_WAL_FRAMES`` the thread runs ``PRAGMA wal_checkpoint(PASSIVE)``, which never
blocks a writer or reader.

The thread alone cannot start the log over: SQLite does that at a write transaction
that finds the whole log copied, and under a steady stream of commits each lands while
the thread copies. So once the thread copied all but the last few frames, the writer
copies those between two of its transactions (:meth:`Checkpointer._finish`: the few
pages, and the syncs a checkpoint owes), and its next transaction starts the log at the
beginning of the file. Without that the log grew to ``INLINE_PAGES`` (64 MB) before the
writer's own checkpoint copied it in one commit of ~35 ms, and at ``synchronous=FULL``
every commit's sync was slowed by a file that kept growing.

From its first look on, the writer's own ``wal_autocheckpoint`` is ``INLINE_PAGES``, so
a thread that falls behind (or cannot run) still bounds the WAL as SQLite would.
Durability is unchanged: a commit is as durable as before when it returns; only where
the later copy into the file happens moves. Short-lived writers (a ``hookrails hook``
process) never start the thread.
"""

from __future__ import annotations

import _thread
import os
import sqlite3
import sys

__all__ = ["INLINE_PAGES", "Checkpointer"]

#: commits between two looks at the log's length (a ``pread`` of the ``-shm`` file)
_CHECK_EVERY = 32
#: frames in the log from which the thread checkpoints (SQLite's default, in pages)
_WAL_FRAMES = 4_000
#: when a reader on an old snapshot keeps the log from starting over: frames more before
#: the next ring (each checkpoint syncs the file)
_RING_STEP = 250
#: the same bound in bytes, when the wal-index cannot be read (the WAL file's size)
_WAL_BYTES = 4 * 1024 * 1024
#: offset of ``mxFrame`` in the wal-index header (a native-order 32-bit integer)
_MX_FRAME = 16
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
        "_pid",
        "_rung",
        "_seen",
        "_shm",
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
        #: the WAL file's size at the last look (when the wal-index cannot be read)
        self._seen = 0
        #: the log's frames when the thread was last rung (0: the log started over since)
        self._rung = 0
        self._shm: int | None = None  # a read-only fd of the -shm file, once looked at
        self._wake: _thread.LockType | None = None  # the thread's doorbell, once started
        self._pid = 0
        self.closed = False
        #: checkpoints the thread ran, and whether it is there (tests read them)
        self.runs = 0
        self.running = False
        #: the thread's checkpoint caught up to a few frames: the writer copies those
        self.finish = False

    def committed(self) -> None:
        """After a commit (the writer's lock held): look at the WAL now and then, and ring
        when it is big; finish a checkpoint the thread all but did."""
        if self.finish:
            self._finish()
        self._commits += 1
        if self._commits < _CHECK_EVERY:
            return
        self._commits = 0
        if not self._handed and self._conn is not None:  # a long-lived writer
            try:
                self._conn.execute(f"PRAGMA wal_autocheckpoint = {INLINE_PAGES}")
            except sqlite3.Error:
                return
            self._handed = True
        frames = self._frames()
        if frames < 0:
            self._by_size()
            return
        if frames < self._rung:  # it started over
            self._rung = 0
        if frames >= _WAL_FRAMES and frames >= self._rung + _RING_STEP:
            self._rung = frames
            self._ring()

    def _frames(self) -> int:
        """Frames in the log now, -1 when the wal-index cannot be read."""
        fd = self._shm
        try:
            if fd is None:
                fd = self._shm = os.open(self.path + "-shm", os.O_RDONLY | os.O_CLOEXEC)
            data = os.pread(fd, 4, _MX_FRAME)
        except OSError:
            return -1
        return int.from_bytes(data, sys.byteorder) if len(data) == 4 else -1

    def _by_size(self) -> None:
        """Ring by the WAL file's size: it never shrinks, so once past the bound only when
        it grew since the last look (after a checkpoint the log starts over inside it). A
        journal_size_limit would shrink it, but each call then paid ~20 us growing it back."""
        try:
            size = os.stat(self.path + "-wal").st_size
        except OSError:
            return
        grew, self._seen = size != self._seen, size
        if size > _WAL_BYTES and grew:
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

    def close(self) -> None:
        """Let the thread end (it closes its connection)."""
        self.closed = True
        self._conn = None
        fd, self._shm = self._shm, None
        if fd is not None:
            os.close(fd)
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
