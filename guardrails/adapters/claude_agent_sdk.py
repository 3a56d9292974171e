"""claude-agent-sdk host: a :class:`~guardrails.Guard` as ``ClaudeAgentOptions(hooks=...)``.

``to_sdk_hooks(guard)`` registers one dispatcher callback per event with
``matcher=None``: the CLI runs matchers on one event concurrently and has
merged their answers wrongly before, so matching, ordering and merging happen
inside the Guard and the CLI sees a single answer. ``to_can_use_tool(guard)``
hands the permission asks the CLI makes itself (a tool not in ``allowed_tools``,
an ``ask`` rule) to the Guard's approver. ``from_sdk_options(options)`` goes the
other way: existing SDK hooks become a definition, their Claude matcher strings
translated into hookrails patterns.

Needs the ``claude`` extra: ``pip install 'hookrails[claude]'``.
"""

from __future__ import annotations

import logging
import os
import re
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, cast

from .. import Guard
from .._event_table import NO_MATCHER
from ..claude_code import failure_policy as _policy
from ..definition.hook_refs import claude_hook
from ..definition.model import AgentDefinition, HookMatcher
from ..dispatch.approval import approve
from ..dispatch.chains import judged_events
from ..dispatch.loop import recorded
from ..errors import DefinitionError, EventError
from ..events import (
    EVENT_NAMES,
    TOOL_NAME_EVENTS,
    Event,
    PreToolUse,
    canonical_event_name,
)
from ..results import Decision

try:
    import claude_agent_sdk
except ImportError as exc:  # pragma: no cover - the extra is part of the dev install
    raise ImportError(
        "guardrails.adapters.claude_agent_sdk needs claude-agent-sdk: "
        "pip install 'hookrails[claude]'"
    ) from exc

if TYPE_CHECKING:
    from claude_agent_sdk import ClaudeAgentOptions
    from claude_agent_sdk.types import HookEvent

__all__ = [
    "CLAUDE_TOOL_ALIASES",
    "NOT_DELIVERED",
    "SDK_EVENTS",
    "from_sdk_options",
    "sdk_output",
    "to_can_use_tool",
    "to_sdk_hooks",
    "translate_matcher",
]

_log = logging.getLogger("guardrails.adapters.claude_agent_sdk")

#: the events claude-agent-sdk types (``HookEvent``), by their wire names (AgentStop is
#: ``Stop``): registered whenever the Guard has a ledger, so it sees each call, prompt,
#: permission ask, compaction and stop. The CLI sends the other events (PostToolBatch,
#: MessageDisplay, InstructionsLoaded, PostCompact, ...) to SDK callbacks too: they are
#: registered when the definition binds them.
SDK_EVENTS: Final = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "PreCompact",
    "Notification",
    "PermissionRequest",
)
#: events the CLI (2.1.332) never sends to SDK callbacks (use a settings.json command hook
#: for them). SessionStart reaches them only after ``/compact`` (source ``compact``), never
#: at the start of a session.
NOT_DELIVERED: Final = frozenset({"SessionEnd"})
#: events whose matcher the CLI ignores: every registered hook fires
_NO_MATCHER: Final = NO_MATCHER | {"Stop"}
#: events whose exact-name matchers may not hold ``-``, ``,`` or spaces (``[A-Za-z0-9_|]``)
_NARROW_EXACT: Final = frozenset({"FileChanged", "StopFailure"})
#: legacy tool names Claude Code (2.1.332) still matches on the new tool: ``Task`` fires on
#: ``Agent``, in a name list and in a regex alike
CLAUDE_TOOL_ALIASES: Final[Mapping[str, str]] = {
    "Task": "Agent",
    "KillShell": "TaskStop",
    "KillBash": "TaskStop",
    "ListPeers": "ListAgents",
    "Brief": "SendUserMessage",
    "ListMcpResources": "ListMcpResourcesTool",
    "ReadMcpResource": "ReadMcpResourceTool",
    "ReadMcpResourceDir": "ReadMcpResourceDirTool",
    "ProposeGoal": "SetGoal",
}
#: Claude's exact-name form; anything else is an unanchored JavaScript regex
_EXACT: Final = re.compile(r"[A-Za-z0-9_\-, |]*")
_EXACT_NARROW: Final = re.compile(r"[A-Za-z0-9_|]*")

SdkCallback = Callable[[Any, "str | None", Any], Awaitable[Any]]


def to_sdk_hooks(
    guard: Guard | AgentDefinition | str | os.PathLike[str],
) -> dict[HookEvent, list[claude_agent_sdk.HookMatcher]]:
    """The ``hooks`` for ``ClaudeAgentOptions``: one dispatcher per event, ``matcher=None``.

    Each dispatcher turns the CLI's input into an :class:`~guardrails.Event`,
    awaits ``guard.emit`` and answers with ``Decision.to_claude()``. The input's
    ``session_id`` selects the Guard session, so one Claude session is one
    hookrails session (stop-block counts, shared hook state, ledger rows).

    Registered: every event the definition binds (but SessionEnd, which the CLI never
    sends to SDK callbacks), and ``UserPromptSubmit`` (a prompt starts a turn: the
    injection budget renews, a halt ends); with a ledger, every event claude-agent-sdk
    types too (:data:`SDK_EVENTS`), so the ledger sees each call, prompt, permission
    ask, compaction and stop. A long-lived Guard keeps each session's state until it is
    dropped.

    Failures follow the policy every Claude host shares (``_policy``): PreToolUse
    fails closed, and so does an event Claude lets a hook refuse one of whose
    matchers says ``on_failure: block`` (UserPromptSubmit by default). There a
    dispatcher that breaks, or whose answer is not strict JSON (a NaN rewrite),
    answers an explicit refusal, never an allow, and is registered with
    ``on_failure="block"`` where the CLI honours it, so a timeout refuses too (on
    Stop and SubagentStop the CLI ignores that, so the explicit block is what holds
    there). Elsewhere it answers a ``systemMessage`` and the action goes ahead. With
    a ledger, the failure is recorded as that answer. The CLI's ``timeout`` is
    ``_policy.settings_timeout`` (plus the approval timeout with an approver).
    """
    if not isinstance(guard, Guard):
        guard = Guard(guard)
    bound = {_wire_name(e) for e in guard.definition.hooks if e not in NOT_DELIVERED}
    wanted = bound | {"UserPromptSubmit"}
    if guard.approver is not None:  # Claude's own permission dialog goes to the approver
        wanted.add("PermissionRequest")
    wanted |= judged_events(guard.definition)  # PreToolUse's judges hold there too
    if guard.ledger is not None:
        wanted |= set(SDK_EVENTS)
    timeout: float = _policy.settings_timeout(guard.definition)
    if guard.approver is not None:
        timeout += guard.approval_timeout
    hooks: dict[str, list[claude_agent_sdk.HookMatcher]] = {}
    for name in EVENT_NAMES:
        wire = _wire_name(name)
        if wire not in wanted:
            continue
        closed = _policy.fails_closed(guard.definition, wire)
        hooks[wire] = [
            claude_agent_sdk.HookMatcher(
                matcher=None,
                hooks=[_dispatcher(guard, wire, closed)],
                timeout=timeout,
                on_failure="block" if closed and _policy.on_failure_counts(wire) else None,
            )
        ]
    return cast("dict[HookEvent, list[claude_agent_sdk.HookMatcher]]", hooks)


def _wire_name(event: str) -> str:
    canonical = canonical_event_name(event)
    return "Stop" if canonical == "AgentStop" else canonical


def _dispatcher(guard: Guard, wire: str, closed: bool) -> SdkCallback:
    """The callback for ``wire``; ``closed``: how it fails (``_policy.fails_closed``)."""

    async def dispatch(input_data: Any, tool_use_id: str | None, context: Any) -> Any:
        event: Event | None = None
        try:
            event = Event.from_claude(input_data)
            _seen(guard).saw(event)
            if tool_use_id and hasattr(event, "tool_use_id") and not event.tool_use_id:
                event.tool_use_id = tool_use_id
            decision = await guard.emit(event)
            out = sdk_output(decision)
            # the SDK writes NaN as bare `NaN`, which the CLI cannot parse: check it here,
            # so an answer that is not strict JSON fails by the policy, not the whole run
            _policy.encode(out)
            return out
        except (Exception, SystemExit) as exc:  # never "no opinion" where it matters
            _log.exception("hookrails: the %s dispatcher failed", wire)
            reason = f"hookrails could not check this {wire} event ({type(exc).__name__}: {exc})"
            reason = f"{reason}; {_policy.verdict(wire, closed)}"
            if guard.ledger is not None:
                await _record_failure(guard, input_data, event, wire, reason, closed)
            return _policy.undecided_output(wire, reason, closed)

    dispatch.__name__ = dispatch.__qualname__ = f"hookrails_{wire}"
    return dispatch


async def _record_failure(
    guard: Guard, input_data: Any, event: Event | None, wire: str, reason: str, closed: bool
) -> None:
    """Best effort: the ledger keeps the refusal the CLI was given (an input that did not
    parse is salvaged from its well-typed fields), off the event loop."""
    import asyncio

    if event is None and isinstance(input_data, dict):
        event = _policy.salvage_event(input_data, wire)
    if event is None or guard.ledger is None:
        return
    try:
        await asyncio.to_thread(
            _policy.record_undecided, guard.ledger, guard, event, reason, closed
        )
    except Exception:  # the answer matters more than its record
        _log.exception("hookrails: could not record the failed %s event", wire)


def sdk_output(decision: Decision) -> dict[str, Any]:
    """``Decision.to_claude()`` in the SDK's Python spelling (``continue_``); ``{}``: no opinion."""
    out = decision.to_claude()
    if "continue" in out:
        out["continue_"] = out.pop("continue")
    return out


# --- from the SDK ------------------------------------------------------------------------


def translate_matcher(matcher: str | None, event: str | None = None) -> str | None:
    """A Claude hook matcher string as the hookrails pattern that matches the same subjects.

    Claude: ``None``, ``""`` and ``"*"`` match everything; a string of only
    letters, digits, ``_``, ``-``, spaces, ``,`` and ``|`` is a list of exact
    names (split on ``|`` or ``,``, trimmed); anything else is an unanchored
    JavaScript regex (``Edit.*`` also matches ``NotebookEdit``), which becomes a
    ``re:`` pattern that searches rather than full-matches. On tool events a
    legacy tool name also matches its new name (:data:`CLAUDE_TOOL_ALIASES`:
    ``Task`` fires on ``Agent``). On events whose matcher Claude ignores
    (``UserPromptSubmit``, ``Stop``, ...) the result is ``None``; ``event=None``
    means a tool event. FileChanged and StopFailure take exact names of letters,
    digits, ``_`` and ``|`` only. Raises :class:`~guardrails.DefinitionError` for a
    regex Python cannot compile: Claude would silently never run that hook.
    """
    canonical = canonical_event_name(event) if event is not None else None
    if canonical in _NO_MATCHER:
        return None
    if matcher is None or matcher in ("", "*"):
        return None
    aliases = CLAUDE_TOOL_ALIASES if canonical is None or canonical in TOOL_NAME_EVENTS else {}
    narrow = canonical in _NARROW_EXACT
    if (_EXACT_NARROW if narrow else _EXACT).fullmatch(matcher):
        names: list[str] = []
        for name in (n.strip() for n in re.split(r"[|]" if narrow else r"[|,]", matcher)):
            for n in (name, aliases.get(name)):
                if n and n not in names:
                    names.append(n)
        return "|".join(names) if names else "re:(?!)"
    body = _js_regex(matcher)
    try:
        compiled = re.compile(body, re.ASCII)
    except re.error as exc:
        raise DefinitionError(
            f"matcher {matcher!r} is a regex Python cannot compile: {exc}",
            expected="a JavaScript regex that is also a Python one",
        ) from None
    # unanchored like RegExp.test; ASCII classes like JavaScript's \d \w \s
    pattern = f"(?s:.*?)(?a:{body})(?s:.*)"
    renamed = sorted({new for old, new in aliases.items() if compiled.search(old)})
    if renamed:  # a regex that matches a legacy name also matches the tool's new name
        pattern = f"(?:{pattern}|{'|'.join(re.escape(n) for n in renamed)})"
    return "re:" + pattern


def _js_regex(source: str) -> str:
    """The few JavaScript regex spellings Python writes differently (named groups)."""
    source = re.sub(r"\(\?<(?![=!])", "(?P<", source)
    return re.sub(r"\\k<(\w+)>", r"(?P=\1)", source)


def from_sdk_options(
    options: ClaudeAgentOptions | Mapping[str, Any],
    *,
    name: str | None = None,
) -> AgentDefinition:
    """Turn ``ClaudeAgentOptions.hooks`` (or that dict itself) into an :class:`AgentDefinition`.

    Each callback runs unchanged through :func:`~guardrails.claude_hook`; each
    SDK ``HookMatcher`` keeps its ``timeout`` and ``on_failure`` and gets its
    matcher string translated (:func:`translate_matcher`). Unlike the CLI, which
    runs the matchers of one event concurrently, hookrails runs them in
    declaration order. An unset ``on_failure`` takes the hookrails default
    (fail closed on PreToolUse and UserPromptSubmit) where the CLI would fail
    open. Every Claude event is taken (``PreCompact``, ``Notification``,
    ``PermissionRequest``, ...); a name Claude does not have raises
    :class:`~guardrails.DefinitionError`.
    """
    raw = options if isinstance(options, Mapping) else options.hooks
    hooks: dict[str, list[HookMatcher]] = {}
    for event, matchers in (raw or {}).items():
        try:
            canonical = canonical_event_name(event)
        except EventError:
            raise DefinitionError(
                f"Claude Code has no {event} hook event",
                loc=("hooks", event),
                expected=f"one of {', '.join(EVENT_NAMES[:-1])} or {EVENT_NAMES[-1]} "
                "(Stop for AgentStop)",
            ) from None
        for i, m in enumerate(matchers):
            callbacks = list(getattr(m, "hooks", None) or [])
            if not callbacks:
                continue
            try:
                hooks.setdefault(canonical, []).append(
                    HookMatcher(
                        matcher=translate_matcher(getattr(m, "matcher", None), canonical),
                        hooks=[claude_hook(cb) for cb in callbacks],
                        timeout=getattr(m, "timeout", None),
                        on_failure=getattr(m, "on_failure", None),
                    )
                )
            except DefinitionError as exc:
                raise exc.within("hooks", event, i) from None
    return AgentDefinition(name=name or "agent", hooks=dict(hooks))


# --- Claude's own permission asks -----------------------------------------------------------


class _Seen:
    """What a Guard's dispatchers saw that ``can_use_tool``'s context does not say: the
    session of each tool call (``ToolPermissionContext`` has its ``tool_use_id`` only)."""

    __slots__ = ("last", "sessions")

    _MAX: Final = 1024

    def __init__(self) -> None:
        self.sessions: dict[str, str] = {}
        self.last: str | None = None

    def saw(self, event: Event) -> None:
        if not event.session_id:
            return
        self.last = event.session_id
        call = getattr(event, "tool_use_id", None)
        if call:
            if len(self.sessions) >= self._MAX:
                self.sessions.clear()
            self.sessions[call] = event.session_id


_SEEN: weakref.WeakKeyDictionary[Guard, _Seen] = weakref.WeakKeyDictionary()


def _seen(guard: Guard) -> _Seen:
    found = _SEEN.get(guard)
    if found is None:
        found = _SEEN[guard] = _Seen()
    return found


def to_can_use_tool(guard: Guard) -> Callable[..., Awaitable[Any]]:
    """``ClaudeAgentOptions(can_use_tool=...)``: the CLI's own permission asks go to the
    Guard's approver.

    The CLI asks when its permission rules say so: a tool not in ``allowed_tools``, an
    ``ask`` rule, a path outside the project. The callback puts that ask to the Guard's
    ``approver`` as an :class:`~guardrails.ApprovalRequest` (the tool, its input, the
    CLI's reason), under the Guard's ``approval_timeout`` and with the session's
    ``allow_always`` answers, and records the answer on the call's ledger row (the
    approver's hook run beside the PreToolUse hooks'). A hookrails hook's ``ask`` is
    settled by the same approver inside the PreToolUse dispatcher, before the CLI
    would ask. Without an approver there is nobody to ask: a
    :class:`~guardrails.DefinitionError`.
    """
    if guard.approver is None:
        raise DefinitionError(
            "to_can_use_tool needs a Guard with an approver",
            expected="Guard(definition, approver=...)",
        )
    guard._dialog_elsewhere = True  # the CLI asks can_use_tool and PermissionRequest at once

    async def can_use_tool(tool_name: str, tool_input: dict[str, Any], context: Any) -> Any:
        seen = _seen(guard)
        call = getattr(context, "tool_use_id", None)
        session = guard.session(seen.sessions.get(call or "") or seen.last)
        event = PreToolUse(
            session_id=session.session_id,
            cwd=session.cwd,
            tool_name=tool_name,
            tool_input=dict(tool_input),
            tool_use_id=call,
            agent_id=getattr(context, "agent_id", None),
        )
        reason = getattr(context, "decision_reason", None) or "Claude asks before this call"
        decision = Decision(event, decision="ask", reason=reason, explicit=True)
        try:
            await approve(guard, decision, session)
        except Exception as exc:  # the approver's machinery broke: nobody said yes
            decision.decision, decision.reason = "deny", f"the approval failed ({exc})"
        if guard.ledger is not None:
            import asyncio

            await asyncio.to_thread(recorded, guard, decision, session, False)
        if decision.decision == "allow":
            return claude_agent_sdk.PermissionResultAllow()
        return claude_agent_sdk.PermissionResultDeny(message=decision.reason or "denied")

    return can_use_tool
