"""The threads that decide for ``hookrails serve``, and each session's turn.

A hung hook may stall its own session, never the others (docs/design.md §9).

Workers. A decision runs on a worker thread so that the request, which waits,
can answer at the deadline whatever the hooks do. A hook that never returns
holds its thread forever (nothing in Python can stop a thread), so:

* the pool grows on demand: a request never waits for a thread held by another
  session's slow hook (in-flight decisions are one per session, and the
  connection cap bounds the sessions in flight); idle threads above ``size``
  end after a while;
* a thread whose call was given up at its deadline is *abandoned*: it no longer
  counts against ``max_workers``, and if it ever returns it rejoins the pool
  (when there is room) or ends;
* at most ``max_abandoned`` abandoned threads: past that the pool does not grow,
  and a call that finds no idle thread fails at once (:class:`PoolFull`)
  instead of waiting out its deadline.

Sessions. A session decides one event at a time (its state is read-modify-write).
The turn is taken by the request before a worker is asked, so waiting for a busy
session costs no worker; the worker gives it back when the event is decided,
however late. A session whose event was abandoned mid-run is *stuck* until that
run ends: its next events fail at once instead of each waiting out a deadline.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Final

__all__ = ["Job", "Pool", "PoolFull", "SessionBusy", "SessionGate", "Turn"]

_log = logging.getLogger("guardrails.serve")

#: seconds an extra (above ``size``) idle worker waits for work before it ends
_IDLE_WORKER: Final = 30.0


class PoolFull(Exception):
    """No thread can take the call: every one is busy and the abandoned ones are at the cap."""


class Job:
    """One call on the pool: ``future`` has its result. ``state``: queued, running, done or
    cancelled (given up before a worker took it)."""

    __slots__ = ("args", "fn", "future", "lock", "state", "worker")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.fn = fn
        self.args = args
        self.future: Future[Any] = Future()
        self.lock = threading.Lock()
        self.state = "queued"
        self.worker: _Worker | None = None


class _Worker:
    __slots__ = ("abandoned",)

    def __init__(self) -> None:
        self.abandoned = False


class Pool:
    """Daemon worker threads: ``size`` kept warm, up to ``max_workers`` busy at once (abandoned
    ones aside), at most ``max_abandoned`` abandoned.

    Not ``ThreadPoolExecutor``: it joins its threads at interpreter exit (a hook that never
    returns would keep the server from stopping) and cannot let a thread go.
    """

    def __init__(self, size: int, *, max_workers: int, max_abandoned: int) -> None:
        if size < 1 or max_workers < size or max_abandoned < 0:
            raise ValueError("need 1 <= size <= max_workers and max_abandoned >= 0")
        self.size = size
        self.max_workers = max_workers
        self.max_abandoned = max_abandoned
        self._queue: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self.threads = 0  # alive: idle, busy and abandoned
        self.abandoned = 0
        self._idle = 0
        self._pending = 0  # put on the queue, not yet taken
        self._started = 0
        self._closed = False
        with self._lock:
            for _ in range(size):
                self._start()

    def _start(self) -> None:
        """One more worker (under ``_lock``), idle from the start: counted so at once, or
        the next call would start another before this one ran."""
        self.threads += 1
        self._idle += 1
        self._started += 1
        name = f"hookrails-serve-{self._started}"
        threading.Thread(target=self._loop, name=name, daemon=True).start()

    def submit(self, fn: Callable[..., Any], *args: Any) -> Job:
        """Queue ``fn(*args)``; a thread is started when none is idle and there is room.
        Raises :class:`PoolFull` when there is none and the abandoned threads are at the cap."""
        job = Job(fn, args)
        with self._lock:
            if self._closed:
                raise PoolFull("the server is stopping")
            if self._pending >= self._idle:  # nobody idle will take it
                if self.abandoned > self.max_abandoned:
                    raise PoolFull(self._full_message())
                if self.threads - self.abandoned < self.max_workers:
                    self._start()
            self._pending += 1
        self._queue.put(job)
        return job

    def _full_message(self) -> str:
        return (
            f"no worker is free: {self.abandoned} hooks are still running past their deadline, "
            f"over the limit of {self.max_abandoned}"
        )

    def _loop(self) -> None:
        me = _Worker()
        while True:  # idle (counted in ``_idle``) until a job is taken
            try:
                job = self._queue.get(timeout=_IDLE_WORKER)
            except queue.Empty:
                with self._lock:
                    # no call counts on this one (submit counts ``_pending`` under the lock)
                    if self._pending == 0 and self.threads - self.abandoned > self.size:
                        self._idle -= 1
                        self.threads -= 1
                        return  # an extra worker no longer needed
                continue
            with self._lock:
                self._idle -= 1
                if job is not None:
                    self._pending -= 1
            if job is None:  # close()
                with self._lock:
                    self.threads -= 1
                return
            with job.lock:
                skip = job.state != "queued"  # the request gave up waiting: not decided late
                if not skip:
                    job.state, job.worker = "running", me
            if not skip:
                self._run(job)
            if me.abandoned and not self._rejoin(me):
                return
            with self._lock:
                self._idle += 1

    @staticmethod
    def _run(job: Job) -> None:
        try:
            result = job.fn(*job.args)
        except BaseException as exc:  # a hook's SystemExit too: the request answers it
            with job.lock:
                job.state, job.worker = "done", None
            job.future.set_exception(exc)
        else:
            with job.lock:
                job.state, job.worker = "done", None
            job.future.set_result(result)

    def _rejoin(self, me: _Worker) -> bool:
        """An abandoned worker whose call ended: back in the pool if there is room."""
        with self._lock:
            self.abandoned -= 1
            if self._closed or self.threads - self.abandoned > self.max_workers:
                self.threads -= 1
                return False
        me.abandoned = False
        _log.warning("hookrails serve: a hook past its deadline returned; its thread is back")
        return True

    def abandon(self, job: Job) -> str:
        """The request stopped waiting for ``job`` (its deadline passed). Returns
        ``"cancelled"`` (it never started, and never will), ``"done"``, or ``"abandoned"``
        (still running: its thread no longer counts, and one more may be started)."""
        with job.lock:
            if job.state == "queued":
                job.state = "cancelled"  # the worker that takes it counts it off and skips it
                return "cancelled"
            worker = job.worker
            if job.state == "done" or worker is None:
                return "done"
            if worker.abandoned:
                return "abandoned"
            worker.abandoned = True
        with self._lock:
            self.abandoned += 1
            count = self.abandoned
        level = logging.ERROR if count > self.max_abandoned else logging.WARNING
        _log.log(
            level,
            "hookrails serve: a hook is still running past its deadline; its thread is set "
            "aside (%d set aside, limit %d)",
            count,
            self.max_abandoned,
        )
        return "abandoned"

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {
                "threads": self.threads,
                "busy": self.threads - self._idle - self.abandoned,
                "abandoned": self.abandoned,
                "max_workers": self.max_workers,
                "max_abandoned": self.max_abandoned,
            }

    def close(self) -> None:
        """Stop the idle workers (and each busy one when its call ends); abandoned ones end
        when their calls do."""
        with self._lock:
            self._closed = True
            count = self.threads - self.abandoned
        for _ in range(count):
            self._queue.put(None)


class SessionBusy(Exception):
    """No turn for the session before the deadline; ``stuck``: its earlier event is still
    running past its own deadline (a hook is hung), so this one was refused at once."""

    def __init__(self, stuck: bool) -> None:
        super().__init__("stuck" if stuck else "busy")
        self.stuck = stuck


class Turn:
    """One event's hold on its session's turn (given back once, by whoever ends it)."""

    __slots__ = ("key", "slot")

    def __init__(self, key: str, slot: _Slot) -> None:
        self.key = key
        self.slot = slot


class _Slot:
    __slots__ = ("cond", "holder", "stuck", "users")

    def __init__(self) -> None:
        self.cond = threading.Condition(threading.Lock())
        self.holder: Turn | None = None
        self.stuck = False
        self.users = 0


class SessionGate:
    """Each session's turn. A slot lives while some event holds or waits for it, so the
    table is as small as the traffic."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._slots: dict[str, _Slot] = {}

    def take(self, key: str, deadline_at: float) -> Turn:
        """Wait (until ``deadline_at``, ``time.monotonic()``) for ``key``'s turn; raises
        :class:`SessionBusy` at once when the holder is stuck, else at the deadline."""
        with self._lock:
            slot = self._slots.get(key)
            if slot is None:
                slot = self._slots[key] = _Slot()
            slot.users += 1
        with slot.cond:
            slot.cond.wait_for(
                lambda: slot.holder is None or slot.stuck,
                timeout=max(deadline_at - time.monotonic(), 0.0),
            )
            if slot.holder is None:
                turn = slot.holder = Turn(key, slot)
                return turn
            stuck = slot.stuck
        self._leave(key, slot)
        raise SessionBusy(stuck)

    def stick(self, turn: Turn) -> None:
        """``turn``'s event was given up while it runs: the session's next events fail fast."""
        slot = turn.slot
        with slot.cond:
            if slot.holder is turn:
                slot.stuck = True
                slot.cond.notify_all()

    def give_back(self, turn: Turn) -> None:
        """``turn``'s event is over (decided, however late, or never started)."""
        slot = turn.slot
        with slot.cond:
            if slot.holder is not turn:
                return
            slot.holder = None
            slot.stuck = False
            slot.cond.notify_all()
        self._leave(turn.key, slot)

    def _leave(self, key: str, slot: _Slot) -> None:
        with self._lock:
            slot.users -= 1
            if slot.users == 0 and self._slots.get(key) is slot:
                del self._slots[key]

    def stuck_sessions(self) -> int:
        with self._lock:
            return sum(1 for s in self._slots.values() if s.stuck)
