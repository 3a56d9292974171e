"""``hookrails serve``: Claude Code http hooks, the side routes, auth, failures, threads."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult, Ledger
from guardrails.claude_code.http_server import HOOK_ROUTE, HookServer, make_server
from guardrails.cli.main import cli
from guardrails.cli.serve import exposure_warning
from guardrails.definition.hook_refs import hook_name
from guardrails.errors import ServeError
from guardrails.ledger import journal
from tests._db import rows, value

TOKEN = "t0ken-for-tests"
ROUTES = [
    ("POST", HOOK_ROUTE),
    ("POST", "/v1/explain"),
    ("GET", "/v1/hooks"),
    ("GET", "/v1/stats"),
    ("GET", "/v1/health"),
]
TABLES = ("sessions", "tool_calls", "hook_runs", "events", "idempotency_keys")


def deny_rm(event: Any, ctx: Any) -> HookResult:
    return HookResult.deny("rm is not allowed here", hint="Move the file to trash/ instead.")


def noop(event: Any, ctx: Any) -> None:
    return None


DENY, NOOP = hook_name(deny_rm), hook_name(noop)


def definition(**hooks: list[HookMatcher]) -> AgentDefinition:
    base: dict[str, list[HookMatcher]] = {
        "PreToolUse": [
            HookMatcher(matcher="Bash(rm *)", hooks=[deny_rm], priority=10),
            HookMatcher(matcher="Bash", hooks=[noop]),
        ]
    }
    base.update(hooks)
    return AgentDefinition(name="tester", hooks=base)


def pre(
    command: str, *, session: str = "s1", call: str = "toolu_1", **extra: Any
) -> dict[str, Any]:
    return {
        "session_id": session,
        "cwd": "/project",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": call,
        **extra,
    }


def post(command: str, *, session: str = "s1", call: str = "toolu_1") -> dict[str, Any]:
    return {
        **pre(command, session=session, call=call),
        "hook_event_name": "PostToolUse",
        "tool_response": {"stdout": "ok", "stderr": ""},
    }


def blocks(answer: dict[str, Any]) -> bool:
    """Whether Claude Code stops the action for this answer (a deny, or a top-level block,
    which it applies to a PreToolUse as a deny)."""
    spec = answer.get("hookSpecificOutput") or {}
    return spec.get("permissionDecision") == "deny" or answer.get("decision") == "block"


class Client:
    """One keep-alive connection, as Claude Code's http client holds one."""

    def __init__(self, server: HookServer, token: str | None = None) -> None:
        self.conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
        self.token = token

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        raw: bytes | None = None,
        headers: dict[str, str | None] | None = None,
    ) -> tuple[int, Any, http.client.HTTPResponse]:
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        sent: dict[str, str | None] = {"Content-Type": "application/json"}
        if self.token is not None:
            sent["Authorization"] = f"Bearer {self.token}"
        sent.update(headers or {})
        kept = {k: v for k, v in sent.items() if v is not None}  # None: leave the header out
        self.conn.request(method, path, body=data, headers=kept)
        response = self.conn.getresponse()
        payload = response.read()
        return response.status, json.loads(payload) if payload else None, response

    def hook(self, payload: Any) -> dict[str, Any]:
        status, answer, _ = self.call("POST", HOOK_ROUTE, payload)
        assert status == 200
        assert isinstance(answer, dict)
        return answer

    def close(self) -> None:
        self.conn.close()


@contextmanager
def serving(guard: Guard, **kwargs: Any) -> Iterator[HookServer]:
    server = make_server(guard, port=0, **kwargs)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.fixture
def server(ledger_path: str) -> Iterator[HookServer]:
    with serving(Guard(definition(), ledger=Ledger(ledger_path))) as srv:
        yield srv


@pytest.fixture
def client(server: HookServer) -> Iterator[Client]:
    c = Client(server)
    yield c
    c.close()


# --- the hook route -----------------------------------------------------------------------


def test_a_denied_call_is_answered_with_a_deny_and_recorded(client: Client, ledger_path: str):
    answer = client.hook(pre("rm -rf build"))
    assert answer == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "rm is not allowed here\nMove the file to trash/ instead.",
        }
    }
    [call] = rows(ledger_path, "SELECT * FROM tool_calls")
    assert (call["tool_call_id"], call["status"], call["decision"]) == ("toolu_1", "denied", "deny")
    assert value(ledger_path, "SELECT hook FROM denials") == DENY


def test_an_allowed_call_answers_no_opinion_and_its_post_finishes_the_row(
    client: Client, ledger_path: str
):
    assert client.hook(pre("ls", call="toolu_2")) == {}
    assert value(ledger_path, "SELECT status FROM tool_calls") == "pending"
    assert client.hook(post("ls", call="toolu_2")) == {}
    [call] = rows(ledger_path, "SELECT status, tool_call_result FROM tool_calls")
    assert call["status"] == "ok" and json.loads(call["tool_call_result"])["stdout"] == "ok"


def test_prompt_and_stop_events_are_decided_and_recorded(ledger_path: str):
    def need_done(event: Any, ctx: Any) -> HookResult | None:
        if "DONE" in (event.last_assistant_message or ""):
            return None
        return HookResult.block("say DONE when the work is done")

    guard = Guard(definition(Stop=[HookMatcher(hooks=[need_done])]), ledger=Ledger(ledger_path))
    stop = {"session_id": "s1", "cwd": "/p", "hook_event_name": "Stop", "stop_hook_active": False}
    with serving(guard) as srv:
        c = Client(srv)
        assert c.hook({**stop, "last_assistant_message": "hm"}) == {
            "decision": "block",
            "reason": "say DONE when the work is done",
        }
        assert c.hook({**stop, "last_assistant_message": "DONE"}) == {}
        c.close()
    decisions = rows(ledger_path, "SELECT decision FROM events ORDER BY id")
    assert [r["decision"] for r in decisions] == ["block", "allow"]


def explode(event: Any, ctx: Any) -> None:
    raise RuntimeError("the hook broke")


def exit_hook(event: Any, ctx: Any) -> None:
    raise SystemExit(3)


def unsendable(event: Any, ctx: Any) -> HookResult:
    return HookResult.modify(input={"command": object()})


def nan_rewrite(event: Any, ctx: Any) -> HookResult:
    return HookResult.modify(input={"command": "ls", "retries": float("nan")})


def slow(event: Any, ctx: Any) -> None:
    time.sleep(2)


def eventually(check: Callable[[], bool], timeout: float = 20.0) -> bool:
    """Poll ``check`` until it holds (work another thread finishes on its own time)."""
    end = time.monotonic() + timeout
    while not check():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


BROKEN_INPUTS: list[tuple[str, bytes, dict[str, str]]] = [
    ("not JSON", b"{nope", {}),
    ("a JSON array", b"[1, 2]", {}),
    ("no hook_event_name", json.dumps({"tool_name": "Bash"}).encode(), {}),
    ("tool_input not an object", json.dumps(pre("ls", tool_input="ls")).encode(), {}),
    ("an empty body", b"", {}),
    ("a malformed chunked body", b"zz\r\n{}\r\n0\r\n\r\n", {"Transfer-Encoding": "chunked"}),
    ("an unknown Transfer-Encoding", b"{}", {"Transfer-Encoding": "gzip"}),
    ("an oversized body", json.dumps(pre("x" * 5000)).encode(), {}),
]


@pytest.mark.parametrize(
    ("case", "raw", "headers"), BROKEN_INPUTS, ids=[c[0] for c in BROKEN_INPUTS]
)
def test_a_hook_input_that_cannot_be_read_is_answered_200_and_blocks(
    case: str, raw: bytes, headers: dict[str, str]
):
    with serving(Guard(definition(), ledger=False), max_body=4096) as srv:
        c = Client(srv)
        c.conn.timeout = 5
        status, answer, _ = c.call("POST", HOOK_ROUTE, raw=raw, headers=headers)
        c.close()
    assert status == 200  # a non-2xx would be a non-blocking error: Claude would go ahead
    assert blocks(answer), answer
    reason = answer.get("reason") or answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("hookrails serve: ") and "\n" not in reason


CRASHES: list[tuple[str, Callable[..., Any]]] = [
    ("a hook raises", explode),
    ("a hook raises SystemExit", exit_hook),
    ("a hook answers what JSON cannot hold", unsendable),
    ("a hook rewrites the input with NaN", nan_rewrite),
    ("a hook outlives the deadline", slow),
]


@pytest.mark.parametrize(("case", "hook"), CRASHES, ids=[c[0] for c in CRASHES])
def test_a_crash_on_pretooluse_is_a_deny_never_an_allow(case: str, hook: Callable[..., Any]):
    guard = Guard(
        AgentDefinition(hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[hook])]}),
        ledger=False,
    )
    with serving(guard, deadline=0.5) as srv:
        c = Client(srv)
        answer = c.hook(pre("ls"))
        c.close()
    spec = answer["hookSpecificOutput"]
    assert spec["permissionDecision"] == "deny", answer
    assert "updatedInput" not in spec


def test_a_crash_inside_the_guard_itself_is_a_deny(monkeypatch: pytest.MonkeyPatch):
    guard = Guard(definition(), ledger=False)

    def broken(event: Any) -> Any:
        raise KeyError("internal")

    monkeypatch.setattr(guard, "emit_sync", broken)
    with serving(guard) as srv:
        c = Client(srv)
        answer = c.hook(pre("ls"))
        c.close()
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "KeyError" in answer["hookSpecificOutput"]["permissionDecisionReason"]


# --- the ledger says what Claude was told ----------------------------------------------------


@pytest.mark.slow  # waits out real timeouts
def test_a_decision_past_its_deadline_is_recorded_as_the_deny_claude_got(
    ledger_path: str, caplog: pytest.LogCaptureFixture
):
    release = threading.Event()

    def late_allow(event: Any, ctx: Any) -> None:
        release.wait(30)  # decides (no opinion: an allow) only after the deadline

    guard = Guard(
        AgentDefinition(hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[late_allow])]}),
        ledger=Ledger(ledger_path),
    )
    with serving(guard, deadline=0.3) as srv:
        c = Client(srv)
        answer = c.hook(pre("ls"))
        release.set()
        assert eventually(lambda: "decided after its deadline; not recorded" in caplog.text)
        c.close()
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    [call] = rows(ledger_path, "SELECT status, decision, reason FROM tool_calls")
    assert (call["status"], call["decision"]) == ("denied", "deny")  # never pending / allow
    assert "no decision within 0.3s" in call["reason"]
    assert [r["hook"] for r in rows(ledger_path, "SELECT hook FROM hook_runs")] == ["hookrails"]


def test_an_invalid_pre_tool_use_is_denied_and_recorded(client: Client, ledger_path: str):
    answer = client.hook(pre("ls", call="toolu_bad", tool_input="ls"))
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    [call] = rows(ledger_path, "SELECT * FROM tool_calls")
    assert (call["tool_call_id"], call["tool_name"], call["status"], call["decision"]) == (
        "toolu_bad",
        "Bash",
        "denied",
        "deny",
    )
    assert "invalid PreToolUse hook input: tool_input" in call["reason"]
    assert call["session_id"] == "s1"


def test_a_rewrite_json_cannot_hold_is_denied_and_the_ledger_agrees(ledger_path: str):
    guard = Guard(
        AgentDefinition(hooks={"PreToolUse": [HookMatcher(hooks=[nan_rewrite])]}),
        ledger=Ledger(ledger_path),
    )
    with serving(guard) as srv:
        c = Client(srv)
        answer = c.hook(pre("ls"))
        c.close()
    spec = answer["hookSpecificOutput"]
    assert spec["permissionDecision"] == "deny" and "updatedInput" not in spec
    assert "not strict JSON" in spec["permissionDecisionReason"]
    [call] = rows(ledger_path, "SELECT status, decision FROM tool_calls")
    assert (call["status"], call["decision"]) == ("denied", "deny")


# --- who may ask ---------------------------------------------------------------------------

#: headers a web page (or a name rebound to 127.0.0.1) sends; "{port}" is the server's
FOREIGN: list[tuple[str, dict[str, str | None]]] = [
    ("an Origin header", {"Origin": "https://evil.example"}),
    ("a null Origin", {"Origin": "null"}),
    ("a foreign Host", {"Host": "evil.example:{port}"}),
    ("a rebound lookalike", {"Host": "localhost.evil.example:{port}"}),
    ("another port", {"Host": "127.0.0.1:1"}),
    ("no port (80)", {"Host": "127.0.0.1"}),
    ("a private address", {"Host": "192.168.1.5:{port}"}),
]


@pytest.mark.parametrize(("method", "path"), ROUTES)
@pytest.mark.parametrize(("case", "headers"), FOREIGN, ids=[c[0] for c in FOREIGN])
def test_what_a_browser_could_send_is_refused_before_anything_runs(
    server: HookServer,
    ledger_path: str,
    method: str,
    path: str,
    case: str,
    headers: dict[str, str | None],
):
    c = Client(server)
    sent = {k: v.format(port=server.port) if v else v for k, v in headers.items()}
    status, body, response = c.call(method, path, pre("rm -rf /"), headers=sent)
    c.close()
    assert status == 403 and response.getheader("Connection") == "close"
    assert "Origin" in body["error"] or "Host must be" in body["error"]
    assert value(ledger_path, "SELECT count(*) FROM tool_calls") == 0


@pytest.mark.parametrize(
    "host", ["127.0.0.1:{port}", "localhost:{port}", "LocalHost:{port}", "[::1]:{port}"]
)
def test_loopback_names_of_this_port_are_served(client: Client, server: HookServer, host: str):
    answer = client.call(
        "POST", HOOK_ROUTE, pre("rm x"), headers={"Host": host.format(port=server.port)}
    )
    assert answer[0] == 200 and blocks(answer[1])


def test_beyond_loopback_the_host_is_not_checked_the_token_is(ledger_path: str):
    guard = Guard(definition(), ledger=Ledger(ledger_path))
    server = make_server(guard, "0.0.0.0", 0, TOKEN)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        c = Client(server, token=TOKEN)
        c.conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        status, answer, _ = c.call("POST", HOOK_ROUTE, pre("rm x"), headers={"Host": "hooks.lan"})
        c.close()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
    assert status == 200 and blocks(answer)


@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"],
)
@pytest.mark.parametrize("path", [HOOK_ROUTE, "/v1/explain"])
def test_a_post_whose_body_is_not_declared_json_is_a_415(
    client: Client, ledger_path: str, path: str, content_type: str | None
):
    status, body, response = client.call(
        "POST", path, pre("rm -rf /"), headers={"Content-Type": content_type}
    )
    assert status == 415 and "application/json" in body["error"]
    assert response.getheader("Accept") == "application/json"
    assert value(ledger_path, "SELECT count(*) FROM tool_calls") == 0
    assert client.call("GET", "/v1/health")[0] == 200  # the connection is still usable


def test_json_with_a_charset_is_json(client: Client):
    status, answer, _ = client.call(
        "POST", HOOK_ROUTE, pre("rm x"), headers={"Content-Type": "application/json; charset=utf-8"}
    )
    assert status == 200 and blocks(answer)


@pytest.mark.parametrize(
    ("event", "matchers", "blocked"),
    [
        ("Stop", [HookMatcher(hooks=[noop])], False),  # default on_failure: continue
        ("Stop", [HookMatcher(hooks=[noop], on_failure="block")], True),
        ("UserPromptSubmit", [], True),  # docs/design.md §5 default: block
        ("PostToolUse", [], False),
    ],
)
def test_other_events_that_cannot_be_decided_follow_their_on_failure(
    event: str, matchers: list[HookMatcher], blocked: bool
):
    guard = Guard(AgentDefinition(hooks={event: matchers} if matchers else {}), ledger=False)
    # a known event whose payload breaks its wire contract (a field of the wrong type)
    payload = {"session_id": "s", "cwd": "/p", "hook_event_name": event, "tool_name": 5}
    payload.update({"stop_hook_active": "no", "prompt": 7, "tool_input": {}, "tool_response": 1})
    with serving(guard) as srv:
        c = Client(srv)
        answer = c.hook(payload)
        c.close()
    assert (answer.get("decision") == "block") is blocked, answer
    if not blocked:
        assert "continuing (fails open)" in answer["systemMessage"]


def test_an_event_hookrails_does_not_handle_is_told_not_blocked(client: Client):
    answer = client.hook({"session_id": "s", "hook_event_name": "Bogus", "message": "hi"})
    assert not blocks(answer)
    assert "'Bogus' is not handled here" in answer["systemMessage"]


@pytest.mark.parametrize(("hint", "denied"), [("PreToolUse", True), ("SessionEnd", False)])
def test_the_event_query_names_the_event_of_an_unreadable_body(
    client: Client, hint: str, denied: bool
):
    status, answer, _ = client.call("POST", f"{HOOK_ROUTE}?event={hint}", raw=b"{broken")
    assert status == 200
    spec = answer.get("hookSpecificOutput") or {}
    assert (spec.get("permissionDecision") == "deny") is denied
    assert blocks(answer) is denied


def test_a_drained_oversized_body_leaves_the_connection_usable(ledger_path: str):
    with serving(Guard(definition(), ledger=Ledger(ledger_path)), max_body=1024) as srv:
        c = Client(srv)
        c.hook(pre("x" * 4096))
        sock = c.conn.sock
        assert c.hook(pre("rm -rf /", call="toolu_9"))["hookSpecificOutput"]
        assert c.conn.sock is sock  # the same connection answered the next request
        c.close()


# --- HTTP: keep-alive, routes, methods, sizes ----------------------------------------------


def test_a_warm_client_keeps_one_connection(client: Client):
    client.hook(pre("ls", call="toolu_a"))
    sock = client.conn.sock
    for i in range(20):
        client.hook(pre("ls", call=f"toolu_{i}"))
    assert client.conn.sock is sock


def test_an_unknown_route_is_a_json_404(client: Client):
    status, body, _ = client.call("GET", "/v1/nope")
    assert status == 404
    assert body["error"] == "no route GET /v1/nope" and "POST /v1/claude/hook" in body["routes"]


@pytest.mark.parametrize(("method", "path"), [("GET", HOOK_ROUTE), ("POST", "/v1/hooks")])
def test_a_wrong_method_is_a_json_405_with_allow(client: Client, method: str, path: str):
    status, body, response = client.call(method, path, {})
    assert status == 405
    assert response.getheader("Allow") == ("POST" if path == HOOK_ROUTE else "GET")
    assert "takes" in body["error"]


def test_an_oversized_explain_body_is_a_413(ledger_path: str):
    with serving(Guard(definition(), ledger=False), max_body=100) as srv:
        c = Client(srv)
        status, body, _ = c.call("POST", "/v1/explain", {"event": "PreToolUse", "x": "y" * 200})
        c.close()
    assert status == 413 and "over this server's limit of 100" in body["error"]


def test_http_servers_own_errors_are_answered_in_json(server: HookServer):
    with socket.create_connection((server.host, server.port), timeout=5) as sock:
        sock.sendall(b"BREW /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        reply = b""
        while b"}" not in reply:
            chunk = sock.recv(4096)
            assert chunk, reply
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 501")
    assert json.loads(body) == {"error": "Unsupported method ('BREW')"}


# --- auth ---------------------------------------------------------------------------------


@pytest.fixture
def locked(ledger_path: str) -> Iterator[HookServer]:
    with serving(Guard(definition(), ledger=Ledger(ledger_path)), token=TOKEN) as srv:
        yield srv


@pytest.mark.parametrize(
    "header",
    [None, "Bearer wrong", f"Basic {TOKEN}", f"Bearer {TOKEN}x", "Bearer", f"{TOKEN}"],
)
@pytest.mark.parametrize(("method", "path"), [*ROUTES, ("GET", "/v1/nope")])
def test_without_the_token_every_route_is_a_401(
    locked: HookServer, method: str, path: str, header: str | None
):
    c = Client(locked)
    headers = {} if header is None else {"Authorization": header}
    status, body, response = c.call(method, path, pre("ls"), headers=headers)
    c.close()
    assert status == 401
    assert "bearer token" in body["error"]
    assert response.getheader("WWW-Authenticate") == 'Bearer realm="hookrails"'


@pytest.mark.parametrize("scheme", ["Bearer", "bearer"])
def test_the_right_token_passes(locked: HookServer, scheme: str, ledger_path: str):
    c = Client(locked)
    status, answer, _ = c.call(
        "POST", HOOK_ROUTE, pre("rm x"), headers={"Authorization": f"{scheme} {TOKEN}"}
    )
    c.close()
    assert status == 200 and blocks(answer)
    assert value(ledger_path, "SELECT count(*) FROM tool_calls") == 1


def test_an_unauthenticated_hook_call_reaches_no_hook(locked: HookServer, ledger_path: str):
    c = Client(locked, token="wrong")
    status, _, response = c.call("POST", HOOK_ROUTE, pre("ls"))
    c.close()
    assert status == 401 and response.getheader("Connection") == "close"
    assert value(ledger_path, "SELECT count(*) FROM tool_calls") == 0


@pytest.mark.parametrize(
    ("host", "token", "warned"),
    [("0.0.0.0", None, True), ("0.0.0.0", TOKEN, False), ("127.0.0.1", None, False)],
)
def test_an_insecure_non_loopback_bind_without_a_token_warns(
    host: str, token: str | None, warned: bool
):
    srv = make_server(Guard(definition(), ledger=False), host, 0, token, insecure=True)
    try:
        warning = exposure_warning(srv)
    finally:
        srv.server_close()
    assert (warning is not None) is warned
    if warning:
        assert "without a token" in warning and "HOOKRAILS_TOKEN" in warning


@pytest.mark.parametrize(
    ("host", "token", "message"),
    [
        ("0.0.0.0", None, "refusing to listen on 0.0.0.0 without a token"),
        ("127.0.0.1", "", "the token is empty"),
    ],
)
def test_an_exposed_bind_without_a_token_or_an_empty_token_is_refused(
    host: str, token: str | None, message: str
):
    with pytest.raises(ServeError, match=message):
        make_server(Guard(definition(), ledger=False), host, 0, token)


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--host", "0.0.0.0"], {}, "refusing to listen on 0.0.0.0 without a token"),
        ([], {"HOOKRAILS_TOKEN": ""}, "$HOOKRAILS_TOKEN is set but empty"),
        (["--token", ""], {}, "the token is empty"),
    ],
    ids=["exposed", "empty variable", "empty flag"],
)
def test_the_cli_refuses_to_serve_unprotected_in_one_line_and_opens_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], env: dict[str, str],
    message: str,
):  # fmt: skip
    config = tmp_path / "agent.yaml"
    config.write_text(YAML, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["serve", "--config", str(config), "--port", "0", *args],
                                env=env)  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: {message}") and result.stderr.count("\n") == 1
    assert not (tmp_path / ".hookrails").exists()  # no ledger was opened


# --- side routes ----------------------------------------------------------------------------


def test_hooks_lists_the_bindings_in_run_order(client: Client, server: HookServer):
    status, body, _ = client.call("GET", "/v1/hooks")
    assert status == 200
    pre_ = body["events"]["PreToolUse"]
    assert [(b["priority"], b["matcher"], b["hook"]) for b in pre_["order"]] == [
        (10, "Bash(rm *)", DENY),
        (100, "Bash", NOOP),
    ]
    assert pre_["failure_policy"] == "block"
    assert [m["on_failure"] for m in pre_["matchers"]] == ["block", "block"]
    assert body["agent"] == "tester" and body["bindings"] == 2


def test_stats_reads_the_ledger_views(client: Client):
    client.hook(pre("rm -rf x", call="toolu_d"))
    client.hook(pre("ls", call="toolu_o"))
    client.hook(post("ls", call="toolu_o"))
    status, body, _ = client.call("GET", "/v1/stats?limit=5")
    assert status == 200
    [tool] = body["tools"]
    assert (tool["tool_name"], tool["calls"], tool["ok"], tool["denials"]) == ("Bash", 2, 1, 1)
    assert body["denials_by_hook"][0]["hook"] == DENY
    assert {r["status"]: r["calls"] for r in body["calls_by_status"]} == {"ok": 1, "denied": 1}
    assert body["recent_sessions"][0]["session_id"] == "s1"


def test_stats_are_served_again_within_their_ttl(client: Client):
    client.hook(pre("ls", call="toolu_1"))
    status, first, _ = client.call("GET", "/v1/stats?limit=5")
    assert status == 200 and first["tools"][0]["calls"] == 1
    client.hook(pre("ls", call="toolu_2"))
    _, again, _ = client.call("GET", "/v1/stats?limit=5")
    assert again["tools"][0]["calls"] == 1  # the cached answer: STATS_TTL has not passed
    _, other_limit, _ = client.call("GET", "/v1/stats?limit=6")
    assert other_limit["tools"][0]["calls"] == 2  # cached per limit


def test_stats_are_computed_anew_after_their_ttl(client: Client, monkeypatch: pytest.MonkeyPatch):
    from guardrails.claude_code import http_decider

    client.hook(pre("ls", call="toolu_1"))
    client.call("GET", "/v1/stats?limit=5")
    client.hook(pre("ls", call="toolu_2"))
    monkeypatch.setattr(http_decider, "STATS_TTL", 0.0)
    _, fresh, _ = client.call("GET", "/v1/stats?limit=5")
    assert fresh["tools"][0]["calls"] == 2


def test_stats_without_a_ledger_says_so():
    with serving(Guard(definition(), ledger=False)) as srv:
        c = Client(srv)
        status, body, _ = c.call("GET", "/v1/stats")
        c.close()
    assert status == 200
    assert body["ledger"] is None and "--ledger" in body["note"]


@pytest.mark.parametrize("limit", ["0", "x", "1001"])
def test_stats_refuses_a_bad_limit(client: Client, limit: str):
    status, body, _ = client.call("GET", f"/v1/stats?limit={limit}")
    assert status == 400 and "limit" in body["error"]


def test_health_counts_requests(client: Client, server: HookServer):
    client.hook(pre("ls"))
    status, body, _ = client.call("GET", "/v1/health")
    assert status == 200
    assert body["status"] == "ok" and body["agent"] == "tester"
    assert body["hook_calls"] == 1 and body["requests"] == 2
    # this one's is busy answering; the others accept (one of several took this connection,
    # or the only one handed the accepting on)
    threads = body["connection_threads"]
    acceptors = server.acceptors
    assert threads["busy"] == 1 and threads["accepting"] == max(acceptors - 1, 1)
    assert threads["threads"] >= threads["busy"] + threads["accepting"]


def _counts(path: Path) -> dict[str, int]:
    return {t: value(path, f"SELECT count(*) FROM {t}") for t in TABLES}


@pytest.mark.parametrize(
    "body",
    [
        {"event": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}},
        pre("rm -rf /", session="live", call="toolu_live"),  # a whole hook input
    ],
    ids=["fields", "hook input"],
)
def test_explain_is_a_dry_run_that_writes_nothing(
    client: Client, ledger_path: str, body: dict[str, Any]
):
    client.hook(pre("ls", call="toolu_before"))
    before = _counts(ledger_path)
    size = os.path.getsize(ledger_path), os.path.getsize(f"{ledger_path}-wal")
    status, answer, _ = client.call("POST", "/v1/explain", body)
    assert status == 200
    assert answer["dry_run"] is True and answer["decision"] == "deny"
    assert [b["hook"] for b in answer["bindings"]] == [DENY, NOOP]
    assert [(r["hook"], r["outcome"]) for r in answer["runs"]] == [
        (DENY, "deny"),
        (NOOP, "skipped"),
    ]
    assert answer["claude_output"]["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert _counts(ledger_path) == before
    assert (os.path.getsize(ledger_path), os.path.getsize(f"{ledger_path}-wal")) == size


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"tool_name": "Bash"}, "name the event"),
        ({"event": "PreToolUse", "tool": "Bash"}, "unknown field 'tool'"),
        ({"event": "Nope"}, "unknown event 'Nope'"),
        ({"event": "PreToolUse"}, "needs --tool"),
        ([1], "JSON object"),
    ],
)
def test_explain_refuses_what_it_cannot_run(client: Client, body: Any, message: str):
    status, answer, _ = client.call("POST", "/v1/explain", body)
    assert status == 400 and message in answer["error"]


# --- threads --------------------------------------------------------------------------------


@pytest.mark.slow  # waits out real timeouts
def test_concurrent_requests_are_all_decided_and_recorded(ledger_path: str):
    threads, calls, sessions = 8, 25, 4
    finals: dict[str, int] = {}

    def counter(event: Any, ctx: Any) -> None:
        """Read-modify-write of the session's state, with a pause in the middle: two
        events of one session deciding at once would lose an update."""
        n = ctx.state.get("n", 0)
        time.sleep(0.0005)
        ctx.state["n"] = n + 1
        finals[ctx.session_id] = n + 1

    guard = Guard(
        definition(PostToolUse=[HookMatcher(hooks=[counter])]), ledger=Ledger(ledger_path)
    )
    errors: list[BaseException] = []

    def worker(i: int, srv: HookServer) -> None:
        c = Client(srv)
        try:
            for j in range(calls):
                call, session = f"toolu_{i}_{j}", f"s{i % sessions}"
                if j % 5 == 0:
                    assert blocks(c.hook(pre("rm -f x", session=session, call=call)))
                else:
                    assert c.hook(pre("ls", session=session, call=call)) == {}
                    assert c.hook(post("ls", session=session, call=call)) == {}
        except BaseException as exc:
            errors.append(exc)
        finally:
            c.close()

    with serving(guard) as srv:
        pool = [threading.Thread(target=worker, args=(i, srv)) for i in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join(60)
    assert errors == []
    total, denied = threads * calls, threads * calls // 5
    statuses = rows(ledger_path, "SELECT status, count(*) AS n FROM tool_calls GROUP BY 1")
    assert {r["status"]: r["n"] for r in statuses} == {"denied": denied, "ok": total - denied}
    # every hook run of every event is there: noop per allowed call (deny_rm's argument
    # rule does not match `ls`), deny_rm + a skipped noop per denied call, counter per post
    assert value(ledger_path, "SELECT count(*) FROM hook_runs") == (
        (total - denied) + denied * 2 + (total - denied)
    )
    per_session = (threads // sessions) * calls * 4 // 5
    assert finals == {f"s{k}": per_session for k in range(sessions)}


# --- shutdown and the CLI -------------------------------------------------------------------


def test_shutdown_ends_idle_keep_alive_connections(ledger_path: str):
    server = make_server(Guard(definition(), ledger=Ledger(ledger_path)), port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    c = Client(server)
    c.hook(pre("ls"))
    server.shutdown()
    server.server_close()
    thread.join(10)
    assert not thread.is_alive()
    assert c.conn.sock is not None and c.conn.sock.recv(1) == b""  # the server hung up
    with pytest.raises(OSError):
        socket.create_connection((server.host, server.port), timeout=2)


YAML = """\
name: served
hooks:
  PreToolUse:
    - matcher: "Bash(rm *)"
      hooks: [{use: deny, with: {reason: "no rm"}}]
"""


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_the_cli_serves_until_a_signal_and_reminds_how_to_pass_the_token(tmp_path: Path, sig: int):
    config = tmp_path / "agent.yaml"
    config.write_text(YAML, encoding="utf-8")
    ledger = tmp_path / "served.db"
    env = {**os.environ, "HOOKRAILS_TOKEN": TOKEN, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "guardrails", "serve", "--config", str(config), "--port", "0",
         "--ledger", str(ledger)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        head = [proc.stdout.readline() for _ in range(2)]
        match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", head[1])
        assert match, head
        conn = http.client.HTTPConnection("127.0.0.1", int(match.group(1)), timeout=10)
        conn.request("POST", HOOK_ROUTE, json.dumps(pre("rm -rf /")),
                     {"Authorization": f"Bearer {TOKEN}",
                      "Content-Type": "application/json"})  # fmt: skip
        answer = json.loads(conn.getresponse().read())
        conn.close()
        assert answer["hookSpecificOutput"]["permissionDecisionReason"] == "no rm"
        proc.send_signal(sig)
        proc.wait(timeout=20)
        out, err = proc.stdout.read(), proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    text = "".join(head) + out
    assert "Authorization: Bearer" in text and "HOOKRAILS_TOKEN" in text
    assert TOKEN not in text  # the reminder names the variable, never the secret
    assert not journal.waiting(str(ledger))  # write-behind: the stop imported the rest
    bare = sqlite3.connect(ledger)  # the file as Datasette reads it: no journal imported
    assert bare.execute("SELECT status FROM tool_calls").fetchall() == [("denied",)]
    bare.close()


@pytest.mark.parametrize(("flag", "behind"), [([], True), (["--no-write-behind"], False)])
def test_the_cli_writes_behind_on_sqlite_unless_told_not_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: list[str], behind: bool
):
    config = tmp_path / "agent.yaml"
    config.write_text(YAML, encoding="utf-8")
    seen: list[object] = []
    monkeypatch.setattr(
        "guardrails.claude_code.http_server.serve_until_signal",
        lambda server: seen.append(server.app.guard.ledger._behind) or server.server_close(),
    )
    result = CliRunner().invoke(
        cli,
        [
            "serve",
            "--config",
            str(config),
            "--port",
            "0",
            "--ledger",
            str(tmp_path / "l.db"),
            *flag,
        ],
        env={"HOOKRAILS_TOKEN": None},
    )
    assert result.exit_code == 0, result.output
    assert (seen[0] is not None) is behind


def test_the_cli_reports_a_port_in_use_in_one_line(tmp_path: Path):
    config = tmp_path / "agent.yaml"
    config.write_text(YAML, encoding="utf-8")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(
            cli,
            ["serve", "--config", str(config), "--port", str(port)],
            env={"HOOKRAILS_TOKEN": None},  # unset: an empty one is refused
        )
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: cannot listen on 127.0.0.1:{port}")
    assert result.stderr.count("\n") == 1


# --- the real Claude Code CLI ----------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.slow
def test_the_real_claude_cli_obeys_a_served_deny_and_every_call_is_recorded(
    tmp_path: Path, ledger_path: str
):
    from guardrails.testing import tool_use
    from tests._claude_cli import run_claude

    guard = Guard(definition(), ledger=Ledger(ledger_path))
    denied = tool_use("Bash", {"command": "rm -f denied.txt && touch denied.txt"}, id="toolu_den")
    allowed = tool_use("Bash", {"command": "touch allowed.txt"}, id="toolu_all")
    with serving(guard, token=TOKEN) as srv:
        http_hook = {
            "type": "http",
            "url": srv.url + HOOK_ROUTE,
            "headers": {"Authorization": "Bearer $HOOKRAILS_TOKEN"},
            "allowedEnvVars": ["HOOKRAILS_TOKEN"],
            "timeout": 30,
        }
        hooks = {
            e: [{"matcher": "Bash", "hooks": [http_hook]}] for e in ("PreToolUse", "PostToolUse")
        }
        run = run_claude(
            [denied, allowed, "Done."],
            tmp_path,
            settings={"hooks": hooks},
            env={"HOOKRAILS_TOKEN": TOKEN},
        )
    assert not (run.cwd / "denied.txt").exists()  # the denied call never ran
    assert (run.cwd / "allowed.txt").exists()
    assert "rm is not allowed here" in run.result_text("toolu_den")
    calls = rows(ledger_path, "SELECT tool_call_id, status FROM tool_calls ORDER BY id")
    assert [(c["tool_call_id"], c["status"]) for c in calls] == [
        ("toolu_den", "denied"),
        ("toolu_all", "ok"),
    ]


def test_a_relayed_event_is_answered_within_what_the_hook_process_has_left(
    ledger_path: str,
) -> None:
    """``?within=`` (seconds left of the relaying hook process's deadline) caps serve's own
    deadline: serve answers the failure by then instead of deciding after the hook process
    gave up and answered it itself (two answers, two records)."""
    release = threading.Event()

    def slow(event: Any, ctx: Any) -> None:
        release.wait(10)

    hooks = [HookMatcher(matcher="Bash", hooks=[slow])]
    guard = Guard(definition(PreToolUse=hooks), ledger=Ledger(ledger_path))
    with serving(guard) as server:
        client = Client(server)
        try:
            status, answer, _ = client.call(
                "POST", HOOK_ROUTE + "?within=0.2", pre("ls", call="c1")
            )
            assert status == 200
            said = answer["hookSpecificOutput"]
            assert said["permissionDecision"] == "deny"  # PreToolUse fails closed
            assert "no decision within 0.2s" in said["permissionDecisionReason"]
        finally:
            release.set()
            client.close()
