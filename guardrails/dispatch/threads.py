"""Threads for the async driver: a sync hook chain and a record run off the event loop.

:func:`in_thread` hands a call to an idle daemon thread kept from an earlier call, else to a
new one: never a queue behind a busy thread (a timeout counts from the start of the call,
and a hung hook keeps its thread while the next call takes another), and no thread start
per call (``threading.Thread.start`` waits for the new thread to report in).
"""

from __future__ import annotations

import _thread
import contextvars
import os

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from typing import Any, ClassVar

__all__ = ["in_thread"]


def in_thread(fn: Callable[..., Any], *args: Any) -> Awaitable[Any]:
    """Run ``fn`` in a thread of its own: an idle one kept from an earlier call, else a new
    one. Never a shared pool to queue behind (a timeout counts from the start of the call;
    a hung hook keeps its thread and the next call takes another), daemon threads (a hung
    hook cannot hold up interpreter exit), and no thread start per call on the hot path."""
    import asyncio
    import concurrent.futures

    future: concurrent.futures.Future[Any] = concurrent.futures.Future()
    context = contextvars.copy_context()  # the hook knows which session turns it holds

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(context.run(fn, *args))
        except BaseException as exc:
            future.set_exception(exc)

    _Worker.take().give(run)
    return asyncio.wrap_future(future)


class _Worker:
    """A daemon thread that runs one job at a time and then waits, idle, for the next
    (:func:`in_thread`); it ends after ``IDLE_SECONDS`` without one."""

    IDLE_SECONDS = 30.0
    _idle: ClassVar[list[_Worker]] = []
    _idle_lock = _thread.allocate_lock()
    __slots__ = ("_go", "_job")

    def __init__(self) -> None:
        self._job: Callable[[], None] | None = None
        self._go = _thread.allocate_lock()
        self._go.acquire()
        _thread.start_new_thread(self._loop, ())

    @classmethod
    def take(cls) -> _Worker:
        with cls._idle_lock:
            if cls._idle:
                return cls._idle.pop()
        return cls()

    def give(self, job: Callable[[], None]) -> None:
        self._job = job
        self._go.release()

    def _loop(self) -> None:
        while True:
            if not self._go.acquire(timeout=self.IDLE_SECONDS):
                with self._idle_lock:
                    if self in self._idle:  # nobody took it meanwhile: end
                        self._idle.remove(self)
                        return
                self._go.acquire()  # taken just now: its job is on the way
            job, self._job = self._job, None
            if job is not None:
                job()
            with self._idle_lock:
                self._idle.append(self)

    @classmethod
    def forget(cls) -> None:
        """In a forked child: the parent's idle threads are not there."""
        cls._idle = []
        cls._idle_lock = _thread.allocate_lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_Worker.forget)
