"""Group commit: events queued behind a writer commit together, and none is lost."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, HookMatcher
from guardrails.ledger import Ledger
from guardrails.ledger.sqlite_group import WriterLock
from tests._db import rows, value


def _wait_for(check: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def _queued_behind_a_holder(lock: WriterLock, n: int, many: Any) -> tuple[list[Any], Any]:
    """``n`` writers queued while another holds the lock; the holder released; their results."""
    hold = threading.Event()
    results: list[Any] = [None] * n

    def first(item: Any) -> Any:
        hold.wait(10)
        return ("one", item)

    holder = threading.Thread(target=lambda: lock.write("first", first, many))
    holder.start()
    _wait_for(lock.locked)

    def writer(i: int) -> None:
        try:
            results[i] = lock.write(i, lambda item: ("one", item), many)
        except BaseException as exc:  # the test looks at it
            results[i] = exc

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    _wait_for(lambda: len(lock._queue) == n)
    hold.set()
    for t in [holder, *threads]:
        t.join(10)
    return results, holder


def test_writers_queued_behind_a_holder_commit_in_one_batch_and_each_gets_its_result() -> None:
    lock = WriterLock()
    batches: list[list[Any]] = []

    def many(items: list[Any]) -> list[Any]:
        batches.append(items)
        return [("many", item) for item in items]

    results, _ = _queued_behind_a_holder(lock, 8, many)
    assert batches == [list(range(8))] or sorted(batches[0]) == list(range(8))
    assert len(batches) == 1
    assert results == [("many", i) for i in range(8)]
    assert not lock.locked() and lock._queue == []


def test_a_lone_writer_takes_the_free_lock_and_writes_alone() -> None:
    lock = WriterLock()
    assert lock.write("x", lambda item: ("one", item), lambda items: pytest.fail()) == ("one", "x")
    assert not lock.locked()


def test_a_batch_that_fails_sends_every_other_writer_to_write_alone() -> None:
    lock = WriterLock()

    def many(items: list[Any]) -> list[Any]:
        raise KeyboardInterrupt  # the leader is interrupted mid-batch

    results, _ = _queued_behind_a_holder(lock, 5, many)
    interrupted = [r for r in results if isinstance(r, KeyboardInterrupt)]
    alone = [r for r in results if isinstance(r, tuple)]
    assert len(interrupted) == 1  # the leader's own call raises
    assert sorted(alone) == sorted(("one", i) for i in range(5) if ("one", i) in alone)
    assert len(alone) == 4  # every other one was written on its own
    assert not lock.locked()


def test_a_with_holder_hands_the_lock_to_the_queue_on_release() -> None:
    lock = WriterLock()
    done: list[Any] = []
    with lock:
        t = threading.Thread(target=lambda: done.append(lock.write(1, lambda i: i, lambda i: i)))
        t.start()
        _wait_for(lambda: len(lock._queue) == 1)
        assert done == []
    t.join(10)
    assert done == [[1]] or done == [1]
    assert not lock.locked()


# --- on a Ledger -----------------------------------------------------------------------------


def _noop(event: Any, ctx: Any) -> None:
    return None


def _guard(ledger: Ledger | None) -> Guard:
    definition = AgentDefinition(
        name="group",
        hooks={
            "PreToolUse": [HookMatcher(matcher="*", hooks=[_noop])],
            "PostToolUse": [HookMatcher(matcher="*", hooks=[_noop])],
        },
    )
    return Guard(definition, ledger=ledger if ledger is not None else False)


@pytest.mark.parametrize("durable", [False, True])
def test_threads_calling_at_once_lose_no_record_and_share_commits(
    ledger_path: str, durable: bool
) -> None:
    threads, calls = 8, 40
    commits: list[str] = []
    with Ledger(ledger_path, durable=durable) as ledger:
        guard = _guard(ledger)
        conn = ledger._conn
        assert conn is not None
        conn.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
        start = threading.Barrier(threads)

        def work(n: int) -> None:
            session = guard.session(f"s{n}")
            start.wait()
            for i in range(calls):
                run = session.sync.run_tool("echo", {"text": f"{n}-{i}"}, lambda text: text)
                assert run.ok

        workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
        for t in workers:
            t.start()
        for t in workers:
            t.join(60)
        conn.set_trace_callback(None)
    events = threads * calls * 2
    assert value(ledger_path, "SELECT count(*) FROM tool_calls WHERE status = 'ok'") == (
        threads * calls
    )
    assert value(ledger_path, "SELECT count(*) FROM hook_runs") == events
    sql = "SELECT tool_call_arguments ->> 'text' AS t FROM tool_calls"
    texts = {r["t"] for r in rows(ledger_path, sql)}
    assert texts == {f"{n}-{i}" for n in range(threads) for i in range(calls)}
    assert len(commits) <= events  # never more commits than events (fewer when batched)


def test_a_batch_with_a_value_sqlite_refuses_commits_each_event_on_its_own(
    ledger_path: str,
) -> None:
    """One event of the batch holds a lone surrogate (SQLite refuses to bind it): the batch
    is rolled back and every event is written again alone; that one is escaped."""
    session = _guard(None).session("s")  # decisions made, not recorded
    with Ledger(ledger_path) as ledger:
        texts = ("a", "bad\udc80", "c")
        pre = [
            session.sync.pre_tool_use("echo", {"text": t}, tool_use_id=f"toolu_{i}")
            for i, t in enumerate(texts)
        ]
        items = [(ledger._rows.ops(d, time.time(), agent="group", tenant=None), None) for d in pre]
        with ledger._lock:
            assert ledger._write_many(items) == [True, True, True]
    got = [r["a"] for r in rows(ledger_path, "SELECT tool_call_arguments AS a FROM tool_calls")]
    assert got == ['{"text": "a"}', '{"text": "bad\\udc80"}', '{"text": "c"}']


def test_a_batch_that_waited_out_the_lock_is_spooled_without_waiting_again(
    ledger_path: str,
) -> None:
    """Another connection holds the write lock past busy_timeout: every event of the batch
    is spooled (none would get the lock sooner), not written again one by one, each waiting
    its own busy_timeout; recover imports them all."""
    import sqlite3

    session = _guard(None).session("s")
    with Ledger(ledger_path, busy_timeout=0.2) as ledger:
        pre = [
            session.sync.pre_tool_use("echo", {"text": t}, tool_use_id=f"toolu_{t}")
            for t in ("a", "b", "c")
        ]
        items = [(ledger._rows.ops(d, time.time(), agent="group", tenant=None), None) for d in pre]
        alone: list[Any] = []
        ledger._write_one = lambda item: alone.append(item) or True  # type: ignore[method-assign]
        holder = sqlite3.connect(ledger_path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            with ledger._lock:
                assert ledger._write_many(items) == [False, False, False]
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert alone == [] and ledger.degraded is not None
        del ledger._write_one
        report = ledger.recover()
    assert report.imported == 3
    assert value(ledger_path, "SELECT count(*) FROM tool_calls") == 3


class _PausingLock:
    """A WriterLock's lock whose second non-blocking try by thread ``W2`` waits for ``go``:
    the window in which a leader takes W2's item into its batch and frees the lock."""

    def __init__(self) -> None:
        from _thread import allocate_lock

        self.real = allocate_lock()
        self.go, self.at = threading.Event(), threading.Event()
        self.tries = 0

    def acquire(self, blocking: bool = True) -> bool:
        if threading.current_thread().name == "W2" and not blocking:
            self.tries += 1
            if self.tries == 2:
                self.at.set()
                assert self.go.wait(10)
        return bool(self.real.acquire(blocking))

    def release(self) -> None:
        self.real.release()

    def locked(self) -> bool:
        return self.real.locked()


@pytest.mark.parametrize("batch_fails", [False, True])
def test_a_writer_whose_item_a_leader_took_neither_leads_an_empty_batch_nor_loses_it(
    batch_fails: bool,
) -> None:
    lock = WriterLock()
    paused = _PausingLock()
    lock._lock = paused  # type: ignore[assignment]
    written: list[tuple[str, str]] = []
    batches: list[list[str]] = []

    def one(item: str) -> bool:
        written.append(("alone", item))
        return True

    def many(items: list[str]) -> list[bool]:
        batches.append(list(items))
        if batch_fails:
            raise RuntimeError("the batch failed")
        written.extend(("batch", i) for i in items)
        return [True] * len(items)

    results: dict[str, Any] = {}

    def writer(item: str) -> None:
        try:
            results[item] = lock.write(item, one, many)
        except RuntimeError as exc:
            results[item] = str(exc)

    paused.real.acquire()  # a holder: both writers queue
    w1 = threading.Thread(target=writer, args=("item1",), name="W1")
    w1.start()
    _wait_for(lambda: lock._queue)
    w2 = threading.Thread(target=writer, args=("item2",), name="W2")
    w2.start()
    assert paused.at.wait(10)  # W2 queued, about to try the lock again
    lock.release()  # handed to W1, which leads the batch [item1, item2] and frees the lock
    w1.join(10)
    paused.go.set()
    w2.join(10)
    assert batches == [["item1", "item2"]]  # no empty batch (an empty transaction) after it
    if batch_fails:
        assert results == {"item1": "the batch failed", "item2": True}
        assert written == [("alone", "item2")]  # never lost: written on its own
    else:
        assert results == {"item1": True, "item2": True}
        assert written == [("batch", "item1"), ("batch", "item2")]
