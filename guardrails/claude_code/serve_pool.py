"""The threads of ``hookrails serve``: the connections' threads, the watchdog, each session's turn.

A hung hook may stall its own session, never the others (docs/design.md §9).

Connection threads. A connection is served by one thread from :class:`Pool`, which
reads its requests and decides their events itself: no handoff per call. The pool keeps
``size`` threads warm and starts more when none is idle (a new connection never waits
for a thread another connection holds; the connection cap bounds them); an idle extra
ends after a while.

The watchdog. A hook that never returns holds its thread forever (nothing in Python
can stop a thread), so the thread cannot be the one that answers at the deadline.
:class:`Watchdog` is one thread that calls a run's ``fire`` (on a thread of its own: it
records and writes) when the run's deadline passes before it was cancelled. The usual
run is cancelled in time and costs two short critical sections: the watchdog is woken
only for a run due before the time it already sleeps towards, and an idle watchdog
sleeps the shortest delay it is ever given, so a call that starts after that never
wakes it.

Sessions. A session decides one event at a time (its state is read-modify-write):
:class:`SessionGate`. A session whose event was abandoned mid-run is *stuck* until
that run ends: its next events fail at once instead of each waiting out a deadline.
"""

from __future__ import annotations

import logging
import math
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, Final

__all__ = ["Pool", "PoolClosed", "SessionBusy", "SessionGate", "Timer", "Turn", "Watchdog"]

_log = logging.getLogger("guardrails.serve")

#: seconds an extra (above ``size``) idle thread waits for work before it ends
_IDLE_THREAD: Final = 30.0


class PoolClosed(Exception):
    """The server is stopping: no thread takes new work."""


class Pool:
    """Daemon threads: ``size`` kept warm, a new one whenever none is idle, up to
    ``max_threads`` (past it work waits for the next thread to free up).

    Not ``ThreadPoolExecutor``: it joins its threads at interpreter exit (a hook that never
    returns would keep the server from stopping), and it never grows past a busy thread.
    """

    def __init__(self, size: int, *, max_threads: int) -> None:
        if size < 1 or max_threads < size:
            raise ValueError("need 1 <= size <= max_threads")
        self.size = size
        self.max_threads = max_threads
        self._queue: queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...]] | None] = (
            queue.SimpleQueue()
        )
        self._lock = threading.Lock()
        self.threads = 0  # alive: idle and busy
        self._idle = 0
        self._pending = 0  # put on the queue, not yet taken
        self._started = 0
        self._closed = False
        with self._lock:
            for _ in range(size):
                self._start()

    def _start(self) -> None:
        """One more thread (under ``_lock``), idle from the start: counted so at once, or
        the next call would start another before this one ran."""
        self.threads += 1
        self._idle += 1
        self._started += 1
        name = f"hookrails-serve-{self._started}"
        try:
            threading.Thread(target=self._loop, name=name, daemon=True).start()
        except BaseException:  # no thread (a process limit): counted idle, it would hold work
            self.threads -= 1
            self._idle -= 1
            raise

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` on an idle thread, a new one when none is idle and there is
        room; raises :class:`PoolClosed` once :meth:`close` was called."""
        with self._lock:
            if self._closed:
                raise PoolClosed("the server is stopping")
            if self._pending >= self._idle and self.threads < self.max_threads:
                self._start()  # nobody idle will take it
            self._pending += 1
        self._queue.put((fn, args))

    def _loop(self) -> None:
        while True:  # idle (counted in ``_idle``) until work is taken
            try:
                work = self._queue.get(timeout=_IDLE_THREAD)
            except queue.Empty:
                with self._lock:
                    # no work counts on this one (submit counts ``_pending`` under the lock)
                    if self._pending == 0 and self.threads > self.size:
                        self._idle -= 1
                        self.threads -= 1
                        return  # an extra thread no longer needed
                continue
            with self._lock:
                self._idle -= 1
                if work is None:  # close()
                    self.threads -= 1
                    return
                self._pending -= 1
            fn, args = work
            try:
                fn(*args)
            except BaseException:  # the work answers its own errors; the thread goes on
                _log.exception("hookrails serve: a connection's thread failed")
            with self._lock:
                self._idle += 1

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"threads": self.threads, "busy": self.threads - self._idle}

    def close(self) -> None:
        """Stop the idle threads (and each busy one when its work ends)."""
        with self._lock:
            self._closed = True
            count = self.threads
        for _ in range(count):
            self._queue.put(None)


class Timer:
    """One run under a deadline (``time.monotonic()``): ``fire`` is called at ``at`` unless
    :meth:`Watchdog.cancel` came first."""

    __slots__ = ("at", "fire")

    def __init__(self, at: float, fire: Callable[[], None]) -> None:
        self.at = at
        self.fire: Callable[[], None] | None = fire


class Watchdog:
    """One thread that fires each run's timer at its deadline, unless cancelled first.

    ``floor``: the shortest delay it will be given; an idle watchdog sleeps that long, so
    a run started while it sleeps is due after it wakes and needs no wake-up.
    """

    def __init__(self, floor: float) -> None:
        self.floor = max(floor, 0.001)
        self._cond = threading.Condition(threading.Lock())
        self._live: dict[Timer, None] = {}  # the runs not yet fired nor cancelled
        self._wake_at = math.inf  # what the thread sleeps towards; inf: not asleep yet
        self._closed = False
        self.wakeups = 0  # how often a new run woke the thread (rare: see above)
        threading.Thread(target=self._run, name="hookrails-serve-watchdog", daemon=True).start()

    def start(self, at: float, fire: Callable[[], None]) -> Timer:
        """Watch a run due at ``at``: ``fire()`` is called then (on a new thread) unless
        :meth:`cancel` comes first."""
        timer = Timer(at, fire)
        with self._cond:
            self._live[timer] = None
            if at < self._wake_at:  # due before the thread wakes: wake it
                self.wakeups += 1
                self._cond.notify()
        return timer

    def cancel(self, timer: Timer) -> bool:
        """The run ended: True when it ended in time (``fire`` was not and will not be
        called), False when the watchdog fired it already."""
        with self._cond:
            if self._live.pop(timer, 0) is None:
                timer.fire = None
                return True
            return False

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()

    def _run(self) -> None:
        with self._cond:
            while not self._closed:
                now = time.monotonic()
                due = [t for t in self._live if t.at <= now]
                for timer in due:
                    del self._live[timer]
                nxt = min((t.at for t in self._live), default=now + self.floor)
                self._wake_at = nxt
                if due:
                    self._cond.release()
                    try:
                        for timer in due:
                            self._fire(timer)
                    finally:
                        self._cond.acquire()
                    continue
                self._cond.wait(max(nxt - now, 0.0))

    @staticmethod
    def _fire(timer: Timer) -> None:
        fire, timer.fire = timer.fire, None
        if fire is None:
            return
        try:  # a thread of its own: it records and answers, which may block
            threading.Thread(target=fire, name="hookrails-serve-deadline", daemon=True).start()
            return
        except RuntimeError:  # no thread to be had (a process limit): answer from here
            _log.warning("hookrails serve: no thread for a deadline answer; answering inline")
        try:
            fire()
        except Exception:  # the watchdog must outlive any one answer
            _log.exception("hookrails serve: a deadline answer failed")


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
