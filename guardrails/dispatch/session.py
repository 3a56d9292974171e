"""A session: what hooks of one conversation share, and its one-event-at-a-time turn.

Hosts deliver one session's events concurrently (parallel tool calls), and the
state here is read-modify-write, so a session decides one event at a time,
whichever path (sync or async, any thread or event loop) it comes by. A hook
emitting into its own session re-enters the turn instead of waiting on itself.
"""

from __future__ import annotations

import _thread
import os

from .._frozen import thaw
from . import loop
from .loop import HELD
from .methods import AsyncEventMethods, SyncEventMethods

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    import contextvars
    from collections.abc import Callable
    from typing import Any

    from ..events import Event
    from ..ledger.reader import LedgerReader
    from ..ledger.session_state import SessionState, Settled, StateChange
    from ..results import Decision
    from .chains import Binding, Plan
    from .guard import Guard
    from .toolrun import ToolCall, ToolRun

__all__ = ["HookContext", "Session", "SyncSession"]

_get_ident = _thread.get_ident
#: the toolrun module, imported by the first ``run_tool`` (a hook process has none)
_toolrun: Any = None
#: chains one session keeps compiled (a new subject past it starts the cache over)
_MAX_PLANS = 256


def _load_toolrun() -> Any:
    global _toolrun
    from . import toolrun as _toolrun

    return _toolrun


class HookContext:
    """What a hook may know besides the event.

    ``state`` is a dict shared by every hook of the session; ``config`` is this
    hook's own ``with:`` mapping; ``clock`` returns epoch seconds; ``ledger`` is
    read access to the ledger when one is attached.
    """

    __slots__ = (
        "clock",
        "config",
        "definition",
        "guard",
        "hook_name",
        "ledger",
        "session",
        "state",
        "timeout",
    )

    def __init__(self, session: Session, binding: Binding) -> None:
        self.session = session
        self.guard = session.guard
        self.definition = session.guard.definition
        self.config = binding.hook.config
        self.state = session.state
        self.clock = session.guard.clock
        ledger = session.guard.ledger
        self.ledger: LedgerReader | None = None if ledger is None else ledger.reader
        self.hook_name = binding.hook.name
        self.timeout = binding.timeout

    @property
    def session_id(self) -> str:
        return self.session.session_id

    @property
    def tenant(self) -> str | None:
        return self.session.tenant


class Session(AsyncEventMethods):
    """Per-session state: hook contexts, shared state, stop-block counts, approvals.

    The per-event methods (``await session.pre_tool_use(...)``) and ``run_tool`` are
    async; ``session.sync`` offers the same without an event loop.
    """

    def __init__(
        self,
        guard: Guard,
        session_id: str,
        *,
        cwd: str | None = None,
        tenant: str | None = None,
    ) -> None:
        self.guard = guard
        self.session_id = session_id
        self.cwd = cwd or os.getcwd()
        self.tenant = tenant
        self.state: dict[str, Any] = {}
        self.stop_blocks: dict[str, int] = {}
        self.turn_chars = 0
        self.halted: str | None = None
        self.allow_always: set[tuple[Any, ...]] = set()
        #: with a ledger: ``halted`` and ``turn_chars`` are the ledger's as last read or
        #: settled (docs/design.md §7); a new turn it has not recorded yet is pending
        self._synced = False
        self._turn_pending = False
        self._ctx: list[HookContext | None] = [None] * len(guard._index.all)
        #: (event, subject, agent type) -> the chain's Plan, with ``(fn, ctx)`` for each hook
        #: when every hook of it runs (no argument rule) and it may take the quiet path
        #: (``Plan.plain``): made once per session
        self._plans: dict[tuple[str, str, str | None], tuple[Plan, Any]] = {}
        #: the same entries for the quiet path, without an agent type: event class -> (its
        #: subject field, subject -> entry, whether an event of it is sealed first); a class
        #: and its sealed class share one table. A lookup without building a key tuple
        self._quick: dict[type, tuple[str | None, dict[str, tuple[Plan, Any]], bool]] = {}
        #: the Guard's sweep generation this session was last used in (its idle time)
        self._gen = guard._gen
        self._lock = _thread.allocate_lock()
        #: the thread holding the turn on the sync path (a cheaper re-entry test than HELD)
        self._owner: int | None = None
        #: the current turn's token (see HELD), and the loop holding it on the async path
        self._turn: object | None = None
        self._loop: object | None = None
        self.sync = SyncSession(self)

    def __repr__(self) -> str:
        return f"Session({self.session_id!r})"

    @property
    def stop_hook_active(self) -> bool:
        """The main agent's last stop was blocked (Claude's ``stop_hook_active``)."""
        return bool(self.stop_blocks.get(""))

    def known_halt(self) -> str | None:
        """Why the session is halted (None: it is not). A session new to this process (let
        go by the Guard, or started by another process) reads its ledger first, where a halt
        outlives the object; a host asks this before the model's next turn."""
        if not self._synced and self.halted is None and self.guard.ledger is not None:
            loop.seed_session(self.guard, self, None)
        return self.halted

    def new_turn(self) -> None:
        """A prompt (or a resumed session) starts a turn: fresh budget, a halt is over.
        With a ledger, the next event recorded starts it there too."""
        self.turn_chars = 0
        self.halted = None
        self._turn_pending = True

    def _settled(self, settled: Settled | None, change: StateChange) -> None:
        """Take the ledger's word after recording ``change`` (``settled``; ``None``: the
        ledger could not take it, so this process's view is ahead of the ledger's)."""
        if settled is None:
            self._synced = False
            return
        state = settled.state
        self.halted, self.turn_chars, self._synced = state.halted, state.injected, True
        if change.new_turn:
            self._turn_pending = False

    def _seed(self, state: SessionState) -> None:
        """What the ledger holds for this event's turn (``state``), read before a
        PreToolUse's hooks run: another process may have halted the session, used budget,
        or started a new turn."""
        if self._turn_pending:  # a turn the ledger has not seen yet: its old state is over
            return
        halted, injected = state.halted, state.injected
        if self._synced or (self.halted is None and not self.turn_chars):
            self.halted, self.turn_chars, self._synced = halted, injected, True
        else:  # this process changed it while the ledger could not be written: lose nothing
            self.halted = self.halted or halted
            self.turn_chars = max(self.turn_chars, injected)

    def _forgotten(self) -> None:
        """The Guard let this session go: drop what is rebuilt on use (its compiled chains
        and hook contexts, which refer back to it), keep its state."""
        self._plans = {}
        self._quick = {}
        self._ctx = [None] * len(self._ctx)

    def _plan(self, key: tuple[str, str, str | None]) -> tuple[Plan, Any]:
        """The compiled chain for ``key`` (``loop._begin``'s cache miss)."""
        name, subject, agent = key
        plan = self.guard._index.plan(name, subject, agent or self.guard._agent, self.tenant)
        pairs = None
        if plan.select is None and plan.plain:  # what loop.emit_sync's quiet path runs
            pairs = tuple((b.fn, self.ctx(b)) for b in plan.bindings)
        if len(self._plans) >= _MAX_PLANS:
            self._plans.clear()
            self._quick.clear()
        entry = self._plans[key] = (plan, pairs)
        return entry

    def _remember(
        self,
        cls: type,
        sealed: type,
        field: str | None,
        subject: str,
        entry: tuple[Plan, Any],
    ) -> None:
        """Keep ``entry`` (the chain of events about ``subject`` without an agent type, of
        ``cls``, which is ``sealed`` once sealed) for the quiet path's lookup."""
        quick = self._quick.get(sealed) or self._quick.get(cls)
        by_subject: dict[str, tuple[Plan, Any]] = {} if quick is None else quick[1]
        self._quick.setdefault(sealed, (field, by_subject, False))
        if cls is not sealed:
            self._quick.setdefault(cls, (field, by_subject, True))
        by_subject[subject] = entry

    def ctx(self, b: Binding) -> HookContext:
        c = self._ctx[b.index]
        if c is None:
            c = self._ctx[b.index] = HookContext(self, b)
        return c

    # --- the turn ----------------------------------------------------------------------

    def _enter(self) -> contextvars.Token[frozenset[object]]:
        """Mark this context as holding the session's turn (the lock is already held)."""
        if self._turn is None:
            self._turn = object()
        return HELD.set(HELD.get() | {self._turn})

    def _reentry(self) -> bool:
        """This thread or context already holds the session's turn (its own hook emitting)."""
        return self._owner == _get_ident() or (self._turn is not None and self._turn in HELD.get())

    def _fill(self, event: Event) -> Event:
        """Give ``event`` this session's id and folder where the host left them out."""
        if not event.session_id:
            event.session_id = self.session_id
        if not event.cwd:
            event.cwd = self.cwd
        return event

    # --- emitting ----------------------------------------------------------------------

    async def emit(self, event: Event, *, owner: bool = False) -> Decision:
        """Run ``event``'s hooks.

        ``owner=True``: the caller runs the tool of this PreToolUse itself (as
        ``run_tool`` does). Then an ``ask`` no approver settled is a denial, since
        there is nobody else to ask, and the pending row carries this process's pid,
        so ``hookrails ledger recover`` can mark it interrupted if the process dies.
        """
        if event.session_id and event.session_id != self.session_id:
            return await self.guard.emit(event)  # another session's event: its own state
        return await loop.emit(self.guard, self._fill(event), self, owner)

    def emit_sync(self, event: Event, *, owner: bool = False) -> Decision:
        if event.session_id and event.session_id != self.session_id:
            return self.guard.emit_sync(event)
        return loop.emit_sync(self.guard, self._fill(event), self, owner)

    # --- running tools -----------------------------------------------------------------

    async def run_tool(
        self,
        tool_name: str,
        tool_input: dict[str, Any],
        fn: Callable[..., Any],
        *,
        tool_use_id: str | None = None,
        **fields: Any,
    ) -> ToolRun:
        """Pre -> (deny: ``fn`` never runs) -> ``fn(**final_input)`` -> post or failure."""
        make = (_toolrun or _load_toolrun()).ToolCall
        call: ToolCall = make(tool_name, tool_input, tool_use_id, fields)
        pre = await loop.emit(self.guard, self._fill(call.pre_event), self, owner=True)
        done = call.before_run(pre)
        if done is not None:
            return done
        try:
            out = fn(**thaw(call.final))  # the tool gets its own, mutable copy
            if hasattr(out, "__await__"):
                out = await out
        except Exception as exc:
            return call.failed(exc, await self.emit(call.failure(exc)))
        except BaseException as exc:  # cancelled or Ctrl-C: finish the row, then let it go
            self.emit_sync(call.failure(exc, interrupt=True))
            raise
        return call.finished(out, await self.emit(call.post(out)))

    def run_tool_sync(
        self,
        tool_name: str,
        tool_input: dict[str, Any],
        fn: Callable[..., Any],
        *,
        tool_use_id: str | None = None,
        **fields: Any,
    ) -> ToolRun:
        """``run_tool`` for a sync ``fn``, without an event loop (unless a hook is async)."""
        make = (_toolrun or _load_toolrun()).ToolCall
        call: ToolCall = make(tool_name, tool_input, tool_use_id, fields)
        pre = loop.emit_sync(self.guard, self._fill(call.pre_event), self, owner=True)
        done = call.before_run(pre)
        if done is not None:
            return done
        try:
            out = fn(**thaw(call.final))  # the tool gets its own, mutable copy
            if hasattr(out, "__await__"):
                raise TypeError(f"{tool_name}: use `await run_tool(...)` for async tools")
        except Exception as exc:
            return call.failed(exc, self.emit_sync(call.failure(exc)))
        except BaseException as exc:  # Ctrl-C: finish the row as interrupted, then let it go
            self.emit_sync(call.failure(exc, interrupt=True))
            raise
        return call.finished(out, self.emit_sync(call.post(out)))

    # --- context managers: SessionStart on enter, SessionEnd on exit --------------------

    async def __aenter__(self) -> Session:
        await self.session_start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.session_end("other")

    def __enter__(self) -> Session:
        self.sync.session_start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.sync.session_end("other")


class SyncSession(SyncEventMethods):
    """The same per-event methods as :class:`Session`, answered without an event loop."""

    __slots__ = ("_s",)

    def __init__(self, session: Session) -> None:
        self._s = session

    def emit(self, event: Event) -> Decision:
        return self._s.emit_sync(event)

    def run_tool(
        self, tool_name: str, tool_input: dict[str, Any], fn: Callable[..., Any], **f: Any
    ) -> ToolRun:
        return self._s.run_tool_sync(tool_name, tool_input, fn, **f)
