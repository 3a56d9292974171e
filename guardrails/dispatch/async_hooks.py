"""The async driver's run of a chain: async hooks awaited under their limit, and each
stretch of sync hooks in ONE worker thread instead of a thread handoff per hook.

A sync hook runs off the event loop so that its timeout holds: the loop stops waiting at
the limit and the chain goes on, whatever the hook does. A handoff (a future, a wake of
the worker, a wake of the loop, ``wait_for``) costs ~0.1 ms, so three no-op sync hooks
cost ~0.4 ms an event while the sync driver calls them in ~2 us. Here a thread runs the
stretch of consecutive sync hooks one after another and stops at the first that answers
anything but ``None`` (the loop side judges that answer, which may rewrite the input or
stop the chain, and starts the rest anew). It publishes which hook runs now and since
when (:class:`_Run`), so the loop waits for each hook exactly its own limit: a hook past
it is judged a timeout at that moment, the thread is abandoned (it runs nothing more; a
late answer is dropped), and the chain goes on in a new stretch. Every answer is judged
on the loop side, in chain order, by the same calls the sync driver makes.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time

from ..errors import HookFailure, describe
from .loop import in_thread

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Awaitable, Sequence
    from typing import Any, Protocol

    from ..events import Event
    from .chains import Binding
    from .merge import Merge
    from .session import Session

    class _TailFn(Protocol):
        taken: bool

        def __call__(self) -> None: ...


__all__ = ["run"]

_perf = time.perf_counter


class _Run:
    """What a stretch's thread did so far: each finished hook's ``(answer, exception,
    seconds)``, and the hook running now (its position in the stretch, and its start)."""

    __slots__ = ("abandoned", "at", "current", "done", "lock", "tail")

    def __init__(self) -> None:
        self.done: list[tuple[Any, BaseException | None, float]] = []
        self.current = -1  # nothing started yet
        self.at = 0.0
        self.abandoned = False
        self.lock = threading.Lock()
        #: the thread went on to the event's end (no limit from here: a record may wait)
        self.tail = False


def _stretch(
    run: _Run,
    merge: Merge,
    items: Sequence[tuple[Binding, Any]],
    event: Event,
    deadline: float,
    tail: _TailFn | None,
) -> None:
    """In the worker thread: the hooks of ``items`` in turn, until one answers anything but
    ``None``, raises or runs past its limit, the event's budget is spent, or the loop gave
    up on this thread. Then, when all answered nothing in time, ``tail``: their runs are
    judged here (the loop waits and touches nothing) and the event decided and recorded."""
    for k, (b, ctx) in enumerate(items):
        t0 = _perf()
        with run.lock:
            if run.abandoned or t0 >= deadline:
                return
            run.current, run.at = k, t0
        exc: BaseException | None = None
        try:
            r = b.fn(event, ctx)
        except BaseException as e:  # judged on the loop side, as the sync driver would
            r, exc = None, e
        seconds = _perf() - t0
        with run.lock:
            if run.abandoned:  # judged a timeout already: this answer came too late
                return
            run.done.append((r, exc, seconds))
        if exc is not None or r is not None or seconds > b.timeout:
            return  # an answer, or a late one, may stop the chain: the loop judges it first
    if tail is None:
        return
    with run.lock:
        if run.abandoned:
            return
        run.tail = tail.taken = True
    _judge(merge, items, run.done)
    tail()


async def _sync_stretch(
    merge: Merge,
    items: Sequence[tuple[Binding, Any]],
    event: Event,
    deadline: float,
    tail: _TailFn | None,
    nxt: Binding | None,
) -> int:
    """Run ``items`` in one thread and judge each answer into ``merge``; how many hooks
    were judged (fewer than ``items`` when one answered, or the budget ran out). ``nxt``:
    the chain's hook after the stretch, refused if a cancel lands once the stretch ended."""
    run = _Run()
    # the shortest limit of the hooks after each: nothing wakes the loop when the thread
    # starts the next hook, so it looks again within that (a later hook's deadline is
    # never sooner), not only at the deadline of the hook it saw running
    after = [math.inf] * len(items)
    for j in range(len(items) - 2, -1, -1):
        after[j] = min(after[j + 1], items[j + 1][0].timeout)
    began = _perf()  # the handoff counts toward the first hook's limit
    future = asyncio.ensure_future(in_thread(_stretch, run, merge, items, event, deadline, tail))
    stuck: tuple[int, float] | None = None  # (position, its start) of a hook past its limit
    try:
        while not future.done():
            with run.lock:
                k, started = (run.current, run.at) if run.current >= 0 else (0, began)
                ending = run.tail
            if ending:  # the hooks are done and judged: the event's end waits for no limit
                await future
                break
            wait = started + items[k][0].timeout - _perf()
            if wait > 0:
                await asyncio.wait((future,), timeout=min(wait, after[k]))
                continue
            with run.lock:  # still that hook, still no answer: the chain goes on without it
                if run.current in (k, -1) and len(run.done) == k and not future.done():
                    run.abandoned = True
                    stuck = (k, started)
                    break
            # it answered just now: let the thread go on, and the loop see its future done
            await asyncio.wait((future,), timeout=0.001)
    except BaseException as exc:  # cancelled: nothing more runs, and the chain is refused
        with run.lock:
            run.abandoned = True
            k, started = (run.current, run.at) if run.current >= 0 else (0, began)
            done = list(run.done)
            if run.tail:  # the thread judged and decides the event: it records it too
                raise
        _judge(merge, items, done)
        n = len(done)
        if n < len(items):  # the hook running now, or the next one that will never run
            merge.interrupted(items[n][0], exc, _perf() - started if n == k else 0.0)
        elif nxt is not None and not merge.stopped:  # the stretch ended, the chain had not
            merge.interrupted(nxt, exc, 0.0)
        raise
    if stuck is None and (failed := future.exception()) is not None:
        raise failed  # the handoff failed (no thread could start), or the tail did
    if run.tail:
        return len(items)  # judged and decided in the thread
    _judge(merge, items, run.done)
    judged = len(run.done)
    if stuck is not None:
        b = items[stuck[0]][0]
        merge.fail(b, "timeout", f"no answer within {b.timeout:g}s", _perf() - stuck[1])
        judged += 1
    return judged


def _judge(
    merge: Merge,
    items: Sequence[tuple[Binding, Any]],
    done: Sequence[tuple[Any, BaseException | None, float]],
) -> None:
    """The finished hooks' answers, judged in chain order as the sync driver judges them."""
    for (b, _), (r, exc, seconds) in zip(items, done, strict=False):
        if exc is None:
            merge.returned(b, r, seconds, b.timeout)
        elif isinstance(exc, (Exception, SystemExit)):
            merge.raised(b, exc, seconds)
        else:  # a BaseException a worker thread saw: refused, and it goes on up
            merge.interrupted(b, exc, seconds)
            raise exc


async def run(merge: Merge, session: Session, tail: _TailFn | None = None) -> None:
    """Each hook of ``merge``'s chain under its limit, in chain order (see the module).
    ``tail``: the event's end, run in the thread of the chain's last sync hooks when they
    all answered nothing in time (``tail.taken``); else the caller ends the event."""
    deadline = _perf() + merge.event_budget
    plan = merge.plan
    bindings = plan.bindings
    ev = merge.event
    positions = list(plan.positions(ev))
    k = 0
    while k < len(positions):
        b = bindings[positions[k]]
        if merge.stopped:
            merge.skip(b)
            k += 1
            continue
        t0 = _perf()
        if t0 >= deadline:
            merge.spent(b)
            k += 1
            continue
        if b.is_async:
            await _async_hook(merge, b, session.ctx(b), ev, t0)
            k += 1
        else:
            end = k + 1
            while end < len(positions) and not bindings[positions[end]].is_async:
                end += 1
            items = [(bindings[p], session.ctx(bindings[p])) for p in positions[k:end]]
            last = tail if end == len(positions) else None
            nxt = bindings[positions[end]] if end < len(positions) else None
            k += await _sync_stretch(merge, items, ev, deadline, last, nxt)  # then a new one
        if merge.event is not ev:  # rewritten: the rest judge the new input
            ev = merge.event
            positions = list(plan.positions(ev, positions[k - 1] + 1))
            k = 0


async def _async_hook(merge: Merge, b: Binding, ctx: Any, ev: Event, t0: float) -> None:
    limit = b.timeout
    try:
        r = await asyncio.wait_for(_contained(b.fn(ev, ctx)), limit)
    except TimeoutError:
        merge.fail(b, "timeout", f"no answer within {limit:g}s", _perf() - t0)
    except (Exception, SystemExit) as exc:
        merge.raised(b, exc, _perf() - t0)
    except BaseException as exc:  # cancelled, Ctrl-C: refused and recorded, then on
        merge.interrupted(b, exc, _perf() - t0)
        raise
    else:
        merge.returned(b, r, _perf() - t0, limit)


async def _contained(awaitable: Awaitable[Any]) -> Any:
    """Await an async hook; its ``exit()`` becomes a hook failure before asyncio sees it
    (a task re-raises SystemExit through the event loop, ending the host)."""
    try:
        return await awaitable
    except SystemExit as exc:
        raise HookFailure("error", describe(exc)) from None
