"""Who accepts ``hookrails serve``'s connections: the pool's own threads.

socketserver accepts on the thread that runs ``serve_forever`` and hands each connection
to another thread: a wake-up of that thread on every new connection's path. Here the
thread that accepts a connection serves it, then accepts again while fewer than
``acceptors`` threads accept. On Linux (5.7 and later) three threads accept at once, each
waiting in an epoll with ``EPOLLEXCLUSIVE``, so the kernel wakes one of them per
connection, and a client that connects for every call is served with no other thread
woken at all. Elsewhere one thread accepts at a time (leader/follower). Whoever takes the
last accepting place hands it to another pool thread (woken off the connection's path)
before serving, so hooks that run long never leave the server deaf. The epolls go with
the places, not the threads: at most three exist, however many connections are served.
A poll that times out still tries to accept, so a lost wake-up costs one poll.

Admission (the cap, evictions, a 503 when every connection is busy) runs on the
accepting thread. The thread that calls ``serve_forever`` only waits for ``shutdown``;
it appoints the accepting threads when there is none (at the start; again within a poll
whenever accepting was lost: a thread that could not start, one that failed). The
contract is socketserver's: ``shutdown()`` returns once no thread accepts, a
``shutdown()`` before ``serve_forever`` makes it return at once, and it can run again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import select
import socket
import threading
import time
from typing import TYPE_CHECKING, Any

from .serve_pool import Pool, PoolClosed

__all__ = ["PoolAccept", "exclusive_wakeups"]

_log = logging.getLogger("guardrails.serve")

#: seconds an accepting thread sleeps after ``accept`` failed (out of file descriptors)
_ACCEPT_BACKOFF = 0.01

#: threads that accept at once with exclusive wake-ups: a client that connects for every
#: call has two connections open at a time (one still closing), so a third thread is
#: always waiting and nobody is woken to take over
EXCLUSIVE_ACCEPTORS = 3


def exclusive_wakeups() -> bool:
    """Whether this system wakes one of several epolls waiting on a socket, reliably:
    ``EPOLLEXCLUSIVE`` (Linux 4.5), on Linux 5.7 or later (before, a woken thread stayed
    queued until it ran, so a second connection could be handed to it and wake nobody).
    Asked of a throwaway pair."""
    flag = getattr(select, "EPOLLEXCLUSIVE", None)
    if flag is None or not hasattr(select, "epoll") or _linux_release() < (5, 7):
        return False
    a, b = socket.socketpair()
    try:
        with select.epoll() as ep:
            ep.register(a.fileno(), select.EPOLLIN | flag)
        return True
    except OSError:  # an older kernel refuses the flag
        return False
    finally:
        a.close()
        b.close()


def _linux_release() -> tuple[int, int]:
    """(major, minor) of the running Linux kernel; (0, 0) when it cannot be read."""
    found = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


class PoolAccept:
    """``serve_forever``/``shutdown`` for a socketserver whose pool threads accept (see the
    module); the server gives ``admit(request) -> bool`` (False: refused, closed)."""

    socket: socket.socket
    pool: Pool

    def _init_accepting(self) -> None:
        self._stop = False
        self._serving = False  # serve_forever runs: a thread that served may accept again
        self._wake = threading.Event()  # shutdown() asked
        self._stopped = threading.Event()  # serve_forever returned
        self._nobody_accepts = threading.Event()  # nobody accepts (set while not serving)
        self._nobody_accepts.set()
        self._lock = threading.Lock()
        self._accepting = 0  # threads accepting, or handed the accepting and starting
        self._in_service = 0  # threads serving a connection they accepted
        self._unappointed = False  # the last appointment failed (said once)
        self._no_epoll = False  # the last epoll could not be made (said once)
        #: the epolls of accepting places given up with nobody to take them (at most
        #: ``acceptors`` epolls exist: they go with the places, not with the threads)
        self._spares: list[Any] = []
        self._poll = 0.1
        #: how many threads accept at once (more than one only with exclusive wake-ups)
        self.acceptors = EXCLUSIVE_ACCEPTORS if exclusive_wakeups() else 1
        #: a byte here wakes every epoll at once when accepting stops (not at its next poll)
        self._stopping: tuple[int, int] | None = None
        if self.acceptors > 1:
            self._stopping = os.pipe()
            for fd in self._stopping:
                os.set_blocking(fd, False)

    def _close_accepting(self) -> None:
        """For ``server_close``: the stop pipe's descriptors."""
        with self._lock:  # never a write into a descriptor closed (and reused) meanwhile
            stopping, self._stopping = self._stopping, None
            for fd in stopping or ():
                os.close(fd)

    def _say_stop(self) -> None:
        """Wake the threads waiting in their epolls: accepting stops."""
        with self._lock, contextlib.suppress(OSError):  # full: an earlier stop woke all
            if self._stopping is not None:
                os.write(self._stopping[1], b"x")

    def _unsay_stop(self) -> None:
        """Empty the stop pipe, so the next ``serve_forever`` waits again."""
        with self._lock, contextlib.suppress(OSError):  # empty
            while self._stopping is not None and os.read(self._stopping[0], 512):
                pass

    def serve_forever(self, poll_interval: float = 0.1) -> None:
        """Serve until ``shutdown()``; it returns within ``poll_interval`` of it (the
        accepting threads' wait; at once when they wait in epolls)."""
        self._stopped.clear()
        try:
            self._poll = poll_interval
            # several threads accept: each waits in its own epoll, ``accept`` never blocks
            self.socket.settimeout(0.0 if self.acceptors > 1 else poll_interval)
            with self._lock:
                self._serving = True
            while not self._stop:
                if self._nobody_accepts.is_set() and not self._appoint():
                    break  # the pool is closed: the server is stopping
                self._wake.wait(poll_interval)  # a loop: a signal's exception gets through
            with self._lock:
                self._serving = False
            self._nobody_accepts.wait()
            with self._lock:
                spares, self._spares = self._spares, []
            for waiter in spares:
                waiter.close()
        finally:
            self._serving = False
            self._unsay_stop()
            self._stop = False
            self._wake.clear()
            self._stopped.set()

    def _appoint(self) -> bool:
        """Threads to accept when there is none: ``acceptors`` of them at the start, and
        again whenever the accepting was lost (a thread that could not start, one that
        failed). False: the pool is closed."""
        with self._lock:
            wanted = max(self.acceptors - self._accepting, 0)
            self._accepting += wanted
            if self._accepting:
                self._nobody_accepts.clear()
        failed = False
        for n in range(wanted):
            try:
                self.pool.submit(self._lead)
            except PoolClosed:
                for _ in range(wanted - n):
                    self._leave()
                return False
            except Exception:  # no thread now (a process limit): asked again next poll
                self._leave()
                failed = True
        if failed and not self._unappointed:  # said once, not every poll
            _log.warning("hookrails serve: no thread to accept connections; trying again")
        self._unappointed = failed
        return True

    def thread_stats(self) -> dict[str, int]:
        """The pool's threads: how many, how many serve a connection, and how many accept
        (busy to the pool, but serving nothing; a place handed on counts before its thread
        runs)."""
        stats = self.pool.stats()
        with self._lock:
            accepting, busy = self._accepting, self._in_service
        return {"threads": stats["threads"], "busy": busy, "accepting": accepting}

    def shutdown(self) -> None:
        """Stop ``serve_forever`` and wait until it returned (nobody accepts any more)."""
        self._stop = True
        self._say_stop()
        self._wake.set()
        self._stopped.wait()

    def stop_accepting(self, wait: float) -> None:
        """For ``server_close``: nobody accepts past ``wait`` seconds (a thread waiting to
        accept leaves at its next poll), so the listening socket is closed under nobody."""
        self._stop = True
        self._say_stop()
        self._nobody_accepts.wait(wait)

    def _leave(self) -> None:
        """This thread's accepting place is given up."""
        with self._lock:
            self._accepting -= 1
            if self._accepting <= 0:
                self._nobody_accepts.set()

    def _rejoin(self) -> tuple[bool, Any]:
        """After serving: accept again while fewer than ``acceptors`` do; with the epoll
        of a place given up, if one waits."""
        with self._lock:
            if self._stop or not self._serving or self._accepting >= self.acceptors:
                return False, None
            self._accepting += 1
            self._nobody_accepts.clear()
            return True, self._spares.pop() if self._spares else None

    def _lead(self, waiter: Any = None) -> None:
        """Accept until a connection is admitted, serve it here; again while wanted.
        ``waiter``: the epoll that came with the accepting place."""
        counted = True  # this thread holds an accepting place
        try:
            while True:
                if waiter is None and self.acceptors > 1:
                    waiter = self._epoll()
                    if waiter is None:
                        return
                taken = self._take(waiter)
                if taken is None:
                    return
                counted, waiter = False, None  # the place (and epoll) went on: _pass_on
                with self._lock:
                    self._in_service += 1
                try:
                    self.process_request_thread(*taken)
                finally:
                    with self._lock:
                        self._in_service -= 1
                counted, waiter = self._rejoin()
                if not counted:
                    return
        finally:
            if counted:
                if waiter is not None:
                    waiter.close()
                self._leave()

    def _epoll(self) -> Any:
        """A new epoll waiting on the listening socket, exclusively; None when none can be
        made (out of descriptors, say: said once, and this thread gives up its place after
        a poll, to be appointed again once nobody accepts)."""
        try:
            waiter = select.epoll()
        except OSError as exc:
            self._no_epoll_said(exc)
            return None
        try:
            waiter.register(self.socket.fileno(), select.EPOLLIN | select.EPOLLEXCLUSIVE)
            if self._stopping is not None:
                waiter.register(self._stopping[0], select.EPOLLIN)
        except OSError as exc:
            waiter.close()
            self._no_epoll_said(exc)
            return None
        self._no_epoll = False
        return waiter

    def _no_epoll_said(self, exc: OSError) -> None:
        with self._lock:  # several threads may fail at once: one says it
            said, self._no_epoll = self._no_epoll, True
        if not said:
            _log.warning("hookrails serve: cannot wait for connections (%s); trying again", exc)
        time.sleep(self._poll)  # the next appointment, no sooner

    def _take(self, waiter: Any) -> tuple[Any, Any] | None:
        """The next admitted connection, this thread's accepting place passed on; None
        when stopping (the place still held)."""
        while not self._stop:
            if waiter is not None:
                # a poll that timed out still tries: a lost wake-up costs one poll at most
                waiter.poll(self._poll, 1)
                if self._stop:
                    break
            try:
                request, client_address = self.get_request()
            except (BlockingIOError, TimeoutError):  # another thread took it, or none came
                continue
            except OSError:
                if self._stop or self.socket.fileno() < 0:
                    return None
                time.sleep(_ACCEPT_BACKOFF)  # EMFILE and the like: no busy loop
                continue
            try:
                admitted = self.admit(request)
            except Exception:  # a bug admitting one connection costs that one only
                self.handle_error(request, client_address)
                self.shutdown_request(request)
                continue
            if not admitted:
                continue
            passed = self._pass_on(waiter)
            if passed is None:  # the pool is closed: stopping
                self.shutdown_request(request)
                return None
            if not passed:  # nobody to accept in its place (a process limit): this one stays
                self.handle_error(request, client_address)
                self.shutdown_request(request)  # dropped, as socketserver drops it
                continue
            return request, client_address
        return None

    def _pass_on(self, waiter: Any) -> bool | None:
        """Give up this thread's accepting place (and its epoll, ``waiter``) to serve a
        connection: True when others still accept (the epoll kept for whoever accepts
        again), or a pool thread was handed the place (woken off this path); False when no
        thread could take it (this one keeps it); None when the pool is closed."""
        with self._lock:
            if self._accepting > 1:
                self._accepting -= 1
                if waiter is not None:
                    self._spares.append(waiter)
                return True
        try:
            self.pool.submit(self._lead, waiter)  # it inherits this thread's place
        except PoolClosed:
            return None
        except Exception:
            return False
        return True

    if TYPE_CHECKING:  # what the socketserver server brings

        def get_request(self) -> tuple[Any, Any]: ...
        def admit(self, request: Any) -> bool: ...
        def handle_error(self, request: Any, client_address: Any) -> None: ...
        def shutdown_request(self, request: Any) -> None: ...
        def process_request_thread(self, request: Any, client_address: Any) -> None: ...
