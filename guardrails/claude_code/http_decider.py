"""What ``hookrails serve`` answers, apart from HTTP: one warm Guard deciding hook events.

Claude Code takes an error status from an http hook as a *non-blocking* error
and lets the action go ahead, so the hook route always answers 200 and what
goes wrong must be in the answer: a body that cannot be read, an event that
cannot be decided, a crash or a missed deadline fails by the event's failure
policy (a PreToolUse is denied). The policy, each event's deadline and the
failure JSON are ``_policy``'s, shared with ``hookrails hook``, ``claude
install`` and the claude-agent-sdk dispatcher.

The ledger tells the same story as Claude's answer. An undecided event that was
read is recorded as the refusal (or the continue) Claude was given, an invalid
PreToolUse too (from its well-typed fields). A decision that misses its deadline
is not recorded when it finally arrives: the refusal is, and the call never ran.

Threads. An event is decided on the thread that read its request (no handoff), and
every answer has a deadline (a hung hook cannot keep Claude waiting until its own
timeout, which would fail open): ``serve_pool``'s watchdog answers for the thread
at the deadline, by the failure policy, through the ``late`` callback the caller
gives, while the thread stays inside the hook (*abandoned*: when the hook returns,
its answer is dropped and the connection closes). The Guard is shared, but its
per-session state is not safe to mutate from two threads at once
(``Guard._sessions`` is get-then-set, and a session's stop-block counts, turn
budget, halt flag and ``ctx.state`` are read-modify-write), so events of one
session run one at a time: the request takes its session's turn first; sessions
run side by side. A hung hook stalls its own session only (a session whose event
is hung fails its next events at once), and past ``max_abandoned`` threads held by
hooks past their deadline every event fails at once until one returns. The ledger
serialises its own writes (one connection behind a lock) and its reader has a lock
of its own.

No sockets here: bytes in, plain data out (a status and a JSON-able body; the
hook route's answer already encoded), so ``_serve`` only guards the door and
writes, and what is decided can be read without HTTP in the way. A late answer is
handed to the caller's ``late(data)`` instead, from the watchdog's thread.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from ..definition.model import DEFAULT_ON_FAILURE
from ..errors import EventError, GuardrailsError, ServeError, describe, one_line
from ..events import EVENT_NAMES, Event, event_class, known_event_name
from . import failure_policy as _policy
from .failure_policy import encode_bytes
from .serve_pool import SessionBusy, SessionGate, Timer, Turn, Watchdog

if TYPE_CHECKING:
    from ..dispatch.guard import Guard
    from ..ledger.session_state import Settled
    from ..results import Decision

__all__ = ["DEFAULT_WORKERS", "MAX_BODY", "ServeApp"]

_log = logging.getLogger("guardrails.serve")

#: a bigger request body is refused (a Write of a large file is the usual big hook input)
MAX_BODY: Final = 8 * 1024 * 1024
#: connection threads kept warm; more are started on demand (``http_server``)
DEFAULT_WORKERS: Final = 16
_REASON_CAP: Final = 1000
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


class _Late(Exception):
    """No decision within the deadline (hooks still running, or the session busy)."""


#: where the watchdog writes a request's answer (status, body) when its deadline passed
Late = Callable[[int, bytes], None]


class _Ticket:
    """One run under a deadline (a hook event, or a dry run), between its thread and the
    watchdog.

    ``state``: ``running``, then ``done`` (the thread answers) or ``expired`` (the
    watchdog answered at the deadline: by the failure policy, recording that refusal,
    so the decision the thread reaches later is not recorded and Claude was told deny:
    the call never runs; or with the decision the thread had started recording, which
    is the answer, late or not). ``answered`` is set once the watchdog's answer is
    written: the thread, back from its hooks, closes the connection only then.
    """

    __slots__ = ("answered", "decision", "event", "lock", "state")

    def __init__(self, event: Event | None) -> None:
        self.event = event
        self.lock = threading.Lock()
        self.decision: Decision | None = None
        self.state = "running"
        self.answered: threading.Event | None = None


#: seconds a GET /v1/stats answer is served again before it is computed anew
STATS_TTL = 2.0


def _one_line(text: str) -> str:
    """A reason for Claude: one line, capped."""
    text = one_line(text)
    return text if len(text) <= _REASON_CAP else text[: _REASON_CAP - 1] + "…"


class ServeApp:
    """What the routes answer, apart from HTTP: decisions, bindings, stats, dry runs.

    ``deadline``: seconds a hook request may take before it is answered by the
    event's failure policy, for every event (default: each event's
    ``_policy.deadline``, plus the approval timeout on PreToolUse when the Guard
    has an approver). ``token``: ``None`` for no auth; an empty one is refused.
    Past ``max_abandoned`` (default ``4 * workers``) threads held by hooks past their
    deadline, every event fails at once until one returns.

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
        workers: int = DEFAULT_WORKERS,
        max_abandoned: int | None = None,
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
        self._record: Callable[..., Settled | None] | None = (
            None if ledger is None else ledger.record
        )
        if ledger is not None:
            ledger.record = self._gated_record  # type: ignore[method-assign]
        self.started = time.time()
        from ..ledger.postgres_ship import start_shipper
        from .relay import served_tags

        #: what a relayed event must name (``relay``); the spool's shipper (PostgreSQL)
        self.relay_tags = served_tags(guard)
        self.shipper = start_shipper(ledger)
        #: GET /v1/stats answers by limit, with when each was computed (STATS_TTL)
        self._stats: dict[int, tuple[float, tuple[int, dict[str, Any]]]] = {}
        self._stats_lock = threading.Lock()
        self._gate = SessionGate()
        self._watchdog = Watchdog(min(self.deadlines.values()))  # the shortest it is given
        self.max_abandoned = 4 * workers if max_abandoned is None else max_abandoned
        self._count_lock = threading.Condition()
        self.counts: dict[str, int] = dict.fromkeys(
            ("requests", "hook_calls", "failures", "evicted_connections", "refused_connections"),
            0,
        )
        self._in_flight = 0
        self._deciding = 0  # events inside their hooks now (abandoned ones too)
        self._abandoned = 0  # threads still inside a run whose deadline passed
        self._closed = False

    @property
    def token_required(self) -> bool:
        return self._token is not None

    def close(self, grace: float = 5.0) -> None:
        """Let requests in flight finish (up to ``grace`` seconds; one already answered at its
        deadline is not waited for), then stop the watchdog."""
        if self._closed:
            return
        self._closed = True
        with self._count_lock:
            self._count_lock.wait_for(lambda: self._in_flight <= self._abandoned, timeout=grace)
        self._watchdog.close()
        if self.shipper is not None:
            self.shipper.stop()
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

    def hook_answer(
        self, body: bytes, late: Late, hint: str | None = None, within: float | None = None
    ) -> bytes | None:
        """The hook output (JSON bytes) for one Claude hook input, decided on this thread.

        Never raises: whatever goes wrong becomes the event's failure answer.
        ``hint`` (the route's ``?event=`` query, like ``hookrails hook --event``)
        names the event when the body cannot be read; it is ignored otherwise.
        ``late``: where the watchdog writes the answer (from its own thread) when the
        deadline passes first; this then returns ``None`` once the hooks return at last.
        ``within``: seconds a relaying hook process has left; the deadline is no later.
        """
        self.count("hook_calls")
        try:
            payload = json.loads(body)
        except (ValueError, RecursionError) as exc:
            reason = f"the hook input is not JSON ({describe(exc)})"
            return encode_bytes(self.failure(known_event_name(hint), reason))
        raw_name = payload.get("hook_event_name") if isinstance(payload, dict) else None
        if not isinstance(payload, dict) or not isinstance(raw_name, str):
            what = "has no hook_event_name" if isinstance(payload, dict) else "is not an object"
            return encode_bytes(self.failure(known_event_name(hint), f"the hook input {what}"))
        name = known_event_name(raw_name)
        if name is None:
            return encode_bytes(self.unhandled(raw_name))
        try:
            event = Event.from_claude(payload)
        except EventError as exc:
            reason = f"invalid {raw_name} hook input: {exc}"
            salvaged = _policy.salvage_event(payload, name)
            return encode_bytes(self.failure(name, reason, event=salvaged))
        try:
            decision = self._decide(event, late, within)
            if decision is None:
                return None
            # an answer that is not strict JSON (a NaN rewrite) fails too, never an allow
            return encode_bytes(decision.to_claude())
        except _Late as exc:
            return encode_bytes(self.failure(name, str(exc), event=event))
        except BaseException as exc:  # a crash (a hook's SystemExit included) never allows
            _log.exception("hookrails serve: deciding %s failed", name)
            reason = f"deciding the event failed ({describe(exc)})"
            return encode_bytes(self.failure(name, reason, event=event))

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
                self._record(
                    decision,
                    self.guard.clock(),
                    agent=session.guard.definition.name,
                    tenant=session.tenant,
                )
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

    def _decide(self, event: Event, late: Late, within: float | None = None) -> Decision | None:
        """The decision, or ``None`` when the watchdog answered at the deadline (its hooks
        ran past it). Raises ``_Late`` when it cannot start in time."""
        limit = self.deadlines.get(event.event_name, self.deadline)
        if within is not None:
            limit = min(limit, within)
        deadline_at = time.monotonic() + limit
        self._refuse_if_full()
        try:
            turn = self._gate.take(event.session_id, deadline_at)
        except SessionBusy as exc:
            if exc.stuck:
                raise _Late(
                    "the session's earlier event is still running past its deadline (a hook "
                    "is hung): its events are refused until that one ends"
                ) from None
            raise _Late(
                f"no decision within {limit:g}s (the session's earlier event is still being "
                "decided)"
            ) from None
        ticket = _Ticket(event)
        with self._tickets_lock:
            self._tickets[id(event)] = ticket
        timer = self._start(deadline_at, lambda: self._expire(ticket, turn, limit, late))
        try:
            decision = self.guard.emit_sync(event)
        except BaseException:  # a crash (a hook's SystemExit too): the caller answers it
            if self._settle(ticket, timer, turn):
                raise
            _log.exception("hookrails serve: %s failed after its deadline", event.event_name)
            return None
        return decision if self._settle(ticket, timer, turn) else None

    def _refuse_if_full(self) -> None:
        with self._count_lock:
            abandoned = self._abandoned
        if abandoned > self.max_abandoned:
            raise _Late(
                f"no thread is free: {abandoned} hooks are still running past their deadline, "
                f"over the limit of {self.max_abandoned}"
            )

    def _start(self, at: float, fire: Callable[[], None]) -> Timer:
        with self._count_lock:
            self._deciding += 1
        return self._watchdog.start(at, fire)

    def _settle(self, ticket: _Ticket, timer: Timer, turn: Turn | None = None) -> bool:
        """The run ended: True when this thread answers, False when the watchdog did (once
        its answer is written)."""
        self._watchdog.cancel(timer)
        if ticket.event is not None:
            self._forget(ticket)
        with ticket.lock:
            answered = ticket.answered
            ticket.state = "done"
        with self._count_lock:
            self._deciding -= 1
            if answered is not None:
                self._abandoned -= 1
        if turn is not None:
            self._gate.give_back(turn)
        if answered is None:
            return True
        _log.warning("hookrails serve: a hook past its deadline returned; its thread is back")
        answered.wait()  # the connection closes after the watchdog's answer, never before
        return False

    def _abandon(self, ticket: _Ticket) -> threading.Event | None:
        """The deadline passed (the watchdog's thread): ``None`` when the run ended first,
        else the thread is set aside; set the event returned once the answer is written."""
        with ticket.lock:
            if ticket.state != "running":
                return None
            ticket.state = "expired"
            ticket.answered = answered = threading.Event()
            with self._count_lock:
                self._abandoned += 1
                count = self._abandoned
                self._count_lock.notify_all()
        level = logging.ERROR if count > self.max_abandoned else logging.WARNING
        _log.log(
            level,
            "hookrails serve: a hook is still running past its deadline; its thread is set "
            "aside (%d set aside, limit %d)",
            count,
            self.max_abandoned,
        )
        return answered

    def _expire(self, ticket: _Ticket, turn: Turn, limit: float, late: Late) -> None:
        """A hook event's deadline passed: answer by the failure policy (or with the
        decision being recorded), and make the session's next events fail at once until
        the thread returns."""
        answered = self._abandon(ticket)
        if answered is None:
            return
        try:
            self._gate.stick(turn)
            event = ticket.event
            assert event is not None
            name = event.event_name
            recorded = ticket.decision  # read after the state changed: it no longer moves
            try:
                if recorded is None:
                    raise _Late(f"no decision within {limit:g}s (a hook is still running)")
                data = encode_bytes(recorded.to_claude())  # being recorded: the answer
            except _Late as exc:
                data = encode_bytes(self.failure(name, str(exc), event=event))
            except Exception as exc:
                reason = f"deciding the event failed ({describe(exc)})"
                data = encode_bytes(self.failure(name, reason, event=event))
            late(200, data)
        finally:
            answered.set()

    def _forget(self, ticket: _Ticket) -> None:
        with self._tickets_lock:
            if self._tickets.get(id(ticket.event)) is ticket:
                del self._tickets[id(ticket.event)]

    def _gated_record(self, decision: Decision, now: float, **kwargs: Any) -> Settled | None:
        """The ledger's ``record`` while serving: a decision for an abandoned request (past
        its deadline, already answered and recorded as a refusal) is dropped."""
        with self._tickets_lock:
            ticket = self._tickets.get(id(decision.event))
        if ticket is not None and ticket.event is decision.event:
            with ticket.lock:
                if ticket.state == "expired":
                    _log.warning(
                        "hookrails serve: %s decided after its deadline; not recorded (the "
                        "refusal Claude was given is)",
                        decision.event_name,
                    )
                    return None
                ticket.decision = decision
        assert self._record is not None
        return self._record(decision, now, **kwargs)

    # --- GET /v1/hooks ------------------------------------------------------------

    def bindings(self) -> dict[str, Any]:
        """Each event's matchers (as declared) and its hooks in the order they run."""
        from .._redaction import DEFAULT_REDACTOR

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
        """The ledger's statistics, computed at most once per ``STATS_TTL`` seconds per
        ``limit``: on a big ledger they read every row (seconds), and a dashboard polling
        the server must not keep its disk and a core busy. Requests while one computes
        wait for it and share its answer; a failure is not kept."""
        now = time.monotonic()
        hit = self._stats.get(limit)
        if hit is not None and now - hit[0] < STATS_TTL:
            return hit[1]
        with self._stats_lock:
            hit = self._stats.get(limit)
            if hit is not None and time.monotonic() - hit[0] < STATS_TTL:
                return hit[1]
            answer = self._compute_stats(limit)
            if answer[0] == 200:
                if len(self._stats) >= 16:
                    self._stats.clear()
                self._stats[limit] = (time.monotonic(), answer)
            return answer

    def _compute_stats(self, limit: int) -> tuple[int, dict[str, Any]]:
        ledger = self.guard.ledger
        if ledger is None:
            return 200, {
                "ledger": None,
                "note": "this server records no ledger: start it with --ledger PATH (or give "
                "the definition a `ledger:` key, or set $HOOKRAILS_LEDGER)",
            }
        out: dict[str, Any] = {"ledger": {"path": ledger.path, "degraded": ledger.degraded}}
        try:
            for key, rows in ledger.reader.stats(limit):
                out[key] = rows
        except GuardrailsError as exc:
            out["error"] = str(exc)
            return 503, out
        return 200, out

    # --- GET /v1/health ------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        from .._version import __version__

        ledger = self.guard.ledger
        with self._count_lock:
            counts = dict(self.counts, in_flight=self._in_flight)
        with self._count_lock:
            workers = {
                "deciding": self._deciding - self._abandoned,
                "abandoned": self._abandoned,
                "max_abandoned": self.max_abandoned,
            }
        stuck = self._gate.stuck_sessions()
        return {
            # degraded: hooks are hung past their deadlines (their sessions' events fail)
            "status": "degraded" if workers["abandoned"] or stuck else "ok",
            "workers": workers,
            "stuck_sessions": stuck,
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

    def explain(self, body: bytes, late: Late) -> tuple[int, dict[str, Any]] | None:
        """A dry run: a fresh Guard on the same definition, without a ledger; ``None`` when
        it ran past the deadline and ``late`` was given the 504.

        The body is either a whole Claude hook input (with ``hook_event_name``)
        or ``{"event": ..., "tool_name": ..., "tool_input": ..., ...}`` (the
        fields of ``hookrails explain``), optionally with ``tenant`` and ``cwd``.
        """
        try:
            data = json.loads(body)
        except (ValueError, RecursionError) as exc:
            return 400, {"error": f"the body is not JSON ({describe(exc)})"}
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
        try:
            self._refuse_if_full()
        except _Late as exc:
            return 503, {"error": str(exc)}
        ticket = _Ticket(None)
        limit = self.deadline
        timer = self._start(
            time.monotonic() + limit, lambda: self._explain_expired(ticket, limit, late)
        )
        try:
            answer: tuple[int, dict[str, Any]] = (200, self._explain(kwargs))
        except GuardrailsError as exc:
            answer = 400, {"error": str(exc)}
        except BaseException:
            if self._settle(ticket, timer):
                raise
            return None
        return answer if self._settle(ticket, timer) else None

    def _explain_expired(self, ticket: _Ticket, limit: float, late: Late) -> None:
        answered = self._abandon(ticket)
        if answered is not None:
            try:
                late(504, encode_bytes({"error": f"no decision within {limit:g}s"}))
            finally:
                answered.set()

    def _explain(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        from ..dispatch.explain import explain_event

        name = kwargs.pop("event_name")
        result = explain_event(self.definition, name, **kwargs)
        return {"dry_run": True, "recorded": False, **result.as_dict()}
