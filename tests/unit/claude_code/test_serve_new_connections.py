"""A new connection per call (what a client that pools nothing does): every call answered
and recorded, a bounded number of threads, a failure while admitting one connection that
costs only that connection, and socketserver's ``serve_forever``/``shutdown`` contract.
Each test runs with one thread accepting at a time (leader/follower, every system) and
with several (``EPOLLEXCLUSIVE``, Linux)."""

from __future__ import annotations

import http.client
import json
import os
import select
import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest

from guardrails import Guard, HookMatcher, Ledger
from guardrails.claude_code import serve_accept
from guardrails.claude_code.http_server import HOOK_ROUTE, HookServer, make_server
from guardrails.claude_code.serve_pool import Pool
from tests._db import rows
from tests.unit.claude_code.test_http_server import (
    Client,
    blocks,
    definition,
    deny_rm,
    eventually,
    pre,
    serving,
)

WAIT = 10.0


@pytest.fixture(params=[1, serve_accept.EXCLUSIVE_ACCEPTORS], ids=["one", "several"])
def acceptors(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """How many threads accept at once in the servers the test makes."""
    several = request.param > 1
    if several:
        _several_only()
    monkeypatch.setattr(serve_accept, "exclusive_wakeups", lambda: several)
    return int(request.param)


def _accepting(server: HookServer, count: int) -> bool:
    return eventually(lambda: server.thread_stats()["accepting"] == count)


def _guard(ledger_path: str, seen: list[str] | None = None) -> Guard:
    def where(event: Any, ctx: Any) -> None:
        if seen is not None:
            seen.append(threading.current_thread().name)

    hooks = [HookMatcher(matcher="Bash", hooks=[where, deny_rm])]
    return Guard(definition(PreToolUse=hooks), ledger=Ledger(ledger_path))


def _fresh(server: HookServer, payload: dict[str, Any]) -> dict[str, Any]:
    """One call on a new connection, closed after."""
    conn = http.client.HTTPConnection(server.host, server.port, timeout=WAIT)
    try:
        headers = {"Content-Type": "application/json"}
        conn.request("POST", HOOK_ROUTE, body=json.dumps(payload).encode(), headers=headers)
        response = conn.getresponse()
        assert response.status == 200
        answer: dict[str, Any] = json.loads(response.read())
        return answer
    finally:
        conn.close()


def test_a_new_connection_per_call_is_answered_and_recorded_every_time(
    ledger_path: str, acceptors: int
) -> None:
    seen: list[str] = []
    with serving(_guard(ledger_path, seen), workers=2) as server:
        assert server.acceptors == acceptors
        for n in range(40):
            answer = _fresh(server, pre("rm -rf build", call=f"toolu_{n}"))
            assert blocks(answer)
        threads = server.pool.stats()["threads"]
    assert len(rows(ledger_path, "SELECT id FROM tool_calls WHERE status = 'denied'")) == 40
    assert all(name.startswith("hookrails-serve-") for name in seen)  # pooled threads
    # no thread per call: the warm ones, those accepting, and a few still finishing a
    # connection (closing) when the next one was accepted
    assert threads <= 8 + acceptors


def test_concurrent_new_connections_are_all_served(ledger_path: str, acceptors: int) -> None:
    with serving(_guard(ledger_path), workers=2) as server:
        answers: list[dict[str, Any]] = []
        lock = threading.Lock()

        def call(n: int) -> None:
            answer = _fresh(server, pre("rm -rf build", session=f"s{n}", call=f"toolu_{n}"))
            with lock:
                answers.append(answer)

        threads = [threading.Thread(target=call, args=(n,)) for n in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT)
    assert len(answers) == 16 and all(blocks(a) for a in answers)


def test_with_every_accepting_thread_in_a_hook_that_hangs_new_connections_are_answered(
    ledger_path: str, acceptors: int
) -> None:
    """Whoever takes the last accepting place hands it on before serving: hooks that run
    long on every thread that was accepting never leave the server deaf."""
    release = threading.Event()
    entered: list[str] = []

    def hang(event: Any, ctx: Any) -> None:
        if event.session_id.startswith("hung"):
            entered.append(event.session_id)
            release.wait(WAIT)

    hooks = [HookMatcher(matcher="Bash", hooks=[hang, deny_rm])]
    guard = Guard(definition(PreToolUse=hooks), ledger=Ledger(ledger_path))
    with serving(guard, workers=1) as server:
        assert _accepting(server, acceptors)
        hung = [f"hung{n}" for n in range(acceptors)]
        callers = [
            threading.Thread(target=_fresh, args=(server, pre("ls", session=s, call=f"t_{s}")))
            for s in hung
        ]
        try:
            for t in callers:
                t.start()
            assert eventually(lambda: sorted(entered) == hung)
            assert blocks(_fresh(server, pre("rm -rf build", session="free", call="t_free")))
        finally:
            release.set()
            for t in callers:
                t.join(WAIT)


def test_a_failing_admission_leaves_the_server_accepting(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch, acceptors: int
) -> None:
    """A bug while admitting one connection costs that connection, not the accepting."""
    with serving(_guard(ledger_path), workers=1) as server:
        real = server.conns.admit
        failed = threading.Event()

        def admit(request: Any) -> Any:
            if not failed.is_set():
                failed.set()
                raise RuntimeError("admission bug")
            return real(request)

        monkeypatch.setattr(server.conns, "admit", admit)
        with pytest.raises((ConnectionError, http.client.HTTPException)):
            _fresh(server, pre("rm -rf build", call="toolu_lost"))
        assert failed.is_set()
        assert blocks(_fresh(server, pre("rm -rf build", call="toolu_next")))


def test_shutdown_before_serve_forever_makes_it_return_at_once(
    ledger_path: str, acceptors: int
) -> None:
    server = make_server(_guard(ledger_path), port=0)
    try:
        stopper = threading.Thread(target=server.shutdown)
        stopper.start()
        runner = threading.Thread(target=server.serve_forever, args=(0.02,))
        runner.start()
        runner.join(WAIT)
        stopper.join(WAIT)
        assert not runner.is_alive() and not stopper.is_alive()
    finally:
        server.server_close()


def test_serve_forever_runs_again_after_a_shutdown(ledger_path: str, acceptors: int) -> None:
    server = make_server(_guard(ledger_path), port=0)
    try:
        for n in range(2):
            runner = threading.Thread(target=server.serve_forever, args=(0.02,))
            runner.start()
            assert blocks(_fresh(server, pre("rm -rf build", call=f"toolu_{n}")))
            server.shutdown()
            runner.join(WAIT)
            assert not runner.is_alive()
    finally:
        server.server_close()


def test_an_accept_that_fails_does_not_stop_the_accepting(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch, acceptors: int
) -> None:
    """Out of file descriptors, say: the accepting thread backs off and accepts again."""
    real = HookServer.get_request
    failures = iter([OSError(24, "Too many open files")] * 3)

    def get_request(self: HookServer) -> Any:
        failure = next(failures, None)
        if failure is not None:
            raise failure
        return real(self)

    monkeypatch.setattr(HookServer, "get_request", get_request)  # before anyone accepts
    with serving(_guard(ledger_path), workers=1) as server:
        assert blocks(_fresh(server, pre("rm -rf build", call="toolu_after_emfile")))
    assert next(failures, None) is None  # all three were met


def test_no_thread_to_pass_the_lead_to_costs_that_connection_only(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch, acceptors: int
) -> None:
    """The last accepting thread takes a connection and no thread can start to accept in
    its place (a process limit): the connection is dropped, as socketserver drops one it
    cannot hand over, and the thread goes on accepting."""
    with serving(_guard(ledger_path), workers=1) as server:
        assert blocks(_fresh(server, pre("rm -rf build", call="toolu_first")))
        assert _accepting(server, acceptors)
        held = [Client(server) for _ in range(acceptors - 1)]  # each keeps its thread
        for n, client in enumerate(held):
            assert blocks(client.hook(pre("rm -rf build", session=f"h{n}", call=f"toolu_h{n}")))
        assert _accepting(server, 1)  # the last one
        real = server.pool.submit
        failed = threading.Event()

        def submit(fn: Any, *args: Any) -> None:
            if not failed.is_set() and getattr(fn, "__name__", "") == "_lead":
                failed.set()
                raise RuntimeError("can't start new thread")
            real(fn, *args)

        monkeypatch.setattr(server.pool, "submit", submit)
        with pytest.raises((ConnectionError, http.client.HTTPException)):
            _fresh(server, pre("rm -rf build", call="toolu_lost"))
        assert failed.is_set()
        assert blocks(_fresh(server, pre("rm -rf build", call="toolu_next")))
        for client in held:
            client.close()


def test_a_client_that_connects_for_every_call_wakes_no_thread_to_accept(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch, acceptors: int
) -> None:
    """With several accepting threads, the one a connection woke serves it while the others
    go on accepting: no thread is handed the accepting on a connection's path. One at a
    time, every connection hands it over."""
    with serving(_guard(ledger_path), workers=2) as server:
        assert blocks(_fresh(server, pre("rm -rf build", call="toolu_first")))
        assert _accepting(server, acceptors)
        handed: list[str] = []
        real = server.pool.submit

        def submit(fn: Any, *args: Any) -> None:
            handed.append(getattr(fn, "__name__", ""))
            real(fn, *args)

        monkeypatch.setattr(server.pool, "submit", submit)
        for n in range(20):
            assert blocks(_fresh(server, pre("rm -rf build", call=f"toolu_{n}")))
    if acceptors == 1:
        assert handed.count("_lead") == 20
    else:  # a thread slow to close its connection can make the last one hand over, rarely
        assert handed.count("_lead") <= 5


def test_a_first_leader_that_cannot_start_is_appointed_again(
    ledger_path: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    acceptors: int,
) -> None:
    """No thread for the first leader (a process limit): serve_forever says so and appoints
    one at its next poll; connections meanwhile wait in the kernel's backlog."""
    real = Pool.submit
    # none of the first appointment starts, nor the first of the next
    failures = iter([RuntimeError("can't start new thread")] * (acceptors + 1))

    def submit(self: Pool, fn: Any, *args: Any) -> None:
        if getattr(fn, "__name__", "") == "_lead":
            failure = next(failures, None)
            if failure is not None:
                raise failure
        real(self, fn, *args)

    monkeypatch.setattr(Pool, "submit", submit)  # before serve_forever appoints anyone
    with serving(_guard(ledger_path), workers=1) as server:
        assert blocks(_fresh(server, pre("rm -rf build", call="toolu_late_leader")))
    assert next(failures, None) is None
    said = [r for r in caplog.records if "no thread to accept" in r.getMessage()]
    assert len(said) == 1  # once, not every poll


def test_a_thread_that_cannot_wait_for_connections_is_replaced(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """No epoll to be had (out of file descriptors, say): the thread says so and gives up
    its place, and the server appoints others once nobody accepts."""
    if not serve_accept.exclusive_wakeups():
        pytest.skip("no EPOLLEXCLUSIVE on this system: no epoll is made")
    real = select.epoll
    failures = iter([OSError(24, "Too many open files")] * serve_accept.EXCLUSIVE_ACCEPTORS)

    def epoll() -> Any:
        failure = next(failures, None)
        if failure is not None:
            raise failure
        return real()

    with serving(_guard(ledger_path), workers=1) as server:
        monkeypatch.setattr(select, "epoll", epoll)  # the probe ran: only the waits fail
        server.shutdown()  # appointed again, from scratch, by the next serve_forever
        runner = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
        runner.start()
        assert blocks(_fresh(server, pre("rm -rf build", call="toolu_after_emfile")))
    runner.join(WAIT)
    assert next(failures, None) is None
    said = [r for r in caplog.records if "cannot wait for connections" in r.getMessage()]
    assert len(said) == 1  # once, not by every thread nor at every appointment


def _several_only() -> None:
    """Skip where several threads cannot accept at once (no ``EPOLLEXCLUSIVE``, or Linux
    before 5.7): one thread accepts there, which the tests run with one cover."""
    if not serve_accept.exclusive_wakeups():
        pytest.skip("no reliable EPOLLEXCLUSIVE on this system: one thread accepts at a time")


def _epolls() -> int:
    fds = os.listdir("/proc/self/fd")
    return sum(1 for fd in fds if _link(fd) == "anon_inode:[eventpoll]")


def _link(fd: str) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


def test_the_epolls_go_with_the_accepting_places_not_with_the_connections(
    ledger_path: str,
) -> None:
    """A thread serving a connection holds no epoll: with many connections open there are
    still at most as many epolls as accepting places (each would be a descriptor, and a
    stop on every new connection's wake-up)."""
    _several_only()
    before = _epolls()
    with serving(_guard(ledger_path), workers=2) as server:
        held = [Client(server) for _ in range(12)]
        try:
            for n, client in enumerate(held):
                assert blocks(client.hook(pre("rm -rf b", session=f"k{n}", call=f"toolu_k{n}")))
            assert _epolls() - before <= server.acceptors
        finally:
            for client in held:
                client.close()


def test_a_lost_wake_up_costs_a_poll_never_the_connection(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An epoll that never reports (a wake-up lost, as older kernels could lose one): each
    thread still tries to accept after its poll, so every call is answered."""
    _several_only()
    real = select.epoll

    class Deaf:
        def __init__(self) -> None:
            self.inner = real()

        def register(self, fd: int, mask: int) -> None:
            self.inner.register(fd, mask)

        def poll(self, timeout: float = -1, maxevents: int = -1) -> list[tuple[int, int]]:
            time.sleep(max(timeout, 0))
            return []

        def close(self) -> None:
            self.inner.close()

    monkeypatch.setattr(serve_accept, "exclusive_wakeups", lambda: True)  # probed already
    monkeypatch.setattr(select, "epoll", Deaf)
    with serving(_guard(ledger_path), workers=1) as server:
        assert server.acceptors > 1
        for n in range(3):
            assert blocks(_fresh(server, pre("rm -rf build", call=f"toolu_deaf{n}")))


@pytest.mark.parametrize(
    ("release", "several"),
    [
        ("4.18.0-305.el8.x86_64", False),  # EPOLLEXCLUSIVE, but a woken waiter stayed queued
        ("5.6.19", False),
        ("5.7.0", True),
        ("6.1.0-13-amd64", True),
        ("unreadable", False),
    ],
)
def test_several_threads_accept_only_on_kernels_that_wake_one_reliably(
    monkeypatch: pytest.MonkeyPatch, release: str, several: bool
) -> None:
    _several_only()
    monkeypatch.setattr(os, "uname", lambda: SimpleNamespace(release=release))
    assert serve_accept.exclusive_wakeups() is several


def test_shutdown_wakes_the_threads_waiting_to_accept(ledger_path: str) -> None:
    """Threads waiting in their epolls are woken when accepting stops: a long poll interval
    does not hold ``shutdown`` up, ``serve_forever`` runs again, and ``server_close``
    leaves no descriptor behind."""
    _several_only()
    before = _waits()
    server = make_server(_guard(ledger_path), port=0)
    try:
        for n in range(2):
            runner = threading.Thread(target=server.serve_forever, args=(60.0,), daemon=True)
            runner.start()
            assert _accepting(server, server.acceptors)
            assert blocks(_fresh(server, pre("rm -rf build", call=f"toolu_wake{n}")))
            stopper = threading.Thread(target=server.shutdown, daemon=True)
            stopper.start()
            stopper.join(WAIT)  # well before the 60 s poll
            runner.join(WAIT)
            assert not stopper.is_alive() and not runner.is_alive()
    finally:
        server.server_close()
    assert _waits() == before


def _waits() -> int:
    """The pipes and epolls this process holds open."""
    kinds = ("pipe:", "anon_inode:[eventpoll]")
    return sum(1 for fd in os.listdir("/proc/self/fd") if _link(fd).startswith(kinds))
