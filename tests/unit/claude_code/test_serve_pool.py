"""``serve_pool``: the deciding threads grow past busy ones, set hung ones aside within a bound,
and a session whose event is hung fails its next events at once. Causality, not timing: each
blocking call waits on an Event the test sets."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from guardrails.claude_code.serve_pool import Pool, PoolFull, SessionBusy, SessionGate

WAIT = 10.0  # a generous bound for what must happen "at once"


class Blocker:
    """A call that says when it started and returns when released."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()

    def __call__(self, value: Any = None) -> Any:
        self.started.set()
        assert self.release.wait(WAIT * 3)
        return value


@pytest.fixture
def blockers() -> Iterator[Callable[[], Blocker]]:
    made: list[Blocker] = []

    def make() -> Blocker:
        made.append(Blocker())
        return made[-1]

    yield make
    for b in made:  # never leave a thread behind
        b.release.set()


def eventually(check: Callable[[], bool]) -> bool:
    end = time.monotonic() + WAIT
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.01)
    return check()


def test_a_call_never_waits_for_a_thread_another_call_holds(blockers: Any) -> None:
    pool = Pool(1, max_workers=4, max_abandoned=4)
    held = [blockers() for _ in range(3)]
    jobs = [pool.submit(b, i) for i, b in enumerate(held)]
    assert all(b.started.wait(WAIT) for b in held)  # three at once on a pool of one
    assert pool.stats()["threads"] == 3
    for b in held:
        b.release.set()
    assert [j.future.result(WAIT) for j in jobs] == [0, 1, 2]
    pool.close()


def test_busy_threads_stay_within_max_workers(blockers: Any) -> None:
    pool = Pool(1, max_workers=2, max_abandoned=4)
    first, second, third = blockers(), blockers(), blockers()
    jobs = [pool.submit(first), pool.submit(second)]
    assert first.started.wait(WAIT) and second.started.wait(WAIT)
    waiting = pool.submit(third)
    assert waiting.state == "queued"  # both threads are inside their calls
    first.release.set()
    assert third.started.wait(WAIT)  # the freed thread takes it
    second.release.set()
    third.release.set()
    for job in (*jobs, waiting):
        job.future.result(WAIT)
    assert pool.stats()["threads"] <= 2
    pool.close()


def test_a_hung_call_given_up_frees_its_place_and_its_thread_comes_back(blockers: Any) -> None:
    pool = Pool(1, max_workers=1, max_abandoned=2)
    hung, fresh = blockers(), blockers()
    job = pool.submit(hung)
    assert hung.started.wait(WAIT)
    assert pool.abandon(job) == "abandoned"
    assert pool.abandon(job) == "abandoned"  # counted once
    assert pool.stats()["abandoned"] == 1
    later = pool.submit(fresh)  # max_workers=1, but the hung one no longer counts
    assert fresh.started.wait(WAIT)
    fresh.release.set()
    later.future.result(WAIT)
    hung.release.set()
    job.future.result(WAIT)
    assert eventually(lambda: pool.stats()["abandoned"] == 0)
    assert eventually(lambda: pool.stats()["threads"] == 1)  # no room to rejoin: it ended
    pool.close()


def test_past_the_abandoned_cap_a_call_that_finds_no_thread_fails_at_once(blockers: Any) -> None:
    pool = Pool(1, max_workers=1, max_abandoned=1)
    hung = [blockers(), blockers()]
    for b in hung:
        job = pool.submit(b)
        assert b.started.wait(WAIT)
        assert pool.abandon(job) == "abandoned"
    with pytest.raises(PoolFull, match="2 hooks are still running past their deadline"):
        pool.submit(lambda: None)
    assert pool.stats()["threads"] == 2  # bounded: nothing more was started
    hung[0].release.set()
    assert eventually(lambda: pool.stats()["abandoned"] == 1)
    assert pool.submit(lambda: "ok").future.result(WAIT) == "ok"  # the returned thread serves
    pool.close()


def test_a_call_given_up_before_it_started_never_runs(blockers: Any) -> None:
    pool = Pool(1, max_workers=1, max_abandoned=0)
    busy = blockers()
    ran: list[int] = []
    first = pool.submit(busy)
    assert busy.started.wait(WAIT)
    queued = pool.submit(ran.append, 1)
    assert pool.abandon(queued) == "cancelled"
    busy.release.set()
    first.future.result(WAIT)
    assert pool.submit(ran.append, 2).future.result(WAIT) is None
    assert ran == [2]
    pool.close()


@pytest.mark.parametrize("exc", [SystemExit(0), KeyboardInterrupt(), ValueError("x")])
def test_a_call_that_raises_anything_is_its_result_and_the_thread_goes_on(
    exc: BaseException,
) -> None:
    pool = Pool(1, max_workers=1, max_abandoned=0)

    def boom() -> None:
        raise exc

    with pytest.raises(type(exc)):
        pool.submit(boom).future.result(WAIT)
    assert pool.submit(lambda: "still here").future.result(WAIT) == "still here"
    pool.close()


def test_close_ends_the_idle_threads() -> None:
    pool = Pool(3, max_workers=3, max_abandoned=0)
    assert pool.stats()["threads"] == 3
    pool.close()
    assert eventually(lambda: pool.stats()["threads"] == 0)
    with pytest.raises(PoolFull):
        pool.submit(lambda: None)


@pytest.mark.parametrize(
    ("size", "max_workers", "max_abandoned"), [(0, 1, 0), (2, 1, 0), (1, 1, -1)]
)
def test_a_pool_that_cannot_work_is_refused(size: int, max_workers: int, max_abandoned: int):
    with pytest.raises(ValueError):
        Pool(size, max_workers=max_workers, max_abandoned=max_abandoned)


# --- the session's turn ---------------------------------------------------------------------


def far() -> float:
    return time.monotonic() + 60


def test_a_session_decides_one_event_at_a_time_and_sessions_side_by_side() -> None:
    gate = SessionGate()
    turn = gate.take("a", far())
    other = gate.take("b", far())  # another session is not held up
    got: list[Any] = []
    waiter = threading.Thread(target=lambda: got.append(gate.take("a", far())))
    waiter.start()
    waiter.join(0.2)
    assert waiter.is_alive() and got == []  # waits for a's turn
    gate.give_back(turn)
    waiter.join(WAIT)
    assert len(got) == 1 and got[0] is not turn
    gate.give_back(got[0])
    gate.give_back(other)
    assert gate.stuck_sessions() == 0 and gate._slots == {}


def test_a_stuck_session_refuses_its_next_events_at_once_even_one_already_waiting() -> None:
    gate = SessionGate()
    turn = gate.take("s", far())
    outcome: list[BaseException] = []

    def wait_for_turn() -> None:
        try:
            gate.take("s", far())
        except SessionBusy as exc:
            outcome.append(exc)

    waiter = threading.Thread(target=wait_for_turn)
    waiter.start()
    gate.stick(turn)
    waiter.join(WAIT)  # woken: it does not wait out its minute
    assert not waiter.is_alive() and [e.stuck for e in outcome] == [True]  # type: ignore[attr-defined]
    with pytest.raises(SessionBusy) as again:
        gate.take("s", far())
    assert again.value.stuck and gate.stuck_sessions() == 1
    gate.give_back(turn)  # the hung event ended at last
    fresh = gate.take("s", far())
    gate.stick(turn)  # a stale mark from the old event changes nothing
    assert gate.stuck_sessions() == 0
    gate.give_back(fresh)


def test_no_turn_by_the_deadline_is_busy_not_stuck() -> None:
    gate = SessionGate()
    turn = gate.take("s", far())
    with pytest.raises(SessionBusy) as info:
        gate.take("s", time.monotonic() + 0.05)
    assert not info.value.stuck
    gate.give_back(turn)
    gate.give_back(turn)  # once only: a second give-back is a no-op
    assert gate._slots == {}
