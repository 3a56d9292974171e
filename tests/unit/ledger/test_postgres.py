"""The PostgreSQL store against the SQLite one: the same answers, the same promises.

* the views and saved queries return the same rows on both engines, for the hand-built
  sessions of ``test_views`` (copied into both) and for sessions recorded by each store;
* a Ledger is chosen by its location (``postgresql://`` URL, ``$HOOKRAILS_LEDGER``, the
  definition's ``ledger:``), and only a URL imports psycopg;
* machines racing for one idempotency key: one claims it, the others are told
  ``in_progress``; a dead holder's claim is taken over by lease expiry, by one only;
* the server stopped mid-run: records spool, a claim fails closed, ``recover`` ships them;
* ``ledger query`` is read-only with a time limit; ``copy`` moves a ledger both ways, again
  without duplicates; ``tail --follow`` is woken by NOTIFY.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guardrails import Ledger, LedgerError
from guardrails.events import (
    AgentStop,
    PostToolUse,
    PostToolUseFailure,
    PreToolUse,
    UserPromptSubmit,
)
from guardrails.ledger import KeyClaim
from guardrails.ledger.copy import copy_ledger
from guardrails.ledger.migrations import check_dialects, migrations, views
from guardrails.ledger.query import run_query, saved_queries
from guardrails.results import Decision
from tests._db import execute, rows, value
from tests._postgres import Cluster
from tests.unit.ledger import test_views

#: parameters every saved query is run with (both sessions of the fixture, where it takes one)
PARAMS: dict[str, list[dict[str, Any]]] = {
    "recent_calls": [{"limit": 5}, {"limit": "100"}],
    "session_timeline": [{"session": "sess-a"}, {"session": "sess-b"}],
    "tool_succeeded": [
        {"session": "sess-a", "tool": "run_*"},
        {"session": "sess-a", "tool": "[d]eploy"},
        {"session": "sess-b", "tool": "*"},
    ],
}


def answers(where: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every view's and saved query's rows (through ``ledger query``, as a user sees them)."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    for name, _ in views():
        result = run_query(where, f"SELECT * FROM {name}")
        out[f"view {name}"] = list(result.rows)
    for q in saved_queries():
        for params in PARAMS.get(q.name, [{}]):
            result = run_query(where, saved=q.name, params=params)
            out[f"query {q.name} {params}"] = list(result.rows)
    return out


def test_both_dialects_have_the_same_migrations_and_views() -> None:
    check_dialects()
    assert [m.name for m in migrations("postgres")] == [m.name for m in migrations()]


def test_views_and_saved_queries_answer_alike_on_the_view_fixture(
    tmp_path: Path, postgres_url: str
) -> None:
    path = str(tmp_path / "fixture.db")
    Ledger(path).close()
    conn = sqlite3.connect(path)
    test_views.insert_fixture(conn)
    conn.commit()
    conn.close()
    copy_ledger(path, postgres_url)
    on_sqlite, on_postgres = answers(path), answers(postgres_url)
    assert on_sqlite.keys() == on_postgres.keys()
    for name, expected in on_sqlite.items():
        assert on_postgres[name] == expected, name
    assert any(on_sqlite[n] for n in on_sqlite if n.startswith("view")), "the fixture is empty"


def record_sessions(where: str) -> None:
    """Two sessions recorded by the store itself at fixed times (no hook clock involved)."""
    with Ledger(where) as led:
        t = 1_780_000_000.0
        for sid in ("s-one", "s-two"):
            prompt = UserPromptSubmit(session_id=sid, cwd="/w", prompt="go")
            led.record(Decision(prompt, "allow"), t, agent="bot", tenant="acme")
            for i, (cmd, verdict) in enumerate([("ls", "allow"), ("rm -rf /", "deny")] * 2):
                call = f"{sid}-c{i}"
                pre = PreToolUse(
                    session_id=sid, cwd="/w", tool_name="Bash", tool_use_id=call,
                    tool_input={"command": cmd},
                )  # fmt: skip
                d = Decision(pre, verdict, reason=None if verdict == "allow" else "no rm")
                led.record(d, t + i * 0.137, agent="bot", tenant="acme", owner_pid=1)
                if verdict == "allow" and i < 2:
                    post = PostToolUse(
                        session_id=sid, cwd="/w", tool_name="Bash", tool_use_id=call,
                        tool_input={"command": cmd}, tool_response={"out": "a\u00e9\x00"},
                    )  # fmt: skip
                    led.record(Decision(post, "allow"), t + i * 0.137 + 0.0421, agent="bot",
                               tenant="acme")  # fmt: skip
                elif verdict == "allow":
                    failed = PostToolUseFailure(
                        session_id=sid, cwd="/w", tool_name="Bash", tool_use_id=call,
                        tool_input={"command": cmd}, error="OSError: gone \ud800",
                    )  # fmt: skip
                    led.record(Decision(failed, "allow"), t + 1.5, agent="bot", tenant="acme")
            stop = AgentStop(session_id=sid, cwd="/w")
            led.record(Decision(stop, "allow"), t + 2.25, agent="bot", tenant="acme")
            t += 60


def test_sessions_recorded_by_each_store_answer_alike(tmp_path: Path, postgres_url: str) -> None:
    path = str(tmp_path / "recorded.db")
    record_sessions(path)
    record_sessions(postgres_url)
    on_sqlite, on_postgres = answers(path), answers(postgres_url)
    for name, expected in on_sqlite.items():
        assert on_postgres[name] == expected, name
    for table in ("tool_calls", "events", "hook_runs", "sessions", "session_state"):
        # ids are unique on both, not dense on PostgreSQL (an upsert spends one)
        query = f"SELECT * FROM {table} ORDER BY 1, 2"
        strip = lambda found: [{k: v for k, v in r.items() if k != "id"} for r in found]  # noqa: E731
        assert strip(rows(postgres_url, query)) == strip(rows(path, query)), table
    assert value(postgres_url, "SELECT count(DISTINCT tenant_id) FROM tool_calls") == 1


# --- choosing the store -----------------------------------------------------------------------


def test_ledger_status_names_the_same_views_on_both_engines_over_one_connection(
    ledger_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``hookrails ledger status``: the tables, the views and the schema, on a PostgreSQL
    ledger read over one connection (it used to open a second one for the views)."""
    from guardrails.ledger import postgres_query
    from guardrails.ledger.admin import ledger_status

    Ledger(ledger_url).close()
    opened: list[str] = []
    real = postgres_query.connect

    def counted(url: str, **kwargs: Any) -> Any:
        opened.append(url)
        return real(url, **kwargs)

    monkeypatch.setattr(postgres_query, "connect", counted)
    found = ledger_status(ledger_url)
    assert sorted(found.views) == sorted(name for name, _ in views())
    assert found.tables["tool_calls"] == found.tables["events"] == 0
    assert found.schema_version == found.known_version
    assert len(opened) == (1 if ledger_url.startswith("postgresql://") else 0)


def test_a_url_anywhere_in_the_order_makes_a_postgres_ledger(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from guardrails.ledger.postgres import PostgresLedger

    with Ledger(postgres_url) as led:
        assert isinstance(led, PostgresLedger) and led.degraded is None
    monkeypatch.setenv("HOOKRAILS_LEDGER", postgres_url)
    with Ledger() as led:
        assert isinstance(led, PostgresLedger) and led.path == postgres_url
    monkeypatch.delenv("HOOKRAILS_LEDGER")
    from guardrails import AgentDefinition, Guard

    definition = AgentDefinition.from_dict({"name": "bot", "ledger": postgres_url})
    guard = Guard(definition, ledger=Ledger())
    try:
        assert isinstance(guard.ledger, PostgresLedger)
    finally:
        guard.ledger.close()  # type: ignore[union-attr]
    assert not isinstance(Ledger(tmp_path / "x.db"), PostgresLedger)


def test_import_guardrails_and_a_sqlite_ledger_never_import_psycopg(tmp_path: Path) -> None:
    code = (
        "import sys, guardrails\n"
        "from guardrails import Ledger\n"
        f"Ledger({str(tmp_path / 'l.db')!r}).close()\n"
        "import guardrails.claude_code.hook_command\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('psycopg', 'psycopg_pool'))\n"
        "assert not bad, bad\n"
        "assert 'guardrails.ledger.postgres' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# --- idempotency across machines --------------------------------------------------------------


def claim(call_id: str, now: float = 1000.0, payload: str = "p1") -> KeyClaim:
    return KeyClaim(
        key="k", scope="global", session_id="s1", agent_id=None, tool_name="charge",
        payload_hash=payload, tool_call_id=call_id, declared=True, now=now,
        expires=now + 3600, tool_input={"amount": 1},
    )  # fmt: skip


def test_machines_racing_for_a_key_one_claims_it(postgres_url: str) -> None:
    ledgers = [Ledger(postgres_url) for _ in range(6)]
    verdicts: list[str] = []
    barrier = threading.Barrier(len(ledgers))

    def race(i: int) -> None:
        barrier.wait()
        verdicts.append(ledgers[i].claim_key(claim(f"t{i}")).verdict)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(len(ledgers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for led in ledgers:
        led.close()
    assert sorted(verdicts) == ["claimed"] + ["in_progress"] * 5


def test_a_dead_holders_claim_is_taken_over_by_lease_expiry_once(postgres_url: str) -> None:
    with Ledger(postgres_url, claim_lease=30.0) as one, Ledger(postgres_url) as two:  # type: ignore[call-arg]
        assert one.claim_key(claim("t1")).verdict == "claimed"
        assert two.claim_key(claim("t2", now=1020.0)).verdict == "in_progress"  # lease holds
        assert two.claim_key(claim("t2", now=1031.0)).verdict == "claimed"  # lease ran out
        assert one.claim_key(claim("t3", now=1032.0)).verdict == "in_progress"  # t2's now
        two.complete_key("k", "t2", '{"id": 7}', 1033.0, exact=True)
        done = one.claim_key(claim("t4", now=1034.0))
        assert done.verdict == "completed" and done.stored.result == '{"id": 7}'  # type: ignore[union-attr]
        assert one.claim_key(claim("t5", now=1035.0, payload="p2")).verdict == "conflict"


# --- faults --------------------------------------------------------------------------------


def pre(call: str, cmd: str = "ls") -> Decision:
    event = PreToolUse(
        session_id="s-out", cwd="/w", tool_name="Bash", tool_use_id=call,
        tool_input={"command": cmd},
    )  # fmt: skip
    return Decision(event, "allow")


@pytest.mark.slow
def test_the_server_stopped_mid_run_loses_nothing(
    postgres: Cluster, postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    led = Ledger(postgres_url, connect_timeout=1.0)  # type: ignore[call-arg]
    try:
        led.record(pre("c1"), 1000.0, agent="bot", tenant=None)
        postgres.pause()
        try:
            led.record(pre("c2"), 1001.0, agent="bot", tenant=None)
            assert led.degraded is not None
            led.record(pre("c3"), 1002.0, agent="bot", tenant=None)
            with pytest.raises(LedgerError):  # an idempotency claim fails closed
                led.claim_key(claim("t1"))
        finally:
            postgres.resume()
        report = led.recover()
        assert report.imported == 2 and report.rejected == 0
        assert led.degraded is None
        led.record(pre("c4"), 1003.0, agent="bot", tenant=None)
        ids = rows(postgres_url, "SELECT tool_call_id FROM tool_calls ORDER BY tool_call_id")
        assert [r["tool_call_id"] for r in ids] == ["c1", "c2", "c3", "c4"]
        assert led.claim_key(claim("t1")).verdict == "claimed"
    finally:
        led.close()


def test_a_server_that_refuses_says_so_and_the_records_spool(tmp_path: Path) -> None:
    """Nothing listens on the port: the ledger degrades with the server's own words (kind
    unreachable), not a pool's "initialization incomplete" after its whole timeout, and
    each record goes to the spool."""
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql://hookrails@127.0.0.1:{port}/none"
    led = Ledger(url, connect_timeout=5.0)  # type: ignore[call-arg]
    spooled = Path(led.spool_path)  # type: ignore[attr-defined]  # in the temp folder
    try:
        assert led.degraded is not None and "refused" in led.degraded.lower()
        assert "pool" not in led.degraded
        led.record(pre("c1"), 1000.0, agent="bot", tenant=None)
        assert '"c1"' in spooled.read_text()
    finally:
        led.close()
        for leftover in spooled.parent.glob(spooled.name + "*"):
            leftover.unlink()


# --- the ledger commands ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "refused"),
    [
        ("delete from tool_calls", "read-only"),
        ("update tool_calls set status = 'ok'", "read-only"),
        ("create table x (y int)", "read-only"),
        ("with gone as (delete from tool_calls returning 1) select * from gone", "read-only"),
        ("select 1; delete from tool_calls", "multiple commands"),
        ("select nextval('tool_calls_id_seq')", "read-only"),
        ("set statement_timeout = 0", "read-only"),
    ],
)
def test_ledger_query_on_postgres_refuses_what_sqlite_refuses(
    postgres_url: str, sql: str, refused: str
) -> None:
    Ledger(postgres_url).close()
    execute(
        postgres_url,
        "INSERT INTO tool_calls (session_id, tool_call_id, tool_name, started_at) "
        "VALUES ('s', 't', 'Bash', '2026-01-01T00:00:00.000Z')",
    )
    with pytest.raises(LedgerError, match=refused):
        list(run_query(postgres_url, sql).rows)
    assert value(postgres_url, "SELECT count(*) FROM tool_calls") == 1


def test_tail_on_a_database_no_hookrails_has_recorded_into_says_so(postgres_url: str) -> None:
    """A database with no hookrails tables yet (nothing recorded, `serve` not started): the
    user is told it is not a ledger yet and how to choose another, not a relation error."""
    from guardrails.ledger.admin import tail_calls

    with pytest.raises(LedgerError, match="no hookrails ledger in this database yet") as exc:
        list(tail_calls(postgres_url, 1))
    assert exc.value.kind == "missing" and "relation" not in str(exc.value)


def test_ledger_query_on_postgres_stops_at_its_timeout(postgres_url: str) -> None:
    Ledger(postgres_url).close()
    with pytest.raises(LedgerError, match="--timeout"):
        list(run_query(postgres_url, "select pg_sleep(5)", timeout=0.2).rows)


def test_copy_moves_a_ledger_both_ways_and_again_adds_nothing(
    tmp_path: Path, postgres_url: str, filled_ledger: str
) -> None:
    first = copy_ledger(filled_ledger, postgres_url)
    again = copy_ledger(filled_ledger, postgres_url)
    assert all(new == src == there for src, new, there in first.tables.values())
    assert all(new == 0 for _, new, _ in again.tables.values())
    back = str(tmp_path / "back.db")
    copy_ledger(postgres_url, back)
    for table in ("tool_calls", "events", "hook_runs", "sessions", "session_state"):
        query = f"SELECT * FROM {table} ORDER BY 1, 2"
        assert rows(back, query) == rows(filled_ledger, query), table
    with Ledger(postgres_url) as led:  # the identities moved past the copied ids
        led.record(pre("after-copy"), 2000.0, agent="bot", tenant=None)
    assert value(postgres_url, "SELECT count(*) FROM tool_calls") == 5


def test_tail_follow_is_woken_by_new_calls(postgres_url: str) -> None:
    from guardrails.ledger.admin import tail_calls

    with Ledger(postgres_url) as led:
        led.record(pre("c1"), 1000.0, agent="bot", tenant=None)
        seen: list[str] = []
        calls: Iterator[Any] = tail_calls(postgres_url, 5, follow=True, interval=30.0, max_polls=2)
        seen.append(next(calls).arguments)
        writer = threading.Timer(
            0.2, lambda: led.record(pre("c2", "pwd"), 1001.0, agent="bot", tenant=None)
        )
        writer.start()
        started = time.monotonic()
        seen.append(next(calls).arguments)
        writer.join()
        assert time.monotonic() - started < 25, "woken by NOTIFY, not by the 30 s interval"
    assert [json.loads(a)["command"] for a in seen] == ["ls", "pwd"]


def cookbook() -> list[tuple[dict[str, str], str]]:
    """Each ``hookrails ledger query`` of docs/ledger.md: its ``-p`` parameters and SQL."""
    import re
    import shlex

    from tests._paths import REPO

    text = (REPO / "docs" / "ledger.md").read_text(encoding="utf-8")
    found = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        if not block.startswith("hookrails ledger query") or "--saved" in block:
            continue
        words = shlex.split(block.replace("\\\n", " "))
        params = {words[i + 1]: words[i + 2] for i, w in enumerate(words) if w == "-p"}
        found.append((params, words[-1]))
    return found


def test_the_sql_cookbook_runs_on_both_engines(postgres_url: str, filled_ledger: str) -> None:
    recipes = cookbook()
    assert len(recipes) >= 5
    copy_ledger(filled_ledger, postgres_url)
    session = value(filled_ledger, "SELECT session_id FROM tool_calls LIMIT 1")
    for params, sql in recipes:
        given = {k: session[:8] if k == "session" else v for k, v in params.items()}
        on_sqlite = list(run_query(filled_ledger, sql, params=given).rows)
        on_postgres = list(run_query(postgres_url, sql, params=given).rows)
        assert len(on_postgres) == len(on_sqlite), sql


def test_copy_from_a_file_that_is_not_there_creates_nothing(
    tmp_path: Path, postgres_url: str
) -> None:
    """A typo in the source: the missing-ledger error, not an empty ledger made there and
    "0 rows" copied."""
    typo = tmp_path / "typo.db"
    with pytest.raises(LedgerError, match="no ledger here") as caught:
        copy_ledger(str(typo), postgres_url)
    assert caught.value.kind == "missing"
    assert not typo.exists() and list(tmp_path.iterdir()) == []


def test_copy_never_shows_a_password(tmp_path: Path) -> None:
    """A source URL that cannot be opened is named without its password."""
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    source = f"postgresql://hookrails:secretpw@127.0.0.1:{port}/none"
    with pytest.raises(LedgerError) as caught:
        copy_ledger(source, str(tmp_path / "dest.db"))
    assert "secretpw" not in str(caught.value)


def test_copy_into_a_file_whose_rollups_passed_the_copied_ids_keeps_the_views_exact(
    tmp_path: Path,
) -> None:
    """Copied rows keep their ids: below the destination's rollup marks they would be
    missed by the aggregate views; the copy makes the rollups start over."""
    import sqlite3

    from guardrails import AgentDefinition, Guard
    from guardrails.ledger import rollup

    def calls(path: str, n: int) -> None:
        with Ledger(path) as led:
            session = Guard(AgentDefinition(name="a"), ledger=led).session("s").sync
            for i in range(n):
                session.run_tool("lint", {"i": i}, lambda i: "ok")

    dest, source = str(tmp_path / "dest.db"), str(tmp_path / "source.db")
    calls(dest, 5)
    conn = sqlite3.connect(dest, isolation_level=None)
    conn.execute("BEGIN")
    for table in ("tool_calls", "hook_run_sets"):  # the destination's ids above the source's
        conn.execute(f"UPDATE {table} SET id = id + 1000")
    rollup.invalidate(conn)
    conn.execute("COMMIT")
    conn.close()
    assert rollup.refresh_file(dest) > 0  # summed past id 1000
    calls(source, 3)  # ids 1-3
    copy_ledger(source, dest)
    stats = {r["tool_name"]: r["calls"] for r in rows(dest, "SELECT * FROM tool_stats")}
    assert stats == {"lint": 8}


def test_write_behind_is_refused_on_postgres(postgres_url: str) -> None:
    led = Ledger(postgres_url)
    try:
        with pytest.raises(LedgerError, match="write-behind is for SQLite ledgers"):
            led.write_behind()
    finally:
        led.close()


def test_machines_opening_a_new_database_at_once_apply_each_migration_once(
    postgres_url: str,
) -> None:
    """Eight ledgers opened on one empty database at the same moment: the advisory lock
    makes one of them migrate, and the others find the schema done."""
    start = threading.Barrier(8)
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            start.wait()
            Ledger(postgres_url).close()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    applied = rows(postgres_url, "SELECT number FROM _hookrails_migrations ORDER BY number")
    assert [r["number"] for r in applied] == [m.number for m in migrations("postgres")]


def test_a_migration_that_fails_leaves_the_schema_as_it_was(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pending migrations run in one transaction: a bad last one takes the others back."""
    import psycopg

    from guardrails.ledger import migrations as migrations_module
    from guardrails.ledger.migrations import Migration
    from guardrails.ledger.postgres_schema import apply_migrations, schema_version

    real = migrations("postgres")
    bad = Migration(len(real) + 1, "broken", "CREATE TABLE broken (x no_such_type);")
    monkeypatch.setattr(migrations_module, "migrations", lambda dialect="sqlite": [*real, bad])
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        with pytest.raises(psycopg.Error, match="no_such_type"):
            apply_migrations(conn)
        assert schema_version(conn) == 0
        found = conn.execute("SELECT to_regclass('tool_calls') IS NOT NULL").fetchone()
        assert found == (False,)
