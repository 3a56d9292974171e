"""Write-behind: a long-lived writer (``hookrails serve``) journals the events that need no
session state and imports them on a thread of its own, in batches.

A SQLite transaction per event (BEGIN, the rows, COMMIT) was the largest share of a
served call, and every call paid it before its answer. The journal (:mod:`.journal`)
is what ``hookrails hook`` processes already write: one ``O_APPEND`` line per event,
which survives the process's exit as a ``synchronous=NORMAL`` commit does (``durable``:
fsynced before the answer, as a ``synchronous=FULL`` commit is). So a journaled event is
as durable when the answer goes out as a committed one; what moves is when its rows
reach the file's tables:

* the thread imports once the journal was quiet for ``delay`` seconds, or ``max_age``
  after the batch's first event (one transaction for the batch; the lines of hook
  processes too);
* every write of this Ledger imports first (each append resets its poll), and so do
  reads through hookrails (the reader, ``/v1/stats``, ``hookrails ledger``), so nothing
  that reads through hookrails misses an event it answered; ``session_state`` needs no
  import (journaled events change no session state) and skips it;
* a reader of the bare file (sqlite3, Datasette) sees a row once its batch is imported,
  ``delay`` and an import later; ``close`` imports what is left.

The events journaled are those :class:`~.journal.JournalLedger` journals (no new turn,
no context injected, no halt; a call that would run only while its session is surely not
halted). Nothing is lost on any fault: an append that fails takes the store (which
spools when it cannot write); an import that fails leaves the journal for the next
import; a process killed with lines waiting leaves them for the next writer or reader,
which imports them first; and the imported records are kept by the file watch
(:class:`.sqlite_watch.Watch`) like this writer's own commits, so a file deleted or
replaced under the writer gets them again.
"""

from __future__ import annotations

import _thread
import os
import sqlite3
import threading
import time

from .journal import _journals, append, append_gate, waiting

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .records import Op
    from .session_state import StateChange
    from .sqlite import Ledger

__all__ = ["DEFAULT_DELAY", "DEFAULT_MAX_AGE", "Behind"]

#: a batch is imported once no event was journaled for this many seconds...
DEFAULT_DELAY = 0.005
#: ...or this many seconds after its first event, whichever comes first
DEFAULT_MAX_AGE = 0.05


class Behind:
    """The journal side of one Ledger's write-behind, and its import thread (started on
    the first append, again in a forked child)."""

    __slots__ = (
        "_first",
        "_gate",
        "_in_flight",
        "_last",
        "_pid",
        "_wake",
        "closed",
        "delay",
        "journaled",
        "ledger",
        "max_age",
    )

    def __init__(
        self, ledger: Ledger, delay: float = DEFAULT_DELAY, max_age: float = DEFAULT_MAX_AGE
    ) -> None:
        if not 0 <= delay <= max_age:
            raise ValueError("write-behind needs 0 <= delay <= max_age (seconds)")
        self.ledger = ledger
        self.delay = delay
        self.max_age = max_age
        self._last = 0.0  # when the last event was journaled
        self._first = 0.0  # when the batch waiting now began (0: none waits)
        self.closed = False
        #: appends under way, and the doorbell's state: ``close`` waits for the appends, and
        #: two appends never both ring an open door (the second release would raise)
        self._gate = threading.Condition(threading.Lock())
        self._in_flight = 0
        self._wake: _thread.LockType | None = None  # the thread's doorbell, once started
        self._pid = 0
        #: events journaled (tests and the bench read it)
        self.journaled = 0

    def journal(
        self, ops: list[Op], change: StateChange | None, session_id: str, agent: str
    ) -> bool:
        """Journal one event's rows when it needs no session state: True when written (the
        caller is done), False when it takes the store."""
        how = _journals(change)
        if not how:
            return False
        gate = self._gate
        with gate:
            if self.closed:  # close() imports the last batch: nothing after it
                return False
            self._in_flight += 1
        try:
            ledger = self.ledger
            if how == 1:
                done = append(ledger.path, ops, ledger.durable)
            else:
                done = append_gate(ledger.path, session_id, agent, ops, ledger.durable)
            if done:
                self.journaled += 1
                now = self._last = time.monotonic()
                ledger.journal_appended()
                with gate:
                    if not self._first:
                        self._first = now
                    self._ring()
        finally:
            with gate:
                self._in_flight -= 1
                if not self._in_flight:
                    gate.notify_all()
        return done

    def _ring(self) -> None:
        """Wake the import thread (``_gate`` held), starting it first when needed."""
        wake = self._wake
        if wake is None or self._pid != os.getpid():  # not started, or a forked child
            wake = self._wake = _thread.allocate_lock()
            wake.acquire()
            self._pid = os.getpid()
            _thread.start_new_thread(self._loop, (wake,))
        if wake.locked():
            wake.release()

    def _loop(self, wake: _thread.LockType) -> None:
        while True:
            wake.acquire()
            if self.closed or wake is not self._wake:
                return
            while True:  # the batch: until the journal was quiet for ``delay``, or max_age
                first = self._first or time.monotonic()
                wait = min(self._last + self.delay, first + self.max_age) - time.monotonic()
                if wait <= 0 or self.closed:
                    break
                time.sleep(wait)
            self._first = 0.0  # what is appended from here on is the next batch
            try:
                self.import_now()
            except Exception:  # the journal stays for the next import; the thread goes on
                from .common import logger

                logger().exception(
                    "hookrails ledger %s: the journal's import failed", self.ledger.path
                )

    def import_now(self) -> None:
        """The thread's import, under the writer's lock (none while the file cannot be
        written: the writer's own next write tries, :meth:`import_locked`)."""
        with self.ledger._lock:
            if self.ledger._degraded is None:
                self.import_locked()

    def import_locked(self) -> None:
        """Import what waits in the journal (the writer's lock held): into the file now at
        the path, keeping the imported records in the file watch's ``pending`` as this
        writer's own commits are kept, so a file found gone after the import gets them
        again. Every import of a write-behind Ledger comes here (its writes' and reads'
        too), so no path imports past the watch."""
        from .common import logger
        from .journal_import import import_journal

        ledger = self.ledger
        watch = ledger._watch
        if ledger._conn is None or not waiting(ledger.path):
            return
        moved = watch.moved()
        if moved is not None:  # into the file now at the path, not the one that went
            ledger._follow(moved, committed=True)
        conn = ledger._conn
        if conn is None:
            return
        kept: list[list[Op]] = []  # the records that stayed imported (none rolled back)
        try:
            import_journal(conn, ledger.path, ledger.busy_timeout, kept)
        except (OSError, sqlite3.Error) as exc:
            logger().warning(
                "hookrails ledger %s: the journal was not imported (%s); it waits for the "
                "next import",
                ledger.path,
                exc,
            )
            return
        ledger._checkpoints.committed()
        watch.pending.extend(kept)
        moved = watch.moved()
        if moved is None:
            watch.pending.clear()
        else:  # imported into a file no longer at the path: again into the one there
            ledger._follow(moved, committed=True)

    def close(self, wait: float = 5.0) -> None:
        """No more appends (those under way end first, up to ``wait`` seconds) and the
        thread ends; the Ledger's close imports what is left."""
        gate = self._gate
        with gate:
            self.closed = True
            gate.wait_for(lambda: not self._in_flight, timeout=wait)
            wake = self._wake
            if wake is not None and wake.locked():
                wake.release()
