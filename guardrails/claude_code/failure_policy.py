"""How an event fails when it cannot be decided: one policy for every Claude host.

``hookrails hook`` (command hooks), ``hookrails serve`` (http hooks), ``hookrails
claude install`` (the handlers' ``onFailure`` and ``timeout``) and the
claude-agent-sdk dispatcher ask the same questions, and answer them here:

* does the event fail closed? :func:`fails_closed`: PreToolUse always (a crash
  never lets a tool run); an event Claude lets a hook refuse (``REFUSALS``) when one
  of its matchers says ``on_failure: block`` (the default of UserPromptSubmit,
  UserPromptExpansion and PreSkillShellCommand), by the default of docs/design.md §5
  when the definition does not bind it; never an event Claude cannot block
  (Notification, SessionStart, ...): a refusal there would mean nothing;
* how long may deciding it take? :func:`deadline` per event, and
  :func:`settings_timeout` for Claude's own ``timeout``, always longer, so
  Claude never gives up on a hook before our own watchdog answers;
* what is Claude told then? :func:`undecided_output`, written by :func:`encode`,
  which refuses what strict JSON cannot hold (a NaN rewrite is undecided, never
  silently the original input or an allow);
* what does the ledger keep? :func:`failure_decision` (and
  :func:`record_undecided`): the refusal, so a broken setup shows in
  ``hookrails ledger tail``, not only on Claude's screen.

Light on purpose: the hook process imports it. Definitions, events, results and
the Guard are imported only inside the functions that need them (a process that
got that far has them loaded already).
"""

from __future__ import annotations

import json

from .._event_table import PERMISSION_EVENTS, REFUSALS
from ..definition.undecided import (
    DEADLINE_GRACE,
    SETTINGS_GRACE,
    deadline,
    fails_closed,
    fails_closed_with,
    on_failure_counts,
    settings_timeout,
)
from ..definition.undecided import canonical as _canonical
from ..errors import OutputError

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

    from ..dispatch.guard import Guard
    from ..dispatch.session import Session
    from ..events import Event
    from ..ledger.sqlite import Ledger
    from ..results import Decision

__all__ = [
    "DEADLINE_GRACE",
    "SETTINGS_GRACE",
    "deadline",
    "encode",
    "encode_bytes",
    "fails_closed",
    "fails_closed_with",
    "failure_decision",
    "failure_exit",
    "on_failure_counts",
    "record_undecided",
    "salvage_event",
    "settings_timeout",
    "undecided_output",
    "undecided_session",
    "verdict",
]


def failure_exit(event_name: str | None, closed: bool) -> int:
    """``hookrails hook``'s exit code for an undecided event: 1 (Claude goes ahead), or 2
    when it fails closed; 0 for a PermissionRequest that fails closed, whose refusal is the
    JSON deny on stdout (:func:`undecided_output`): Claude ignores its exit 2."""
    if not closed:
        return 1
    return 0 if _canonical(event_name) == "PermissionRequest" else 2


def verdict(event_name: str | None, closed: bool) -> str:
    """What happens to an undecided event, in words, for the end of a one-line reason."""
    if not closed:
        return "continuing (fails open)"
    name = _canonical(event_name)
    if name == "PreToolUse":
        return "the tool call is denied (fails closed)"
    if name is None:
        return "blocked (the event is unknown, so it fails closed)"
    wire = "Stop" if name == "AgentStop" else name
    return f"the {wire} event is blocked (on_failure: block): {REFUSALS[name]}"


def undecided_output(event_name: str | None, reason: str, closed: bool) -> dict[str, Any]:
    """The Claude hook output for an event that could not be decided.

    Closed: a permission event is denied (``permissionDecision``; PermissionRequest's
    ``decision``), an elicitation declined, any other event (or an unknown one,
    which Claude applies to a PreToolUse as a deny) gets a top-level ``decision:
    block``. Open: a ``systemMessage``, so the user sees that the check did not run;
    the action goes ahead.
    """
    if not closed:
        return {"systemMessage": reason}
    name = _canonical(event_name)
    if name == "PermissionRequest":
        decision = {"behavior": "deny", "message": reason}
        return {"hookSpecificOutput": {"hookEventName": name, "decision": decision}}
    if name in PERMISSION_EVENTS:
        return {
            "hookSpecificOutput": {
                "hookEventName": name,
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }
    if name in ("Elicitation", "ElicitationResult"):
        return {
            "decision": "block",
            "reason": reason,
            "hookSpecificOutput": {"hookEventName": name, "action": "decline"},
        }
    return {"decision": "block", "reason": reason}


def encode(output: Any) -> str:
    """``output`` as strict, ASCII JSON; raises :class:`~guardrails.errors.OutputError`
    for NaN or an infinity, a value JSON has no type for, or a cycle.

    No ``default=``: a hook's rewrite that is not JSON must not reach Claude as
    something else (``str(obj)``), and Claude reads ``NaN`` as invalid JSON, which
    it treats like no answer at all. Lone surrogates are escaped (``\\ud800``), so the
    text always encodes.
    """
    try:
        return json.dumps(output, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    except (ValueError, TypeError, RecursionError) as exc:
        raise OutputError(f"the answer is not strict JSON ({type(exc).__name__}: {exc})") from None


def encode_bytes(output: Any) -> bytes:
    """:func:`encode` as bytes, for an HTTP body."""
    return encode(output).encode("ascii")


def failure_decision(event: Event, reason: str, closed: bool) -> Decision:
    """The decision the ledger keeps for an undecided event: a deny (PreToolUse) or a
    block when it fails closed, else an allow; one ``hookrails`` hook run says why."""
    from ..results import Decision, HookRun

    decision = Decision(event, explicit=closed, reason=reason)
    if closed and event.event_name in PERMISSION_EVENTS:
        decision.decision = "deny"
    elif closed:
        decision.blocked = True
    outcome = "deny" if decision.denied else "block" if closed else "error"
    decision._raw.append(HookRun("hookrails", "*", 0, outcome, 0.0, reason))
    return decision


def salvage_event(payload: dict[str, Any], event_name: str) -> Event | None:
    """The event an invalid hook input describes, from its well-typed fields only (a
    ``tool_input`` that is not an object is left out), so the refusal can be recorded
    with its session, tool and call id. ``None`` when even that cannot be built."""
    from ..events import event_class, wire_fields

    try:
        cls = event_class(event_name)
        fields = wire_fields(event_name)
    except Exception:
        return None
    kwargs: dict[str, Any] = {}
    for key, value in payload.items():
        spec = fields.get(key)
        if spec is None or value is None or key == "hook_event_name":
            continue
        if spec.types and (
            not isinstance(value, spec.types)
            or (isinstance(value, bool) and bool not in spec.types)
        ):
            continue
        kwargs[key] = value
    try:
        return cls(**kwargs)
    except Exception:
        return None


def undecided_session(guard: Guard, event: Event) -> Session:
    """A throwaway session of ``guard`` to record an undecided ``event`` with (the ledger
    needs its id, agent and tenant): made without the Guard's session table, so any
    thread may call it while the event's own session is busy or stuck. Fills what the
    Guard would: a session id, the cwd and, on a tool event, a ``tool_use_id``."""
    import os

    from ..dispatch.session import Session
    from ..events import TOOL_EVENTS

    if event.event_name in TOOL_EVENTS and not getattr(event, "tool_use_id", None):
        event.tool_use_id = "toolu_" + os.urandom(12).hex()  # type: ignore[attr-defined]
    if not event.session_id:
        event.session_id = "hookrails-" + os.urandom(8).hex()
    session = Session(guard, event.session_id, cwd=event.cwd or None, tenant=guard.tenant)
    if not event.cwd:
        event.cwd = session.cwd
    return session


def record_undecided(
    ledger: Ledger, guard: Guard, event: Event, reason: str, closed: bool
) -> Decision:
    """Record :func:`failure_decision` for ``event`` in ``ledger``, as ``guard``'s agent
    (see :func:`undecided_session`); returns what was recorded."""
    session = undecided_session(guard, event)
    decision = failure_decision(event, reason, closed)
    ledger.record(
        decision, guard.clock(), agent=session.guard.definition.name, tenant=session.tenant
    )
    return decision
