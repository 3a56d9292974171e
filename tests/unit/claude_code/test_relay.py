"""The relay of ``hookrails hook`` to this machine's ``serve`` (``claude_code/relay.py``), the
spool-only ledger a hook decides with when no ``serve`` takes the event, and the shipper.
The whole path with real processes and an outage: ``tests/processes/test_relay.py``."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from guardrails import LedgerError
from guardrails.claude_code import relay
from guardrails.events import PreToolUse
from guardrails.ledger import KeyClaim
from guardrails.ledger import spool as spooled
from guardrails.ledger.postgres_ship import Shipper, start_shipper
from guardrails.ledger.postgres_spool import SpoolOnlyLedger
from guardrails.results import Decision
from tests._db import records, rows
from tests._paths import REPO


def test_the_relay_posts_to_the_servers_hook_route() -> None:
    from guardrails.claude_code import http_server

    assert relay.ROUTE == http_server.HOOK_ROUTE


@pytest.mark.parametrize(
    ("url", "parts"),
    [
        ("http://127.0.0.1:8787", ("127.0.0.1", 8787, "")),
        ("http://127.0.0.1:8787/", ("127.0.0.1", 8787, "")),
        ("HTTP://localhost", ("localhost", 80, "")),
        ("http://host:9/prefix/", ("host", 9, "/prefix")),
        ("http://[::1]:9", ("::1", 9, "")),
    ],
)
def test_relay_urls_are_split_without_urllib(url: str, parts: tuple[str, int, str]) -> None:
    assert relay._split(url) == parts


@pytest.mark.parametrize(
    "url", ["https://127.0.0.1:8787", "127.0.0.1:8787", "http://", "http://u:p@h:1", "http://h:x"]
)
def test_a_relay_url_that_is_not_plain_http_is_not_used(url: str) -> None:
    with pytest.raises(relay.NotDelivered, match="HOOKRAILS_RELAY"):
        relay._split(url)


@pytest.mark.parametrize(
    ("value", "url"),
    [(None, relay.DEFAULT_RELAY), ("", relay.DEFAULT_RELAY), ("off", None), ("OFF", None),
     ("http://10.0.0.2:9000", "http://10.0.0.2:9000")],
)  # fmt: skip
def test_the_relay_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, value: str | None, url: str | None
) -> None:
    if value is None:
        monkeypatch.delenv(relay.RELAY_ENV, raising=False)
    else:
        monkeypatch.setenv(relay.RELAY_ENV, value)
    assert relay.relay_url() == url


@pytest.mark.parametrize(
    ("query", "refused"),
    [
        ({}, None),  # Claude Code's own http hooks name neither
        ({"definition": ["d1"], "ledger": ["l1"]}, None),
        ({"definition": ["d2"], "ledger": ["l1"]}, "another definition"),
        ({"definition": ["d1"], "ledger": ["l2"]}, "another ledger"),
        ({"ledger": ["l2"]}, "another ledger"),
    ],
)
def test_serve_refuses_a_relayed_event_of_another_definition_or_ledger(
    query: dict[str, list[str]], refused: str | None
) -> None:
    said = relay.refusal(("d1", "l1"), query)
    assert (said is None) if refused is None else (refused in (said or ""))


def test_tags_name_the_file_and_the_ledger_without_its_password(tmp_path: Path) -> None:
    f = tmp_path / "a.yaml"
    f.write_text("name: a\n")
    tag = relay.definition_tag(str(f))
    f.write_text("name: b\n")
    assert relay.definition_tag(str(f)) != tag and relay.definition_tag(None) == ""
    assert relay.definition_tag(str(tmp_path / "missing")) == ""
    assert relay.ledger_tag("postgresql://u:one@h/db") == relay.ledger_tag(
        "postgresql://u:two@h/db"
    )
    assert relay.ledger_tag("postgresql://u@h/db") != relay.ledger_tag("postgresql://u@h/other")


@pytest.mark.parametrize(
    ("answer", "fallback"),
    [
        ({}, ""),
        ({"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no"}},
         "no"),
        ({"decision": "block", "reason": "stop"}, "stop"),
        ({"continue": False, "stopReason": "halt"}, "halt"),
        ({"hookSpecificOutput": {"decision": {"behavior": "deny"}}}, "blocked by hookrails"),
    ],
)  # fmt: skip
def test_a_relayed_refusal_still_refuses_when_stdout_fails(
    answer: dict[str, Any], fallback: str
) -> None:
    import json

    code, out, said = relay._answer(json.dumps(answer).encode(), None)
    assert code == 0 and json.loads(out) == answer and said == fallback


@pytest.mark.parametrize(
    ("answer", "out", "fallback"),
    [
        ({"systemMessage": "keep the rules"}, "keep the rules", ""),
        ({}, "", ""),
        ({"decision": "block", "reason": "not now"}, '{"decision": "block", "reason": "not now"}',
         "not now"),
    ],
)  # fmt: skip
def test_a_relayed_pre_compact_answer_is_printed_as_the_local_one_is(
    answer: dict[str, Any], out: str, fallback: str
) -> None:
    """Claude adds a PreCompact command hook's stdout to the compaction's instructions: the
    instructions as text (or nothing), never serve's JSON; a block stays JSON."""
    import json

    code, printed, said = relay._answer(json.dumps(answer).encode(), "reinstall", "PreCompact")
    assert (code, said) == (0, fallback)
    assert printed == out if not fallback else json.loads(printed)["decision"] == "block"


def test_a_stale_install_is_told_on_a_relayed_answer() -> None:
    import json

    _, out, _ = relay._answer(b'{"systemMessage": "hi"}', "reinstall")
    assert json.loads(out)["systemMessage"] == "hi\nhookrails: reinstall"


def _server(answer: bytes | None) -> tuple[int, threading.Thread]:
    """A one-request server that reads the request, then answers ``answer`` (None: closes)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)

    def serve() -> None:
        conn, _ = sock.accept()
        conn.recv(65536)
        if answer is not None:
            conn.sendall(answer)
        conn.close()
        sock.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return int(sock.getsockname()[1]), thread


def test_nothing_listening_is_not_delivered() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(relay.NotDelivered, match="no hookrails serve"):
        relay.post(f"http://127.0.0.1:{port}", b"{}", "event=PreToolUse", None, 5)


@pytest.mark.parametrize(
    ("answer", "raised"),
    [
        (b"HTTP/1.1 409 Conflict\r\nContent-Length: 2\r\n\r\n{}", relay.NotDelivered),
        (b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 2\r\n\r\n{}", relay.NotDelivered),
        (None, ValueError),  # delivered, then closed: it may have been decided
        (b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{}", ValueError),  # cut short
    ],
)
def test_what_serve_did_not_decide_is_told_apart_from_a_lost_answer(
    answer: bytes | None, raised: type[Exception]
) -> None:
    port, thread = _server(answer)
    with pytest.raises(raised):
        relay.post(f"http://127.0.0.1:{port}", b"{}", "event=PreToolUse", "tok", 5)
    thread.join(5)


def test_a_relayed_answer_is_read() -> None:
    port, thread = _server(b'HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n{"ok": true} ')
    assert relay.post(f"http://127.0.0.1:{port}", b"{}", "", None, 5) == b'{"ok": true} '
    thread.join(5)


# --- the spool-only ledger and the spool ------------------------------------------------------


def _pre(call: str) -> Decision:
    event = PreToolUse(
        session_id="s", cwd="/w", tool_name="Bash", tool_use_id=call, tool_input={"command": "ls"}
    )
    return Decision(event, "allow")


URL = "postgresql://nobody@127.0.0.1:1/never"


def test_a_spool_only_ledger_spools_and_refuses_claims_without_connecting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    led = SpoolOnlyLedger(URL)
    assert led.degraded is not None and "relay" in led.degraded
    led.record(_pre("a1"), 1000.0, agent="bot", tenant=None)
    lines = records(led.spool_path)
    assert len(lines) == 1 and '"a1"' in lines[0]
    claim = KeyClaim("k", "global", "s", None, "charge", "p", "a1", True, 1000.0, None, {})
    with pytest.raises(LedgerError, match="cannot be asked"):
        led.claim_key(claim)
    with pytest.raises(LedgerError):
        led.session_state("s", "bot")


def test_a_spool_only_ledger_never_imports_psycopg(tmp_path: Path) -> None:
    code = (
        "import sys, tempfile\n"
        f"tempfile.tempdir = {str(tmp_path)!r}\n"
        "from guardrails.ledger.postgres_spool import SpoolOnlyLedger\n"
        "from guardrails.events import PreToolUse\n"
        "from guardrails.results import Decision\n"
        f"led = SpoolOnlyLedger({URL!r})\n"
        "e = PreToolUse(session_id='s', cwd='/', tool_name='Bash', tool_input={},"
        " tool_use_id='x')\n"
        "led.record(Decision(e, 'allow'), 1.0, agent='a', tenant=None)\n"
        "assert not [m for m in sys.modules if m.startswith('psycopg')], 'psycopg imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def test_appends_racing_a_take_are_never_lost(tmp_path: Path) -> None:
    """Writers append while a shipper takes the spool again and again: every record is in
    exactly one take."""
    target = str(tmp_path / "s.jsonl")
    writers, per_writer = 4, 300
    taken: list[str] = []
    done = threading.Event()

    def write(w: int) -> None:
        for i in range(per_writer):
            spooled._append(target, f"{w}-{i}\n".encode())

    def take() -> None:
        while True:
            finished = done.is_set()
            if spooled.waiting(target):
                took = spooled.take(target)
                taken.extend(took.lines)
                took.finish()
            if finished:
                return

    taker = threading.Thread(target=take)
    taker.start()
    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    taker.join()
    lines = [x.strip() for x in taken if x.strip()]
    assert sorted(lines) == sorted(f"{w}-{i}" for w in range(writers) for i in range(per_writer))


def test_the_shipper_ships_what_a_hook_spooled(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    from guardrails import Ledger

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    hook = SpoolOnlyLedger(postgres_url)
    for call in ("h1", "h2"):
        hook.record(_pre(call), 1000.0, agent="bot", tenant=None)
    with Ledger(postgres_url) as led:
        assert start_shipper(None) is None
        shipper = start_shipper(led, interval=0.05)
        assert isinstance(shipper, Shipper)
        deadline = time.monotonic() + 20
        while shipper.waiting():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        shipper.stop()
        assert shipper.shipped == 2 and shipper.error is None
    got = rows(postgres_url, "SELECT tool_call_id FROM tool_calls ORDER BY 1")
    assert [r["tool_call_id"] for r in got] == ["h1", "h2"]
    assert not os.listdir(tmp_path) or all("rejected" not in p for p in os.listdir(tmp_path))


def test_a_shipper_is_only_for_a_postgres_ledger(ledger_path: str) -> None:
    from guardrails import Ledger

    with Ledger(ledger_path) as led:
        assert start_shipper(led) is None
