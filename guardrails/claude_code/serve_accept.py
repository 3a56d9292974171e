"""How ``hookrails serve`` accepts connections: leader/follower, on the pool's threads.

socketserver accepts on the thread that runs ``serve_forever`` and hands each
connection to another thread. That handoff (waking the other thread, which then
waits for the GIL) sat on the path of every call that opens a connection: about
0.2 ms of a 1.1 ms call. Here one pool thread at a time, the *leader*, waits for a
connection. The leader that accepts one admits it, hands the waiting to another
thread (:meth:`Pool.submit` with ``lead=True``), and serves the connection itself.
The next leader wakes while this call is being decided, off its path.

``serve_forever`` keeps its contract (it returns after :meth:`shutdown`, and signals
reach its thread, which only waits), and so does admission: a connection the server
has no room for is refused (503) or takes an idle connection's place, on the
leader, before it leads on.
"""

from __future__ import annotations

import selectors
import socket
import threading
from typing import TYPE_CHECKING, Any

from .serve_pool import PoolClosed

if TYPE_CHECKING:
    from .serve_pool import Pool

__all__ = ["LeaderAccept"]

_Selector = getattr(selectors, "PollSelector", selectors.SelectSelector)


class LeaderAccept:
    """A mixin for a ``socketserver.TCPServer`` (before it in the bases) that has a
    ``pool`` (:class:`~.serve_pool.Pool`) and an ``admit(request) -> bool`` deciding
    whether a new connection is served (``False``: it was refused and closed)."""

    pool: Pool
    socket: socket.socket

    def admit(self, request: Any) -> bool:
        raise NotImplementedError

    if TYPE_CHECKING:  # socketserver's, for the type checker

        def get_request(self) -> tuple[Any, Any]: ...
        def verify_request(self, request: Any, client_address: Any) -> bool: ...
        def process_request_thread(self, request: Any, client_address: Any) -> None: ...
        def shutdown_request(self, request: Any) -> None: ...
        def handle_error(self, request: Any, client_address: Any) -> None: ...

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        #: set by :meth:`shutdown`; the leader stops at its next look
        self._stopping = False
        #: the leader stopped (set by it, once stopping)
        self._led = threading.Event()
        #: ``serve_forever`` returned (what :meth:`shutdown` waits for, as socketserver's)
        self._stopped = threading.Event()
        self._poll = 0.5
        self._selector: selectors.BaseSelector | None = None
        super().__init__(*args, **kwargs)

    def serve_forever(self, poll_interval: float = 0.1) -> None:
        """Serve until :meth:`shutdown` (which returns within ``poll_interval``, 0.5 s in
        socketserver); this thread only waits, so a signal handler's exception (SIGINT)
        is raised here, and stops the leader as :meth:`shutdown` would."""
        self._stopped.clear()
        self._led.clear()
        self._poll = poll_interval
        selector = self._selector = _Selector()
        selector.register(self.socket, selectors.EVENT_READ)
        try:
            if not self._stopping:
                try:
                    self.pool.submit(self._lead, lead=True)
                except PoolClosed:
                    self._led.set()
                while not self._led.wait(poll_interval):
                    pass
        finally:
            self._stopping = True
            if self._led.wait(max(1.0, 4 * poll_interval)):  # no leader selects any more
                selector.close()
            self._stopping = False
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop accepting; returns once ``serve_forever`` has (called before it, it makes
        that return at once, as in socketserver). Connections being served finish on
        their threads."""
        self._stopping = True
        self._stopped.wait()

    def _lead(self) -> None:
        """Wait for a connection and admit it; hand the waiting on, and serve it here."""
        try:
            accepted = self._accept()
        except BaseException:  # never leave the server without a leader
            if not self._stopping:
                self._succeed()
            raise
        if accepted is None:  # stopping
            self._led.set()
            return
        if not self._succeed():
            self.shutdown_request(accepted[0])
            return
        self.process_request_thread(*accepted)

    def _succeed(self) -> bool:
        """Another thread leads now; ``False`` when the pool is closed (the server stops)."""
        try:
            self.pool.submit(self._lead, lead=True)
        except PoolClosed:
            self._led.set()
            return False
        return True

    def _accept(self) -> tuple[Any, Any] | None:
        """The next admitted connection, or ``None`` once stopping."""
        assert self._selector is not None
        select = self._selector.select
        poll = self._poll
        while not self._stopping:
            if not select(poll) or self._stopping:
                continue
            try:
                request, client_address = self.get_request()
            except OSError:  # gone before accepted, or the socket closed (stopping)
                if self.socket.fileno() < 0:
                    return None
                continue
            try:
                if not self.verify_request(request, client_address):
                    self.shutdown_request(request)
                elif self.admit(request):
                    return request, client_address
            except Exception:
                self.handle_error(request, client_address)
                self.shutdown_request(request)
        return None
