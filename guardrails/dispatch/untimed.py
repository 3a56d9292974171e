"""A chain timed once: the sync driver's path when nothing records each hook's time.

Reading the clock costs about as much as calling a no-op hook, so a chain that has
answered in time ``QUIET_RUNS`` times in a row runs with one reading before and one after
(no ledger: a ledger records each hook's duration, so its events stay timed per hook).
A chain that ran within its shortest limit (the smallest timeout among its hooks, and the
event budget) had no late hook and no hook starting past the budget: the outcome is the
timed loop's. Past that limit the clock cannot say which hook was late, so each hook that
*could* have been (its timeout, or the budget, is under the chain's time) is counted late
and follows ``on_failure``: what the guard cannot see counts as the worst case, never as
in time. The chain is then timed per hook again. docs/design.md §5 ("timing").
"""

from __future__ import annotations

import time

from ..results import Decision, allowed
from .merge import Merge, _refusal

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from ..events import Event
    from .chains import Binding, Plan
    from .guard import Guard
    from .session import Session

    #: the Merge to go on with, the next chain position, an interruption to re-raise, and
    #: when the hooks began (the event budget counts from then)
    Resume = tuple[Merge, int, BaseException | None, float]

__all__ = ["resume", "run_untimed"]

_perf = time.perf_counter


def run_untimed(guard: Guard, event: Event, session: Session, plan: Plan) -> Decision | Resume:
    """Run the hooks of ``plan`` that ``event``'s input selects with one clock reading
    (a chain whose hooks all run has this loop inlined in ``loop.emit_sync``). Every
    hook said nothing within the chain's limit: the Decision. Otherwise the Merge the timed
    loop goes on with."""
    bindings = plan.bindings
    positions = plan.positions(event)
    ctxs = session._ctx
    j = -1
    r: Any = None
    t0 = _perf()
    try:
        for j in positions:
            b = bindings[j]
            r = b.fn(event, ctxs[b.index] or session.ctx(b))
            if r is not None:
                break
        else:
            elapsed = _perf() - t0
            if elapsed < plan.limit:
                plan.quiet += 1
                ran = tuple(bindings[k] for k in positions)
                raw = [(ran, "noop", elapsed, None, 0)] if ran else []
                return allowed(event, raw)
            j = len(bindings)
    except BaseException as exc:
        done = [k for k in positions if k < j]
        return resume(guard, event, session, plan, done, j, None, exc, t0)
    done = [k for k in positions if k < j]
    return resume(guard, event, session, plan, done, j, r, None, t0)


def resume(
    guard: Guard,
    event: Event,
    session: Session,
    plan: Plan,
    done: Sequence[int],
    j: int,
    r: Any,
    exc: BaseException | None,
    began: float,
) -> Resume:
    """The Merge of a chain timed once that stopped being quiet at position ``j`` (a hook
    answered, raised or was interrupted there; ``j`` past the end: it ran long), its
    earlier hooks (``done``, each said nothing) judged by the chain's time."""
    elapsed = _perf() - began
    m = Merge(event, session, guard.definition, plan)
    budget = m.event_budget
    bindings = plan.bindings
    if elapsed < plan.limit:
        if done:
            m.d._raw.append((tuple(bindings[k] for k in done), "noop", elapsed, None, 0))
    else:
        plan.quiet = 0  # timed per hook again, until it is quiet again
        for k in done:
            _judge_silent(m, bindings[k], elapsed, budget)
    if j >= len(bindings):
        return m, j, None, began
    b = bindings[j]
    limit = 0.0 if m.stopped else min(b.timeout, budget)
    if exc is None:
        if limit == 0.0 and _refusal(r) is None:
            m.skip(b)  # it ran after the chain was over; nothing of it counts
        else:
            m.returned(b, r, elapsed, limit)
    elif isinstance(exc, (Exception, SystemExit)):  # a hook's exit() must not end the host
        m.raised(b, exc, elapsed)
    else:  # Ctrl-C, a cancelled task: refused and recorded, then it goes on
        m.interrupted(b, exc, elapsed)
        return m, j + 1, exc, began
    if elapsed >= plan.limit:
        plan.quiet = 0
    return m, j + 1, None, began


def _judge_silent(m: Merge, b: Binding, elapsed: float, budget: float) -> None:
    """A hook that said nothing in a chain that ran past its limit: late if it could have
    been (its timeout, or the event budget, is under the chain's time)."""
    if elapsed > b.timeout or elapsed >= budget:
        m.fail(
            b,
            "timeout",
            f"the chain took {elapsed:.3f}s, over its {b.timeout:g}s timeout or the "
            f"{budget:g}s event budget, and was timed once: counted late",
            elapsed,
        )
    else:
        m.d._raw.append((b, "noop", elapsed, None, 0))
