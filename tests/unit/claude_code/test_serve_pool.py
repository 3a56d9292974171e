"""``serve_pool``: the connection threads grow past busy ones, the watchdog fires a run that
passed its deadline (and only then), and a session whose event is hung fails its next events at
once. Causality, not timing: each blocking call waits on an Event the test sets."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from guardrails.claude_code.serve_pool import Pool, PoolClosed, SessionBusy, SessionGate, Watchdog

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


def test_work_never_waits_for_a_thread_other_work_holds(blockers: Any) -> None:
    pool = Pool(1, max_threads=4)
    held = [blockers() for _ in range(3)]
    for b in held:
        pool.submit(b)
    assert all(b.started.wait(WAIT) for b in held)  # three at once on a pool of one
    assert pool.stats() == {"threads": 3, "busy": 3}
    for b in held:
        b.release.set()
    assert eventually(lambda: pool.stats()["busy"] == 0)
    pool.close()


def test_busy_threads_stay_within_max_threads_and_more_work_waits(blockers: Any) -> None:
    pool = Pool(1, max_threads=2)
    first, second, third = blockers(), blockers(), blockers()
    pool.submit(first)
    pool.submit(second)
    assert first.started.wait(WAIT) and second.started.wait(WAIT)
    pool.submit(third)
    assert not third.started.is_set() and pool.stats()["threads"] == 2
    first.release.set()
    assert third.started.wait(WAIT)  # the freed thread takes it
    second.release.set()
    third.release.set()
    assert eventually(lambda: pool.stats() == {"threads": 2, "busy": 0})
    pool.close()


@pytest.mark.parametrize("exc", [SystemExit(0), KeyboardInterrupt(), ValueError("x")])
def test_work_that_raises_anything_leaves_the_thread_serving(exc: BaseException) -> None:
    pool = Pool(1, max_threads=1)

    def boom() -> None:
        raise exc

    done = threading.Event()
    pool.submit(boom)
    pool.submit(done.set)
    assert done.wait(WAIT) and pool.stats()["threads"] == 1
    pool.close()


def test_close_ends_the_idle_threads_and_refuses_more_work() -> None:
    pool = Pool(3, max_threads=3)
    assert pool.stats()["threads"] == 3
    pool.close()
    assert eventually(lambda: pool.stats()["threads"] == 0)
    with pytest.raises(PoolClosed):
        pool.submit(lambda: None)


@pytest.mark.parametrize(("size", "max_threads"), [(0, 1), (2, 1)])
def test_a_pool_that_cannot_work_is_refused(size: int, max_threads: int) -> None:
    with pytest.raises(ValueError):
        Pool(size, max_threads=max_threads)


# --- the watchdog ---------------------------------------------------------------------------


@pytest.fixture
def watchdog() -> Iterator[Watchdog]:
    dog = Watchdog(floor=60)
    assert eventually(lambda: dog._wake_at != math.inf)  # its thread sleeps
    yield dog
    dog.close()


def test_a_run_that_ends_in_time_is_never_fired_nor_wakes_the_watchdog(watchdog: Any) -> None:
    fired: list[int] = []
    for i in range(100):  # due after the watchdog wakes anyway: no wake-up needed
        timer = watchdog.start(time.monotonic() + 120, lambda i=i: fired.append(i))
        assert watchdog.cancel(timer)
    assert watchdog.wakeups == 0 and fired == []
    assert watchdog._live == {}


def test_a_run_past_its_deadline_is_fired_once_on_a_thread_of_its_own(watchdog: Any) -> None:
    release = threading.Event()
    first, second = threading.Event(), threading.Event()
    threads: list[str] = []

    def stuck_fire() -> None:  # a fire that blocks (a slow record) holds up no other
        threads.append(threading.current_thread().name)
        first.set()
        release.wait(WAIT * 3)

    later = watchdog.start(time.monotonic() + 60, second.set)  # the watchdog sleeps to this
    soon = watchdog.start(time.monotonic() + 0.05, stuck_fire)  # due first: it is woken
    assert first.wait(WAIT) and watchdog.wakeups == 1
    assert threads == ["hookrails-serve-deadline"]
    assert not watchdog.cancel(soon)  # too late: it was fired
    again = watchdog.start(time.monotonic() + 0.05, second.set)
    assert second.wait(WAIT)  # fired while the first fire still blocks
    release.set()
    assert not watchdog.cancel(again) and watchdog.cancel(later)
    assert threads == ["hookrails-serve-deadline"]  # fired once


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


def test_a_thread_that_cannot_start_is_not_counted(
    blockers: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed thread start (a process's thread limit) fails that one submit; the next
    work is not left waiting for an idle thread that was never there."""
    pool = Pool(1, max_threads=4)
    held = blockers()
    pool.submit(held)  # the warm thread is busy from here on
    assert held.started.wait(WAIT)
    real_start = threading.Thread.start

    def fail(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", fail)
    with pytest.raises(RuntimeError):
        pool.submit(blockers())
    assert pool.stats() == {"threads": 1, "busy": 1}
    monkeypatch.setattr(threading.Thread, "start", real_start)
    nxt = blockers()
    pool.submit(nxt)
    assert nxt.started.wait(WAIT)
    pool.close()


def test_a_deadline_with_no_thread_to_be_had_is_answered_and_the_watchdog_lives_on(
    watchdog: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fire whose thread cannot start (a process limit) is answered inline; the watchdog
    goes on firing later runs (before, its thread died and no deadline was kept again)."""
    real_start = threading.Thread.start
    failed = threading.Event()

    def start_once_failing(self: threading.Thread) -> None:
        if self.name == "hookrails-serve-deadline" and not failed.is_set():
            failed.set()
            raise RuntimeError("can't start new thread")
        real_start(self)

    monkeypatch.setattr(threading.Thread, "start", start_once_failing)
    first, second = threading.Event(), threading.Event()
    watchdog.start(time.monotonic() + 0.02, first.set)
    assert first.wait(WAIT) and failed.is_set()  # answered from the watchdog's thread
    watchdog.start(time.monotonic() + 0.02, second.set)
    assert second.wait(WAIT)
