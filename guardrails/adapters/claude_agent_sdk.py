"""claude-agent-sdk host: a :class:`~guardrails.Guard` as ``ClaudeAgentOptions(hooks=...)``.

``to_sdk_hooks(guard)`` registers one dispatcher callback per event with
``matcher=None``: the CLI runs matchers on one event concurrently and has
merged their answers wrongly before, so matching, ordering and merging happen
inside the Guard and the CLI sees a single answer. ``from_sdk_options(options)``
goes the other way: existing SDK hooks become a definition, their Claude
matcher strings translated into hookrails patterns.

Needs the ``claude`` extra: ``pip install 'hookrails[claude]'``.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, cast

from .. import Guard
from ..claude_code import failure_policy as _policy
from ..definition.hook_refs import claude_hook
from ..definition.model import AgentDefinition, HookMatcher
from ..errors import DefinitionError, EventError
from ..events import TOOL_EVENTS, Event, canonical_event_name, event_class
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
    "to_sdk_hooks",
    "translate_matcher",
]

_log = logging.getLogger("guardrails.adapters.claude_agent_sdk")

#: the hookrails events the SDK channel delivers, by their wire names (AgentStop is ``Stop``)
SDK_EVENTS: Final = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "SubagentStart",
    "SubagentStop",
    "Stop",
)
#: events the CLI never sends to SDK callbacks (use a settings.json command hook for them)
NOT_DELIVERED: Final = frozenset({"SessionStart", "SessionEnd"})
#: events whose matcher the CLI ignores: every registered hook fires
_NO_MATCHER: Final = frozenset({"UserPromptSubmit", "Stop", "AgentStop"})
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

SdkCallback = Callable[[Any, "str | None", Any], Awaitable[Any]]


def to_sdk_hooks(
    guard: Guard | AgentDefinition | str | os.PathLike[str],
) -> dict[HookEvent, list[claude_agent_sdk.HookMatcher]]:
    """The ``hooks`` for ``ClaudeAgentOptions``: one dispatcher per event, ``matcher=None``.

    Each dispatcher turns the CLI's input into an :class:`~guardrails.Event`,
    awaits ``guard.emit`` and answers with ``Decision.to_claude()``. The input's
    ``session_id`` selects the Guard session, so one Claude session is one
    hookrails session (stop-block counts, shared hook state, ledger rows).

    Registered: every event the definition binds, and ``UserPromptSubmit``
    (a prompt starts a turn: the injection budget renews, a halt ends); with a
    ledger, every event the SDK delivers, so the ledger sees each call, prompt
    and stop. ``SessionStart`` and ``SessionEnd`` are never registered: the CLI
    does not send them to SDK callbacks (bind them through a settings.json
    command hook, ``hookrails hook``), so a long-lived Guard keeps each
    session's state until it is dropped.

    Failures follow the policy every Claude host shares (``_policy``): PreToolUse
    fails closed, and so does any event one of whose matchers says
    ``on_failure: block`` (UserPromptSubmit by default). There a dispatcher that
    breaks, or whose answer is not strict JSON (a NaN rewrite), answers an
    explicit deny or block, never an allow, and is registered with
    ``on_failure="block"`` so a timeout blocks too (the CLI ignores that on Stop and
    SubagentStop, so the explicit block is what holds there). Elsewhere it answers
    a ``systemMessage`` and the action goes ahead. With a ledger, the failure is
    recorded as that answer. The CLI's ``timeout`` is ``_policy.settings_timeout``
    (plus the approval timeout with an approver).
    """
    if not isinstance(guard, Guard):
        guard = Guard(guard)
    bound = {_wire_name(e) for e in guard.definition.hooks if e not in NOT_DELIVERED}
    wanted = set(SDK_EVENTS) if guard.ledger is not None else bound | {"UserPromptSubmit"}
    timeout: float = _policy.settings_timeout(guard.definition)
    if guard.approver is not None:
        timeout += guard.approval_timeout
    hooks: dict[str, list[claude_agent_sdk.HookMatcher]] = {}
    for wire in SDK_EVENTS:
        if wire not in wanted:
            continue
        closed = _policy.fails_closed(guard.definition, wire)
        hooks[wire] = [
            claude_agent_sdk.HookMatcher(
                matcher=None,
                hooks=[_dispatcher(guard, wire, closed)],
                timeout=timeout,
                on_failure="block" if closed else None,
            )
        ]
    return cast("dict[HookEvent, list[claude_agent_sdk.HookMatcher]]", hooks)


def _wire_name(event: str) -> str:
    return event_class(event).wire_name


def _dispatcher(guard: Guard, wire: str, closed: bool) -> SdkCallback:
    """The callback for ``wire``; ``closed``: how it fails (``_policy.fails_closed``)."""

    async def dispatch(input_data: Any, tool_use_id: str | None, context: Any) -> Any:
        event: Event | None = None
        try:
            event = Event.from_claude(input_data)
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
    (``UserPromptSubmit``, ``Stop``) the result is ``None``; ``event=None``
    means a tool event. Raises :class:`~guardrails.DefinitionError` for a regex
    Python cannot compile: Claude would silently never run that hook.
    """
    canonical = canonical_event_name(event) if event is not None else None
    if canonical in _NO_MATCHER:
        return None
    if matcher is None or matcher in ("", "*"):
        return None
    aliases = CLAUDE_TOOL_ALIASES if canonical is None or canonical in TOOL_EVENTS else {}
    if _EXACT.fullmatch(matcher):
        names: list[str] = []
        for name in (n.strip() for n in re.split(r"[|,]", matcher)):
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
    open. Events hookrails does not model (``PreCompact``, ``Notification``,
    ``PermissionRequest``) raise :class:`~guardrails.DefinitionError`.
    """
    raw = options if isinstance(options, Mapping) else options.hooks
    hooks: dict[str, list[HookMatcher]] = {}
    for event, matchers in (raw or {}).items():
        try:
            canonical = canonical_event_name(event)
        except EventError:
            raise DefinitionError(
                f"hookrails has no {event} event",
                loc=("hooks", event),
                expected="PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, "
                "SubagentStart, SubagentStop, Stop, SessionStart or SessionEnd "
                "(keep other SDK hooks in ClaudeAgentOptions beside to_sdk_hooks)",
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
