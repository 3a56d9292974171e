"""The Guard: a compiled definition, its sessions, and guarded tool calls.

``await guard.emit(event)`` decides one event (the loop is in ``loop``);
``guard.sync`` mirrors every method without an event loop, and
``guard.run_tool`` runs the whole lifecycle (pre -> execute or deny -> post /
failure). Matching, ordering and merging live in this package; host adapters
only translate.
"""

from __future__ import annotations

import _thread
import os
import time

from ..definition.model import AgentDefinition
from . import loop
from .chains import ChainIndex
from .methods import AsyncEventMethods
from .session import Session

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    import weakref
    from collections.abc import Callable
    from typing import Any, TypeVar, overload

    from ..events import Event
    from ..ledger.sqlite import Ledger
    from ..results import Decision
    from .chains import Binding, Chain
    from .toolrun import ToolRun

    F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["Guard"]


class Guard(AsyncEventMethods):
    """Runs an :class:`AgentDefinition`'s hooks for events and tool calls.

    ``definition`` may be a path to a YAML/TOML/JSON file. ``approver`` answers
    ``ask`` decisions (none: ``ask`` is returned to the host, and ``run_tool``
    treats it as a denial). ``approval_timeout`` seconds without an answer deny.
    ``ledger``: a :class:`~guardrails.Ledger`, a path, ``True`` for the default
    location, or ``None`` to record only when the definition's ``ledger:`` key
    or ``$HOOKRAILS_LEDGER`` names a file. The default location is the one
    ``hookrails ledger --config`` reads: ``$HOOKRAILS_LEDGER``, else the ``ledger:``
    key, else ``.hookrails/ledger.db``. ``Ledger()`` takes it too; a ``Ledger``
    naming another file than the key is a :class:`~guardrails.DefinitionError`,
    while a path given here overrides the key on purpose (docs/ledger.md).
    ``check``: each bound hook that can checks the definition now
    (``check_definition``: the schema hooks compile the declared tool schemas), so
    a missing or invalid schema file raises :class:`~guardrails.DefinitionError`
    here; ``False`` leaves it to the first call that needs it, which then fails
    (``hookrails hook``: one event per process).

    The per-event methods (``await guard.pre_tool_use(...)``) act on the default
    session; ``guard.session(id)`` gives another.

    Sessions a long-running Guard no longer hears from are let go (a host such as the
    claude-agent-sdk never sends SessionEnd): past ``max_sessions`` the least recently used
    ones, and any idle for ``session_ttl`` seconds (``None``: no idle limit), checked when a
    session is created. A session let go that comes back starts as a fresh process would:
    with a ledger it reads its halt, injection budget and stop-block count from there;
    without one those and ``ctx.state`` start over (docs/hosts.md).
    """

    def __init__(
        self,
        definition: AgentDefinition | str | os.PathLike[str],
        *,
        approver: Callable[..., Any] | None = None,
        approval_timeout: float = 60.0,
        clock: Callable[[], float] = time.time,
        tenant: str | None = None,
        cwd: str | None = None,
        ledger: Ledger | str | os.PathLike[str] | bool | None = None,
        check: bool = True,
        max_sessions: int = 10_000,
        session_ttl: float | None = 3600.0,
    ) -> None:
        if not isinstance(definition, AgentDefinition):
            definition = AgentDefinition.from_file(definition)
        self.definition = definition
        self._agent = definition.name
        self._index = ChainIndex(definition)
        if check:
            _check_hooks(definition, self._index.bindings)
        self.ledger = _open_ledger(ledger, definition)
        self.approver = approver
        #: Claude's permission dialog reaches the approver another way (the SDK's
        #: ``can_use_tool``, which the CLI asks beside the PermissionRequest hooks): a
        #: PermissionRequest is then not put to it too, so a human is asked once
        self._dialog_elsewhere = False
        self.approval_timeout = approval_timeout
        self.clock = clock
        self.tenant = tenant
        self.cwd = cwd
        self._sessions: dict[str, Session] = {}
        self._sweeper = _Sweeper(max_sessions, session_ttl)
        #: the sweep generation: an event stamps its session with it (its idle time)
        self._gen = 0
        self._default = self.session(cwd=cwd)
        self.sync = self._default.sync

    def __repr__(self) -> str:
        return f"Guard({self.definition.name!r})"

    @property
    def bindings(self) -> dict[str, list[Binding]]:
        """Event name -> its hook bindings in the order they run (compiled at load)."""
        return self._index.bindings

    def chain_for(self, event: Event) -> Chain:
        """The bindings ``event`` would run, in order, each with its argument rule (or
        ``None``): what ``hookrails explain`` shows."""
        return self._index.for_event(event, self.session_for(event).tenant)[0]

    # --- sessions ---------------------------------------------------------------

    def session(
        self,
        session_id: str | None = None,
        *,
        cwd: str | None = None,
        tenant: str | None = None,
    ) -> Session:
        """The session with this id (created on first use); a new id if ``None``."""
        sid = session_id or _new_id()
        s = self._sessions.get(sid)
        if s is None:
            s = self._sweeper.revived(sid)  # let go, but still held (a caller, a hook)
            if s is None:
                s = Session(self, sid, cwd=cwd or self.cwd, tenant=tenant or self.tenant)
            # setdefault: two threads starting one session get the same one
            s = self._sessions.setdefault(sid, s)
            self._sweeper.created(self)
        return s

    def session_for(self, event: Event) -> Session:
        """The session ``event`` belongs to (the default one if it names none); fills the
        event's ``session_id`` and ``cwd`` where the host left them out."""
        if not event.session_id:
            self._default._fill(event)
            return self._default
        s = self._sessions.get(event.session_id)
        if s is None:
            s = self.session(event.session_id, cwd=event.cwd or None)
        if not event.cwd:
            event.cwd = s.cwd
        return s

    def sweep_sessions(self) -> list[str]:
        """Let go of idle sessions now (past the idle limit, or the least recently used past
        ``max_sessions``); the ids let go. A Guard also does this on its own."""
        with self._sweeper._lock:
            return self._sweeper.sweep(self, time.monotonic())

    def _forget(self, session: Session) -> None:
        """A session that ended leaves a long-running Guard (the default one stays)."""
        if session is not self._default:
            self._sessions.pop(session.session_id, None)

    # --- events and tools ------------------------------------------------------------

    async def emit(self, event: Event) -> Decision:
        """Run every hook bound to ``event`` and merge their results into one Decision."""
        return await loop.emit(self, event, self.session_for(event))

    if TYPE_CHECKING:

        def emit_sync(self, event: Event) -> Decision:
            """``emit`` without an event loop."""

    else:  # the sync driver itself, resolving the session: no call in between (hot path)
        emit_sync = loop.emit_sync

    async def run_tool(
        self, tool_name: str, tool_input: dict[str, Any], fn: Callable[..., Any], **f: Any
    ) -> ToolRun:
        """Run ``fn(**tool_input)`` under the hooks; a denied call never runs ``fn``."""
        return await self._default.run_tool(tool_name, tool_input, fn, **f)

    def run_tool_sync(
        self, tool_name: str, tool_input: dict[str, Any], fn: Callable[..., Any], **f: Any
    ) -> ToolRun:
        return self._default.run_tool_sync(tool_name, tool_input, fn, **f)

    if TYPE_CHECKING:  # typing.overload without importing typing at run time

        @overload
        def tool(self, fn: F, /) -> F: ...
        @overload
        def tool(self, *, name: str | None = None) -> Callable[[F], F]: ...

    def tool(self, fn: Any = None, /, *, name: str | None = None) -> Any:  # type: ignore[misc]
        """Decorate a function so every call runs guarded.

        A denied call raises :class:`~guardrails.ToolDenied` without running the
        body; a failing body re-raises after the failure hooks ran.
        """

        def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
            import functools
            import inspect

            tool_name = name or f.__name__
            sig = inspect.signature(f)
            params = sig.parameters.values()
            if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
                raise TypeError(f"{f.__name__}: a guarded tool takes named arguments, not *args")
            var_kw = next((p.name for p in params if p.kind is inspect.Parameter.VAR_KEYWORD), None)

            def bind(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
                """The input hooks see: every argument by name, defaults included."""
                bound = sig.bind(*args, **kwargs)
                bound.apply_defaults()
                tool_input = dict(bound.arguments)
                if var_kw is not None:
                    tool_input.update(tool_input.pop(var_kw, {}))
                return tool_input

            if inspect.iscoroutinefunction(f):

                @functools.wraps(f)
                async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                    run = await self.run_tool(tool_name, bind(args, kwargs), f)
                    return run.unwrap()

                return async_wrapper

            @functools.wraps(f)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                return self.run_tool_sync(tool_name, bind(args, kwargs), f).unwrap()

            return wrapper

        return wrap(fn) if fn is not None else wrap


class _Sweeper:
    """Lets idle sessions go (see ``Guard``). Every event stamps its session with the
    Guard's generation (one store); a sweep, run when a session is created past the cap or
    a quarter of the idle limit after the last one, starts a new generation, so a session
    stamped ``g`` was last used before generation ``g + 1`` began. The least recently used
    go first (ties: the oldest created). A session whose turn is held stays; one let go is
    kept weakly, so a caller or hook still holding it gets the same object back."""

    def __init__(self, cap: int, ttl: float | None) -> None:
        if cap < 1:
            raise ValueError(f"max_sessions must be at least 1, got {cap}")
        self.cap = cap
        self.ttl = ttl
        self.last = time.monotonic()
        #: when each generation began
        self.began: dict[int, float] = {0: self.last}
        self._lock = _thread.allocate_lock()
        self._gone: weakref.WeakValueDictionary[str, Session] | None = None

    def revived(self, sid: str) -> Session | None:
        return None if self._gone is None else self._gone.pop(sid, None)

    def created(self, guard: Guard) -> None:
        if len(guard._sessions) <= self.cap and (
            self.ttl is None or time.monotonic() - self.last < self.ttl / 4
        ):
            return
        if self._lock.acquire(False):  # one sweep at a time; the others go on
            try:
                self.sweep(guard, time.monotonic())
            finally:
                self._lock.release()

    def sweep(self, guard: Guard, now: float) -> list[str]:
        """Let go of idle and least recently used sessions; the ids let go."""
        self.last = now
        gen = guard._gen = guard._gen + 1
        self.began[gen] = now
        sessions = guard._sessions
        default = getattr(guard, "_default", None)  # None while the Guard makes it
        held = list(sessions.values())  # other threads add sessions while this one sweeps
        ledger = guard.ledger
        keep = [
            s
            for s in held
            if s is default or s._lock.locked() or (ledger is not None and _ahead(s))
        ]
        candidates = [s for s in held if s not in keep]
        victims: list[Session] = []
        if self.ttl is not None:
            idle = [s for s in candidates if now - self.began.get(s._gen + 1, now) > self.ttl]
            victims += idle
            gone = {id(s) for s in idle}
            candidates = [s for s in candidates if id(s) not in gone]
        excess = len(sessions) - len(victims) - max(1, self.cap * 9 // 10)
        if excess > 0:
            candidates.sort(key=lambda s: s._gen)  # stable: ties keep creation order
            victims += candidates[:excess]
        if victims:
            import weakref  # lazy: only a Guard that lets sessions go needs it

            if self._gone is None:
                self._gone = weakref.WeakValueDictionary()
            for s in victims:
                # held as gone before it leaves the table: a thread looking the id up
                # meanwhile finds it in one of them, never makes a second Session
                self._gone[s.session_id] = s
                if sessions.get(s.session_id) is s:
                    del sessions[s.session_id]
                s._forgotten()
        # the default session is never let go: its generation must not hold every other back
        oldest = min((s._gen for s in list(sessions.values()) if s is not default), default=gen)
        for g in [g for g in self.began if g < oldest]:
            del self.began[g]
        return [s.session_id for s in victims]


def _ahead(s: Session) -> bool:
    """The session's state is ahead of its ledger's (a halt, injected context or a new turn
    the file could not take yet): only this object holds it, so it is not let go."""
    return not s._synced and (s.halted is not None or bool(s.turn_chars) or s._turn_pending)


def _check_hooks(definition: AgentDefinition, bindings: dict[str, list[Binding]]) -> None:
    """Each distinct bound hook's ``check_definition(definition)``, once (docs/design.md §4).

    A ``DefinitionError`` says where it is (``tools.x.schema``); anything else is
    located at the binding whose hook raised it.
    """
    from ..errors import DefinitionError, describe

    seen: set[int] = set()
    for event, b in ((e, b) for e, entries in bindings.items() for b in entries):
        check = getattr(b.fn, "check_definition", None)
        if check is None or id(b.fn) in seen:
            continue
        seen.add(id(b.fn))
        try:
            check(definition)
        except DefinitionError as exc:  # it says where inside; the file is the definition's
            if exc.file or not definition.source:
                raise
            raise exc.within(file=definition.source, lines=definition.locations) from None
        except Exception as exc:
            mi, hi = b.order
            raise DefinitionError(
                f"hook {b.hook.name!r} rejects the definition: {describe(exc)}"
            ).within(
                "hooks", event, mi, "hooks", hi, file=definition.source, lines=definition.locations
            ) from None


def _open_ledger(ledger: Any, definition: AgentDefinition) -> Ledger | None:
    if ledger is None:
        if not definition.ledger and not os.environ.get("HOOKRAILS_LEDGER"):
            return None
        ledger = True
    if ledger is False:
        return None
    from ..ledger.sqlite import Ledger

    if isinstance(ledger, Ledger):
        ledger.adopt(definition)  # Ledger(): the definition's file; another file: an error
        return ledger
    return Ledger(None if ledger is True else ledger, definition=definition)


def _new_id() -> str:
    """A random UUID4 string, without importing ``uuid`` (it imports ``platform``)."""
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40
    b[8] = (b[8] & 0x3F) | 0x80
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
