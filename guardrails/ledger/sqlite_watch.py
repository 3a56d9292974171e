"""Whether the file a :class:`~guardrails.ledger.sqlite.Ledger` holds open is still the
one at its path (docs/ledger.md, "Durability").

SQLite keeps writing into a file that was deleted, or that another file was renamed
over, and into a deleted WAL: without a look, every later call would be lost without a
word. A look (:meth:`Watch.moved`) is one ``stat`` of the folder, whose mtime changes
whenever an entry in it is created, deleted or renamed; only when it changed are the
file and its WAL compared with the ones opened.

The writer looks after a commit (:meth:`Watch.committed`) once at least
``_INTERVAL`` has passed since the last look, and on close. A stat costs a few
microseconds, about 2 % of a guarded call made back to back with the next; calls of an
agent come farther apart, so each is looked at. The records committed since the last
look are kept (``pending``): when a look finds the file gone, they are written again
into the file now at the path (those not there yet), so skipping looks loses nothing,
unless the process is killed within ``_INTERVAL`` of the file being deleted.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    import sqlite3

    from .records import Op

__all__ = ["Watch", "already_there"]

#: nanoseconds a folder's mtime must be older than now before it is trusted: file times
#: are coarse (a tick of a few ms; 2 s on FAT), so a change in the same tick as the one
#: seen keeps the same mtime
_MTIME_MARGIN_NS = 3_000_000_000
#: after this many alarms that found the file unchanged (a filesystem whose inode
#: numbers are not stable), the watch is switched off
_FALSE_ALARMS = 3
#: seconds between two looks after commits, and records kept for a look at most
_INTERVAL = 0.001
_PENDING_MAX = 64


def file_id(path: str) -> tuple[int, int] | None:
    """(inode, device) of ``path``; None when there is no such file."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_dev


class Watch:
    """The identity of an open ledger file, its WAL and shared memory, and the folder's
    mtime when they were last found as opened."""

    __slots__ = (
        "due",
        "false_alarms",
        "file",
        "folder",
        "folder_mtime",
        "off",
        "path",
        "pending",
        "shm",
        "wal",
    )

    def __init__(self, path: str) -> None:
        self.path = path
        self.folder = os.path.dirname(path)
        self.file: tuple[int, int] | None = None
        self.wal: tuple[int, int] | None = None
        self.shm: tuple[int, int] | None = None
        self.folder_mtime: int | None = None
        self.false_alarms = 0
        self.off = False
        #: records committed since the last look (written again if it finds the file gone)
        self.pending: list[list[Op]] = []
        #: time.monotonic() of the next look after a commit
        self.due = 0.0

    def opened(self) -> None:
        """The file was just opened (``-wal`` and ``-shm`` may not exist yet)."""
        self.file = file_id(self.path)
        self.wal = file_id(self.path + "-wal")
        self.shm = file_id(self.path + "-shm")
        self.folder_mtime = None
        self.pending = []
        self.due = 0.0

    def committed(self, ops: list[Op]) -> str | None:
        """After ``ops`` were committed: :meth:`moved`, when it is time for a look."""
        pending = self.pending
        pending.append(ops)
        now = time.monotonic()
        if now < self.due and len(pending) < _PENDING_MAX:
            return None
        self.due = now + _INTERVAL
        found = self.moved()
        if found is None:
            pending.clear()
        return found

    def moved(self) -> str | None:
        """``deleted``, ``replaced`` (another file renamed over it) or ``wal_deleted``;
        None when all is as it was opened."""
        if self.off:
            return None
        try:
            st = os.stat(self.folder)
        except OSError:
            return "deleted"
        if st.st_mtime_ns == self.folder_mtime:
            return None
        found = self.look()
        if found is None and st.st_mtime_ns < time.time_ns() - _MTIME_MARGIN_NS:
            self.folder_mtime = st.st_mtime_ns
        return found

    def look(self) -> str | None:
        """:meth:`moved` without the folder's shortcut: the file and its WAL."""
        try:
            st = os.stat(self.path)
        except OSError:
            return "deleted"
        if (st.st_ino, st.st_dev) != self.file:
            return "replaced"
        try:
            st = os.stat(self.path + "-wal")
        except OSError:
            return None if self.wal is None else "wal_deleted"
        if self.wal is None:  # the first commit created it
            self.wal = (st.st_ino, st.st_dev)
        elif (st.st_ino, st.st_dev) != self.wal:
            return "wal_deleted"
        return None

    def false_alarm(self) -> bool:
        """Count an alarm that found the same file (its record already there); True once
        there were too many and the watch is off."""
        self.false_alarms += 1
        self.off = self.false_alarms >= _FALSE_ALARMS
        return self.off

    def set_aside(self) -> None:
        """Rename the WAL and shared memory the old file left at the path out of the way,
        when they are still the ones it had: a file renamed over it must not read the
        old file's pages from them."""
        stamp = time.strftime("%Y%m%dT%H%M%S")
        for suffix, known in (("-wal", self.wal), ("-shm", self.shm)):
            if known is not None and file_id(self.path + suffix) == known:
                try:  # noqa: SIM105
                    os.replace(self.path + suffix, f"{self.path}{suffix}.orphaned-{stamp}")
                except OSError:
                    pass


def already_there(conn: sqlite3.Connection, ops: list[Op]) -> bool:
    """Whether the event ``ops`` record is in the file ``conn`` has open: the tool call
    row it starts (``pre``) or finishes (``post``), or its events row. A file that only
    looked replaced (same file, another inode number) is so never written twice."""
    args: tuple[object, ...]
    for name, params in ops:
        if name == "pre":
            sql = "SELECT 1 FROM tool_calls WHERE session_id = ? AND tool_call_id = ?"
            args = (params[0], params[4])
        elif name == "post":
            sql = (
                "SELECT 1 FROM tool_calls WHERE session_id = ? AND tool_call_id = ? "
                "AND finished_at = ? AND status = ?"
            )
            args = (params[0], params[4], params[16], params[9])
        elif name == "event":  # two of one kind may share a millisecond: what they carry
            sql = (
                "SELECT 1 FROM events WHERE session_id = ? AND event = ? AND created_at = ? "
                "AND decision = ? AND agent_id IS ? AND payload IS ?"
            )
            args = (params[0], params[1], params[8], params[5], params[2], params[4])
        else:
            continue
        return conn.execute(sql, args).fetchone() is not None
    return False
