"""Settling an ``ask``: the Guard's approver answers, outside the session's turn.

An approver may wait on a human, so siblings of the asking call go on
meanwhile. Whatever the approver does (answers nonsense, raises, never
answers within ``approval_timeout``) ends in a denial that says why.
"""

from __future__ import annotations

import time

from ..definition.hook_refs import is_async_callable
from ..errors import describe
from ..results import HookRun

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

    from ..approvers import ApprovalRequest
    from ..results import Decision
    from .guard import Guard
    from .session import Session

__all__ = ["approve", "approve_sync"]

_perf = time.perf_counter


def approve_sync(guard: Guard, d: Decision, session: Session) -> None:
    """Ask the approver on a daemon thread, waiting at most ``approval_timeout``."""
    if d.event.event_name == "PermissionRequest" and guard._dialog_elsewhere:
        return  # the host's can_use_tool puts the same ask to the approver
    req, key = _cached(d, session)
    if req is None:
        return
    import concurrent.futures
    import threading

    t0 = _perf()
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def ask() -> None:
        try:
            future.set_result(call_approver(guard.approver, req))
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=ask, daemon=True, name="hookrails-approver").start()
    try:
        answer, error = future.result(timeout=guard.approval_timeout), None
    except concurrent.futures.TimeoutError:
        answer, error = "deny", f"no answer within {guard.approval_timeout:g}s"
    except Exception as exc:
        answer, error = "deny", describe(exc)
    _settle(d, session, key, answer, error, _perf() - t0)


async def approve(guard: Guard, d: Decision, session: Session) -> None:
    """Ask the approver: an async one on this loop (it may await the app's events), a sync
    one off it."""
    import asyncio

    from .threads import in_thread

    if d.event.event_name == "PermissionRequest" and guard._dialog_elsewhere:
        return  # the host's can_use_tool puts the same ask to the approver
    req, key = _cached(d, session)
    if req is None:
        return
    t0 = _perf()
    try:
        if is_async_callable(guard.approver):
            pending = guard.approver(req)  # type: ignore[misc]
        else:
            pending = in_thread(call_approver, guard.approver, req)
        answer = await asyncio.wait_for(pending, guard.approval_timeout)
        error = None
    except TimeoutError:
        answer, error = "deny", f"no answer within {guard.approval_timeout:g}s"
    except Exception as exc:
        answer, error = "deny", describe(exc)
    _settle(d, session, key, answer, error, _perf() - t0)


def call_approver(approver: Any, req: Any) -> Any:
    """The approver's answer; an awaitable one is run to completion on its own loop."""
    answer = approver(req)
    if hasattr(answer, "__await__"):
        import asyncio

        async def wait() -> Any:
            return await answer

        return asyncio.run(wait())
    return answer


def _request(d: Decision, session: Session) -> tuple[ApprovalRequest, tuple[Any, ...]]:
    from ..approvers import ApprovalRequest

    askers = tuple(sorted({r.hook for r in d.runs if r.outcome == "ask"}))
    ev = d.event
    name = ev.event_name
    extra: dict[str, Any] = {}
    if name == "PermissionRequest" and ev.permission_suggestions:
        extra["permission_suggestions"] = ev.permission_suggestions
    req = ApprovalRequest(
        tool_name=ev.tool_name,
        tool_input=d.tool_input or {},
        reason=d.reason or ("Claude Code asks for permission" if name != "PreToolUse" else ""),
        session_id=session.session_id,
        hooks=askers,
        extra=extra,
        event=name,
    )
    # an allow_always holds for the event it answered: Claude's own dialog for a tool is
    # not the ask of a hook about it
    return req, (ev.tool_name, askers) if name == "PreToolUse" else (name, ev.tool_name, askers)


def _cached(d: Decision, session: Session) -> tuple[ApprovalRequest | None, Any]:
    """The request to put to the approver, or ``None`` when an earlier allow_always covers
    it."""
    req, key = _request(d, session)
    if key in session.allow_always:
        d.decision, d.explicit = "allow", True
        d._raw.append(HookRun("approver", "ask", 0, "allow", 0.0, None))
        d.notes.append("allowed by an earlier allow_always")
        return None, key
    return req, key


def _settle(
    d: Decision, session: Session, key: Any, answer: Any, error: str | None, t: float
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
    d.explicit = True  # the approver answered (a PermissionRequest no hook decided, too)
    if outcome == "allow":
        d.decision = "allow"
    elif error:
        d.decision, d.reason = "deny", f"denied by the approver ({error})"
    else:
        d.decision = "deny"
        d.reason = f"denied by the approver: {d.reason}" if d.reason else "denied by the approver"
