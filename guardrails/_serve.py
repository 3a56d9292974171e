"""``hookrails serve``: Claude Code ``http`` hooks answered by one warm Guard.

Claude Code POSTs a hook's input (the JSON a command hook reads on stdin) to
``/v1/claude/hook`` and reads the response body as a command hook's stdout. A
2xx with a JSON body is the hook's answer; a non-2xx status, a connection
failure or a timeout is a *non-blocking* error and the action goes ahead. So
that route always answers 200: a body that cannot be read, an event that cannot
be decided, a crash or a missed deadline fails by the event's failure policy (a
PreToolUse is denied), never by an error status that Claude would wave through.
The policy, each event's deadline and the failure JSON are ``_policy``'s, shared
with ``hookrails hook``, ``claude install`` and the claude-agent-sdk dispatcher.

The ledger tells the same story as Claude's answer. An undecided event that was
read is recorded as the refusal (or the continue) Claude was given, an invalid
PreToolUse too (from its well-typed fields). A decision that misses its deadline
is not recorded when it finally arrives: the refusal is, and the call never ran.

Who may ask. Claude Code's http client sends no ``Origin`` and a JSON
``Content-Type``; a web page can do neither without the server's consent. So a
request with an ``Origin`` header is refused (403), a POST whose body is not
``application/json`` too (415), and on a loopback address the ``Host`` header
must name this machine and port (403), which stops DNS rebinding. These refusals
are not decisions: they answer requests Claude never sends. Listening beyond
loopback needs a bearer token (``make_server`` refuses without one unless
``insecure``), and an empty token is refused rather than read as "no auth".

Threads. ``ThreadingHTTPServer`` gives each connection a thread (HTTP/1.1
keep-alive, so a warm client pays no connect cost). Decisions run on a few
daemon worker threads so every answer has a deadline (a hung hook cannot keep
Claude waiting until its own timeout, which would fail open). The Guard is
shared, but its per-session state is not safe to mutate from two threads at
once (``Guard._sessions`` is get-then-set, and a session's stop-block counts,
turn budget, halt flag and ``ctx.state`` are read-modify-write), so events of
one session run one at a time under that session's lock; sessions run side by
side. The ledger serialises its own writes (one connection behind a lock) and
its reader has a lock of its own.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import ipaddress
import json
import logging
import queue
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Final, cast
from urllib.parse import parse_qs, urlsplit

from . import _policy
from .definition import DEFAULT_ON_FAILURE
from .errors import EventError, GuardrailsError, ServeError
from .events import EVENT_NAMES, Event, canonical_event_name, event_class

if TYPE_CHECKING:
    from .guard import Guard, Session
    from .results import Decision

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "HOOK_ROUTE",
    "MAX_BODY",
    "TOKEN_ENV",
    "HookServer",
    "ServeApp",
    "check_exposure",
    "exposure_warning",
    "is_loopback",
    "make_server",
    "serve_until_signal",
    "startup_lines",
]

_log = logging.getLogger("guardrails.serve")

HOOK_ROUTE: Final = "/v1/claude/hook"
DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8787
TOKEN_ENV: Final = "HOOKRAILS_TOKEN"
#: a bigger request body is refused (a Write of a large file is the usual big hook input)
MAX_BODY: Final = 8 * 1024 * 1024
#: an oversized body up to this many bytes is read and dropped so the connection stays
#: usable and the client reads the answer; a bigger one closes the connection
_DRAIN_LIMIT: Final = 64 * 1024 * 1024
_CHUNK: Final = 64 * 1024
#: seconds an idle keep-alive connection stays open
_IDLE_TIMEOUT: Final = 120.0
_REASON_CAP: Final = 1000
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
_EXPLAIN_FIELDS: Final = {
    "event": "event_name",
    "tool_name": "tool_name",
    "tool_input": "tool_input",
    "tool_response": "response",
    "error": "error_text",
    "prompt": "prompt",
    "last_assistant_message": "message",
    "agent_type": "agent_type",
    "agent_id": "agent_id",
    "cwd": "cwd",
    "tenant": "tenant",
    "payload": "payload",
}
_STATS_SQL: Final = {
    "calls_by_status": (
        "SELECT status, count(*) AS calls FROM tool_calls GROUP BY status ORDER BY calls DESC"
    ),
    "tools": (
        "SELECT tool_name, calls, ok, denials, errors, interrupted, p50_ms, p95_ms, avg_ms, "
        "last_called_at FROM tool_stats LIMIT :limit"
    ),
    "denials_by_hook": (
        "SELECT hook, matcher, hook_outcome, count(*) AS denials, max(started_at) AS last_at "
        "FROM denials GROUP BY hook, matcher, hook_outcome ORDER BY denials DESC, hook "
        "LIMIT :limit"
    ),
    "events": (
        "SELECT event, decision, count(*) AS count FROM events GROUP BY event, decision "
        "ORDER BY event, decision"
    ),
    "recent_sessions": "SELECT * FROM session_summary LIMIT :limit",
    "slow_hooks": "SELECT * FROM slow_hooks LIMIT :limit",
}


class _Late(Exception):
    """No decision within the deadline (hooks still running, or the session busy)."""


class _Ticket:
    """One hook request's event, between the worker deciding it and the request waiting.

    Past the deadline the request abandons it, answers by the failure policy and
    records that refusal; the decision the worker reaches later is then not
    recorded (Claude was told deny: the call never runs). A decision the worker
    started recording before that is the answer, late or not.
    """

    __slots__ = ("abandoned", "decision", "event", "lock")

    def __init__(self, event: Event) -> None:
        self.event = event
        self.lock = threading.Lock()
        self.decision: Decision | None = None
        self.abandoned = False


class _BodyError(Exception):
    def __init__(self, status: int, message: str, *, close: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.close = close


class _Workers:
    """Daemon threads taking calls from one queue.

    Not ``ThreadPoolExecutor``: it joins its threads at interpreter exit, so a hook
    that never returns would keep the server from stopping. No thread is started
    per call either.
    """

    def __init__(self, count: int) -> None:
        self._queue: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]] = (
            queue.SimpleQueue()
        )
        self._threads = [
            threading.Thread(target=self._loop, name=f"hookrails-serve-{i}", daemon=True)
            for i in range(count)
        ]
        for t in self._threads:
            t.start()

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        future: Future[Any] = Future()
        self._queue.put((future, fn, args))
        return future

    def _loop(self) -> None:
        while True:
            future, fn, args = self._queue.get()
            if fn is _stop:
                return
            if not future.set_running_or_notify_cancel():
                continue  # the request gave up waiting: do not decide it late
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # a hook's SystemExit too: the request answers it
                future.set_exception(exc)

    def close(self) -> None:
        for _ in self._threads:
            self._queue.put((Future(), _stop, ()))


def _stop() -> None:  # pragma: no cover - a marker, never called
    return None


class _Slot:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0


class _SessionLocks:
    """One lock per session with a request in flight.

    A session's events run one at a time (they share its state); different
    sessions run side by side. A slot lives while some request holds or waits
    for it, so the table is as small as the traffic.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._slots: dict[str, _Slot] = {}

    @contextlib.contextmanager
    def hold(self, key: str, timeout: float) -> Iterator[bool]:
        with self._lock:
            slot = self._slots.get(key)
            if slot is None:
                slot = self._slots[key] = _Slot()
            slot.users += 1
        acquired = slot.lock.acquire(timeout=max(timeout, 0.0))
        try:
            yield acquired
        finally:
            if acquired:
                slot.lock.release()
            with self._lock:
                slot.users -= 1
                if slot.users == 0:
                    del self._slots[key]


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _REASON_CAP else text[: _REASON_CAP - 1] + "…"


def _encode(value: Any) -> bytes:
    """``_policy.encode`` as bytes: strict JSON, so what is sent always parses."""
    return _policy.encode(value).encode("ascii")


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


class ServeApp:
    """What the routes answer, apart from HTTP: decisions, bindings, stats, dry runs.

    ``deadline``: seconds a hook request may take before it is answered by the
    event's failure policy, for every event (default: each event's
    ``_policy.deadline``, plus the approval timeout on PreToolUse when the Guard
    has an approver). ``token``: ``None`` for no auth; an empty one is refused.

    While it runs, the Guard's ledger records through this app (its ``record`` is
    wrapped until :meth:`close`), so a decision that arrives after its deadline
    is dropped in favour of the refusal Claude was given.
    """

    def __init__(
        self,
        guard: Guard,
        *,
        token: str | None = None,
        max_body: int = MAX_BODY,
        deadline: float | None = None,
        workers: int = 16,
    ) -> None:
        if token is not None and not token:
            raise ServeError("the token is empty: give a token, or none to serve without auth")
        self.guard = guard
        self.definition = d = guard.definition
        self.max_body = max_body
        self._token = hashlib.sha256(token.encode()).digest() if token is not None else None
        approval = guard.approval_timeout if guard.approver is not None else 0.0
        self.deadlines: dict[str, float] = {
            name: deadline
            if deadline is not None
            else _policy.deadline(d, name) + (approval if name == "PreToolUse" else 0.0)
            for name in EVENT_NAMES
        }
        #: the longest deadline (the dry-run route's, and what /v1/health shows)
        self.deadline = max(self.deadlines.values())
        self.closed: dict[str, bool] = {name: _policy.fails_closed(d, name) for name in EVENT_NAMES}
        self._tickets: dict[int, _Ticket] = {}
        self._tickets_lock = threading.Lock()
        ledger = guard.ledger
        self._record: Callable[..., None] | None = None if ledger is None else ledger.record
        if ledger is not None:
            ledger.record = self._gated_record  # type: ignore[method-assign]
        self.started = time.time()
        self._locks = _SessionLocks()
        self._workers = _Workers(workers)
        self._count_lock = threading.Condition()
        self.counts: dict[str, int] = {"requests": 0, "hook_calls": 0, "failures": 0}
        self._in_flight = 0
        self._closed = False

    @property
    def token_required(self) -> bool:
        return self._token is not None

    def close(self, grace: float = 5.0) -> None:
        """Let requests in flight finish (up to ``grace`` seconds), then stop the workers."""
        if self._closed:
            return
        self._closed = True
        with self._count_lock:
            self._count_lock.wait_for(lambda: self._in_flight == 0, timeout=grace)
        self._workers.close()
        ledger = self.guard.ledger
        with self._tickets_lock:
            idle = not self._tickets
        if ledger is not None and idle and vars(ledger).get("record") == self._gated_record:
            del ledger.record  # the Ledger's own method again (a hung hook keeps the gate)

    def count(self, key: str) -> None:
        with self._count_lock:
            self.counts[key] = self.counts.get(key, 0) + 1

    def enter(self) -> None:
        with self._count_lock:
            self.counts["requests"] += 1
            self._in_flight += 1

    def leave(self) -> None:
        with self._count_lock:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._count_lock.notify_all()

    def authorized(self, header: str | None) -> bool:
        """Bearer token check in constant time (digests, so the length does not show)."""
        if self._token is None:
            return True
        scheme, _, given = (header or "").strip().partition(" ")
        digest = hashlib.sha256(given.strip().encode("utf-8", "surrogateescape")).digest()
        return hmac.compare_digest(digest, self._token) and scheme.lower() == "bearer"

    # --- POST /v1/claude/hook -------------------------------------------------------

    def answer_hook(self, body: bytes, hint: str | None = None) -> dict[str, Any]:
        """The hook output for one Claude hook input, as a dict (see :meth:`hook_answer`)."""
        answer: dict[str, Any] = json.loads(self.hook_answer(body, hint))
        return answer

    def hook_answer(self, body: bytes, hint: str | None = None) -> bytes:
        """The hook output (JSON bytes) for one Claude hook input.

        Never raises: whatever goes wrong becomes the event's failure answer.
        ``hint`` (the route's ``?event=`` query, like ``hookrails hook --event``)
        names the event when the body cannot be read; it is ignored otherwise.
        """
        self.count("hook_calls")
        try:
            payload = json.loads(body)
        except (ValueError, RecursionError) as exc:
            reason = f"the hook input is not JSON ({_describe(exc)})"
            return _encode(self.failure(self.hinted(hint), reason))
        raw_name = payload.get("hook_event_name") if isinstance(payload, dict) else None
        if not isinstance(payload, dict) or not isinstance(raw_name, str):
            what = "has no hook_event_name" if isinstance(payload, dict) else "is not an object"
            return _encode(self.failure(self.hinted(hint), f"the hook input {what}"))
        try:
            name = canonical_event_name(raw_name)
        except EventError:
            return _encode(self.unhandled(raw_name))
        try:
            event = Event.from_claude(payload)
        except EventError as exc:
            reason = f"invalid {raw_name} hook input: {exc}"
            return _encode(self.failure(name, reason, event=_policy.salvage_event(payload, name)))
        try:
            # an answer that is not strict JSON (a NaN rewrite) fails too, never an allow
            return _encode(self._decide(event).to_claude())
        except _Late as exc:
            return _encode(self.failure(name, str(exc), event=event))
        except BaseException as exc:  # a crash (a hook's SystemExit included) never allows
            _log.exception("hookrails serve: deciding %s failed", name)
            reason = f"deciding the event failed ({_describe(exc)})"
            return _encode(self.failure(name, reason, event=event))

    @staticmethod
    def hinted(event: str | None) -> str | None:
        """The canonical name of a hinted event; ``None`` (unknown) for no or a bad hint."""
        try:
            return None if event is None else canonical_event_name(event)
        except EventError:
            return None

    def failure(
        self, event_name: str | None, reason: str, *, event: Event | None = None
    ) -> dict[str, Any]:
        """The answer when an event could not be decided: its failure policy.

        PreToolUse is always denied. Other events follow their matchers'
        ``on_failure`` (block if any of them blocks). When the event is not
        known (the body cannot be read), the answer is a top-level block, which
        Claude Code applies to every event, a PreToolUse included (as a deny).
        ``event`` (when the input was read): the answer is recorded in the ledger.
        """
        self.count("failures")
        # an unknown event may be a PreToolUse: closed
        closed = True if event_name is None else self.closed.get(event_name, False)
        line = _one_line(f"hookrails serve: {reason}; {_policy.verdict(event_name, closed)}")
        _log.warning("%s", line)
        if event is not None and self._record is not None:
            try:
                session = _policy.undecided_session(self.guard, event)
                decision = _policy.failure_decision(event, line, closed)
                self._record(decision, session, self.guard.clock())
            except Exception:  # the answer matters more than its record
                _log.exception("hookrails serve: could not record the undecided %s", event_name)
        return _policy.undecided_output(event_name, line, closed)

    def unhandled(self, raw_name: str) -> dict[str, Any]:
        """An event this server does not handle: nothing in a definition can bind it, so
        it is not a PreToolUse and no policy blocks it; the user is told."""
        self.count("failures")
        message = _one_line(
            f"hookrails serve: event {raw_name!r} is not handled here (it handles "
            f"{', '.join(EVENT_NAMES)} and Stop); remove it from the http hooks in settings.json"
        )
        _log.warning("%s", message)
        return {"systemMessage": message}

    def _decide(self, event: Event) -> Decision:
        limit = self.deadlines.get(event.event_name, self.deadline)
        ticket = _Ticket(event)
        with self._tickets_lock:
            self._tickets[id(event)] = ticket
        future = self._workers.submit(self._emit, ticket, time.monotonic() + limit, limit)
        try:
            decision: Decision = future.result(timeout=limit)
        except TimeoutError:
            if future.cancel():  # never started: nobody else will forget the ticket
                self._forget(ticket)
            with ticket.lock:
                recorded = ticket.decision
                ticket.abandoned = recorded is None
            if recorded is not None:  # it was being recorded as the deadline passed
                return recorded
            raise _Late(f"no decision within {limit:g}s (a hook is still running)") from None
        return decision

    def _emit(self, ticket: _Ticket, deadline_at: float, limit: float) -> Decision:
        try:
            event = ticket.event
            with self._locks.hold(event.session_id, deadline_at - time.monotonic()) as held:
                if not held or time.monotonic() >= deadline_at:
                    raise _Late(
                        f"no decision within {limit:g}s (the session's earlier event is "
                        "still being decided)"
                    )
                return self.guard.emit_sync(event)
        finally:
            self._forget(ticket)

    def _forget(self, ticket: _Ticket) -> None:
        with self._tickets_lock:
            if self._tickets.get(id(ticket.event)) is ticket:
                del self._tickets[id(ticket.event)]

    def _gated_record(
        self, decision: Decision, session: Session, now: float, **kwargs: Any
    ) -> None:
        """The ledger's ``record`` while serving: a decision for an abandoned request (past
        its deadline, already answered and recorded as a refusal) is dropped."""
        with self._tickets_lock:
            ticket = self._tickets.get(id(decision.event))
        if ticket is not None and ticket.event is decision.event:
            with ticket.lock:
                if ticket.abandoned:
                    _log.warning(
                        "hookrails serve: %s decided after its deadline; not recorded (the "
                        "refusal Claude was given is)",
                        decision.event_name,
                    )
                    return
                ticket.decision = decision
        assert self._record is not None
        self._record(decision, session, now, **kwargs)

    # --- GET /v1/hooks ------------------------------------------------------------

    def bindings(self) -> dict[str, Any]:
        """Each event's matchers (as declared) and its hooks in the order they run."""
        from ._redact import DEFAULT_REDACTOR

        redact = DEFAULT_REDACTOR.redact_text
        d = self.definition
        bound = self.guard.bindings
        events: dict[str, Any] = {}
        total = 0
        for name, matchers in d.hooks.items():
            order = bound.get(name, [])
            total += len(order)
            events[name] = {
                "wire_name": event_class(name).wire_name,
                "failure_policy": "block" if self.closed.get(name) else "continue",
                "deadline_s": self.deadlines.get(name),
                "matchers": [
                    {
                        "index": i,
                        "matcher": m.matcher,
                        "label": m.label,
                        "priority": m.priority,
                        "timeout": m.timeout,
                        "on_failure": m.on_failure or DEFAULT_ON_FAILURE.get(name, "continue"),
                        "agents": m.agents,
                        "tenants": m.tenants,
                        "hooks": [
                            {"hook": redact(h.name), "kind": h.kind, "privileged": h.privileged}
                            for h in m.resolved
                        ],
                    }
                    for i, m in enumerate(matchers)
                ],
                "order": [
                    {
                        "priority": b.priority,
                        "matcher": b.label,
                        "hook": redact(b.hook.name),
                        "kind": b.hook.kind,
                        "timeout": b.timeout,
                        "on_failure": b.on_failure,
                    }
                    for b in order
                ],
            }
        return {
            "agent": d.name,
            "source": d.source,
            "tools": sorted(d.tools),
            "bindings": total,
            "events": events,
        }

    # --- GET /v1/stats -------------------------------------------------------------

    def stats(self, limit: int) -> tuple[int, dict[str, Any]]:
        ledger = self.guard.ledger
        if ledger is None:
            return 200, {
                "ledger": None,
                "note": "this server records no ledger: start it with --ledger PATH (or give "
                "the definition a `ledger:` key, or set $HOOKRAILS_LEDGER)",
            }
        out: dict[str, Any] = {"ledger": {"path": ledger.path, "degraded": ledger.degraded}}
        try:
            reader = ledger.reader
            for key, sql in _STATS_SQL.items():
                out[key] = reader.query(sql, {"limit": limit})
        except GuardrailsError as exc:
            out["error"] = str(exc)
            return 503, out
        return 200, out

    # --- GET /v1/health ------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        from . import __version__

        ledger = self.guard.ledger
        with self._count_lock:
            counts = dict(self.counts, in_flight=self._in_flight)
        return {
            "status": "ok",
            "version": __version__,
            "agent": self.definition.name,
            "definition": self.definition.source,
            "uptime_s": round(time.time() - self.started, 3),
            "ledger": None
            if ledger is None
            else {"path": ledger.path, "degraded": ledger.degraded},
            "deadline_s": self.deadline,
            **counts,
        }

    # --- POST /v1/explain -----------------------------------------------------------

    def explain(self, body: bytes) -> tuple[int, dict[str, Any]]:
        """A dry run: a fresh Guard on the same definition, without a ledger.

        The body is either a whole Claude hook input (with ``hook_event_name``)
        or ``{"event": ..., "tool_name": ..., "tool_input": ..., ...}`` (the
        fields of ``hookrails explain``), optionally with ``tenant`` and ``cwd``.
        """
        try:
            data = json.loads(body)
        except (ValueError, RecursionError) as exc:
            return 400, {"error": f"the body is not JSON ({_describe(exc)})"}
        if not isinstance(data, dict):
            return 400, {"error": "the body must be a JSON object"}
        kwargs: dict[str, Any] = {}
        if "hook_event_name" in data:  # a whole hook input, as Claude would send it
            payload = dict(data)
            kwargs["tenant"] = payload.pop("tenant", None)
            kwargs["payload"] = payload
            kwargs["event_name"] = payload["hook_event_name"]
        else:
            unknown = sorted(set(data) - set(_EXPLAIN_FIELDS))
            if unknown:
                return 400, {
                    "error": f"unknown field {unknown[0]!r}",
                    "fields": sorted(_EXPLAIN_FIELDS),
                }
            kwargs = {_EXPLAIN_FIELDS[k]: v for k, v in data.items()}
            if "event_name" not in kwargs and isinstance(kwargs.get("payload"), dict):
                kwargs["event_name"] = kwargs["payload"].get("hook_event_name")
        if not isinstance(kwargs.get("event_name"), str):
            return 400, {"error": "name the event: `event` (or a `hook_event_name`)"}
        future = self._workers.submit(self._explain, kwargs)
        try:
            result: dict[str, Any] = future.result(timeout=self.deadline)
        except TimeoutError:
            future.cancel()
            return 504, {"error": f"no decision within {self.deadline:g}s"}
        except GuardrailsError as exc:
            return 400, {"error": str(exc)}
        return 200, result

    def _explain(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        from ._report import explain_event

        name = kwargs.pop("event_name")
        result = explain_event(self.definition, name, **kwargs)
        return {"dry_run": True, "recorded": False, **result.as_dict()}


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    timeout = _IDLE_TIMEOUT
    # headers and body are two writes: without TCP_NODELAY the second waits for the
    # client's delayed ACK (~40 ms per answer on a keep-alive connection)
    disable_nagle_algorithm = True

    @property
    def app(self) -> ServeApp:
        return cast(HookServer, self.server).app

    def version_string(self) -> str:
        from . import __version__

        return f"hookrails/{__version__}"

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
            self._send(500, {"error": f"internal error ({_describe(exc)})"})
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
                self._send(*app.explain(body))
        elif url.path == "/v1/hooks":
            self._send(200, app.bindings())
        elif url.path == "/v1/stats":
            limit = _limit(url.query)
            if limit is None:
                self._send(400, {"error": "limit must be an integer from 1 to 1000"})
            else:
                self._send(*app.stats(limit))
        else:
            self._send(200, app.health())

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
        hints = parse_qs(query).get("event")
        hint = hints[-1] if hints else None
        try:
            body = self._read_body()
        except _BodyError as exc:
            if exc.close:
                self.close_connection = True
            self._send(200, app.failure(app.hinted(hint), str(exc)))
            return
        self._write(200, app.hook_answer(body, hint))

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
                while self.rfile.readline(8192) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(parts)
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
        self._write(status, _encode(body), headers)

    def _write(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own errors (a bad request line, an unknown method), in JSON too."""
        self.close_connection = True
        try:
            phrase = HTTPStatus(code).phrase
        except ValueError:
            phrase = "error"
        self._send(code, {"error": message or phrase})

    def log_message(self, format: str, *args: Any) -> None:
        _log.info("%s %s", self.address_string(), format % args)


def _is_json(content_type: str | None) -> bool:
    """``application/json``, parameters (``; charset=utf-8``) allowed."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media == "application/json"


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


def _limit(query: str) -> int | None:
    values = parse_qs(query).get("limit")
    if not values:
        return 20
    try:
        n = int(values[-1])
    except ValueError:
        return None
    return n if 1 <= n <= 1000 else None


class HookServer(ThreadingHTTPServer):
    """The HTTP server: ``serve_forever()``, ``shutdown()``, ``server_close()``; ``url``."""

    daemon_threads = True

    def __init__(self, app: ServeApp, host: str, port: int) -> None:
        self.app = app
        #: only this machine can connect: requests must then name it in ``Host``
        self.loopback = is_loopback(host.strip("[]"))
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        if ":" in host.strip("[]"):
            self.address_family = socket.AF_INET6
        super().__init__((host.strip("[]"), port), _Handler)

    def serve_forever(self, poll_interval: float = 0.1) -> None:
        """As socketserver's; ``shutdown()`` returns within ``poll_interval`` (0.5 s there)."""
        super().serve_forever(poll_interval)

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

    def finish_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        try:
            super().finish_request(request, client_address)
        finally:
            with self._open_lock:
                self._open.discard(request)

    def server_close(self) -> None:
        """Stop listening and reading (idle keep-alive connections end), let the requests
        in flight finish their answers (a few seconds at most), then stop."""
        super().server_close()
        self._shutdown_open(socket.SHUT_RD)
        self.app.close()
        self._shutdown_open(socket.SHUT_RDWR)

    def _shutdown_open(self, how: int) -> None:
        with self._open_lock:
            open_ = list(self._open)
        for sock in open_:
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
    workers: int = 16,
    insecure: bool = False,
) -> HookServer:
    """A bound (not yet serving) server for ``guard``; port 0 picks a free port.

    Run it with ``serve_forever()`` (in a thread, say) and stop it with
    ``shutdown()`` then ``server_close()``. ``token``: every request must carry
    ``Authorization: Bearer <token>``; an empty one raises
    :class:`~guardrails.errors.ServeError` (it would read as "no auth"). A host
    that is not loopback needs a token, or ``insecure=True``.
    """
    check_exposure(host, token, insecure=insecure)
    app = ServeApp(guard, token=token, max_body=max_body, deadline=deadline, workers=workers)
    try:
        return HookServer(app, host, port)
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


def startup_lines(server: HookServer) -> list[str]:
    """What ``hookrails serve`` prints once it listens: where, for what, and how to call it."""
    app = server.app
    d = app.definition
    ledger = app.guard.ledger
    hook_url = server.url + HOOK_ROUTE
    lines = [
        f"hookrails serve: agent {d.name!r}"
        + (f" from {d.source}" if d.source else "")
        + f", {sum(len(b) for b in app.guard.bindings.values())} hook bindings, "
        + (f"ledger {ledger.path}" if ledger is not None else "no ledger"),
        f"listening on {server.url}",
        f"  Claude Code http hooks: POST {hook_url}",
        f"  also: GET {server.url}/v1/hooks, /v1/stats, /v1/health; POST /v1/explain",
    ]
    if app.token_required:
        lines += [
            "  every request needs the header  Authorization: Bearer <token>",
            f'  in .claude/settings.json: "headers": {{"Authorization": "Bearer ${TOKEN_ENV}"}}, '
            f'"allowedEnvVars": ["{TOKEN_ENV}"]  (export {TOKEN_ENV} where claude runs)',
            f'  curl -H "Authorization: Bearer ${TOKEN_ENV}" {server.url}/v1/health',
        ]
    lines.append("Ctrl-C (or SIGTERM) stops it")
    return lines


def exposure_warning(server: HookServer) -> str | None:
    """A warning when anyone on the network could ask this server for decisions."""
    if server.app.token_required or server.loopback:
        return None
    return (
        f"warning: listening on {server.host} (not loopback) without a token (--insecure): "
        "anyone who can "
        f"reach port {server.port} can read the bindings and stats and drive the hooks; "
        f"set --token or ${TOKEN_ENV}"
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
