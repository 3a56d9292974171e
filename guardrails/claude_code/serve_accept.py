"""Who accepts ``hookrails serve``'s connections: a leader among the pool's threads.

socketserver accepts on the thread that runs ``serve_forever`` and hands each connection
to another thread: a wake-up of that thread on every new connection's path, which cost a
new connection per call ~25 us (a tenth of the answer). Here the thread that accepts a
connection serves it (leader/follower): one pool thread at a time leads, blocked in
``accept``; when a connection is admitted it passes the lead to another pool thread
(woken off this connection's path) and serves the connection itself. Admission (the cap,
evictions, a 503 when every connection is busy) runs on the leader, as it ran on the
accepting thread. The thread that calls ``serve_forever`` only waits for ``shutdown``;
it appoints a leader when there is none (at the start; again within a poll whenever the
lead was lost: a thread that could not start, a leader that failed). The contract is
socketserver's: ``shutdown()`` returns once no thread accepts, a ``shutdown()`` before
``serve_forever`` makes it return at once, and it can run again.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from typing import TYPE_CHECKING, Any

from .serve_pool import Pool, PoolClosed

__all__ = ["LeaderAccept"]

_log = logging.getLogger("guardrails.serve")

#: seconds a leader sleeps after ``accept`` failed (out of file descriptors, say)
_ACCEPT_BACKOFF = 0.01


class LeaderAccept:
    """``serve_forever``/``shutdown`` for a socketserver whose pool threads accept (see the
    module); the server gives ``admit(request) -> bool`` (False: refused, closed)."""

    socket: socket.socket
    pool: Pool

    def _init_leading(self) -> None:
        self._stop = False
        self._wake = threading.Event()  # shutdown() asked
        self._stopped = threading.Event()  # serve_forever returned
        self._no_leader = threading.Event()  # nobody accepts (set while not serving)
        self._no_leader.set()
        self._unappointed = False  # the last appointment failed (said once)

    def serve_forever(self, poll_interval: float = 0.1) -> None:
        """Serve until ``shutdown()``; it returns within ``poll_interval`` of it (the
        leader's ``accept`` timeout)."""
        self._stopped.clear()
        try:
            self.socket.settimeout(poll_interval)
            while not self._stop:
                if self._no_leader.is_set() and not self._appoint():
                    break  # the pool is closed: the server is stopping
                self._wake.wait(poll_interval)  # a loop: a signal's exception gets through
            self._no_leader.wait()
        finally:
            self._stop = False
            self._wake.clear()
            self._stopped.set()

    def _appoint(self) -> bool:
        """A leader when there is none: at the start, and again whenever the lead was lost
        (a thread that could not start, a leader that failed). False: the pool is closed."""
        self._no_leader.clear()
        try:
            self.pool.submit(self._lead)
        except PoolClosed:
            self._no_leader.set()
            return False
        except Exception:  # no thread now (a process limit): asked again next poll
            self._no_leader.set()
            if not self._unappointed:  # said once, not every poll
                _log.warning("hookrails serve: no thread to accept connections; trying again")
            self._unappointed = True
        else:
            self._unappointed = False
        return True

    def thread_stats(self) -> dict[str, int]:
        """The pool's threads: how many, how many serve a connection, and whether one
        accepts (the leader is busy to the pool, but serves nothing)."""
        stats = self.pool.stats()
        leading = 0 if self._no_leader.is_set() else 1
        busy = max(0, stats["busy"] - leading)
        return {"threads": stats["threads"], "busy": busy, "accepting": leading}

    def shutdown(self) -> None:
        """Stop ``serve_forever`` and wait until it returned (nobody accepts any more)."""
        self._stop = True
        self._wake.set()
        self._stopped.wait()

    def stop_accepting(self, wait: float) -> None:
        """For ``server_close``: no leader past ``wait`` seconds (one in ``accept`` leaves
        at its next timeout), so the listening socket is closed under nobody."""
        self._stop = True
        self._no_leader.wait(wait)

    def _lead(self) -> None:
        """Accept until a connection is admitted, pass the lead on, serve it here."""
        taken = None
        try:
            taken = self._take()
        finally:
            if taken is None:  # stopping (or failed): nobody leads now
                self._no_leader.set()
        if taken is not None:
            self.process_request_thread(*taken)

    def _take(self) -> tuple[Any, Any] | None:
        """The next admitted connection, the lead passed on; None when stopping."""
        while not self._stop:
            try:
                request, client_address = self.get_request()
            except TimeoutError:
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
            try:
                self.pool.submit(self._lead)  # the next leader, woken off this path
            except PoolClosed:
                self.shutdown_request(request)
                return None
            except Exception:  # no thread to lead (a process limit): this one stays
                self.handle_error(request, client_address)
                self.shutdown_request(request)  # dropped, as socketserver drops it
                continue
            return request, client_address
        return None

    if TYPE_CHECKING:  # what the socketserver server brings

        def get_request(self) -> tuple[Any, Any]: ...
        def admit(self, request: Any) -> bool: ...
        def handle_error(self, request: Any, client_address: Any) -> None: ...
        def shutdown_request(self, request: Any) -> None: ...
        def process_request_thread(self, request: Any, client_address: Any) -> None: ...
