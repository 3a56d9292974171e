"""Group commit for the SQLite store: one writer at a time, and the events that queue up
behind it committed together.

A guarded call's record costs one ``BEGIN IMMEDIATE ... COMMIT``; most of it is the
commit (the WAL write, and with ``durable=True`` its fsync). When several calls are in
flight in one process (threads, or asyncio tasks whose records go to threads), each
waited for the lock and then paid its own commit. :class:`WriterLock` is the
:class:`~guardrails.ledger.Ledger`'s lock: a writer that finds it free writes at once
(the lone caller pays a lock test and nothing more), and one that finds it taken queues
its event. Whoever releases the lock hands it to the first writer in the queue instead of
freeing it, and that writer commits every event queued by then in one transaction
(``many``). Each caller returns only once its own event is committed (durable to the
file's ``synchronous`` level) or, on any failure, written again on its own (committed
or spooled, as a lone write would be): a batch never loses an event.

Every other holder of the lock (a read of session state, an idempotency key, close,
recover) takes it with ``with`` and hands it on the same way on release.
"""

from __future__ import annotations

from _thread import allocate_lock

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["WriterLock"]

#: a waiter's state: still queued, done (its result is set), or to write on its own
_QUEUED, _DONE, _ALONE = 0, 1, 2


class _Waiter:
    __slots__ = ("item", "lead", "ready", "result", "state")

    def __init__(self, item: Any) -> None:
        self.item = item
        self.lead = False
        self.state = _QUEUED
        self.result: Any = None
        self.ready = allocate_lock()
        self.ready.acquire()  # released when it is done, promoted, or sent to write alone


class WriterLock:
    """A lock that is handed to the first queued writer on release (see the module)."""

    __slots__ = ("_lock", "_mutex", "_queue")

    def __init__(self) -> None:
        self._lock = allocate_lock()
        self._mutex = allocate_lock()  # guards the queue
        self._queue: list[_Waiter] = []

    def acquire(self) -> None:
        self._lock.acquire()

    def release(self) -> None:
        """Hand the lock to the first queued writer, or free it."""
        with self._mutex:
            if self._queue:
                first = self._queue[0]
                first.lead = True
                first.ready.release()  # it owns the lock now: it was never freed
                return
            self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()

    def __enter__(self) -> None:
        self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    def write(
        self,
        item: Any,
        one: Callable[[Any], Any],
        many: Callable[[list[Any]], list[Any]],
    ) -> Any:
        """``one(item)`` under the lock when it is free; else ``item`` waits in the queue
        and the writer the lock is handed to runs ``many`` over every queued item (this
        one among them); ``many`` returns one result per item, in order."""
        if self._lock.acquire(False):
            try:
                return one(item)
            finally:
                self.release()
        waiter = _Waiter(item)
        with self._mutex:
            self._queue.append(waiter)
        if not self._lock.acquire(False):  # the holder hands it to the queue's first
            waiter.ready.acquire()
            if not waiter.lead:
                if waiter.state == _ALONE:  # the batch it was in failed: write it alone
                    with self:
                        return one(item)
                return waiter.result
        # this thread holds the lock: commit everything queued so far. Its own item may be
        # gone already: a leader took it into its batch and freed the lock before this
        # thread tried it again (done then, or to be written alone: the batch failed)
        with self._mutex:
            batch, self._queue = self._queue, []
        try:
            if waiter.state == _ALONE:
                waiter.result, waiter.state = one(item), _DONE
            if batch:
                results = many([w.item for w in batch])
                for w, result in zip(batch, results, strict=True):
                    w.result, w.state = result, _DONE
        finally:
            mine = waiter.result
            for w in batch:
                if w is not waiter:
                    if w.state != _DONE:
                        w.state = _ALONE
                    w.ready.release()
            self.release()
        return mine
