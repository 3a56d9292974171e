"""``hookrails serve``: Claude Code ``http`` hooks answered by one warm Guard.

Claude Code POSTs a hook's input (the JSON a command hook reads on stdin) to
``/v1/claude/hook`` and reads the response body as a command hook's stdout. A
2xx with a JSON body is the hook's answer; a non-2xx status, a connection
failure or a timeout is a *non-blocking* error and the action goes ahead. So
that route always answers 200, a body it cannot read too: what goes wrong is
answered by the event's failure policy (``_serve_app``, which decides), never by
an error status that Claude would wave through.

Who may ask. Claude Code's http client sends no ``Origin`` and a JSON
``Content-Type``; a web page can do neither without the server's consent. So a
request with an ``Origin`` header is refused (403), a POST whose body is not
``application/json`` too (415), and on a loopback address the ``Host`` header
must name this machine and port (403), which stops DNS rebinding. These refusals
are not decisions: they answer requests Claude never sends. Listening beyond
loopback needs a bearer token (``make_server`` refuses without one unless
``insecure``), and an empty token is refused rather than read as "no auth".

Threads. Each connection is served by the thread of ``serve_pool.Pool`` that accepted
it (``serve_accept``; warm threads, more on demand; HTTP/1.1 keep-alive, so a warm
client pays no connect cost), which reads a request and decides its event itself.
At the deadline the app's watchdog writes the answer for it (``_late``: the failure
policy's, with ``Connection: close``) while the thread stays in the hook; such a
connection still counts against the cap until its hook returns. Connections are capped
and each request has a deadline to arrive (``serve_connections``: slow or idle clients
cannot take every thread); a connection over the cap when all are busy is answered 503
at once, and Claude Code then fails by the ``onFailure: block`` that ``install`` writes.
"""

from __future__ import annotations

import contextlib
import functools
import io
import ipaddress
import logging
import re
import socket
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import _SocketWriter  # type: ignore[attr-defined]
from typing import TYPE_CHECKING, Any, Final, cast
from urllib.parse import parse_qs, urlsplit

from ..errors import ServeError, describe
from ..events import known_event_name
from . import serve_connections as _conns
from .failure_policy import encode_bytes
from .http_decider import DEFAULT_WORKERS, MAX_BODY, ServeApp
from .relay import refusal as relay_refusal
from .serve_accept import PoolAccept
from .serve_pool import Pool, PoolClosed

if TYPE_CHECKING:
    from ..dispatch.guard import Guard

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_PORT",
    "DEFAULT_REQUEST_TIMEOUT",
    "HOOK_ROUTE",
    "TOKEN_ENV",
    "HookServer",
    "check_exposure",
    "is_loopback",
    "make_server",
    "serve_until_signal",
]

_log = logging.getLogger("guardrails.serve")

HOOK_ROUTE: Final = "/v1/claude/hook"
DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8787
TOKEN_ENV: Final = "HOOKRAILS_TOKEN"
#: an oversized body up to this many bytes is read and dropped so the connection stays
#: usable and the client reads the answer; a bigger one closes the connection
_DRAIN_LIMIT: Final = 64 * 1024 * 1024
_CHUNK: Final = 64 * 1024
#: seconds an idle keep-alive connection stays open
_IDLE_TIMEOUT: Final = 120.0
#: connections served at once (each has a thread); past it, see ``HookServer.process_request``
DEFAULT_MAX_CONNECTIONS: Final = 128
#: seconds a request has to arrive whole once its first byte did (and an answer to be taken)
DEFAULT_REQUEST_TIMEOUT: Final = 10.0
#: trailer lines after a chunked body
_MAX_TRAILERS: Final = 64
#: a Host header: a name or IPv4 address, or an IPv6 address in brackets; then a port
_HOST: Final = re.compile(
    r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[^:\[\]/@\s]+))(?::(?P<port>\d{1,5}))?"
)
_ROUTES: Final[dict[str, tuple[str, ...]]] = {
    HOOK_ROUTE: ("POST",),
    "/v1/explain": ("POST",),
    "/v1/hooks": ("GET",),
    "/v1/stats": ("GET",),
    "/v1/health": ("GET",),
}


class _BodyError(Exception):
    def __init__(self, status: int, message: str, *, close: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.close = close


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        try:
            infos = socket.getaddrinfo(host, None)
        except OSError:
            return False
        return bool(infos) and all(ipaddress.ip_address(info[4][0]).is_loopback for info in infos)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    timeout = _IDLE_TIMEOUT
    # headers and body are two writes: without TCP_NODELAY the second waits for the
    # client's delayed ACK (~40 ms per answer on a keep-alive connection)
    disable_nagle_algorithm = True
    raw_requestline: bytes  # http.server's, set before parse_request

    @property
    def app(self) -> ServeApp:
        return cast(HookServer, self.server).app

    def setup(self) -> None:
        """As ``StreamRequestHandler.setup``, reading through the deadline instead of a
        ``makefile`` (made and closed unused, it cost each connection ~5 us)."""
        server = cast(HookServer, self.server)
        sock = self.connection = self.request
        sock.settimeout(self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)
        self.wfile = _SocketWriter(sock)
        self.conn = server.conns.get(sock)
        self.rfile = io.BufferedReader(
            _conns.DeadlineReader(sock, self.conn, server.request_timeout)
        )

    def handle_one_request(self) -> None:
        cast(HookServer, self.server).conns.await_request(self.conn)
        super().handle_one_request()

    def parse_request(self) -> bool:
        """As http.server's, the head read by ``serve_connections`` (no ``email``)."""
        self.command = None  # type: ignore[assignment]  # (as http.server: for send_error)
        self.request_version = self.default_request_version
        self.close_connection = True
        self.requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        try:
            head = _conns.parse_head(self.requestline, self.protocol_version)
            if head is None:
                return False
            self.command, self.path, self.request_version = head.command, head.path, head.version
            self.close_connection = head.close
            self.headers = _conns.read_headers(self.rfile)  # type: ignore[assignment]
        except _conns.BadHead as exc:
            self.send_error(exc.status, str(exc))
            return False
        connection = (self.headers.get("Connection") or "").lower()
        if connection == "close":
            self.close_connection = True
        elif connection == "keep-alive":
            self.close_connection = False
        expect = (self.headers.get("Expect") or "").lower()
        if expect == "100-continue" and self.request_version >= "HTTP/1.1":
            return self.handle_expect_100()
        return True

    def _busy(self) -> None:
        """The request is read: from here on it is answered, not evicted (``ConnectionError``
        if it was evicted meanwhile)."""
        cast(HookServer, self.server).conns.request_read(self.conn)

    def version_string(self) -> str:
        return _conns.SERVER

    def do_GET(self) -> None:
        self._route()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_GET

    def _route(self) -> None:
        app = self.app
        app.enter()
        try:
            self._answer(app)
        except (ConnectionError, TimeoutError):
            self.close_connection = True  # the client left, or stalled mid-body
        except Exception as exc:  # a bug on a side route: a JSON 500, not a dropped socket
            _log.exception("hookrails serve: %s %s failed", self.command, self.path)
            self.close_connection = True
            self._send(500, {"error": f"internal error ({describe(exc)})"})
        finally:
            app.leave()

    def _answer(self, app: ServeApp) -> None:
        refusal = self._foreign()
        if refusal is not None:  # first of all: a browser or a rebound name learns nothing
            self.close_connection = True
            self._send(403, {"error": refusal})
            return
        if not app.authorized(self.headers.get("Authorization")):
            # first: an unauthenticated client learns nothing, and its body is not read
            self.close_connection = True
            self._send(
                401,
                {"error": "missing or wrong bearer token: send Authorization: Bearer <token>"},
                {"WWW-Authenticate": 'Bearer realm="hookrails"'},
            )
            return
        url = urlsplit(self.path)
        allowed = _ROUTES.get(url.path)
        if allowed is None:
            self._drop_body()
            self._send(404, {"error": f"no route {self.command} {url.path}", "routes": _listing()})
            return
        if self.command not in allowed:
            self._drop_body()
            self._send(
                405,
                {"error": f"{url.path} takes {', '.join(allowed)}, not {self.command}"},
                {"Allow": ", ".join(allowed)},
            )
            return
        if self.command == "POST" and not _is_json(self.headers.get("Content-Type")):
            # Claude sends application/json; a page's form or no-cors fetch cannot
            self._drop_body()
            self._send(
                415,
                {"error": "send the body as JSON, with Content-Type: application/json"},
                {"Accept": "application/json"},
            )
            return
        if url.path == HOOK_ROUTE:
            self._hook(url.query)
        elif url.path == "/v1/explain":
            body = self._body_or_error()
            if body is not None:
                self._busy()
                answer = app.explain(body, self._late)
                if answer is None:  # answered at the deadline
                    self.close_connection = True
                else:
                    self._send(*answer)
        elif url.path == "/v1/hooks":
            self._send(200, app.bindings())
        elif url.path == "/v1/stats":
            limit = _limit(url.query)
            if limit is None:
                self._send(400, {"error": "limit must be an integer from 1 to 1000"})
            else:
                self._send(*app.stats(limit))
        else:
            threads = cast(HookServer, self.server).thread_stats()
            self._send(200, {**app.health(), "connection_threads": threads})

    def _foreign(self) -> str | None:
        """Why this request cannot be Claude's (a refusal message), or ``None``.

        An ``Origin`` header: a browser sent it (Claude Code's client sends none).
        On a loopback address, a ``Host`` that is not this machine and port: a page
        whose name was rebound to 127.0.0.1 (DNS rebinding) is talking to us.
        """
        if self.headers.get("Origin") is not None:
            return "requests from a web page (with an Origin header) are refused"
        server = cast(HookServer, self.server)
        if server.loopback and not _local_host(self.headers.get("Host"), server.port):
            return (
                f"Host must be localhost, 127.0.0.1 or [::1] with port {server.port} "
                "(this server listens on loopback only)"
            )
        return None

    def _hook(self, query: str) -> None:
        app = self.app
        params = parse_qs(query)
        hints = params.get("event")
        hint = hints[-1] if hints else None
        within = _seconds(params.get("within"))
        refused = relay_refusal(app.relay_tags, params)
        if refused is not None:  # a relayed event this server must not decide
            self._drop_body()
            self._send(409, {"error": refused})
            return
        try:
            body = self._read_body()
        except _BodyError as exc:
            if exc.close:
                self.close_connection = True
            self._send(200, app.failure(known_event_name(hint), str(exc)))
            return
        self._busy()
        answer = app.hook_answer(body, self._late, hint, within)
        if answer is None:  # answered at the deadline, from the watchdog's thread
            self.close_connection = True
        else:
            self._write(200, answer)

    def _late(self, status: int, data: bytes) -> None:
        """The answer at the deadline, written from the watchdog's thread while this
        connection's own thread is still inside a hook (it writes nothing more, and
        closes the connection once the hook returns); the client reads it, then EOF."""
        self.close_connection = True
        try:
            self._write(status, data)
            self.connection.shutdown(socket.SHUT_WR)
        except OSError:  # the client left: nothing to tell it
            _log.debug("hookrails serve: the late answer was not delivered", exc_info=True)

    def _body_or_error(self) -> bytes | None:
        try:
            return self._read_body()
        except _BodyError as exc:
            if exc.close:
                self.close_connection = True
            self._send(exc.status, {"error": str(exc)})
            return None

    def _read_body(self) -> bytes:
        limit = self.app.max_body
        encoding = self.headers.get("Transfer-Encoding")
        if encoding is not None:
            if encoding.strip().lower() != "chunked":
                raise _BodyError(
                    501, f"Transfer-Encoding {encoding!r} is not supported", close=True
                )
            return self._read_chunked(limit)
        length = self.headers.get("Content-Length")
        if length is None:
            return b""
        try:
            n = int(length)
            if n < 0:
                raise ValueError(length)
        except ValueError:
            raise _BodyError(400, f"bad Content-Length {length!r}", close=True) from None
        if n > limit:
            drained = self._drain(n)
            raise _BodyError(
                413,
                f"the body is {n} bytes, over this server's limit of {limit}",
                close=not drained,
            )
        data = self.rfile.read(n)
        if len(data) < n:
            raise _BodyError(400, "the body ended early", close=True)
        return data

    def _read_chunked(self, limit: int) -> bytes:
        parts: list[bytes] = []
        total = 0
        while True:
            line = self.rfile.readline(1024)
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise _BodyError(400, "malformed chunked body", close=True) from None
            if size == 0:
                for _ in range(_MAX_TRAILERS):
                    if self.rfile.readline(8192) in (b"\r\n", b"\n", b""):
                        return b"".join(parts)
                raise _BodyError(400, "too many trailer lines after a chunked body", close=True)
            total += size
            if total > limit:
                raise _BodyError(
                    413, f"the body is over this server's limit of {limit} bytes", close=True
                )
            data = self.rfile.read(size)
            if len(data) < size or self.rfile.readline(3).strip():
                raise _BodyError(400, "malformed chunked body", close=True)
            parts.append(data)

    def _drain(self, n: int) -> bool:
        """Read and drop ``n`` body bytes (so the client reads our answer); False when
        it is too much to read, and the connection must close."""
        if n > max(_DRAIN_LIMIT, self.app.max_body):
            return False
        while n > 0:
            got = self.rfile.read(min(n, _CHUNK))
            if not got:
                return False
            n -= len(got)
        return True

    def _drop_body(self) -> None:
        """A request refused before its body was read: drop the body or close."""
        length = self.headers.get("Content-Length")
        if self.headers.get("Transfer-Encoding") is not None:
            self.close_connection = True
        elif length is not None:
            try:
                drained = self._drain(int(length))
            except ValueError:
                drained = False
            if not drained:
                self.close_connection = True

    def _send(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        self._write(status, encode_bytes(body), headers)

    def _write(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        """The answer in one write, headers and body, as ``send_response`` and
        ``send_header`` would make it (``end_headers`` would send the headers alone); the
        head built here in one go: those calls cost ~20 us an answer."""
        self._busy()
        # a client that does not take its answer is given as long as one to send a request
        self.connection.settimeout(cast(HookServer, self.server).request_timeout)
        if _log.isEnabledFor(logging.INFO):
            self.log_request(status)
        out = (
            _conns.answer_head(status, self.date_time_string(), len(data))
            if self.request_version != "HTTP/0.9"
            else b""
        )
        if out:
            extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items()) if headers else ""
            close = "Connection: close\r\n" if self.close_connection else ""
            out += (extra + close + "\r\n").encode("latin-1", "strict")
        if self.command != "HEAD":
            out += data
        self.wfile.write(out)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own errors (a bad request line, an unknown method), in JSON too."""
        self.close_connection = True
        try:
            phrase = HTTPStatus(code).phrase
        except ValueError:
            phrase = "error"
        self._send(code, {"error": message or phrase})

    def log_message(self, format: str, *args: Any) -> None:
        if _log.isEnabledFor(logging.INFO):  # every answer logs; mostly nobody reads it
            _log.info("%s %s", self.address_string(), format % args)

    #: (second, its Date header): formatted once a second, not per answer
    _date: tuple[int, str] = (0, "")

    def date_time_string(self, timestamp: float | None = None) -> str:
        if timestamp is not None:
            return super().date_time_string(timestamp)
        now = int(time.time())
        date = _Handler._date
        if date[0] != now:
            date = _Handler._date = (now, super().date_time_string(now))
        return date[1]


def _is_json(content_type: str | None) -> bool:
    """``application/json``, parameters (``; charset=utf-8``) allowed."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media == "application/json"


@functools.lru_cache(maxsize=64)  # the same Host on every request of a client
def _local_host(header: str | None, port: int) -> bool:
    """Whether a ``Host`` header names this machine (``localhost`` or a loopback address)
    and ``port`` (no port: 80)."""
    m = _HOST.fullmatch((header or "").strip())
    if m is None or int(m.group("port") or 80) != port:
        return False
    name = m.group("name")
    if name is not None and name.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(m.group("v6") or name).is_loopback
    except ValueError:
        return False


def _listing() -> list[str]:
    return [f"{' '.join(methods)} {path}" for path, methods in _ROUTES.items()]


def _seconds(values: list[str] | None) -> float | None:
    """A relayed event's ``?within=`` (seconds left of the hook process's deadline)."""
    try:
        seconds = float(values[-1]) if values else None
    except ValueError:
        return None
    return seconds if seconds is not None and seconds >= 0 and seconds < 1e6 else None


def _limit(query: str) -> int | None:
    values = parse_qs(query).get("limit")
    if not values:
        return 20
    try:
        n = int(values[-1])
    except ValueError:
        return None
    return n if 1 <= n <= 1000 else None


class HookServer(PoolAccept, ThreadingHTTPServer):
    """The HTTP server: ``serve_forever()``, ``shutdown()``, ``server_close()``; ``url``.
    At most ``max_connections`` connections (each with its thread, the one that accepted
    it: ``serve_accept``), plus a few being evicted (``slack``): see :meth:`admit`.
    ``workers`` connection threads are kept warm."""

    daemon_threads = True
    request_queue_size = 128  # a burst of connections waits in the kernel, not refused there

    def __init__(
        self,
        app: ServeApp,
        host: str,
        port: int,
        *,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        workers: int = DEFAULT_WORKERS,
    ) -> None:
        if not request_timeout > 0:
            raise ValueError("request_timeout must be > 0")
        self.app = app
        #: only this machine can connect: requests must then name it in ``Host``
        self.loopback = is_loopback(host.strip("[]"))
        self.conns = _conns.Connections(max_connections, idle_timeout=_IDLE_TIMEOUT)
        self.request_timeout = request_timeout
        self._refused_logged = 0.0
        if ":" in host.strip("[]"):
            self.address_family = socket.AF_INET6
        size = min(workers, max_connections)
        self._init_accepting()
        # the connections' threads, and those that accept (serve_accept)
        self.pool = Pool(size, max_threads=max_connections + self.conns.slack + self.acceptors)
        super().__init__((host.strip("[]"), port), _Handler)  # closes the pool if it fails

    def server_bind(self) -> None:
        """As HTTPServer's, without its reverse DNS lookup (``getfqdn`` can take seconds)."""
        import socketserver

        socketserver.TCPServer.server_bind(self)
        self.server_name = str(self.server_address[0])
        self.server_port = int(self.server_address[1])

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that goes away is not worth a traceback on stderr."""
        _log.debug("hookrails serve: connection from %s ended", client_address, exc_info=True)

    @property
    def host(self) -> str:
        return str(self.server_address[0])

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        host = self.host
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"

    def process_request(self, request: Any, client_address: Any) -> None:
        """socketserver's ``handle_request()``: the connection on a thread of the pool."""
        if self.admit(request):
            try:
                self.pool.submit(self.process_request_thread, request, client_address)
            except PoolClosed:
                self.shutdown_request(request)

    def admit(self, request: Any) -> bool:
        """A new connection, on the accepting thread: taken, perhaps in place of one that
        waited longest for its request, or answered 503 and closed (``serve_connections``)."""
        conn, victim = self.conns.admit(request)
        if victim is not None:
            self.app.count("evicted_connections")
            _conns.evict(victim)
        if conn is None:
            self.app.count("refused_connections")
            now = time.monotonic()
            if now - self._refused_logged > 10:
                self._refused_logged = now
                _log.warning(
                    "hookrails serve: %d connections open and all busy; new ones get 503",
                    self.conns.max_connections,
                )
            _conns.refuse(request)
            self.shutdown_request(request)
            return False
        return True

    def shutdown_request(self, request: Any) -> None:
        self.conns.drop(request)
        super().shutdown_request(request)

    def server_close(self) -> None:
        """Stop listening and reading (idle keep-alive connections end), let the requests
        in flight finish their answers (a few seconds at most), then stop."""
        self.stop_accepting(1.0)
        super().server_close()
        self._close_accepting()
        self._shutdown_open(socket.SHUT_RD)
        self.app.close()
        self.pool.close()
        self._shutdown_open(socket.SHUT_RDWR)

    def _shutdown_open(self, how: int) -> None:
        for sock in self.conns.sockets():
            with contextlib.suppress(OSError):
                sock.shutdown(how)


def make_server(
    guard: Guard,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    *,
    max_body: int = MAX_BODY,
    deadline: float | None = None,
    workers: int = DEFAULT_WORKERS,
    insecure: bool = False,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    max_abandoned: int | None = None,
) -> HookServer:
    """A bound (not yet serving) server for ``guard``; port 0 picks a free port.

    Run it with ``serve_forever()`` (in a thread, say) and stop it with
    ``shutdown()`` then ``server_close()``. ``token``: every request must carry
    ``Authorization: Bearer <token>``; an empty one raises
    :class:`~guardrails.errors.ServeError` (it would read as "no auth"). A host
    that is not loopback needs a token, or ``insecure=True``.

    Threads: at most ``max_connections`` connections (plus a few being evicted),
    each served by one thread that reads its requests and decides their events,
    each request read within ``request_timeout``; ``workers`` connection threads
    kept warm. Past ``max_abandoned`` (default ``4 * workers``) threads held by hooks
    past their deadline, events fail at once until one returns (``serve_pool``).
    """
    check_exposure(host, token, insecure=insecure)
    if workers < 1 or max_connections < 1:
        raise ServeError("workers and max_connections must be at least 1")
    app = ServeApp(
        guard,
        token=token,
        max_body=max_body,
        deadline=deadline,
        workers=min(workers, max_connections),
        max_abandoned=max_abandoned,
    )
    try:
        return HookServer(
            app,
            host,
            port,
            max_connections=max_connections,
            request_timeout=request_timeout,
            workers=workers,
        )
    except OSError as exc:
        app.close()
        error = OSError(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
        error.errno = exc.errno  # set after, so the message reads without "[Errno 98]"
        raise error from None


def check_exposure(host: str, token: str | None, *, insecure: bool = False) -> None:
    """Refuse (:class:`~guardrails.errors.ServeError`) an empty token, and a host beyond
    loopback without a token unless ``insecure``: before anything is opened."""
    if token is not None and not token:
        raise ServeError("the token is empty: set a token, or none at all to serve without auth")
    if token is None and not insecure and not is_loopback(host.strip("[]")):
        raise ServeError(
            f"refusing to listen on {host} without a token: anyone who can reach it could "
            f"read the bindings and drive the hooks; set ${TOKEN_ENV} (or --token), or pass "
            "--insecure"
        )


def serve_until_signal(server: HookServer) -> None:
    """Serve until SIGINT or SIGTERM, then close the server (main thread only)."""
    import signal

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.server_close()
