"""The connections of ``hookrails serve``: how many, how long a request may take to arrive,
and how its head is read.

Each connection has a thread (``ThreadingHTTPServer``), so slow or idle clients
could take every thread (slowloris: 500 slow sockets made 500 threads). Here:

* a request must arrive whole (line, headers, body) within ``request_timeout``
  of its first byte; a keep-alive connection may idle ``idle_timeout`` between
  requests; each read waits only what is left, so a byte a second cannot
  stretch either;
* at most ``max_connections`` connections. At the cap a new one takes the place
  of the connection that has waited longest for its request (idle, or its
  request still trickling in) and has nothing to read right now (a request that
  arrived whole, its thread about to read it, is never cut off), whose socket is
  shut so its thread ends at once;
  up to ``slack`` such evicted threads may still be ending (past that, the
  accepting thread waits up to ``EVICTION_WAIT`` for one to end: a burst of
  connections is accepted at the pace threads end, and the kernel's backlog
  holds the rest). When every connection is busy (its request read: deciding
  or answering), the new one is answered 503 and closed at once, on the
  accepting thread.

A request's head (:func:`parse_head`) is read as ``http.server`` reads it (the same
limits, errors and defaults) but without the ``email`` package, which took ~50 us a
request, as long as the rest of the answer; it is stricter where ``email`` guessed: a
folded header line or a malformed name is a 400, not a header dropped or merged.
"""

from __future__ import annotations

import contextlib
import io
import re
import select
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any, Final

from .._version import __version__

_poll = getattr(select, "poll", None)
_POLLIN: Final = getattr(select, "POLLIN", 1)

__all__ = [
    "BUSY_RESPONSE",
    "EVICTION_WAIT",
    "SERVER",
    "BadHead",
    "Conn",
    "Connections",
    "DeadlineReader",
    "Head",
    "Headers",
    "answer_head",
    "parse_head",
    "read_headers",
]

#: http.client's limits: header lines per request, bytes per line
MAX_HEADERS: Final = 100
MAX_LINE: Final = 65536
#: a header line: a token (RFC 9110 field name), a colon, the value
_VERSION: Final = re.compile(r"HTTP/([0-9]{1,10})\.([0-9]{1,10})")
_FIELD: Final = re.compile(r"([!#$%&'*+\-.^_`|~0-9A-Za-z]+):(.*)", re.DOTALL)

#: the Server header of every answer
SERVER: Final = f"hookrails/{__version__}"
#: reason phrases, as ``BaseHTTPRequestHandler.send_response`` writes them
_PHRASES: Final = {int(c): phrase for c, (phrase, _) in BaseHTTPRequestHandler.responses.items()}

#: seconds the accepting thread waits for an evicted connection's thread to end
EVICTION_WAIT: Final = 1.0

_BUSY_BODY: Final = (
    b'{"error": "hookrails serve is at its connection limit and every connection is busy: '
    b'try again"}'
)
#: the whole answer to a connection over the cap (it fits a socket's send buffer)
BUSY_RESPONSE: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\nRetry-After: 1\r\nCache-Control: no-store\r\n"
    b"Connection: close\r\n\r\n%s" % (len(_BUSY_BODY), _BUSY_BODY)
)


class Conn:
    """One connection: whether its thread waits for a request (idle, or the request still
    coming in: it may then be evicted), since when, its read deadline, and whether it was
    evicted."""

    __slots__ = ("deadline", "evicted", "reading", "since", "sock", "started")

    def __init__(self, sock: socket.socket, idle_timeout: float) -> None:
        self.sock = sock
        self.since = time.monotonic()
        self.deadline = self.since + idle_timeout
        self.reading = True
        self.started = False
        self.evicted = False


class DeadlineReader(io.RawIOBase):
    """The socket, read under its connection's deadline (wrap it in ``io.BufferedReader``):
    the idle wait, then the whole request within ``request_timeout`` of its first byte."""

    def __init__(self, sock: socket.socket, conn: Conn, request_timeout: float) -> None:
        self.sock = sock
        self.conn = conn
        self.request_timeout = request_timeout

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        conn = self.conn
        left = conn.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not arrive in time")
        self.sock.settimeout(left)
        n = self.sock.recv_into(buffer)
        if n and not conn.started:  # the first byte: the request's own deadline begins
            conn.started = True
            conn.deadline = time.monotonic() + self.request_timeout
        return n


class Connections:
    """The table of open connections, and the admission rule of the module docstring."""

    def __init__(self, max_connections: int, *, idle_timeout: float) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.max_connections = max_connections
        #: evicted connections whose threads are still ending, on top of the cap
        self.slack = max(4, max_connections // 4)
        self.idle_timeout = idle_timeout
        self._open: dict[socket.socket, Conn] = {}
        self._lock = threading.Condition()

    def admit(
        self, sock: socket.socket, wait: float = EVICTION_WAIT
    ) -> tuple[Conn | None, Conn | None]:
        """``(the new connection's record or None: refuse it, the evicted one or None)``.
        The caller shuts the evicted one's socket (:func:`evict`)."""
        end = time.monotonic() + wait
        with self._lock:
            while True:
                count = len(self._open)
                victim = None
                if count >= self.max_connections:
                    waiting = [c for c in self._open.values() if c.reading and not c.evicted]
                    waiting.sort(key=lambda c: c.since)
                    victim = next((c for c in waiting if _quiet(c.sock)), None)
                    if victim is None:
                        return None, None  # every connection is busy
                    left = end - time.monotonic()
                    if count >= self.max_connections + self.slack:
                        if left <= 0:
                            return None, None
                        self._lock.wait(left)  # for an evicted one to end (``drop``)
                        continue
                    victim.evicted = True
                conn = self._open[sock] = Conn(sock, self.idle_timeout)
                return conn, victim

    def drop(self, sock: Any) -> None:
        with self._lock:
            if self._open.pop(sock, None) is not None:
                self._lock.notify_all()

    def get(self, sock: socket.socket) -> Conn:
        with self._lock:
            conn = self._open.get(sock)
        return conn if conn is not None else Conn(sock, self.idle_timeout)

    def await_request(self, conn: Conn) -> None:
        """The connection waits for its next request: evictable again, the idle deadline."""
        with self._lock:
            conn.reading, conn.started = True, False
            conn.since = time.monotonic()
            conn.deadline = conn.since + self.idle_timeout

    def request_read(self, conn: Conn) -> None:
        """The request is in: its answer is not evicted (``ConnectionError`` when it was,
        while it was read)."""
        with self._lock:
            if conn.evicted:
                raise ConnectionError("the connection was evicted for a new one")
            conn.reading = False

    def waiting(self) -> int:
        """Connections waiting for a request (idle or one coming in): the evictable ones."""
        with self._lock:
            return sum(1 for c in self._open.values() if c.reading and not c.evicted)

    def sockets(self) -> list[socket.socket]:
        with self._lock:
            return list(self._open)

    def __len__(self) -> int:
        with self._lock:
            return len(self._open)


def _quiet(sock: socket.socket) -> bool:
    """Nothing to read on ``sock`` now: an idle connection, or a request trickling in (its
    thread reads what came). A request that arrived, still unread, is not quiet."""
    if _poll is None:  # no poll() (Windows): every waiting connection counts as quiet
        return True
    try:
        watch = _poll()
        watch.register(sock, _POLLIN)
        return not watch.poll(0)
    except (OSError, ValueError):  # closed meanwhile: as good as idle
        return True


def evict(conn: Conn) -> None:
    """Shut an evicted connection's socket: its thread's read returns, and it ends."""
    with contextlib.suppress(OSError):
        conn.sock.shutdown(socket.SHUT_RDWR)


def refuse(sock: socket.socket) -> None:
    """Answer 503 without blocking (dropped if it does not fit the send buffer)."""
    with contextlib.suppress(OSError):
        sock.setblocking(False)
        sock.send(BUSY_RESPONSE)


class Headers:
    """A request's headers by name, any case; a name sent twice reads as its first value
    (as ``email.message.Message.get`` did)."""

    __slots__ = ("_fields",)

    def __init__(self, fields: dict[str, str]) -> None:
        self._fields = fields

    def get(self, name: str, default: str | None = None) -> str | None:
        return self._fields.get(name.lower(), default)


class BadHead(Exception):
    """A request head ``http.server`` would refuse: ``status`` and its message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Head:
    """A parsed request line; ``close``: whether the connection ends after it."""

    __slots__ = ("close", "command", "path", "version")

    def __init__(self, command: str, path: str, version: str, close: bool) -> None:
        self.command = command
        self.path = path
        self.version = version
        self.close = close


def parse_head(requestline: str, protocol: str) -> Head | None:
    """The request line (line end stripped) as ``BaseHTTPRequestHandler.parse_request``
    reads it for a server speaking ``protocol``; ``None`` for an empty line. Raises
    :class:`BadHead`. Then :func:`read_headers`."""
    words = requestline.split()
    if not words:
        return None
    version, close = "HTTP/0.9", True
    if len(words) >= 3:
        version = words[-1]
        number = _version(version)
        if number >= (1, 1) and protocol >= "HTTP/1.1":
            close = False
        if number >= (2, 0):
            raise BadHead(505, f"Invalid HTTP version ({version.split('/', 1)[1]})")
    if not 2 <= len(words) <= 3:
        raise BadHead(400, f"Bad request syntax ({requestline!r})")
    command, path = words[:2]
    if len(words) == 2:
        close = True
        if command != "GET":
            raise BadHead(400, f"Bad HTTP/0.9 request type ({command!r})")
    if path.startswith("//"):  # gh-87389: not an absolute URI without a scheme
        path = "/" + path.lstrip("/")
    return Head(command, path, version, close)


def _version(version: str) -> tuple[int, int]:
    """``HTTP/1.1`` as ``(1, 1)``; a :class:`BadHead` 400 when it is not one."""
    m = _VERSION.fullmatch(version)
    if m is None:
        raise BadHead(400, f"Bad request version ({version!r})")
    return int(m.group(1)), int(m.group(2))


def read_headers(rfile: Any) -> Headers:
    """The headers, as ``http.client.parse_headers`` reads them (its limits); a folded
    line or a malformed name is a :class:`BadHead` 400."""
    fields: dict[str, str] = {}
    for _ in range(MAX_HEADERS + 1):
        line = rfile.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise BadHead(431, "Line too long")
        if line in (b"\r\n", b"\n", b""):
            return Headers(fields)
        m = _FIELD.fullmatch(line.decode("iso-8859-1").rstrip("\r\n"))
        if m is None:  # a folded line, a space before the colon, no name: never guessed
            raise BadHead(400, "Bad header line")
        fields.setdefault(m.group(1).lower(), m.group(2).strip(" \t"))
    raise BadHead(431, "Too many headers")


def answer_head(status: int, date: str, length: int) -> bytes:
    """An answer's status line and the headers every answer has, as ``send_response`` and
    ``send_header`` write them, made in one go (those calls cost ~20 us an answer)."""
    return (
        f"HTTP/1.1 {status} {_PHRASES.get(status, '')}\r\nServer: {SERVER}\r\nDate: {date}"
        f"\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n"
        "Cache-Control: no-store\r\n"
    ).encode("latin-1", "strict")
