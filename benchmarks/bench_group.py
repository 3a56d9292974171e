"""Guarded calls in flight at once in one process: group commit against a lock per commit.

``concurrency`` (asyncio tasks) and the same with threads: N tasks (1, 8, 64), each
making guarded calls one after another in its own session (2 pre + 1 post no-op hooks,
the ``ledger_call`` definition) on one ``Ledger`` file (synchronous=NORMAL), for a fixed
number of calls in all; calls per second. Two columns, interleaved round by round:

* ``group commit``: the Ledger as shipped. Events that queue up behind a writer commit
  together in one transaction (``guardrails/ledger/sqlite_group.py``).
* ``one commit each``: the same Ledger with its lock swapped for one that writes every
  event in its own transaction (what it did before group commit): the floor to beat.

Each row is the median of ``ROUNDS`` rounds, with min-max, and the ratio of the two
columns per round (median, min-max).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import threading
import time
from typing import Any

from bench_ledger import TOOL, TOOL_INPUT, _guarded, _tool

from guardrails.ledger import Ledger

ROUNDS = 3
CALLS = 1200  # guarded calls per measurement, in all tasks together
TASKS = (1, 8, 64)


class _OneCommitEach:
    """A Ledger lock that writes every event alone, in its own transaction."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()

    def write(self, item: Any, one: Any, many: Any) -> Any:
        with self._lock:
            return one(item)


def _ledger(tmp: str, name: str, grouped: bool) -> Ledger:
    ledger = Ledger(os.path.join(tmp, name))
    if not grouped:
        ledger._lock = _OneCommitEach()  # type: ignore[assignment]
    return ledger


def _tasks_rate(ledger: Ledger, tasks: int) -> float:
    guard, _ = _guarded(ledger)
    per_task = CALLS // tasks

    async def worker(n: int) -> None:
        session = guard.session(f"task-{n}-{time.monotonic_ns()}")
        for _ in range(per_task):
            await session.run_tool(TOOL, TOOL_INPUT, _tool)

    async def main() -> float:
        t0 = time.perf_counter()
        await asyncio.gather(*(worker(n) for n in range(tasks)))
        return per_task * tasks / (time.perf_counter() - t0)

    return asyncio.run(main())


def _threads_rate(ledger: Ledger, threads: int) -> float:
    guard, _ = _guarded(ledger)
    per_thread = CALLS // threads
    start = threading.Barrier(threads + 1)

    def worker(n: int) -> None:
        session = guard.session(f"thread-{n}-{time.monotonic_ns()}").sync
        start.wait()
        for _ in range(per_thread):
            session.run_tool(TOOL, TOOL_INPUT, _tool)

    workers = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
    for w in workers:
        w.start()
    start.wait()
    t0 = time.perf_counter()
    for w in workers:
        w.join()
    return per_thread * threads / (time.perf_counter() - t0)


def _row(kind: str, n: int, grouped: list[float], single: list[float]) -> str:
    ratios = [g / s for g, s in zip(grouped, single, strict=True)]
    return (
        f"{kind:<8} {n:>3}  {statistics.median(grouped):>9,.0f} ({min(grouped):,.0f}-"
        f"{max(grouped):,.0f})  {statistics.median(single):>9,.0f} ({min(single):,.0f}-"
        f"{max(single):,.0f})  {statistics.median(ratios):.2f}x ({min(ratios):.2f}-"
        f"{max(ratios):.2f})"
    )


def group_commit() -> None:
    """Concurrent guarded calls in one process: group commit vs one commit per event."""
    print((__doc__ or "").split("\n\n", 1)[1].rstrip())
    print()
    print(f"{'':<8} {'N':>3}  {'group commit calls/s':>28}  {'one commit each':>28}  ratio")
    with tempfile.TemporaryDirectory(prefix="hookrails-bench-group-") as tmp:
        for kind, rate in (("tasks", _tasks_rate), ("threads", _threads_rate)):
            for n in TASKS:
                grouped: list[float] = []
                single: list[float] = []
                for r in range(ROUNDS):
                    for grouped_now in (True, False) if r % 2 == 0 else (False, True):
                        led = _ledger(tmp, f"{kind}-{n}-{r}-{grouped_now}.db", grouped_now)
                        try:
                            (grouped if grouped_now else single).append(rate(led, n))
                        finally:
                            led.close()
                print(_row(kind, n, grouped, single))
