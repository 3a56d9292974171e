"""``hookrails serve`` stays available: a hung hook stalls its own session only, and slow or
idle connections cannot take every thread. Each test starts its server on 127.0.0.1 and stops
it (releasing every hook it holds) even when it fails. Causality over timing: hooks block on
Events, and "at once" is only ever a generous bound where it is the point."""

from __future__ import annotations

import http.client
import io
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from click.testing import CliRunner

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult, Ledger
from guardrails.claude_code import http_server
from guardrails.claude_code import serve_connections as _conns
from guardrails.claude_code.http_decider import DEFAULT_WORKERS
from guardrails.claude_code.http_server import HOOK_ROUTE, HookServer
from guardrails.cli.main import cli
from tests._db import rows
from tests.unit.claude_code.test_http_server import Client, blocks, eventually, pre, serving


class Hooks:
    """A PreToolUse hook: sessions named ``hung*`` hang until ``release``; ``rm`` is denied."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, event: Any, ctx: Any) -> HookResult | None:
        if event.session_id.startswith("hung"):
            with self.lock:
                self.entered.append(event.session_id)
            self.release.wait(120)
        if event.tool_input["command"].startswith("rm"):
            return HookResult.deny("rm is not allowed here")
        return None


@contextmanager
def hung_server(ledger_path: str, **kwargs: Any) -> Iterator[tuple[HookServer, Hooks]]:
    hooks = Hooks()
    guard = Guard(
        AgentDefinition(hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[hooks])]}),
        ledger=Ledger(ledger_path),
    )
    try:
        with serving(guard, **kwargs) as srv:
            yield srv, hooks
    finally:
        hooks.release.set()  # no thread outlives the test


def ask(srv: HookServer, payload: dict[str, Any]) -> dict[str, Any]:
    c = Client(srv)
    try:
        return c.hook(payload)
    finally:
        c.close()


def reason(answer: dict[str, Any]) -> str:
    return str(answer["hookSpecificOutput"]["permissionDecisionReason"])


def calls(ledger_path: str) -> dict[str, tuple[str, str, str]]:
    found = rows(ledger_path, "SELECT tool_call_id, decision, status, reason FROM tool_calls")
    return {r["tool_call_id"]: (r["decision"], r["status"], r["reason"] or "") for r in found}


# --- hung hooks ---------------------------------------------------------------------------


@pytest.mark.slow  # waits out a real deadline
def test_hung_hooks_stall_only_their_own_sessions_and_every_event_is_recorded(
    ledger_path: str,
) -> None:
    workers, deadline = 2, 5.0
    hung = [f"hung{i}" for i in range(workers + 1)]  # more hung sessions than warm workers
    fast = [(f"fast{i}", "rm -rf build" if i % 2 else "ls") for i in range(6)]
    with hung_server(ledger_path, workers=workers, deadline=deadline) as (srv, hooks):
        answers: dict[str, dict[str, Any]] = {}
        answered_hung: list[str] = []

        def ask_hung(session: str) -> None:
            answers[session] = ask(srv, pre("ls", session=session, call=f"toolu_{session}"))
            answered_hung.append(session)

        pending = [threading.Thread(target=ask_hung, args=(s,)) for s in hung]
        for t in pending:
            t.start()
        assert eventually(lambda: len(hooks.entered) == len(hung))  # all hang, side by side
        for session, command in fast:
            answer = ask(srv, pre(command, session=session, call=f"toolu_{session}"))
            assert answered_hung == []  # answered while every hung event still waits
            assert blocks(answer) == command.startswith("rm")
            assert answer == {} or reason(answer) == "rm is not allowed here"
        for t in pending:
            t.join(deadline * 4)
        for session in hung:  # at its deadline, by the failure policy: PreToolUse closed
            assert blocks(answers[session])
            assert f"no decision within {deadline:g}s" in reason(answers[session])
        # a hung session's next event is refused at once, while its hook still hangs
        again = ask(srv, pre("ls", session="hung0", call="toolu_hung0_again"))
        assert not hooks.release.is_set()
        assert blocks(again) and "still running past its deadline" in reason(again)
        health = srv.app.health()
        assert health["status"] == "degraded"
        assert (health["workers"]["abandoned"], health["stuck_sessions"]) == (len(hung),) * 2
        hooks.release.set()
        assert eventually(lambda: srv.app.health()["status"] == "ok")
        # the session is free again once its hook returned
        assert ask(srv, pre("ls", session="hung0", call="toolu_hung0_later")) == {}
    recorded = calls(ledger_path)
    for session in hung:  # the refusal Claude was given, never the late allow
        assert recorded[f"toolu_{session}"][:2] == ("deny", "denied")
        assert "no decision within" in recorded[f"toolu_{session}"][2]
    assert recorded["toolu_hung0_again"][:2] == ("deny", "denied")
    assert "still running past its deadline" in recorded["toolu_hung0_again"][2]
    for session, command in fast:
        assert recorded[f"toolu_{session}"][0] == ("deny" if command.startswith("rm") else "allow")
    assert recorded["toolu_hung0_later"][0] == "allow"
    assert len(recorded) == len(hung) + len(fast) + 2


@pytest.mark.slow  # waits out a real deadline
def test_past_the_cap_of_set_aside_threads_events_fail_at_once_until_a_hook_returns(
    ledger_path: str,
) -> None:
    with hung_server(ledger_path, workers=1, deadline=1.0, max_abandoned=0) as (srv, hooks):
        first = ask(srv, pre("ls", session="hung0", call="toolu_hung"))
        assert "no decision within 1s" in reason(first)
        refused = ask(srv, pre("ls", session="other", call="toolu_other"))  # no thread left
        assert not hooks.release.is_set()
        assert blocks(refused) and "over the limit of 0" in reason(refused)
        hooks.release.set()
        assert eventually(lambda: srv.app.health()["workers"]["abandoned"] == 0)
        assert ask(srv, pre("ls", session="other", call="toolu_other_later")) == {}
    recorded = calls(ledger_path)
    assert recorded["toolu_other"][:2] == ("deny", "denied")
    assert recorded["toolu_other_later"][0] == "allow"


def test_events_of_a_busy_session_wait_for_its_turn_and_other_sessions_go_on(
    ledger_path: str,
) -> None:
    """Events of one session queue on its turn: another session is still decided while the
    first is inside a hook on the only warm thread and more of its events wait."""
    with hung_server(ledger_path, workers=1) as (srv, hooks):
        waiting = [
            threading.Thread(target=ask, args=(srv, pre("ls", session="hung0", call=f"t{i}")))
            for i in range(4)
        ]
        for t in waiting:
            t.start()
        assert eventually(lambda: hooks.entered == ["hung0"])
        assert eventually(lambda: srv.app.health()["in_flight"] == 4)
        assert srv.app.health()["workers"]["deciding"] == 1  # the waiting three run no hook
        assert blocks(ask(srv, pre("rm -rf x", session="other", call="t_other")))
        assert hooks.entered == ["hung0"]  # one at a time within the session
        hooks.release.set()
        for t in waiting:
            t.join(30)
        assert hooks.entered == ["hung0"] * 4
    assert len(calls(ledger_path)) == 5


class Raising(Hooks):
    """Hangs like :class:`Hooks`, then raises (or exits) once released."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__()
        self.exc = exc

    def __call__(self, event: Any, ctx: Any) -> HookResult | None:
        super().__call__(event, ctx)
        raise self.exc


@pytest.mark.parametrize(
    "hook",
    [Hooks(), Raising(RuntimeError("late crash")), Raising(SystemExit(3))],
    ids=["returns", "raises", "exits"],
)
def test_a_hook_past_the_deadline_is_answered_for_by_the_watchdog_while_its_thread_stays(
    ledger_path: str, hook: Hooks
) -> None:
    """The watchdog writes the policy's answer at the deadline (then the connection closes) while
    the connection's thread stays inside the hook; that connection still counts against the cap
    (a new one gets 503), and once the hook returns, raises or exits, nothing more is written or
    recorded for it and the next connection is served."""
    hook.release.clear()
    guard = Guard(
        AgentDefinition(hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[hook])]}),
        ledger=Ledger(ledger_path),
    )
    try:
        with serving(guard, max_connections=1, deadline=0.3) as srv:
            stuck = Client(srv)
            status, answer, response = stuck.call(
                "POST", HOOK_ROUTE, pre("ls", session="hung0", call="toolu_hung")
            )
            assert not hook.release.is_set() and hook.entered == ["hung0"]
            assert status == 200 and blocks(answer)
            assert "no decision within 0.3s (a hook is still running)" in reason(answer)
            assert response.getheader("Connection") == "close"
            health = srv.app.health()
            assert health["workers"]["abandoned"] == 1 and len(srv.conns) == 1
            conn = http.client.HTTPConnection(srv.host, srv.port, timeout=30)
            conn.request("GET", "/v1/health")
            assert conn.getresponse().status == 503  # the stuck connection holds the cap
            conn.close()
            hook.release.set()
            assert eventually(lambda: len(srv.conns) == 0)
            assert srv.app.health()["workers"]["abandoned"] == 0
            assert blocks(ask(srv, pre("rm -rf x", session="hung0", call="toolu_next")))
            stuck.close()
    finally:
        hook.release.set()
    recorded = calls(ledger_path)
    assert recorded["toolu_hung"][:2] == ("deny", "denied")  # the refusal, not the late answer
    assert "no decision within" in recorded["toolu_hung"][2]


def test_a_dry_run_past_the_deadline_is_answered_504_by_the_watchdog(ledger_path: str) -> None:
    with hung_server(ledger_path, deadline=0.3) as (srv, hooks):
        client = Client(srv)
        status, body, response = client.call(
            "POST",
            "/v1/explain",
            pre("ls", session="hung-dry-run", call="toolu_dry"),  # a whole hook input
        )
        assert (status, response.getheader("Connection")) == (504, "close")
        assert body == {"error": "no decision within 0.3s"}
        assert srv.app.health()["workers"]["abandoned"] == 1
        hooks.release.set()
        assert eventually(lambda: srv.app.health()["workers"]["abandoned"] == 0)
        client.close()


# --- connections ----------------------------------------------------------------------------


def _quick(**kwargs: Any) -> Guard:
    return Guard(
        AgentDefinition(hooks={"PreToolUse": [HookMatcher(matcher="Bash(rm *)", hooks=["deny"])]}),
        ledger=False,
        **kwargs,
    )


def _closed_by_server(sock: socket.socket) -> bool:
    """Whether the server hung up on ``sock`` (EOF or a reset), waiting up to a minute."""
    sock.settimeout(60)
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


#: how a slow client holds a connection: what it sends, then nothing more
SLOW_CLIENTS: list[tuple[str, bytes]] = [
    ("silent", b""),
    ("half a request line", b"POST /v1/claude/hoo"),
    ("headers never end", b"POST /v1/claude/hook HTTP/1.1\r\nHost: 127.0.0.1\r\n"),
    (
        "body never ends",
        b"POST /v1/claude/hook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
        b"\r\nContent-Length: 1000\r\n\r\n{",
    ),
]


@pytest.mark.slow  # hundreds of sockets
def test_many_slow_sockets_keep_the_threads_bounded_and_a_client_is_still_answered() -> None:
    cap, sockets = 16, 400
    base = threading.active_count()
    with serving(_quick(), max_connections=cap, workers=2, request_timeout=60) as srv:
        # the thread running serve_forever, the watchdog, and the pool: a thread per
        # connection (evicted ones still ending too) and those accepting
        assert srv.pool.max_threads == cap + srv.conns.slack + srv.acceptors
        bound = base + 2 + srv.pool.max_threads
        opened: list[socket.socket] = []
        try:
            peak = 0
            for i in range(sockets):
                s = socket.create_connection((srv.host, srv.port), timeout=10)
                opened.append(s)
                payload = SLOW_CLIENTS[i % len(SLOW_CLIENTS)][1]
                if payload:
                    s.sendall(payload.replace(b"127.0.0.1", f"127.0.0.1:{srv.port}".encode()))
                peak = max(peak, threading.active_count())
            assert peak <= bound
            client = Client(srv)
            answer = client.hook(pre("rm -rf /", session="normal"))
            client.close()
            assert blocks(answer)  # answered, and right
            assert threading.active_count() <= bound
            assert len(srv.conns) <= cap + srv.conns.slack
        finally:
            for s in opened:
                s.close()


@pytest.mark.slow  # waits out real timeouts
@pytest.mark.parametrize(("case", "sent"), SLOW_CLIENTS[1:], ids=[c[0] for c in SLOW_CLIENTS[1:]])
def test_a_request_that_does_not_arrive_in_time_is_cut_off(case: str, sent: bytes) -> None:
    with serving(_quick(), request_timeout=0.5) as srv:
        s = socket.create_connection((srv.host, srv.port), timeout=10)
        try:
            s.sendall(sent.replace(b"127.0.0.1", f"127.0.0.1:{srv.port}".encode()))
            assert _closed_by_server(s)  # no thread waits on it past request_timeout
            assert eventually(lambda: len(srv.conns) == 0)
        finally:
            s.close()


@pytest.mark.slow  # waits out real timeouts
def test_a_request_trickling_in_a_byte_at_a_time_is_cut_off_at_its_deadline() -> None:
    request = b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Pad: " + b"a" * 400
    with serving(_quick(), request_timeout=0.5) as srv:
        s = socket.create_connection((srv.host, srv.port), timeout=10)
        sent = 0
        try:
            for byte in (request % srv.port)[:-1]:
                try:
                    s.send(bytes([byte]))
                except OSError:
                    break
                sent += 1
                time.sleep(0.01)  # 400 bytes: 4 s, well past the request's 0.5 s
            assert _closed_by_server(s)
            assert sent < len(request) - 1  # cut off before it was all sent
        finally:
            s.close()


def test_at_the_cap_a_new_connection_takes_the_place_of_an_idle_one() -> None:
    with serving(_quick(), max_connections=1) as srv:
        idle = Client(srv)
        assert idle.hook(pre("ls")) == {}
        assert eventually(lambda: srv.conns.waiting() == 1)  # an idle keep-alive connection
        fresh = Client(srv)
        assert blocks(fresh.hook(pre("rm -rf x")))
        assert idle.conn.sock is not None and _closed_by_server(idle.conn.sock)
        assert srv.app.health()["evicted_connections"] == 1
        fresh.close()
        idle.close()


def test_at_the_cap_with_every_connection_deciding_a_new_one_gets_503_at_once(
    ledger_path: str,
) -> None:
    with hung_server(ledger_path, max_connections=1) as (srv, hooks):
        busy: dict[str, Any] = {}
        t = threading.Thread(
            target=lambda: busy.update(a=ask(srv, pre("rm x", session="hung0", call="t1")))
        )
        t.start()
        assert eventually(lambda: hooks.entered == ["hung0"])
        conn = http.client.HTTPConnection(srv.host, srv.port, timeout=30)
        conn.request("GET", "/v1/health")
        response = conn.getresponse()
        assert response.status == 503 and response.getheader("Connection") == "close"
        assert "connection limit" in json.loads(response.read())["error"]
        conn.close()
        assert t.is_alive()  # the busy connection was not evicted for it
        hooks.release.set()
        t.join(30)
        assert blocks(busy["a"]) and reason(busy["a"]) == "rm is not allowed here"
        assert srv.app.health()["refused_connections"] == 1


def test_a_chunked_body_with_endless_trailers_is_refused() -> None:
    with serving(_quick()) as srv:
        s = socket.create_connection((srv.host, srv.port), timeout=10)
        try:
            head = (
                f"POST {HOOK_ROUTE}?event=PreToolUse HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\n"
                "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                "2\r\n{}\r\n0\r\n"
            )
            s.sendall(head.encode() + b"X-Trailer: 1\r\n" * 100)
            reply = b""
            while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                reply += chunk
            assert reply.startswith(b"HTTP/1.1 200") and b"too many trailer lines" in reply
            assert b'"permissionDecision":"deny"' in reply  # PreToolUse: closed
        finally:
            s.close()


def test_the_cli_defaults_are_the_servers() -> None:
    params = {p.name: p.default for p in cli.commands["serve"].params}
    assert params["max_connections"] == http_server.DEFAULT_MAX_CONNECTIONS
    assert params["workers"] == DEFAULT_WORKERS
    result = CliRunner().invoke(cli, ["serve", "--config", "x.yaml", "--max-connections", "0"])
    assert result.exit_code == 2 and "max-connections" in result.output


# --- the admission rule, without a server ---------------------------------------------------


@contextmanager
def socket_pairs(n: int) -> Iterator[list[socket.socket]]:
    pairs = [socket.socketpair() for _ in range(n)]
    try:
        yield [a for a, _ in pairs]
    finally:
        for a, b in pairs:
            a.close()
            b.close()


def test_admission_evicts_the_connection_that_waited_longest_and_never_a_busy_one() -> None:
    conns = _conns.Connections(2, idle_timeout=60)
    with socket_pairs(4) as socks:
        first, _ = conns.admit(socks[0])
        second, _ = conns.admit(socks[1])
        assert first is not None and second is not None
        conns.request_read(first)  # deciding: not evictable
        third, victim = conns.admit(socks[2])
        assert third is not None and victim is second and second.evicted
        with pytest.raises(ConnectionError):  # its request, if it had one, is not answered
            conns.request_read(second)
        conns.drop(socks[1])
        conns.request_read(third)
        refused: list[Any] = []
        t = threading.Thread(target=lambda: refused.append(conns.admit(socks[3], wait=60)))
        t.start()
        t.join(10)  # every connection busy: refused at once, not after the wait
        assert not t.is_alive() and refused == [(None, None)]


def test_admission_never_evicts_a_connection_whose_request_arrived_unread() -> None:
    """Several threads admit at once: a connection just admitted, whose request is whole in
    its socket but not yet read by its thread, is passed over (its call would be lost); the
    longest waiting with nothing to read goes instead, and when none is quiet, 503."""
    conns = _conns.Connections(2, idle_timeout=60)
    pairs = [socket.socketpair() for _ in range(4)]
    try:
        (oldest, oldest_peer), (newer, _), (third_sock, third_peer), (fourth, _) = pairs
        first, _ = conns.admit(oldest)
        second, _ = conns.admit(newer)
        oldest_peer.sendall(b"POST /v1/claude/hook HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}")
        third, victim = conns.admit(third_sock)
        assert third is not None and victim is second  # not the oldest: it has a request
        assert first is not None and not first.evicted
        third_peer.sendall(b"GET /v1/health HTTP/1.1\r\n\r\n")
        assert conns.admit(fourth, wait=0.01) == (None, None)  # every waiting one has a request
    finally:
        for a, b in pairs:
            a.close()
            b.close()


def test_admission_waits_for_evicted_connections_to_end_before_evicting_more() -> None:
    conns = _conns.Connections(1, idle_timeout=60)
    conns.slack = 1
    with socket_pairs(3) as socks:
        conns.admit(socks[0])
        second, victim = conns.admit(socks[1])  # evicts the first; its thread still ends
        assert second is not None and victim is not None
        admitted: list[Any] = []
        t = threading.Thread(target=lambda: admitted.append(conns.admit(socks[2], wait=60)))
        t.start()
        t.join(0.2)
        assert t.is_alive()  # at cap + slack: it waits for the evicted one to end
        conns.drop(socks[0])
        t.join(10)
        assert admitted and admitted[0][0] is not None and admitted[0][1] is second
        assert conns.admit(socks[0], wait=0.01) == (None, None)  # none ended in time


# --- the request head, as http.server reads it ----------------------------------------------

HEAD_OK: list[tuple[str, bytes, dict[str, Any]]] = [
    ("keep-alive by default on 1.1", b"Host: a\r\n\r\n", {"close": False, "host": "a"}),
    ("any case, first of a repeat", b"host: a\r\nHOST: b\r\n\r\n", {"host": "a"}),
    ("values trimmed", b"Content-Type:  application/json \t\r\n\r\n", {"ct": "application/json"}),
    ("Connection: close", b"Connection: Close\r\n\r\n", {"close": True}),
    ("bare LF lines", b"Host: a\nX: 1\n\n", {"host": "a"}),
    ("headers end at EOF", b"Host: a\r\n", {"host": "a"}),
]


@pytest.mark.parametrize(("case", "raw", "want"), HEAD_OK, ids=[c[0] for c in HEAD_OK])
def test_a_request_head_is_read_as_http_server_reads_it(
    case: str, raw: bytes, want: dict[str, Any]
) -> None:
    head = _conns.parse_head("POST //v1/claude/hook HTTP/1.1", "HTTP/1.1")
    assert head is not None and (head.command, head.path) == ("POST", "/v1/claude/hook")
    assert not head.close  # HTTP/1.1 keeps the connection; 1.0 and 0.9 do not
    for line in ("GET / HTTP/1.0", "GET /"):
        older = _conns.parse_head(line, "HTTP/1.1")
        assert older is not None and older.close
    headers = _conns.read_headers(io.BytesIO(raw))
    connection = (headers.get("Connection") or "keep-alive").lower()
    got = {
        "close": connection == "close",
        "host": headers.get("Host"),
        "ct": headers.get("content-type"),
    }
    assert {k: got[k] for k in want} == want


HEAD_BAD: list[tuple[str, str, bytes, int]] = [
    ("bad version", "GET / HTTP/1.x", b"\r\n", 400),
    ("non-ASCII digits", "GET / HTTP/\u00b2.1", b"\r\n", 400),
    ("HTTP/2 on this server", "GET / HTTP/2.0", b"\r\n", 505),
    ("four words", "GET / x HTTP/1.1", b"\r\n", 400),
    ("HTTP/0.9 other than GET", "POST /", b"", 400),
    ("a folded header line", "GET / HTTP/1.1", b"X: a\r\n b\r\n\r\n", 400),
    ("a space before the colon", "GET / HTTP/1.1", b"Content-Length : 5\r\n\r\n", 400),
    ("no name", "GET / HTTP/1.1", b": 5\r\n\r\n", 400),
    ("a line too long", "GET / HTTP/1.1", b"X: " + b"a" * 70000 + b"\r\n\r\n", 431),
    ("too many headers", "GET / HTTP/1.1", b"X: 1\r\n" * 101 + b"\r\n", 431),
]


@pytest.mark.parametrize(("case", "line", "raw", "status"), HEAD_BAD, ids=[c[0] for c in HEAD_BAD])
def test_a_request_head_http_server_would_refuse_is_refused(
    case: str, line: str, raw: bytes, status: int
) -> None:
    with pytest.raises(_conns.BadHead) as refused:
        _conns.parse_head(line, "HTTP/1.1")
        _conns.read_headers(io.BytesIO(raw))
    assert refused.value.status == status


def test_a_malformed_head_is_answered_in_json_and_the_connection_closed() -> None:
    with serving(_quick()) as srv:
        s = socket.create_connection((srv.host, srv.port), timeout=10)
        try:
            s.sendall(b"GET /v1/health HTTP/1.1\r\nHost : x\r\n\r\n")
            reply = b""
            while chunk := s.recv(65536):
                reply += chunk
            assert reply.startswith(b"HTTP/1.1 400") and b"Connection: close" in reply
            assert reply.endswith(b'{"error":"Bad header line"}')
        finally:
            s.close()
