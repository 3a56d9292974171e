"""The Guard: emits events through the hook chains and runs tools under them.

``await guard.emit(event)`` is the core; ``guard.sync`` mirrors every method
without an event loop, and ``guard.run_tool`` runs the whole lifecycle
(pre -> execute or deny -> post / failure). Matching, ordering and merging
live here and in ``_dispatch``; host adapters only translate.
"""

from __future__ import annotations

import _thread
import contextvars
import os
import sys
import time

from .._dataclass_free import DICT, record
from ..definition.hook_refs import is_async_callable
from ..definition.model import AgentDefinition
from ..errors import HookFailure, ToolDenied, describe
from ..events import (
    TOOL_EVENTS,
    AgentStop,
    Event,
    PostToolUse,
    PostToolUseFailure,
    PreToolUse,
    SessionEnd,
    SessionStart,
    SubagentStart,
    SubagentStop,
    UserPromptSubmit,
)
from ..results import UNSET, Decision, HookResult, HookRun
from .chains import STOP_BLOCK_CAP, ChainIndex, Merge

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from dataclasses import Field
    from typing import Any, ClassVar, Literal, TypeVar, overload

    from ..approvers import ApprovalRequest
    from ..ledger.sqlite import Ledger, LedgerReader
    from .chains import Binding, Chain

    F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["Guard", "HookContext", "Session", "ToolRun"]

_perf = time.perf_counter
_get_ident = _thread.get_ident
_NEW_TURN = frozenset({"UserPromptSubmit", "SessionStart"})
_STOPS = frozenset({"AgentStop", "SubagentStop"})
#: the turns (one fresh token per turn) this context holds: a hook emitting into its own
#: session re-enters instead of waiting on itself (hook threads inherit it); a token
#: outlives its turn harmlessly, since only the current turn's token re-enters
_HELD: contextvars.ContextVar[frozenset[object]] = contextvars.ContextVar(
    "hookrails_held", default=frozenset()
)


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


@record()
class ToolRun:
    """How a guarded tool call ended.

    ``status`` is ``ok``, ``error`` or ``denied``. ``for_model()`` is the text
    to hand back to the model as the tool result.
    """

    if TYPE_CHECKING:
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    tool_name: str
    status: Literal["ok", "error", "denied"]
    pre: Decision
    output: Any
    error: str | None
    exception: BaseException | None
    post: Decision | None
    tool_input: dict[str, Any]
    #: the output is a stored result replayed by a hook (e.g. idempotency); the tool did not run
    replayed: bool

    def __init__(
        self,
        tool_name: str,
        status: Literal["ok", "error", "denied"],
        pre: Decision,
        output: Any = None,
        error: str | None = None,
        exception: BaseException | None = None,
        post: Decision | None = None,
        tool_input: dict[str, Any] = DICT,
        replayed: bool = False,
    ) -> None:
        self.tool_name = tool_name
        self.status = status
        self.pre = pre
        self.output = output
        self.error = error
        self.exception = exception
        self.post = post
        self.tool_input = {} if tool_input is DICT else tool_input
        self.replayed = replayed

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def denied(self) -> bool:
        return self.status == "denied"

    @property
    def reason(self) -> str | None:
        return self.pre.reason if self.denied else None

    @property
    def additional_context(self) -> str | None:
        parts = [d.additional_context for d in (self.pre, self.post) if d is not None]
        text = "\n\n".join(p for p in parts if p)
        return text or None

    def for_model(self) -> str:
        if self.denied:
            body = f"Denied: {self.reason}"
        elif self.status == "error":
            body = f"Error: {self.error}"
        else:
            body = self.output if isinstance(self.output, str) else repr(self.output)
        if self.post is not None and self.post.blocked and self.post.reason:
            body = f"{body}\n\n{self.post.reason}"  # PostToolUse feedback for the model
        ctx = self.additional_context
        return f"{body}\n\n{ctx}" if ctx else body

    @staticmethod
    def before_run(pre: Decision) -> ToolRun | None:
        """How a call ends on its PreToolUse decision alone: denied, answered with a result a
        hook replayed (idempotency), or ``None`` when the tool should run. For hosts that
        run the tool themselves, as ``run_tool`` does."""
        if pre.decision == "allow" and not pre.halted:
            return None
        name, tool_input = pre.event.tool_name, pre.event.tool_input
        replay = (pre.annotations or {}).get("replay")
        if isinstance(replay, dict) and "output" in replay and not pre.halted:
            output = replay["output"]  # the stored result of an identical call
            return ToolRun(name, "ok", pre, output, tool_input=tool_input, replayed=True)
        return ToolRun(name, "denied", pre, tool_input=tool_input)

    def unwrap(self) -> Any:
        """The output, or raise: ``ToolDenied`` when denied, the tool's own error when it failed."""
        if self.denied:
            raise ToolDenied(self.tool_name, self.reason or "denied", self.pre)
        if self.exception is not None:
            raise self.exception
        return self.output


class Session:
    """Per-session state: hook contexts, shared state, stop-block counts, approvals."""

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
        self.allow_always: set[tuple[str, tuple[str, ...]]] = set()
        self._ctx: list[HookContext | None] = [None] * len(guard._index.all)
        # Hosts deliver one session's events concurrently (parallel tool calls), and the
        # state above is read-modify-write: one event of a session at a time, whichever
        # path (sync or async, any thread or event loop) it comes by.
        self._lock = _thread.allocate_lock()
        #: the thread holding the turn on the sync path (a cheaper re-entry test than _HELD)
        self._owner: int | None = None
        #: the current turn's token (see _HELD), and the loop holding it on the async path
        self._turn: object | None = None
        self._loop: object | None = None
        self.sync = _SyncFacade(self)

    @property
    def stop_hook_active(self) -> bool:
        """The main agent's last stop was blocked (Claude's ``stop_hook_active``)."""
        return bool(self.stop_blocks.get(""))

    def _enter(self) -> Any:
        """Mark this context as holding the session's turn (the lock is already held)."""
        if self._turn is None:
            self._turn = object()
        return _HELD.set(_HELD.get() | {self._turn})

    def _reentry(self) -> bool:
        """This thread or context already holds the session's turn (its own hook emitting)."""
        return self._owner == _get_ident() or (self._turn is not None and self._turn in _HELD.get())

    def __repr__(self) -> str:
        return f"Session({self.session_id!r})"

    def new_turn(self) -> None:
        """A prompt (or a resumed session) starts a turn: fresh budget, a halt is over."""
        self.turn_chars = 0
        self.halted = None

    def ctx(self, b: Binding) -> HookContext:
        c = self._ctx[b.index]
        if c is None:
            c = self._ctx[b.index] = HookContext(self, b)
        return c

    def _fill(self, event: Event) -> Event:
        if not event.session_id:
            event.session_id = self.session_id
        if not event.cwd:
            event.cwd = self.cwd
        return event

    # --- the async core --------------------------------------------------------

    async def emit(self, event: Event, *, owner: bool = False) -> Decision:
        """Run ``event``'s hooks.

        ``owner=True``: the caller runs the tool of this PreToolUse itself (as
        ``run_tool`` does). Then an ``ask`` no approver settled is a denial, since
        there is nobody else to ask, and the pending row carries this process's pid,
        so ``hookrails ledger recover`` can mark it interrupted if the process dies.
        """
        if event.session_id and event.session_id != self.session_id:
            return await self.guard.emit(event)  # another session's event: its own state
        return await self.guard._emit(self._fill(event), self, owner)

    def emit_sync(self, event: Event, *, owner: bool = False) -> Decision:
        if event.session_id and event.session_id != self.session_id:
            return self.guard.emit_sync(event)
        return self.guard._emit_sync(self._fill(event), self, owner)

    async def pre_tool_use(
        self, tool_name: str, tool_input: dict[str, Any], **fields: Any
    ) -> Decision:
        return await self.emit(PreToolUse(tool_name=tool_name, tool_input=tool_input, **fields))

    async def post_tool_use(
        self, tool_name: str, tool_input: dict[str, Any], tool_response: Any, **fields: Any
    ) -> Decision:
        return await self.emit(
            PostToolUse(
                tool_name=tool_name, tool_input=tool_input, tool_response=tool_response, **fields
            )
        )

    async def post_tool_use_failure(
        self, tool_name: str, tool_input: dict[str, Any], error: str, **fields: Any
    ) -> Decision:
        return await self.emit(
            PostToolUseFailure(tool_name=tool_name, tool_input=tool_input, error=error, **fields)
        )

    async def user_prompt_submit(self, prompt: str, **fields: Any) -> Decision:
        return await self.emit(UserPromptSubmit(prompt=prompt, **fields))

    async def subagent_start(self, agent_id: str, agent_type: str, **fields: Any) -> Decision:
        return await self.emit(SubagentStart(agent_id=agent_id, agent_type=agent_type, **fields))

    async def subagent_stop(self, agent_id: str, agent_type: str, **fields: Any) -> Decision:
        return await self.emit(SubagentStop(agent_id=agent_id, agent_type=agent_type, **fields))

    async def agent_stop(
        self, last_assistant_message: str | None = None, **fields: Any
    ) -> Decision:
        return await self.emit(AgentStop(last_assistant_message=last_assistant_message, **fields))

    async def session_start(self, source: str = "startup", **fields: Any) -> Decision:
        return await self.emit(SessionStart(source=source, **fields))

    async def session_end(self, reason: str = "other", **fields: Any) -> Decision:
        return await self.emit(SessionEnd(reason=reason, **fields))

    # --- running tools ---------------------------------------------------------

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
        pre_event = PreToolUse(
            tool_name=tool_name,
            tool_input=dict(tool_input),
            tool_use_id=tool_use_id or _tool_use_id(),
            **fields,
        )
        pre = await self.guard._emit(self._fill(pre_event), self, owner=True)
        denied = ToolRun.before_run(pre)
        if denied is not None:
            return denied
        final = pre.tool_input or {}
        t0 = _perf()
        try:
            out = fn(**final)
            if _is_awaitable(out):
                out = await out
        except Exception as exc:
            post = await self.emit(_failure_event(pre_event, final, exc, t0))
            return ToolRun(tool_name, "error", pre, None, describe(exc), exc, post, final)
        except BaseException as exc:  # cancelled or Ctrl-C: finish the row, then let it go
            self.emit_sync(_failure_event(pre_event, final, exc, t0, interrupt=True))
            raise
        post = await self.emit(_post_event(pre_event, final, out, t0))
        return _finished(tool_name, pre, post, out, final)

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
        pre_event = PreToolUse(
            tool_name=tool_name,
            tool_input=dict(tool_input),
            tool_use_id=tool_use_id or _tool_use_id(),
            **fields,
        )
        pre = self.guard._emit_sync(self._fill(pre_event), self, owner=True)
        denied = ToolRun.before_run(pre)
        if denied is not None:
            return denied
        final = pre.tool_input or {}
        t0 = _perf()
        try:
            out = fn(**final)
            if _is_awaitable(out):
                raise TypeError(f"{tool_name}: use `await run_tool(...)` for async tools")
        except Exception as exc:
            post = self.emit_sync(_failure_event(pre_event, final, exc, t0))
            return ToolRun(tool_name, "error", pre, None, describe(exc), exc, post, final)
        except BaseException as exc:  # Ctrl-C: finish the row as interrupted, then let it go
            self.emit_sync(_failure_event(pre_event, final, exc, t0, interrupt=True))
            raise
        post = self.emit_sync(_post_event(pre_event, final, out, t0))
        return _finished(tool_name, pre, post, out, final)

    # --- context managers: SessionStart on enter, SessionEnd on exit --------------

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


def _new_id() -> str:
    """A random UUID4 string, without importing ``uuid`` (it imports ``platform``)."""
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40
    b[8] = (b[8] & 0x3F) | 0x80
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _decisive(r: Any) -> bool:
    """A late answer that refuses to proceed still counts (it could only be safer)."""
    if isinstance(r, HookResult):
        return r.decision in ("deny", "block", "halt")
    return False


def _pid(owner: bool) -> int | None:
    """The pid stored on a pending row: only when this process runs the tool."""
    return os.getpid() if owner else None


def _ensure_tool_use_id(event: Event) -> None:
    if event.event_name in TOOL_EVENTS and not getattr(event, "tool_use_id", None):
        event.tool_use_id = _tool_use_id()  # type: ignore[attr-defined]


def _tool_use_id() -> str:
    return "toolu_" + os.urandom(12).hex()


async def _contained(awaitable: Awaitable[Any]) -> Any:
    """Await an async hook; its ``exit()`` becomes a hook failure before asyncio sees it
    (a task re-raises SystemExit through the event loop, ending the host)."""
    try:
        return await awaitable
    except SystemExit as exc:
        raise HookFailure("error", describe(exc)) from None


def _is_awaitable(value: Any) -> bool:
    return hasattr(value, "__await__")


def _failure_event(
    pre: PreToolUse, final: dict[str, Any], exc: BaseException, t0: float, interrupt: bool = False
) -> PostToolUseFailure:
    return PostToolUseFailure(
        session_id=pre.session_id,
        cwd=pre.cwd,
        agent_id=pre.agent_id,
        agent_type=pre.agent_type,
        tool_name=pre.tool_name,
        tool_input=final,
        tool_use_id=pre.tool_use_id,
        error=describe(exc),
        is_interrupt=interrupt or None,
        duration_ms=(_perf() - t0) * 1000,
    )


def _post_event(pre: PreToolUse, final: dict[str, Any], out: Any, t0: float) -> PostToolUse:
    return PostToolUse(
        session_id=pre.session_id,
        cwd=pre.cwd,
        agent_id=pre.agent_id,
        agent_type=pre.agent_type,
        tool_name=pre.tool_name,
        tool_input=final,
        tool_response=out,
        tool_use_id=pre.tool_use_id,
        duration_ms=(_perf() - t0) * 1000,
    )


def _finished(name: str, pre: Decision, post: Decision, out: Any, final: dict[str, Any]) -> ToolRun:
    if post.updated_output is not UNSET:
        out = post.updated_output
    return ToolRun(name, "ok", pre, out, None, None, post, final)


class _SyncFacade:
    """The same per-event methods as :class:`Session`, answered without an event loop."""

    def __init__(self, session: Session) -> None:
        self._s = session

    def emit(self, event: Event) -> Decision:
        return self._s.emit_sync(event)

    def pre_tool_use(self, tool_name: str, tool_input: dict[str, Any], **f: Any) -> Decision:
        return self.emit(PreToolUse(tool_name=tool_name, tool_input=tool_input, **f))

    def post_tool_use(
        self, tool_name: str, tool_input: dict[str, Any], tool_response: Any, **f: Any
    ) -> Decision:
        return self.emit(
            PostToolUse(
                tool_name=tool_name, tool_input=tool_input, tool_response=tool_response, **f
            )
        )

    def post_tool_use_failure(
        self, tool_name: str, tool_input: dict[str, Any], error: str, **f: Any
    ) -> Decision:
        return self.emit(
            PostToolUseFailure(tool_name=tool_name, tool_input=tool_input, error=error, **f)
        )

    def user_prompt_submit(self, prompt: str, **f: Any) -> Decision:
        return self.emit(UserPromptSubmit(prompt=prompt, **f))

    def subagent_start(self, agent_id: str, agent_type: str, **f: Any) -> Decision:
        return self.emit(SubagentStart(agent_id=agent_id, agent_type=agent_type, **f))

    def subagent_stop(self, agent_id: str, agent_type: str, **f: Any) -> Decision:
        return self.emit(SubagentStop(agent_id=agent_id, agent_type=agent_type, **f))

    def agent_stop(self, last_assistant_message: str | None = None, **f: Any) -> Decision:
        return self.emit(AgentStop(last_assistant_message=last_assistant_message, **f))

    def session_start(self, source: str = "startup", **f: Any) -> Decision:
        return self.emit(SessionStart(source=source, **f))

    def session_end(self, reason: str = "other", **f: Any) -> Decision:
        return self.emit(SessionEnd(reason=reason, **f))

    def run_tool(
        self, tool_name: str, tool_input: dict[str, Any], fn: Callable[..., Any], **f: Any
    ) -> ToolRun:
        return self._s.run_tool_sync(tool_name, tool_input, fn, **f)


class Guard:
    """Runs an :class:`AgentDefinition`'s hooks for events and tool calls.

    ``definition`` may be a path to a YAML/TOML/JSON file. ``approver`` answers
    ``ask`` decisions (none: ``ask`` is returned to the host, and ``run_tool``
    treats it as a denial). ``approval_timeout`` seconds without an answer deny.
    ``ledger``: a :class:`~guardrails.Ledger`, a path, ``True`` for the default
    location, or ``None`` to record only when the definition's ``ledger:`` key
    or ``$HOOKRAILS_LEDGER`` names a file.
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
    ) -> None:
        if not isinstance(definition, AgentDefinition):
            definition = AgentDefinition.from_file(definition)
        self.definition = definition
        self.ledger = _open_ledger(ledger, definition)
        self.approver = approver
        self.approval_timeout = approval_timeout
        self.clock = clock
        self.tenant = tenant
        self.cwd = cwd
        self._index = ChainIndex(definition)
        self._sessions: dict[str, Session] = {}
        self._default = self.session(cwd=cwd)
        self.sync = self._default.sync

    def __repr__(self) -> str:
        return f"Guard({self.definition.name!r})"

    @property
    def bindings(self) -> dict[str, list[Binding]]:
        """Event name -> its hook bindings in the order they run (compiled at load)."""
        return self._index.bindings

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
        if s is None:  # setdefault: two threads starting one session get the same one
            new = Session(self, sid, cwd=cwd or self.cwd, tenant=tenant or self.tenant)
            s = self._sessions.setdefault(sid, new)
        return s

    def _session_for(self, event: Event) -> Session:
        if not event.session_id:
            self._default._fill(event)
            return self._default
        s = self._sessions.get(event.session_id)
        if s is None:
            s = self.session(event.session_id, cwd=event.cwd or None)
        if not event.cwd:
            event.cwd = s.cwd
        return s

    # --- per-event methods on the default session -------------------------------

    async def emit(self, event: Event) -> Decision:
        """Run every hook bound to ``event`` and merge their results into one Decision."""
        return await self._emit(event, self._session_for(event))

    def emit_sync(self, event: Event) -> Decision:
        return self._emit_sync(event, self._session_for(event))

    async def pre_tool_use(self, tool_name: str, tool_input: dict[str, Any], **f: Any) -> Decision:
        return await self._default.pre_tool_use(tool_name, tool_input, **f)

    async def post_tool_use(
        self, tool_name: str, tool_input: dict[str, Any], tool_response: Any, **f: Any
    ) -> Decision:
        return await self._default.post_tool_use(tool_name, tool_input, tool_response, **f)

    async def post_tool_use_failure(
        self, tool_name: str, tool_input: dict[str, Any], error: str, **f: Any
    ) -> Decision:
        return await self._default.post_tool_use_failure(tool_name, tool_input, error, **f)

    async def user_prompt_submit(self, prompt: str, **f: Any) -> Decision:
        return await self._default.user_prompt_submit(prompt, **f)

    async def subagent_start(self, agent_id: str, agent_type: str, **f: Any) -> Decision:
        return await self._default.subagent_start(agent_id, agent_type, **f)

    async def subagent_stop(self, agent_id: str, agent_type: str, **f: Any) -> Decision:
        return await self._default.subagent_stop(agent_id, agent_type, **f)

    async def agent_stop(self, last_assistant_message: str | None = None, **f: Any) -> Decision:
        return await self._default.agent_stop(last_assistant_message, **f)

    async def session_start(self, source: str = "startup", **f: Any) -> Decision:
        return await self._default.session_start(source, **f)

    async def session_end(self, reason: str = "other", **f: Any) -> Decision:
        return await self._default.session_end(reason, **f)

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

    # --- dispatch -----------------------------------------------------------------

    def _chain(self, event: Event, session: Session) -> tuple[Chain, bool]:
        subject = event.subject
        name = self.definition.name
        return self._index.lookup(
            event.event_name,
            name if subject is None else subject,
            event.agent_type or name,
            session.tenant,
        )

    def _halted(self, event: Event, session: Session) -> Decision | None:
        if session.halted is None or event.event_name != "PreToolUse":
            return None
        return Decision(
            event,
            decision="deny",
            reason=f"the agent was halted: {session.halted}",
            explicit=True,
            halted=True,
        )

    def _emit_sync(self, event: Event, session: Session, owner: bool = False) -> Decision:
        lock = session._lock
        ident = _get_ident()
        turn = session._turn  # inlined Session._reentry: this is the hot path
        if session._owner == ident or (turn is not None and turn in _HELD.get()):
            decision, pending = self._emit_sync_locked(event, session, owner)
        elif lock.acquire(False) or (not _holder_loop_is_here(session) and lock.acquire()):
            try:
                session._owner = ident
                decision, pending = self._emit_sync_locked(event, session, owner)
            finally:
                session._owner = session._turn = None
                lock.release()
        else:  # a task of this very thread's event loop holds the turn: waiting would stall
            # the loop it needs to finish, so decide without the turn (a callback of that loop)
            decision, pending = self._emit_sync_locked(event, session, owner)
        if not pending:
            return decision
        # an ask waits for its human outside the session's turn: siblings go on meanwhile
        self._approve_sync(decision, session)
        return self._recorded(self._unless_halted(decision, session), session, owner)

    def _unless_halted(self, decision: Decision, session: Session) -> Decision:
        """A call approved while a sibling halted the agent does not run after all."""
        if session.halted is not None and not decision.denied:
            return self._halted(decision.event, session) or decision
        return decision

    def _emit_sync_locked(
        self, event: Event, session: Session, owner: bool
    ) -> tuple[Decision, bool]:
        """The decision, recorded; or ``(ask, True)`` when an approver must settle it."""
        if self.ledger is not None:
            _ensure_tool_use_id(event)
            if event.event_name in _STOPS:
                self._seed_stop_blocks(event, session)
        if session.halted is not None:
            halted = self._halted(event, session)
            if halted is not None:
                return self._recorded(halted, session, owner), False
        name = event.event_name
        field_ = event.subject_field
        agent = self.definition.name
        subject = agent if field_ is None else (getattr(event, field_) or "")
        key = (name, subject, event.agent_type or agent, session.tenant)
        hit = self._index._cache.get(key)
        if hit is None:
            hit = self._index.lookup(*key)
        chain, needs_async = hit
        if needs_async:  # the turn is held: the coroutine's context (a copy of ours) says so
            token = session._enter()
            try:
                found: tuple[Decision, bool] = _run_coroutine(
                    self._emit_locked(event, session, owner)
                )
            finally:
                _HELD.reset(token)
            return found
        if name in _NEW_TURN:
            session.new_turn()
        merge = Merge(event, session, self.definition.injection_budget)
        if chain:
            # the hot loop: one timing call per hook, raw tuples for no-opinion hooks
            record = merge.d._raw.append
            ctxs = session._ctx
            perf = _perf
            ev = event
            t0 = perf()
            deadline = t0 + self.definition.event_budget
            for i, (b, pred) in enumerate(chain):
                if pred is not None and not pred(ev.tool_input, ev.cwd):  # type: ignore[attr-defined]
                    continue
                if t0 > deadline:
                    merge.fail(b, "timeout", "the event budget is spent", 0.0)
                    continue
                try:
                    r = b.fn(ev, ctxs[b.index] or session.ctx(b))
                except HookFailure as exc:
                    t1 = perf()
                    merge.fail(b, exc.kind, str(exc), t1 - t0)
                except (Exception, SystemExit) as exc:  # a hook's exit() must not end the host
                    t1 = perf()
                    merge.fail(b, "error", describe(exc), t1 - t0)
                else:
                    t1 = perf()
                    dt = t1 - t0
                    if dt > b.timeout and not _decisive(r):
                        msg = f"took {dt:.3f}s, over its {b.timeout:g}s timeout"
                        merge.fail(b, "timeout", msg, dt)
                    elif r is None:
                        record((b, "noop", dt, None, 0))
                    else:
                        merge.apply(b, r, dt)
                        ev = merge.event
                t0 = t1
                if merge.stopped:
                    for b, pred in chain[i + 1 :]:
                        if pred is None or pred(ev.tool_input, ev.cwd):  # type: ignore[attr-defined]
                            merge.skip(b)
                    break
        decision = merge.finish()
        if decision.decision == "ask" and self.approver is not None:
            return decision, True
        return self._recorded(decision, session, owner), False

    async def _emit(self, event: Event, session: Session, owner: bool = False) -> Decision:
        if session._reentry():  # a hook of this session emitting into it
            decision, pending = await self._emit_locked(event, session, owner)
        else:
            await _acquire(session._lock)
            try:
                session._loop = _running_loop()
                token = session._enter()
                try:
                    decision, pending = await self._emit_locked(event, session, owner)
                finally:
                    _HELD.reset(token)
            finally:
                session._turn = session._loop = None
                session._lock.release()
        if not pending:
            return decision
        await self._approve(decision, session)  # outside the turn, as on the sync path
        decision = self._unless_halted(decision, session)
        if self.ledger is None:
            return self._recorded(decision, session, owner)
        recorded: Decision = await _in_thread(self._recorded, decision, session, owner)
        return recorded

    async def _emit_locked(
        self, event: Event, session: Session, owner: bool
    ) -> tuple[Decision, bool]:
        """The decision, recorded; or ``(ask, True)`` when an approver must settle it."""
        import asyncio

        if self.ledger is not None:
            _ensure_tool_use_id(event)
            if event.event_name in _STOPS and (event.agent_id or "") not in session.stop_blocks:
                await _in_thread(self._seed_stop_blocks, event, session)  # a query: off the loop
        halted = self._halted(event, session)
        if halted is not None:
            return self._recorded(halted, session, owner), False
        chain, _ = self._chain(event, session)
        if event.event_name in _NEW_TURN:
            session.new_turn()
        merge = Merge(event, session, self.definition.injection_budget)
        budget = self.definition.event_budget
        start = _perf()
        for b, pred in chain:
            ev = merge.event
            if pred is not None and not pred(ev.tool_input, ev.cwd):  # type: ignore[attr-defined]
                continue
            if merge.stopped:
                merge.skip(b)
                continue
            t0 = _perf()
            remaining = budget - (t0 - start)
            if remaining <= 0:
                merge.fail(b, "timeout", f"the event budget of {budget:g}s is spent", 0.0)
                continue
            timeout = min(b.timeout, remaining)
            ctx = session.ctx(b)
            try:
                if b.is_async:
                    r = await asyncio.wait_for(_contained(b.fn(ev, ctx)), timeout)
                else:  # off the loop, so the timeout is enforced and the loop stays free
                    r = await asyncio.wait_for(_in_thread(b.fn, ev, ctx), timeout)
            except TimeoutError:
                merge.fail(b, "timeout", f"no answer within {timeout:g}s", _perf() - t0)
                continue
            except HookFailure as exc:
                merge.fail(b, exc.kind, str(exc), _perf() - t0)
                continue
            except (Exception, SystemExit) as exc:  # a hook's exit() must not end the host
                merge.fail(b, "error", describe(exc), _perf() - t0)
                continue
            merge.apply(b, r, _perf() - t0)
        decision = merge.finish()
        if decision.decision == "ask" and self.approver is not None:
            return decision, True
        if self.ledger is None:
            return self._recorded(decision, session, owner), False
        # a write can wait up to busy_timeout for another writer: not on the event loop
        recorded: Decision = await _in_thread(self._recorded, decision, session, owner)
        return recorded, False

    def _seed_stop_blocks(self, event: Event, session: Session) -> None:
        """A session new to this process (a command hook is one process per event) learns
        how many stops in a row were blocked from the ledger, so the cap holds across them."""
        key = event.agent_id or ""
        if key in session.stop_blocks or self.ledger is None:
            return
        if getattr(event, "stop_hook_active", None) is False:
            session.stop_blocks[key] = 0  # Claude says the last stop was not blocked
            return
        try:
            rows = self.ledger.reader.query(
                "select decision from events where session_id = ? and event = ? "
                "and coalesce(agent_id, '') = ? order by id desc limit ?",
                [session.session_id, event.event_name, key, STOP_BLOCK_CAP + 1],
            )
        except Exception:  # an unreadable ledger only loses the count, never the decision
            return
        n = 0
        for row in rows:
            if row["decision"] != "block":
                break
            n += 1
        session.stop_blocks[key] = n

    def _recorded(self, decision: Decision, session: Session, owner: bool) -> Decision:
        if owner and decision.decision == "ask":  # run_tool has nobody else to ask
            decision.decision = "deny"
            decision.reason = f"needs approval and no approver is configured: {decision.reason}"
        if self.ledger is not None:
            try:
                self.ledger.record(
                    decision,
                    self.clock(),
                    agent=session.guard.definition.name,
                    tenant=session.tenant,
                    owner_pid=_pid(owner),
                )
            except Exception:  # the decision stands whatever happens to its record
                import logging  # lazy: ~4 ms a hook process would pay on every event

                logging.getLogger("guardrails.guard").exception(
                    "hookrails: could not record %s in the ledger", decision.event_name
                )
        if decision.event.event_name == "SessionEnd" and session is not self._default:
            self._sessions.pop(session.session_id, None)  # a long-running Guard forgets it
        return decision

    # --- approvals ------------------------------------------------------------------

    def _approval(self, d: Decision, session: Session) -> tuple[ApprovalRequest, tuple[Any, ...]]:
        from ..approvers import ApprovalRequest

        askers = tuple(sorted({r.hook for r in d.runs if r.outcome == "ask"}))
        ev = d.event
        req = ApprovalRequest(
            tool_name=ev.tool_name,
            tool_input=d.tool_input or {},
            reason=d.reason or "",
            session_id=session.session_id,
            hooks=askers,
        )
        return req, (ev.tool_name, askers)

    def _settle(
        self, d: Decision, session: Session, key: Any, answer: Any, error: str | None, t: float
    ) -> None:
        from ..approvers import ANSWERS

        if error is None and answer not in ANSWERS:
            error = f"approver answered {answer!r}; expected allow, deny or allow_always"
        if error is not None:
            answer = "deny"
        if answer == "allow_always":
            session.allow_always.add(key)
        outcome = "deny" if answer == "deny" else "allow"
        d._raw.append(HookRun("approver", "ask", 0, outcome, t * 1000, error))
        if outcome == "allow":
            d.decision = "allow"
        else:
            d.decision = "deny"
            d.reason = (
                f"denied by the approver ({error})"
                if error
                else (
                    f"denied by the approver: {d.reason}" if d.reason else "denied by the approver"
                )
            )

    def _cached_approval(self, d: Decision, session: Session) -> tuple[Any, Any]:
        req, key = self._approval(d, session)
        if key in session.allow_always:
            d.decision = "allow"
            d._raw.append(HookRun("approver", "ask", 0, "allow", 0.0, None))
            d.notes.append("allowed by an earlier allow_always")
            return None, key
        return req, key

    def _approve_sync(self, d: Decision, session: Session) -> None:
        req, key = self._cached_approval(d, session)
        if req is None:
            return
        import concurrent.futures
        import threading

        t0 = _perf()
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def ask() -> None:
            try:
                future.set_result(_call_approver(self.approver, req))
            except BaseException as exc:
                future.set_exception(exc)

        threading.Thread(target=ask, daemon=True, name="hookrails-approver").start()
        try:
            answer, error = future.result(timeout=self.approval_timeout), None
        except concurrent.futures.TimeoutError:
            answer, error = "deny", f"no answer within {self.approval_timeout:g}s"
        except Exception as exc:
            answer, error = "deny", describe(exc)
        self._settle(d, session, key, answer, error, _perf() - t0)

    async def _approve(self, d: Decision, session: Session) -> None:
        import asyncio

        req, key = self._cached_approval(d, session)
        if req is None:
            return
        t0 = _perf()
        try:
            if is_async_callable(self.approver):  # on this loop: it may await the app's events
                pending = self.approver(req)  # type: ignore[misc]
            else:
                pending = _in_thread(_call_approver, self.approver, req)
            answer = await asyncio.wait_for(pending, self.approval_timeout)
            error = None
        except TimeoutError:
            answer, error = "deny", f"no answer within {self.approval_timeout:g}s"
        except Exception as exc:
            answer, error = "deny", describe(exc)
        self._settle(d, session, key, answer, error, _perf() - t0)


def _open_ledger(ledger: Any, definition: AgentDefinition) -> Ledger | None:
    if ledger is None:
        if not definition.ledger and not os.environ.get("HOOKRAILS_LEDGER"):
            return None
        ledger = True
    if ledger is False:
        return None
    from ..ledger.sqlite import Ledger

    if isinstance(ledger, Ledger):
        return ledger
    return Ledger(None if ledger is True else ledger, definition=definition)


def _in_thread(fn: Callable[..., Any], *args: Any) -> Awaitable[Any]:
    """Run ``fn`` in a fresh daemon thread: no shared pool to queue behind (a timeout
    counts from the start of the call) and a hung hook cannot hold up interpreter exit."""
    import asyncio
    import concurrent.futures
    import threading

    future: concurrent.futures.Future[Any] = concurrent.futures.Future()
    context = contextvars.copy_context()  # the hook knows which session turns it holds

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(context.run(fn, *args))
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=run, daemon=True, name="hookrails-hook").start()
    return asyncio.wrap_future(future)


def _running_loop() -> object | None:
    """The event loop running on this thread (none, if asyncio was not even imported)."""
    aio = sys.modules.get("asyncio")
    if aio is None:
        return None
    try:
        loop: object = aio.get_running_loop()
    except RuntimeError:
        return None
    return loop


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


def _call_approver(approver: Any, req: Any) -> Any:
    answer = approver(req)
    if _is_awaitable(answer):
        import asyncio

        return asyncio.run(_await(answer))
    return answer


async def _await(value: Awaitable[Any]) -> Any:
    return await value


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
