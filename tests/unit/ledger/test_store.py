"""The store interface (``guardrails.ledger.store``) as the Ledger implements it on SQLite and
on PostgreSQL (the ``ledger_url`` fixture): idempotency keys, marking a call interrupted,
recording without a Session. The in-memory key store of ``idempotency_guard`` must give the
same verdicts."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, Ledger, LedgerError
from guardrails.builtins.idempotency.store import MemoryKeys
from guardrails.events import PreToolUse
from guardrails.ledger import KeyClaim, StoredKey, judge
from guardrails.ledger.store import judge_held
from guardrails.results import Decision
from tests._db import execute, rows, value


@pytest.fixture
def ledger(ledger_url: str) -> Iterator[Ledger]:
    with Ledger(ledger_url) as led:
        yield led


def claim(
    call_id: str | None = "t1",
    *,
    now: float = 1000.0,
    ttl: float | None = 60.0,
    payload: str = "p1",
    declared: bool = False,
    key: str = "k",
) -> KeyClaim:
    return KeyClaim(
        key=key,
        scope="session",
        session_id="s1",
        agent_id=None,
        tool_name="charge",
        payload_hash=payload,
        tool_call_id=call_id,
        declared=declared,
        now=now,
        expires=None if ttl is None else now + ttl,
        tool_input={"amount": 1},
    )


# --- judge --------------------------------------------------------------------------------


def stored(
    state: str, *, call_id: str = "t0", payload: str = "p1", expires: float = 2000.0
) -> StoredKey:
    return StoredKey(state, payload, call_id, "s1", None, 900.0, expires)


@pytest.mark.parametrize(
    ("row", "c", "verdict"),
    [
        (stored("in_progress", call_id="t1"), claim("t1"), "claimed"),
        (stored("completed", expires=1000.0), claim(), "reclaim"),
        (stored("failed"), claim(), "reclaim"),
        (stored("completed", payload="p2"), claim(declared=True), "conflict"),
        (stored("completed", payload="p2"), claim(), "completed"),
        (stored("in_progress"), claim(), "in_progress"),
    ],
    ids=["same-call", "expired", "failed", "conflict", "completed", "in-progress"],
)
def test_judge(row: StoredKey, c: KeyClaim, verdict: str) -> None:
    assert judge(row, c) == verdict


#: id, the key met, its holder's tool_calls status (None: no row), whether the holder is
#: gone, then what judge_held answers for a claim of t1
_JUDGE_HELD: list[tuple[str, StoredKey, str | None, bool, str, bool]] = [
    ("denied", stored("in_progress"), "denied", False, "reclaim", False),
    ("error", stored("in_progress"), "error", False, "reclaim", False),
    ("interrupted", stored("in_progress"), "interrupted", False, "reclaim", False),
    ("ok", stored("in_progress"), "ok", False, "completed", True),
    ("ok-gone", stored("in_progress"), "ok", True, "completed", True),  # finished: it counts
    ("ok-expired", stored("in_progress", expires=1000.0), "ok", False, "reclaim", True),
    ("pending-gone", stored("in_progress"), "pending", True, "reclaim", False),
    ("pending", stored("in_progress"), "pending", False, "in_progress", False),
    ("no-row-gone", stored("in_progress"), None, True, "reclaim", False),  # a lease ran out
    ("no-row", stored("in_progress"), None, False, "in_progress", False),
    ("own-claim", stored("in_progress", call_id="t1"), "denied", True, "claimed", False),
    ("completed", stored("completed"), "denied", True, "completed", False),  # call unread
    ("failed", stored("failed"), "pending", False, "reclaim", False),
]


@pytest.mark.parametrize(
    ("row", "status", "gone", "verdict", "finished"),
    [case[1:] for case in _JUDGE_HELD],
    ids=[case[0] for case in _JUDGE_HELD],
)
def test_judge_held(
    row: StoredKey, status: str | None, gone: bool, verdict: str, finished: bool
) -> None:
    """The rule both ledger stores apply to a key met in the store, given its call."""
    call = None if status is None else (status, '{"id": 7}', None)
    assert judge_held(row, claim("t1"), call, gone) == (verdict, finished)
    if finished:
        assert (row.state, row.result) == ("completed", '{"id": 7}')


# --- key operations, on both stores ---------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgres", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "memory":
        yield MemoryKeys()
        return
    where = str(tmp_path / "keys.db")
    if request.param == "postgres":
        where = request.getfixturevalue("postgres_url")
    with Ledger(where) as led:
        yield led


def test_a_key_is_claimed_once_then_in_progress(store: Any) -> None:
    assert store.claim_key(claim("t1")).verdict == "claimed"
    assert store.claim_key(claim("t1")).verdict == "claimed"  # the same call again
    result = store.claim_key(claim("t2"))
    assert result.verdict == "in_progress"
    assert result.stored.tool_call_id == "t1" and result.stored.created == 1000.0


def test_a_completed_key_answers_completed_with_its_result(store: Any) -> None:
    store.claim_key(claim("t1"))
    store.complete_key("k", "t1", '{"id": 7}', 1001.0, exact=True)
    result = store.claim_key(claim("t2", now=1002.0))
    assert result.verdict == "completed" and result.stored.result == '{"id": 7}'
    assert store.claim_key(claim("t3", now=1070.0)).verdict == "claimed"  # expired


def test_a_failed_key_is_claimed_again(store: Any) -> None:
    store.claim_key(claim("t1"))
    store.fail_key("k", "t1", '"boom"', 1001.0, exact=True)
    assert store.claim_key(claim("t2")).verdict == "claimed"


def test_other_arguments_under_a_declared_key_conflict(store: Any) -> None:
    store.claim_key(claim("t1", declared=True))
    store.complete_key("k", "t1", "1", 1001.0, exact=True)
    assert store.claim_key(claim("t2", declared=True, payload="p2")).verdict == "conflict"


def test_only_the_claiming_call_ends_a_claim(store: Any) -> None:
    store.claim_key(claim("t1"))
    store.complete_key("k", "t9", "1", 1001.0, exact=True)
    assert store.claim_key(claim("t2")).verdict == "in_progress"


# --- the ledger stores (SQLite and PostgreSQL) -------------------------------------------------


def test_release_gives_a_claim_up(ledger: Ledger) -> None:
    ledger.claim_key(claim("t1"))
    assert ledger.release_key("k", "t2") is False  # not its claim
    assert ledger.release_key("k", "t1") is True
    assert ledger.claim_key(claim("t2")).verdict == "claimed"
    ledger.complete_key("k", "t2", "1", 1001.0, exact=True)
    assert ledger.release_key("k", "t2") is False  # only an in-progress claim


def test_complete_not_exact_finds_the_claim_by_its_call(ledger: Ledger) -> None:
    ledger.claim_key(claim("t1", key="k1"))
    ledger.complete_key("k2", "t1", '"done"', 1001.0, exact=True)
    assert value(ledger.path, "SELECT state FROM idempotency_keys") == "in_progress"
    ledger.complete_key("k2", "t1", '"done"', 1001.0, exact=False)
    assert rows(ledger.path, "SELECT key, state, result FROM idempotency_keys") == [
        {"key": "k1", "state": "completed", "result": '"done"'}
    ]


def test_prune_keys_deletes_expired_keys_oldest_first_up_to_the_limit(ledger: Ledger) -> None:
    for i, ttl in enumerate((10.0, 20.0, 30.0, None, 500.0)):
        ledger.claim_key(claim(f"t{i}", key=f"k{i}", ttl=ttl))
    assert ledger.prune_keys(1025.0, 1) == 1
    assert ledger.prune_keys(1025.0, 10) == 1
    keys = rows(ledger.path, "SELECT key FROM idempotency_keys ORDER BY key")
    assert [r["key"] for r in keys] == ["k2", "k3", "k4"]


def test_a_claim_whose_call_was_denied_is_taken_over(ledger: Ledger) -> None:
    ledger.claim_key(claim("t1"))
    execute(
        ledger.path,
        "INSERT INTO tool_calls (session_id, tool_call_id, tool_name, status, started_at) "
        "VALUES ('s1', 't1', 'charge', 'denied', '2025-01-01T00:00:00.000Z')",
    )
    assert ledger.claim_key(claim("t2")).verdict == "claimed"


def _exited_pid() -> int:
    """The pid of a process of this machine that ran and was reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


#: a key t1 claimed, its call's tool_calls row (None: none), the engines' verdict for t2
_HELD_ON_BOTH: list[tuple[str, str | None, bool, dict[str, str]]] = [
    ("denied", "denied", True, {"sqlite": "claimed", "postgres": "claimed"}),
    ("error", "error", True, {"sqlite": "claimed", "postgres": "claimed"}),
    ("interrupted", "interrupted", True, {"sqlite": "claimed", "postgres": "claimed"}),
    ("ok", "ok", True, {"sqlite": "completed", "postgres": "completed"}),
    ("pending", "pending", True, {"sqlite": "in_progress", "postgres": "in_progress"}),
    # SQLite: its process is gone; PostgreSQL asks the lease, which still holds
    ("pending-exited", "pending", False, {"sqlite": "claimed", "postgres": "in_progress"}),
    ("no-row", None, True, {"sqlite": "in_progress", "postgres": "in_progress"}),
]


@pytest.mark.parametrize(
    ("status", "alive", "verdicts"),
    [case[1:] for case in _HELD_ON_BOTH],
    ids=[case[0] for case in _HELD_ON_BOTH],
)
def test_a_key_another_call_holds_is_judged_by_its_call_on_both_engines(
    ledger: Ledger, status: str | None, alive: bool, verdicts: dict[str, str]
) -> None:
    """:func:`judge_held` as each engine feeds it: the holder's ``tool_calls`` row, and
    the engine's own test of a holder that is gone."""
    engine = "postgres" if ledger.path.startswith("postgresql://") else "sqlite"
    assert ledger.claim_key(claim("t1")).verdict == "claimed"
    if status is not None:
        pid = os.getpid() if alive else _exited_pid()
        execute(
            ledger.path,
            "INSERT INTO tool_calls (session_id, tool_call_id, tool_name, status, started_at, "
            f"tool_call_result, pid) VALUES ('s1', 't1', 'charge', '{status}', "
            f"'2025-01-01T00:00:00.000Z', '{{\"id\": 7}}', {pid})",
        )
    result = ledger.claim_key(claim("t2", now=1001.0))
    assert result.verdict == verdicts[engine]
    [key] = rows(ledger.path, "SELECT state, tool_call_id, result FROM idempotency_keys")
    if result.verdict == "claimed":
        assert key == {"state": "in_progress", "tool_call_id": "t2", "result": None}
    elif result.verdict == "completed":  # the call finished ok without its PostToolUse
        assert result.stored is not None and result.stored.result == '{"id": 7}'
        assert key == {"state": "completed", "tool_call_id": "t1", "result": '{"id": 7}'}
    else:
        assert key == {"state": "in_progress", "tool_call_id": "t1", "result": None}


@pytest.mark.parametrize("finished", [False, True], ids=["in-progress", "completed"])
def test_a_conflict_shows_the_earlier_calls_input_on_both_engines(
    ledger: Ledger, finished: bool
) -> None:
    ledger.claim_key(claim("t1", declared=True))
    execute(
        ledger.path,
        "INSERT INTO tool_calls (session_id, tool_call_id, tool_name, status, started_at, "
        "tool_call_arguments, pid) VALUES ('s1', 't1', 'charge', 'pending', "
        f"'2025-01-01T00:00:00.000Z', '{{\"amount\": 2}}', {os.getpid()})",
    )
    if finished:
        ledger.complete_key("k", "t1", "1", 1001.0, exact=True)
    result = ledger.claim_key(claim("t2", now=1002.0, declared=True, payload="p2"))
    assert result.verdict == "conflict"
    assert result.stored is not None and result.stored.tool_input == {"amount": 2}


def test_key_operations_on_a_store_that_cannot_be_written_raise_ledger_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = Ledger(tmp_path / "ledger.db")

    def locked() -> Any:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(ledger, "write_transaction", locked)
    calls: list[Callable[[], Any]] = [
        lambda: ledger.claim_key(claim()),
        lambda: ledger.complete_key("k", "t1", "1", 1.0, exact=True),
        lambda: ledger.fail_key("k", "t1", "1", 1.0, exact=True),
        lambda: ledger.release_key("k", "t1"),
        lambda: ledger.prune_keys(1.0, 1),
    ]
    for op in calls:
        with pytest.raises(LedgerError, match="database is locked") as info:
            op()
        assert info.value.kind == "locked"


# --- writing events -------------------------------------------------------------------------


def test_record_takes_the_agent_and_tenant_it_writes(ledger: Ledger) -> None:
    event = PreToolUse(session_id="s1", cwd="/p", tool_name="Bash", tool_use_id="t1")
    ledger.record(Decision(event, "allow"), 1000.0, agent="bot", tenant="acme", owner_pid=42)
    assert rows(ledger.path, "SELECT agent_name, tenant, cwd FROM sessions") == [
        {"agent_name": "bot", "tenant": "acme", "cwd": "/p"}
    ]
    assert rows(ledger.path, "SELECT agent_name, status, pid FROM tool_calls") == [
        {"agent_name": "bot", "status": "pending", "pid": 42}
    ]


def test_mark_interrupted_ends_a_pending_call_with_the_redacted_reason(ledger: Ledger) -> None:
    event = PreToolUse(session_id="s1", cwd="/p", tool_name="Bash", tool_use_id="t1")
    ledger.record(Decision(event, "allow"), 1000.0, agent="bot", tenant=None)
    secret = "ghp_" + "a" * 36
    ledger.mark_interrupted("s1", "t1", f"not run ({secret})", 1001.0)
    ledger.mark_interrupted("s1", "t1", "again", 1002.0)  # no longer pending: unchanged
    [row] = rows(ledger.path, "SELECT status, finished_at, error_message FROM tool_calls")
    assert row["status"] == "interrupted"
    assert row["finished_at"] == "1970-01-01T00:16:41.000Z"
    assert secret not in row["error_message"] and row["error_message"].startswith("not run (")


def test_mark_interrupted_on_a_degraded_ledger_raises(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with Ledger(blocker / "ledger.db") as led:
        assert led.degraded is not None
        with pytest.raises(LedgerError):
            led.mark_interrupted("s1", "t1", "x", 1.0)


def test_the_reader_finds_calls_by_tool_glob(ledger_url: str) -> None:
    """``ctx.ledger.succeeded`` and ``calls`` match the tool name as a GLOB on both engines."""
    with Ledger(ledger_url) as led:
        guard = Guard(AgentDefinition(name="a"), ledger=led)
        session = guard.session("s1")
        session.sync.run_tool("run_tests", {}, lambda: "ok")
        session.sync.run_tool("lint", {}, lambda: "ok")
        reader = led.reader
        assert reader.succeeded("run_*", "s1") and reader.succeeded("lint", "s1")
        assert not reader.succeeded("run_*", "s2") and not reader.succeeded("deploy*", "s1")
        assert [c["tool_name"] for c in reader.calls("s1", "run_*")] == ["run_tests"]
        assert [c["tool_name"] for c in reader.calls("s1")] == ["run_tests", "lint"]
        assert reader.calls("s1", "*", status="denied") == []


def test_prune_refuses_a_ledger_of_a_newer_schema_and_deletes_nothing(ledger_url: str) -> None:
    from guardrails.ledger.admin import prune_ledger

    with Ledger(ledger_url) as led:
        Guard(AgentDefinition(name="a"), ledger=led).session("s1").sync.run_tool(
            "lint", {}, lambda: "ok"
        )
    _make_newer(ledger_url)
    for dry_run in (True, False):
        with pytest.raises(LedgerError, match="newer than this hookrails knows") as caught:
            prune_ledger(ledger_url, before="2100-01-01", dry_run=dry_run)
        assert caught.value.kind == "newer_schema"
    assert value(ledger_url, "SELECT count(*) FROM tool_calls") == 1


def test_a_newer_schema_sends_records_to_a_newer_hookrails_on_both_engines(
    ledger_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The warning says who can recover them: `recover` of this hookrails refuses a newer
    schema (the PostgreSQL ledger used to say "until `hookrails ledger recover`")."""
    Ledger(ledger_url).close()
    _make_newer(ledger_url)
    with caplog.at_level("WARNING", logger="guardrails"), Ledger(ledger_url) as led:
        assert led.degraded is not None and led.degraded.startswith("newer_schema")
    said = [r.getMessage() for r in caplog.records if "newer" in r.getMessage()]
    assert said and all("of a newer hookrails" in m for m in said)


def _make_newer(ledger_url: str) -> None:
    """The ledger as a newer hookrails (schema version 99) left it."""
    if ledger_url.startswith("postgresql://"):
        execute(
            ledger_url,
            "INSERT INTO _hookrails_migrations (number, name, applied_at) "
            "VALUES (99, 'future', '2030-01-01')",
        )
    else:
        execute(ledger_url, "PRAGMA user_version = 99")
