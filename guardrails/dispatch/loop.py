"""The one dispatch loop: shared steps, and two thin drivers (sync and async).

Every event goes ``begin`` (tool-use id, stop-block count, halt check, chain
lookup, new turn) -> the hooks, in chain order, each reported to the Merge ->
``finish`` (merge, hand an ``ask`` to the approver, record). The drivers differ
only in how a hook is called: the sync one calls it on this thread, the async
one awaits it (a sync hook in a thread, so its timeout holds and the loop stays
free). A chain holding an async hook, reached from sync code, runs the async
hook loop to completion.
"""

from __future__ import annotations

import _thread
import contextvars
import os
import sys
import time

from .._event_table import HAND_WRITTEN
from .._frozen import freeze, seal
from ..events import STOP_EVENTS, TOOL_EVENTS, TOOL_NAME_EVENTS
from ..results import STOP_BLOCK_CAP, Decision, allowed
from .chains import NEW_TURN as _NEW_TURN
from .chains import OWN_ASK as _OWN_ASK
from .chains import QUIET_RUNS
from .chains import SESSION_END as _SESSION_END
from .merge import Merge

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from typing import Any

    from ..events import Event
    from ..ledger.session_state import SessionState, Settled, StateChange
    from .chains import Plan
    from .guard import Guard
    from .session import HookContext, Session
    from .untimed import Resume

    _StateNames = tuple[
        type[StateChange], Callable[[SessionState | None, str | None], SessionState], Settled
    ]

__all__ = ["HELD", "emit", "emit_sync", "in_thread"]

_perf = time.perf_counter
_get_ident = _thread.get_ident
#: a quiet chain's hooks all ran (``_position``)
_PAST_END = object()
#: the sealed event classes (``_frozen.seal``: an event of one is read-only already), each
#: with its ``event_name`` and ``subject_field`` (class attributes, read once here)
_sealed: dict[type, tuple[str, str | None]] = {}
#: ``StateChange`` and ``current`` of ``guardrails.ledger.session_state``, once a ledger
#: needs them (see ``_load_state``); the :mod:`.untimed` module, once a quiet chain without
#: a ledger needs it (a hook process's chain is timed per hook)
_state: _StateNames | None = None
_untimed: Any = None
_async_hooks: Any = None  # the async driver's chain runner, imported on first need
_threads: Any = None  # (and the async driver's thread handoff, ``in_thread``)

#: events whose fields a hook could change in place: none (strings, and lists Claude sent
#: for the record: a stop's background tasks), besides the tool events' input and output
_PLAIN = frozenset(HAND_WRITTEN)
#: events whose ask goes to the Guard's approver (the others' ask goes to the host); a
#: PermissionRequest no hook decided goes there too (it is Claude's own ask)
_APPROVED = frozenset({"PreToolUse", "PermissionRequest"})
#: events a halted session refuses until the next prompt: they would run something
_HALTED_REFUSES = frozenset({"PreToolUse", "PreSkillShellCommand", "PermissionRequest"})
#: the turns (one fresh token per turn) this context holds: a hook emitting into its own
#: session re-enters instead of waiting on itself (hook threads inherit it); a token
#: outlives its turn harmlessly, since only the current turn's token re-enters
HELD: contextvars.ContextVar[frozenset[object]] = contextvars.ContextVar(
    "hookrails_held", default=frozenset()
)


# --- the drivers ---------------------------------------------------------------------------


def emit_sync(
    guard: Guard, event: Event, session: Session | None = None, owner: bool = False
) -> Decision:
    """Decide ``event`` on this thread, holding the session's turn. Without ``session``:
    the Guard's session of the event (this is ``Guard.emit_sync`` itself, one call less)."""
    if session is None:
        sid = event.session_id  # Guard.session_for's common case, inlined: the hot path
        session = guard._sessions.get(sid) if sid and event.cwd else None
        if session is None:
            session = guard.session_for(event)
    session._gen = guard._gen  # used now (the Guard's idle-session sweep reads it)
    lock = session._lock
    if guard.ledger is None:  # nothing records each hook's time: the quiet path, inlined
        entry = None
        quick = session._quick.get(type(event))  # an event class this session has seen
        if quick is not None and event.agent_type is None:
            field_, by_subject, unsealed = quick
            subject = guard._agent if field_ is None else getattr(event, field_)
            if type(subject) is str:
                entry = by_subject.get(subject)
                if entry is not None and unsealed:
                    _seal(event)  # read-only from here on, as _begin makes it
        if entry is None:
            cls = type(event)
            name, field_ = _sealed.get(cls) or _seal(event)
            subject = guard._agent if field_ is None else getattr(event, field_)  # as _begin
            if type(subject) is not str:
                subject = ""
            key = (name, subject, event.agent_type)
            entry = session._plans.get(key) or session._plan(key)
            if key[2] is None:
                session._remember(cls, type(event), field_, subject, entry)
        plan, pairs = entry
        if pairs is not None and plan.quiet >= QUIET_RUNS:  # (pairs: Plan.plain)
            if not pairs:  # nothing runs, nothing changes: no turn needed
                if session.halted is None:
                    return allowed(event, [])
            elif not lock.locked() and lock.acquire():  # (acquire() parses no argument)
                session._owner = _get_ident()
                try:  # every hook runs, the chain timed once (untimed.py)
                    if session.halted is None:
                        r = ctx = None
                        t0 = _perf()
                        try:
                            for fn, ctx in pairs:  # ctx: where it stopped
                                r = fn(event, ctx)
                                if r is not None:
                                    break
                            else:
                                elapsed = _perf() - t0
                                if elapsed < plan.limit:
                                    ran = (plan.bindings, "noop", elapsed, None, 0)
                                    return allowed(event, [ran])
                                ctx = _PAST_END
                        except BaseException as exc:  # judged as the timed loop would
                            j = _position(pairs, ctx)
                            decision = _go_on(guard, event, session, owner, plan, j, None, exc, t0)
                        else:
                            j = _position(pairs, ctx)
                            decision = _go_on(guard, event, session, owner, plan, j, r, None, t0)
                    else:  # halted: denied as _begin denies it
                        decision = _decide_sync(guard, event, session, owner)
                finally:
                    session._owner = session._turn = None
                    lock.release()
                return _approved(guard, decision, session, owner)
    if lock.acquire(False):  # the common case: nobody holds the turn
        session._owner = _get_ident()
        try:
            decision = _decide_sync(guard, event, session, owner)
        finally:
            session._owner = session._turn = None
            lock.release()
    elif session._owner == _get_ident() or (  # inlined Session._reentry: the hot path
        session._turn is not None and session._turn in HELD.get()
    ):
        decision = _decide_sync(guard, event, session, owner)
    elif not _holder_loop_is_here(session):
        lock.acquire()
        try:
            session._owner = _get_ident()
            decision = _decide_sync(guard, event, session, owner)
        finally:
            session._owner = session._turn = None
            lock.release()
    else:  # a task of this very thread's event loop holds the turn: waiting would stall
        # the loop it needs to finish, so decide without the turn (a callback of that loop)
        decision = _decide_sync(guard, event, session, owner)
    return _approved(guard, decision, session, owner)


def _approved(guard: Guard, decision: Decision, session: Session, owner: bool) -> Decision:
    """``decision``; an ask the approver settles first, outside the session's turn (siblings
    go on meanwhile), then recorded."""
    if not _pending(guard, decision):
        return decision
    from .approval import approve_sync  # an ask for the approver: not every process's

    approve_sync(guard, decision, session)
    return recorded(guard, _unless_halted(decision, session), session, owner)


async def emit(guard: Guard, event: Event, session: Session, owner: bool = False) -> Decision:
    """Decide ``event`` on the running loop, holding the session's turn."""
    session._gen = guard._gen  # used now (the Guard's idle-session sweep reads it)
    if session._reentry():  # a hook of this session emitting into it
        decision, pending = await _decide(guard, event, session, owner)
    else:
        await _acquire(session._lock)
        try:
            session._loop = _running_loop()
            token = session._enter()
            try:
                decision, pending = await _decide(guard, event, session, owner)
            finally:
                HELD.reset(token)
        finally:
            session._turn = session._loop = None
            session._lock.release()
    if not pending:
        return decision
    from .approval import approve

    await approve(guard, decision, session)  # outside the turn, as on the sync path
    decision = _unless_halted(decision, session)
    if guard.ledger is None:
        return recorded(guard, decision, session, owner)
    done: Decision = await in_thread(recorded, guard, decision, session, owner)
    return done


def _decide_sync(guard: Guard, event: Event, session: Session, owner: bool) -> Decision:
    """The decision, recorded; or an ask left unrecorded for the approver (``_pending``)."""
    if guard.ledger is not None:
        _ensure_tool_use_id(event)
        name = event.event_name
        if name in STOP_EVENTS:
            seed_stop_blocks(guard, event, session)
        elif name in _HALTED_REFUSES and (not session._synced or session.halted is not None):
            seed_session(guard, session, event.prompt_id)
    begun = _begin(guard, event, session)
    if type(begun) is Decision:  # halted
        return recorded(guard, begun, session, owner)
    plan = begun[0]  # type: ignore[index]
    if not plan.timed:
        done: Decision | Resume | None = None
        if not plan.bindings:  # nothing to run, nothing to count: allowed as it is
            done = allowed(event, [])
        elif plan.quiet >= QUIET_RUNS and guard.ledger is None:
            done = (_untimed or _lazy("untimed")).run_untimed(guard, event, session, plan)
        if type(done) is Decision:
            if guard.ledger is None and event.event_name != _SESSION_END:
                return done  # what ``recorded`` would leave as it is: an allow, not recorded
            return recorded(guard, done, session, owner, True)
        if done is not None:  # the chain stopped being quiet: the timed loop goes on
            return _timed_from(guard, session, owner, *done)  # type: ignore[misc]
    m = Merge(event, session, guard.definition, plan)
    if plan.bindings:
        try:
            if plan.needs_async:  # the turn is held: the coroutine's context (a copy) says so
                token = session._enter()
                try:
                    _run_coroutine(_hooks_async(m, session))
                finally:
                    HELD.reset(token)
            else:
                _hooks_sync(m, session)
        except BaseException:  # an interrupted hook: the refusal is recorded, then it goes on
            _finish(guard, m, session, owner)
            raise
    return _finish(guard, m, session, owner)[0]


def _position(pairs: tuple[tuple[Any, HookContext], ...], ctx: object) -> int:
    """Where in a quiet chain's ``pairs`` the hook with context ``ctx`` is (each hook of a
    chain has its own context); ``None`` (stopped before the first): 0; past the end: the
    chain's length."""
    for j, pair in enumerate(pairs):
        if pair[1] is ctx:
            return j
    return 0 if ctx is None else len(pairs)


def _go_on(
    guard: Guard,
    event: Event,
    session: Session,
    owner: bool,
    plan: Plan,
    j: int,
    r: Any,
    exc: BaseException | None,
    began: float,
) -> Decision:
    """A chain timed once that stopped being quiet at position ``j`` (a hook answered
    ``r``, raised ``exc``, or, ``j`` past the end, the chain ran long): judged by the
    chain's time, then the timed loop goes on (untimed.resume)."""
    u = _untimed or _lazy("untimed")
    return _timed_from(
        guard, session, owner, *u.resume(guard, event, session, plan, range(j), j, r, exc, began)
    )


def _timed_from(
    guard: Guard,
    session: Session,
    owner: bool,
    m: Merge,
    start: int,
    interrupted: BaseException | None,
    began: float,
) -> Decision:
    """The timed loop from chain position ``start`` on, then the decision."""
    try:
        if interrupted is not None:
            raise interrupted
        _hooks_sync(m, session, start, began)
    except BaseException:  # an interrupted hook: the refusal is recorded, then on
        _finish(guard, m, session, owner)
        raise
    return _finish(guard, m, session, owner)[0]


def _pending(guard: Guard, decision: Decision) -> bool:
    """An ask that goes to the Guard's approver before it is recorded (``_finish`` leaves
    it unrecorded): not a defer, on an event whose ask the approver settles. A
    PermissionRequest no hook decided is Claude's own ask (its dialog)."""
    if guard.approver is None or decision.deferred:
        return False
    name = decision.event.event_name
    if decision.decision == "ask":
        return name in _APPROVED
    return name == _OWN_ASK and not decision.explicit


async def _decide(
    guard: Guard, event: Event, session: Session, owner: bool
) -> tuple[Decision, bool]:
    if guard.ledger is not None:
        _ensure_tool_use_id(event)
        name = event.event_name
        if name in STOP_EVENTS and (event.agent_id or "") not in session.stop_blocks:
            await in_thread(seed_stop_blocks, guard, event, session)  # a query: off the loop
        elif name in _HALTED_REFUSES and (not session._synced or session.halted is not None):
            await in_thread(seed_session, guard, session, event.prompt_id)
    begun = _begin(guard, event, session)
    if type(begun) is Decision:  # halted
        if guard.ledger is None:
            return recorded(guard, begun, session, owner), False
        return await in_thread(recorded, guard, begun, session, owner), False
    m = Merge(event, session, guard.definition, begun[0])  # type: ignore[index]
    if m.chain:
        # with a ledger, a chain that ends quietly is decided and recorded in the thread
        # of its last sync hooks: one thread handoff less per event
        tail = None if guard.ledger is None else _Tail(guard, m, session, owner)
        try:
            await _hooks_async(m, session, tail)
        except BaseException:  # cancelled or interrupted: the refusal is recorded, then on
            if tail is None or not tail.taken:
                _finish(guard, m, session, owner)
            raise
        if tail is not None and tail.result is not None:
            return tail.result
    decision, pending = _finish(guard, m, session, owner, record=guard.ledger is None)
    if pending or guard.ledger is None:
        return decision, pending
    # a write can wait up to busy_timeout for another writer: not on the event loop
    return await in_thread(recorded, guard, decision, session, owner, True), False


# --- the shared steps ------------------------------------------------------------------------


def _begin(guard: Guard, event: Event, session: Session) -> tuple[Plan, Any] | Decision:
    """The compiled chain of ``event`` (with this session's ``(fn, ctx)`` for
    each hook, when all run), or a halted session's denial. From here on the event
    is read-only: its input and output frozen, its attributes sealed (what a hook sees, it
    cannot change; the ledger keeps what the model sent)."""
    name, field_ = _sealed.get(type(event)) or _seal(event)
    if session.halted is not None:
        halted = halted_decision(event, session)
        if halted is not None:
            return halted
    subject = guard._agent if field_ is None else getattr(event, field_)  # ChainIndex.key
    if type(subject) is not str:
        subject = ""
    key = (name, subject, event.agent_type)
    entry = session._plans.get(key)
    if entry is None:
        entry = session._plan(key)
    if name in _NEW_TURN:
        session.new_turn()
    return entry


def _finish(
    guard: Guard, merge: Merge, session: Session, owner: bool, *, record: bool = True
) -> tuple[Decision, bool]:
    """The merged decision, recorded (unless ``record`` is false); or ``(ask, True)`` when an
    approver must settle it first."""
    decision = merge.finish()
    if _pending(guard, decision):
        return decision, True
    if not record:
        return decision, False
    return recorded(guard, decision, session, owner, True), False


def _hooks_sync(merge: Merge, session: Session, start: int = 0, began: float | None = None) -> None:
    """Call each hook on this thread from chain position ``start``: one clock reading per
    hook, and a no-opinion answer in time recorded inline (the common case; everything
    else goes to the Merge). ``began``: when the event's hooks began (the budget's start)."""
    ctxs = session._ctx
    perf = _perf
    record = merge.d._raw.append
    plan = merge.plan
    bindings = plan.bindings
    ev = merge.event
    t0 = first = perf()
    deadline = (first if began is None else began) + merge.event_budget
    positions = plan.positions(ev, start)
    while True:
        for i in positions:
            b = bindings[i]
            if merge.stopped:
                merge.skip(b)
                continue
            if t0 >= deadline:
                merge.spent(b)
                continue
            try:
                r = b.fn(ev, ctxs[b.index] or session.ctx(b))
            except (Exception, SystemExit) as exc:  # a hook's exit() must not end the host
                t1 = perf()
                merge.raised(b, exc, t1 - t0)
            except BaseException as exc:  # Ctrl-C: refused and recorded, then it goes on
                merge.interrupted(b, exc, perf() - t0)
                raise
            else:
                t1 = perf()
                if r is None and t1 - t0 <= b.timeout:
                    record((b, "noop", t1 - t0, None, 0))
                else:
                    merge.returned(b, r, t1 - t0, b.timeout)
                    if merge.event is not ev:  # rewritten: the rest judge the new input
                        ev = merge.event
                        t0 = t1
                        positions = plan.positions(ev, i + 1)
                        break
            t0 = t1
        else:
            break
    if began is None:  # quiet: it ran within its limit (see untimed.py)
        plan.quiet = plan.quiet + 1 if t0 - first < plan.limit else 0


def _hooks_async(merge: Merge, session: Session, tail: _Tail | None = None) -> Awaitable[None]:
    """Await each hook under its limit; sync hooks run in a thread (their timeouts hold)."""
    run: Callable[..., Awaitable[None]] = (_async_hooks or _lazy("async_hooks")).run
    return run(merge, session, tail)


class _Tail:
    """The async driver's end of an event, run by the thread of the chain's last sync hooks
    once each of them answered nothing in time (``taken`` from then on): the decision,
    recorded unless an approver must settle it first (:func:`_finish`)."""

    __slots__ = ("args", "result", "taken")

    def __init__(self, guard: Guard, merge: Merge, session: Session, owner: bool) -> None:
        self.args = (guard, merge, session, owner)
        self.taken = False
        self.result: tuple[Decision, bool] | None = None

    def __call__(self) -> None:
        self.result = _finish(*self.args)


def recorded(
    guard: Guard, decision: Decision, session: Session, owner: bool, merged: bool = False
) -> Decision:
    """Write ``decision`` to the ledger (when there is one), settling what it does to the
    session's state in the same transaction (a halted session's call may be denied, its
    context cut, there: docs/design.md §7); otherwise the decision stands regardless.
    ``merged``: the decision is a Merge's, so a halt in it is new."""
    if owner and decision.decision == "ask":  # run_tool has nobody else to ask
        decision.decision = "deny"
        decision.reason = f"needs approval and no approver is configured: {decision.reason}"
    ledger = guard.ledger
    if ledger is not None:
        change = _state_change(guard, decision, session, merged)
        try:
            settled = ledger.record(
                decision,
                guard.clock(),
                agent=guard.definition.name,
                tenant=session.tenant,
                owner_pid=os.getpid() if owner else None,  # recover may ask if it still runs
                change=change,
            )
        except Exception:  # the decision stands whatever happens to its record
            settled = None
            import logging  # lazy: ~4 ms a hook process would pay on every event

            logging.getLogger("guardrails.guard").exception(
                "hookrails: could not record %s in the ledger", decision.event_name
            )
        if change is not None and settled is not (_state or _load_state())[2]:
            session._settled(settled, change)  # (journaled: nothing settled, nothing lost)
    if decision.event.event_name == _SESSION_END:
        guard._forget(session)  # a long-running Guard forgets it
    return decision


def halted_decision(event: Event, session: Session) -> Decision | None:
    """The denial of a tool call in a session a hook halted (``None`` otherwise)."""
    if session.halted is None or event.event_name not in _HALTED_REFUSES:
        return None
    why = f"the agent was halted: {session.halted}"
    return Decision(event, decision="deny", reason=why, explicit=True, halted=True)


def _unless_halted(decision: Decision, session: Session) -> Decision:
    """A call approved while a sibling halted the agent does not run after all."""
    if session.halted is not None and not decision.denied:
        return halted_decision(decision.event, session) or decision
    return decision


def seed_stop_blocks(guard: Guard, event: Event, session: Session) -> None:
    """A session new to this process (a command hook is one process per event, a Guard
    lets idle sessions go) learns how many stops in a row were blocked from the ledger, so
    the cap holds across them. Claude's own ``stop_hook_active: false`` says the last stop
    was not blocked (its payloads always carry ``transcript_path``); the same field of an
    event made in Python is a default, or an adapter's guess from a session just made."""
    key = event.agent_id or ""
    if key in session.stop_blocks or guard.ledger is None:
        return
    if event.transcript_path and getattr(event, "stop_hook_active", None) is False:
        session.stop_blocks[key] = 0
        return
    try:
        n = guard.ledger.reader.stop_blocks_in_a_row(
            session.session_id, event.event_name, event.agent_id, STOP_BLOCK_CAP + 1
        )
    except Exception:  # an unreadable ledger only loses the count, never the decision
        return
    session.stop_blocks[key] = n


def seed_session(guard: Guard, session: Session, prompt_id: str | None) -> None:
    """Before the hooks of an event a halt refuses (PreToolUse, PreSkillShellCommand,
    PermissionRequest): a session new to this process (a command hook is one
    process per event) learns from the ledger whether another process halted it and how
    much of the turn's injection budget is used, as of ``prompt_id``'s turn (one the
    ledger has not met starts one); a process that holds it halted asks again (another
    may have started a new turn). Unreadable: this process's view stands."""
    ledger = guard.ledger
    if ledger is None:
        return
    try:
        state = ledger.session_state(session.session_id, guard.definition.name)
    except Exception:  # an unreadable ledger: the state stays this process's
        return
    session._seed((_state or _load_state())[1](state, prompt_id))


def _state_change(
    guard: Guard, decision: Decision, session: Session, merged: bool
) -> StateChange | None:
    """What ``decision`` does to its session's state in the ledger (None: nothing). A halt
    this process could not record before is asserted again."""
    name = decision.event.event_name
    gate = name in _HALTED_REFUSES and decision.decision != "deny"
    inject = sum(len(i.text) for i in decision.injections) if decision.injections else 0
    halt = None
    if merged and decision.halted:
        halt = decision.reason or "halted"
    elif not session._synced and session.halted is not None:
        halt = session.halted
    end_turn = name == "AgentStop" and not decision.blocked
    if not (gate or inject or halt or end_turn or session._turn_pending):
        return None
    return (_state or _load_state())[0](
        new_turn=session._turn_pending,
        prompt_id=decision.event.prompt_id,
        gate=gate,
        halt=halt,
        inject=inject,
        budget=guard.definition.injection_budget,
        end_turn=end_turn,
    )


def in_thread(fn: Callable[..., Any], *args: Any) -> Awaitable[Any]:
    """:func:`.threads.in_thread`, imported by the async driver (a hook process, sync, never)."""
    run: Callable[..., Awaitable[Any]] = (_threads or _lazy("threads")).in_thread
    return run(fn, *args)


def _lazy(name: str) -> Any:
    """The module ``name`` of this package, kept in ``_name`` once imported on first need."""
    module = __import__(f"{__package__}.{name}", fromlist=["_"])
    globals()["_" + name] = module
    return module


def _load_state() -> _StateNames:
    """``StateChange``, ``current`` and ``JOURNALED`` of ``guardrails.ledger.session_state``,
    imported on first need: a hook process without a ledger never loads them, and an import
    statement on every event costs a microsecond."""
    global _state
    from ..ledger.session_state import JOURNALED, StateChange, current

    _state = (StateChange, current, JOURNALED)
    return _state


def _seal(event: Event) -> tuple[str, str | None]:
    """Freeze ``event``'s input and output (or an event of the table's objects and arrays)
    and seal it, unless it is sealed already; its sealed class's name and subject field."""
    if "_unsealed" not in type(event).__dict__:
        try:
            if event.event_name in TOOL_NAME_EVENTS:
                event.tool_input = freeze(event.tool_input)  # type: ignore[attr-defined]
                if event.event_name == "PostToolUse":
                    event.tool_response = freeze(event.tool_response)  # type: ignore[attr-defined]
            elif event.event_name not in _PLAIN:  # an event of the table: its objects, arrays
                _freeze_fields(event)
            seal(event)
        except AttributeError:  # sealed meanwhile: the same event emitted on another thread
            if "_unsealed" not in type(event).__dict__:  # (sealing is outside the turn)
                raise
    info = _sealed[type(event)] = (event.event_name, event.subject_field)
    return info


def _freeze_fields(event: Event) -> None:
    """Make the objects and arrays of an event of the table read-only (``tool_calls``,
    ``requested_schema``, ...), as a tool event's input is."""
    for name, value in _items(event):
        if type(value) is dict or type(value) is list:
            setattr(event, name, freeze(value))


def _items(event: Event) -> list[tuple[str, Any]]:
    return [(n, getattr(event, n)) for n in type(event).__slots__]


def _ensure_tool_use_id(event: Event) -> None:
    if event.event_name in TOOL_EVENTS and not getattr(event, "tool_use_id", None):
        from .toolrun import new_tool_use_id  # (hosts name their calls)

        event.tool_use_id = new_tool_use_id()  # type: ignore[attr-defined]


# --- threads and loops -------------------------------------------------------------------


def _running_loop() -> object | None:
    """The event loop running on this thread (none, if asyncio was not even imported)."""
    aio = sys.modules.get("asyncio")
    if aio is None:
        return None
    try:
        running: object = aio.get_running_loop()
    except RuntimeError:
        return None
    return running


def _holder_loop_is_here(session: Session) -> bool:
    """The session's turn is held by a task of the event loop running on this thread."""
    holder = session._loop
    return holder is not None and holder is _running_loop()


async def _acquire(lock: Any) -> None:
    """Take a session's turn from async code without blocking the event loop (a plain
    lock, shared with the sync path; polling is cancellation-safe, a waiting thread is
    not)."""
    import asyncio

    delay = 0.0002
    while not lock.acquire(False):
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.005)


def _run_coroutine(coro: Any) -> Any:
    """Run ``coro`` to completion from sync code, even inside a running loop."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    import concurrent.futures

    context = contextvars.copy_context()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(context.run, asyncio.run, coro).result()
